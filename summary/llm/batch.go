package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
)

// OpenAI Batch (docs/summaries.md, "OpenAI Batch"): instead of sending the
// summary requests of a run, write them as a Batch input file
// ([Exporter]); run the batch (OpenAI's Batch API at half the price, or
// `vllm run-batch` on local GPUs); then load its output file into the
// summary cache ([Client.ImportBatch]), through the same checks a live
// answer passes, so that the next run finds every summary cached and sends
// nothing.
//
// Each request's custom_id carries what checking its answer needs besides
// the answer: "tc1-<target>-<region>-<key>", the summary's target tokens,
// the tokens of the region it replaces (under the run's counter) and the
// request's cache key (sha256 of the model, prompt version, messages and
// sampling parameters, as for live requests). So an answer is checked
// and cached under the key the run will look up, whatever order the
// results come in, with no other file.

// BatchURL is the endpoint of every exported request.
const BatchURL = "/v1/chat/completions"

// batchIDPrefix starts the custom_id of the requests trajcompress writes;
// it names the custom_id's layout.
const batchIDPrefix = "tc1-"

// BatchLimits are what OpenAI accepts in one batch input file.
const (
	BatchMaxRequests = 50000
	BatchMaxBytes    = 200 << 20
)

// customID is the custom_id of a request with cache key key.
func customID(target, region int, key string) string {
	return fmt.Sprintf("%s%d-%d-%s", batchIDPrefix, target, region, key)
}

// parseCustomID reads a custom_id written by customID; ok is false for
// any other.
func parseCustomID(id string) (target, region int, key string, ok bool) {
	rest, found := strings.CutPrefix(id, batchIDPrefix)
	if !found {
		return 0, 0, "", false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 {
		return 0, 0, "", false
	}
	t, err1 := strconv.Atoi(parts[0])
	r, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || t <= 0 || r < 0 || len(parts[2]) != 64 {
		return 0, 0, "", false
	}
	if _, err := hex.DecodeString(parts[2]); err != nil || strings.ToLower(parts[2]) != parts[2] {
		return 0, 0, "", false
	}
	return t, r, parts[2], true
}

// batchLine is one line of a Batch input file.
type batchLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// Exporter collects the summary requests of a run as OpenAI Batch input
// lines instead of sending them. It stands in for the LLM summarizer in a
// run that writes no records (the pipeline's dry run): the pipeline asks
// it for an estimate of each region ([Exporter.Estimate]), and it records
// the request unless the cache already holds its summary. It is safe for
// concurrent use.
type Exporter struct {
	c *Client

	mu       sync.Mutex
	lines    map[string][]byte // custom_id → the JSON line
	cached   int
	repeated int
}

// NewExporter returns an exporter with the client configuration c: its
// model, sampling parameters and cache (which must not be disabled) make
// the requests and their keys exactly as a live run would. No API key is
// needed.
func NewExporter(c Config) (*Exporter, error) {
	cl, err := newClient(c, false)
	if err != nil {
		return nil, err
	}
	if cl.cache == nil {
		return nil, errors.New("llm: batch export needs the summary cache (it is disabled): the imported answers are read from it")
	}
	return &Exporter{c: cl, lines: map[string][]byte{}}, nil
}

// Remote reports true: the pipeline must not call Summarize in the run
// that exports, only Estimate.
func (e *Exporter) Remote() bool { return true }

// Summarize refuses: an exporting run sends nothing.
func (e *Exporter) Summarize(context.Context, summary.Request) (summary.Result, error) {
	return summary.Result{}, errors.New("llm: batch export: no request is sent")
}

// Estimate records req's request (once per custom_id) unless its summary
// is cached, and returns its estimate: what the batch will cost.
func (e *Exporter) Estimate(req summary.Request) summary.Result {
	msgs := []message{{Role: "user", Content: RegionPrompt(req.Turns, req.Start, req.TargetTokens)}}
	maxTokens := 2 * req.TargetTokens
	key := e.c.key(msgs, maxTokens)
	if _, ok := e.c.lookup(key); ok {
		e.mu.Lock()
		e.cached++
		e.mu.Unlock()
		return summary.Result{CacheHit: true}
	}
	counter := req.Counter
	if counter == nil {
		counter = e.c.cfg.Counter
	}
	id := customID(req.TargetTokens, regionTokens(req, counter), key)
	line, err := json.Marshal(batchLine{CustomID: id, Method: "POST", URL: BatchURL, Body: e.c.body(msgs, maxTokens)})
	if err != nil {
		panic(fmt.Sprintf("llm: batch line: %v", err)) // plain data
	}
	e.mu.Lock()
	if _, dup := e.lines[id]; dup {
		e.repeated++
	} else {
		e.lines[id] = line
	}
	e.mu.Unlock()
	return summary.Result{APICalls: 1, PromptTokens: e.c.cfg.Counter.Count(msgs[0].Content), CompletionTokens: maxTokens}
}

// ExportStats says what an export holds.
type ExportStats struct {
	Requests int // lines written (one per distinct request)
	Cached   int // regions whose summary was cached already
	Repeated int // regions whose request another region had made already
	Bytes    int64
}

// WriteRequests writes the collected requests, one JSON line each, ordered by
// custom_id (so the file does not depend on the order records finished
// in), and returns what it wrote.
func (e *Exporter) WriteRequests(w io.Writer) (ExportStats, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := ExportStats{Requests: len(e.lines), Cached: e.cached, Repeated: e.repeated}
	bw := bufio.NewWriter(w)
	for _, id := range slices.Sorted(maps.Keys(e.lines)) {
		n, _ := bw.Write(e.lines[id])
		bw.WriteByte('\n')
		st.Bytes += int64(n) + 1
	}
	return st, bw.Flush()
}

// regionTokens is what the answer to req is checked against: the tokens
// of the turns it replaces, as [call.validated] counts them.
func regionTokens(req summary.Request, counter tokenize.Counter) int {
	n := 0
	for _, t := range req.Turns {
		n += counter.Count(t.Text)
	}
	return n
}

// ImportStats says what an import did with each line of a Batch output
// (or error) file.
type ImportStats struct {
	Lines    int // non-blank lines read
	Imported int // answers checked and cached
	// Rejected are answers that failed the checks of a live answer
	// ([Normalize], [Validate]): never cached, by reason.
	Rejected map[string]int
	// Failed are requests the batch did not answer (an "error" object, or
	// a response whose status is not 200), by error code or status.
	Failed    map[string]int
	Foreign   int // custom_ids not of trajcompress's layout (not ours)
	Repeated  int // answers to a request already imported from this file
	Malformed int // lines that are not a Batch output line
	Redacted  int // imported answers in which Config.Redactor replaced a secret
	// MalformedLines lists the first few malformed line numbers.
	MalformedLines []int
}

// Add adds o to s.
func (s *ImportStats) Add(o ImportStats) {
	s.Lines += o.Lines
	s.Imported += o.Imported
	s.Foreign += o.Foreign
	s.Repeated += o.Repeated
	s.Malformed += o.Malformed
	s.Redacted += o.Redacted
	s.MalformedLines = append(s.MalformedLines, o.MalformedLines...)
	for k, v := range o.Rejected {
		if s.Rejected == nil {
			s.Rejected = map[string]int{}
		}
		s.Rejected[k] += v
	}
	for k, v := range o.Failed {
		if s.Failed == nil {
			s.Failed = map[string]int{}
		}
		s.Failed[k] += v
	}
}

// batchResult is one line of a Batch output or error file.
type batchResult struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// maxBatchLine bounds one line of a results file (an answer is a few KB).
const maxBatchLine = 64 << 20

// ImportBatch reads a Batch output or error file (JSONL) and caches every
// answer that passes the checks a live answer passes: the chat.completion
// read as the client reads one (finish_reason, empty content, reasoning),
// normalised ([Normalize]), redacted (Config.Redactor), and [Validate]d against the target and region
// size its custom_id carries, counted with counter (the run's). Answers
// are joined by custom_id, never by line order. A rejected answer is not
// cached; a line that is not a Batch output line is counted and skipped.
// It fails only when r fails or the cache cannot be written. It needs a
// cache (NewExporter or New with a cache directory).
func (c *Client) ImportBatch(r io.Reader, counter tokenize.Counter) (ImportStats, error) {
	var st ImportStats
	if c.cache == nil {
		return st, errors.New("llm: batch import needs the summary cache (it is disabled)")
	}
	if counter == nil {
		counter = c.cfg.Counter
	}
	seen := map[string]bool{}
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return st, fmt.Errorf("line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			st.Lines++
			ok, cerr := c.importLine(line, counter, seen, &st)
			if cerr != nil {
				return st, fmt.Errorf("line %d: %w", n, cerr)
			}
			if !ok {
				st.Malformed++
				if len(st.MalformedLines) < 10 {
					st.MalformedLines = append(st.MalformedLines, n)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return st, nil
		}
	}
}

// readLine reads one line (without its newline) of at most maxBatchLine
// bytes; io.EOF comes with the last line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxBatchLine {
			return nil, fmt.Errorf("longer than %d MiB: not a Batch output file", maxBatchLine>>20)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
		}
	}
}

// importLine handles one line of a results file; ok is false when it is
// not a Batch output line. err is set only when the cache cannot be
// written.
func (c *Client) importLine(line []byte, counter tokenize.Counter, seen map[string]bool, st *ImportStats) (ok bool, err error) {
	var res batchResult
	if json.Unmarshal(line, &res) != nil || res.CustomID == "" || (res.Response == nil && res.Error == nil) {
		return false, nil
	}
	target, region, key, ours := parseCustomID(res.CustomID)
	if !ours {
		st.Foreign++
		return true, nil
	}
	fail := func(m *map[string]int, reason string) {
		if *m == nil {
			*m = map[string]int{}
		}
		(*m)[reason]++
	}
	switch {
	case res.Error != nil:
		fail(&st.Failed, fmt.Sprint(res.Error.Code))
		return true, nil
	case res.Response.StatusCode != 200:
		fail(&st.Failed, strconv.Itoa(res.Response.StatusCode))
		return true, nil
	}
	if seen[key] {
		st.Repeated++
		return true, nil
	}
	text, u, aerr := c.parse(res.Response.Body, nil, usage{})
	if aerr != nil {
		fail(&st.Rejected, aerr.Cause)
		return true, nil
	}
	text, redacted := c.redact(text)
	if redacted {
		st.Redacted++
	}
	if v := Validate(text, target, region, counter); v != nil {
		fail(&st.Rejected, CauseInvalid)
		return true, nil
	}
	if perr := c.cache.put(key, entry{Text: text, Model: c.cfg.Model, PromptTokens: u.prompt, CompletionTokens: u.completion}); perr != nil {
		return true, perr
	}
	seen[key] = true
	st.Imported++
	return true, nil
}
