package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/crash"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// wordCounter counts one token per space-separated word: easy to reason
// about in tests.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

func words(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }

// shareGPTLine builds a ShareGPT record whose turns have the given roles
// and word counts.
func shareGPTLine(roles string, sizes ...int) string {
	var turns []string
	for i, r := range strings.Fields(roles) {
		turns = append(turns, fmt.Sprintf(`{"from": %q, "value": %q}`, r, words(sizes[i], fmt.Sprintf("w%d", i))))
	}
	return `{"id": "x", "conversations": [` + strings.Join(turns, ", ") + `], "tail": true}`
}

type fixedSummarizer struct {
	text  string
	err   error
	calls atomic.Int64
}

func (f *fixedSummarizer) Remote() bool { return false }

func (f *fixedSummarizer) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	f.calls.Add(1)
	if f.err != nil {
		return summary.Result{APICalls: 1, APIErrors: 1}, f.err
	}
	return summary.Result{Text: f.text, APICalls: 1}, nil
}

func newComp(t testing.TB, mod func(*Options)) *Compressor {
	t.Helper()
	o := Options{
		Budget:      snap.Budget{Target: 900, SummaryTokens: 50, LastN: 4, ProtectFirstSystem: true, ProtectFirstUser: true, ProtectFirstAssistant: true, ProtectFirstTool: true},
		Counting:    Counting{Counter: wordCounter{}},
		Summarizing: Summarizing{Summarizer: &fixedSummarizer{text: "[CONTEXT SUMMARY]: s"}},
		Placement:   Placement{AddNotice: true, NoticeText: " NOTICE"},
	}
	if mod != nil {
		mod(&o)
	}
	c, err := NewCompressor(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var pos = traj.Pos{File: "f.jsonl", Line: 3}

// docs/planning.md, worked example 2, end to end through Compress.
func TestCompressWorkedExample2(t *testing.T) {
	c := newComp(t, nil)
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed || *res.Obs.Region != [2]int{4, 8} {
		t.Fatalf("outcome %s region %v", res.Obs.Outcome, res.Obs.Region)
	}
	var out struct {
		ID    string `json:"id"`
		Turns []struct {
			From  string `json:"from"`
			Value string `json:"value"`
		} `json:"conversations"`
		Tail bool            `json:"tail"`
		CM   json.RawMessage `json:"compression_metrics"`
	}
	if err := json.Unmarshal(res.Out, &out); err != nil {
		t.Fatalf("output not JSON: %v\n%s", err, res.Out)
	}
	if len(out.Turns) != 9 || out.Turns[4].From != "human" || out.Turns[4].Value != "[CONTEXT SUMMARY]: s" {
		t.Fatalf("turns %+v", out.Turns)
	}
	if !strings.HasSuffix(out.Turns[0].Value, " NOTICE") || strings.Contains(out.Turns[11-3].Value, "NOTICE") {
		t.Errorf("notice must be on the head's system turn only")
	}
	if out.ID != "x" || !out.Tail || out.CM != nil {
		t.Errorf("other fields changed or metrics added when not asked: %+v", out)
	}
	// 1200 − 400 + 3 (summary words) + 1 (notice word) = 804
	if res.Obs.TokensAfter != 804 || res.Obs.TurnsAfter != 9 {
		t.Errorf("after: %d tokens, %d turns", res.Obs.TokensAfter, res.Obs.TurnsAfter)
	}
	// Untouched turns are byte-identical to the input.
	if !strings.Contains(string(res.Out), `{"from": "gpt", "value": "`+words(100, "w8")+`"}`) {
		t.Error("kept turn not verbatim")
	}
}

func TestCompressOutcomes(t *testing.T) {
	cases := []struct {
		name    string
		line    string
		mod     func(*Options)
		outcome outcome.Outcome
		reason  string
		same    bool // output == input
	}{
		{"under_target", shareGPTLine("system human gpt", 1, 1, 1), nil, outcome.SkippedUnderTarget, "", true},
		{"no_middle", shareGPTLine("system human gpt tool", 400, 400, 400, 400), nil, outcome.Uncompressible, "no_middle", true},
		{"region_too_small", shareGPTLine("system human gpt human gpt human gpt human", 500, 500, 2, 2, 2, 2, 2, 2), nil, outcome.Uncompressible, "region_too_small", true},
		{"over_limit", shareGPTLine("system human gpt tool gpt tool gpt gpt tool gpt gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100), nil, outcome.CompressedOverLimit, "", false},
		{"summary_failed", shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100),
			func(o *Options) { o.Summarizing.Summarizer = &fixedSummarizer{err: errors.New("boom")} }, outcome.SummaryFailed, "boom", true},
		{"fallback", shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100),
			func(o *Options) {
				o.Summarizing.Summarizer = &fixedSummarizer{err: errors.New("boom")}
				o.Summarizing.Fallback = &fixedSummarizer{text: "[CONTEXT SUMMARY]: fb"}
			}, outcome.Compressed, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			comp := newComp(t, c.mod)
			res, err := comp.Compress(context.Background(), []byte(c.line), pos)
			if err != nil {
				t.Fatal(err)
			}
			if res.Obs.Outcome != c.outcome || res.Obs.Reason != c.reason {
				t.Errorf("outcome %s (%q), want %s (%q)", res.Obs.Outcome, res.Obs.Reason, c.outcome, c.reason)
			}
			if got := string(res.Out) == c.line; got != c.same {
				t.Errorf("output unchanged = %v, want %v", got, c.same)
			}
		})
	}
}

func TestCompressInvalid(t *testing.T) {
	comp := newComp(t, nil)
	for _, line := range []string{`{"conversations": [`, `42`, `{"other": 1}`} {
		res, err := comp.Compress(context.Background(), []byte(line), pos)
		if err != nil {
			t.Fatal(err)
		}
		if res.Out != nil || res.Reject == nil || res.Obs.Outcome != outcome.Invalid || res.Reject.Pos != pos || string(res.Reject.Raw) != line {
			t.Errorf("%s: %+v", line, res)
		}
	}
}

// TestGroupBy: with Options.GroupBy each record's observation names the
// value of that field, rejected lines that are JSON objects included.
func TestGroupBy(t *testing.T) {
	comp := newComp(t, func(o *Options) { o.GroupBy = "model" })
	ok := shareGPTLine("system human gpt", 5, 5, 5)
	for line, want := range map[string]string{
		`{"model": "a", ` + ok[1:]:                 "a",
		`{"model": 7, ` + ok[1:]:                   "7",
		ok:                                         metrics.GroupNone,
		`{"model": "b", "messages_typo": []}`:      "b",
		`{"model": "c", "conversations": [`:        metrics.GroupNone,
		`{"model": "d\u00e9", "conversations": 1}`: "dé",
	} {
		res, err := comp.Compress(context.Background(), []byte(line), pos)
		if err != nil {
			t.Fatal(err)
		}
		if res.Obs.Group != want {
			t.Errorf("%s: group %q, want %q", line, res.Obs.Group, want)
		}
	}
	if res, _ := newComp(t, nil).Compress(context.Background(), []byte(ok), pos); res.Obs.Group != "" {
		t.Errorf("no GroupBy: group %q, want none", res.Obs.Group)
	}
}

// TestCompressRepairsUTF8: ill-formed UTF-8 is replaced by U+FFFD before
// decoding, in the record written (compressed or not) and counted; a
// rejected line keeps its bytes as read.
func TestCompressRepairsUTF8(t *testing.T) {
	comp := newComp(t, nil)
	short := "{\"conversations\": [{\"from\": \"human\", \"value\": \"caf\xe9 \xe2\x82\"}]}"
	long := strings.Replace(shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100), `"value": "`, "\"value\": \"\xff", 3)
	for _, c := range []struct {
		line    string
		n       int
		outcome outcome.Outcome
	}{{short, 2, outcome.SkippedUnderTarget}, {long, 3, outcome.Compressed}} {
		res, err := comp.Compress(context.Background(), []byte(c.line), pos)
		if err != nil {
			t.Fatal(err)
		}
		if res.Obs.Outcome != c.outcome || res.Obs.UTF8Repaired != c.n || !utf8.Valid(res.Out) || !bytes.Contains(res.Out, []byte("\uFFFD")) {
			t.Errorf("%.40q: outcome %s, repaired %d, valid %v; want %s, %d, valid", c.line, res.Obs.Outcome, res.Obs.UTF8Repaired, utf8.Valid(res.Out), c.outcome, c.n)
		}
	}
	bad := "{\"conversations\": \"\xe9\"}"
	res, _ := comp.Compress(context.Background(), []byte(bad), pos)
	if res.Reject == nil || string(res.Reject.Raw) != bad {
		t.Errorf("reject raw = %q, want the line as read", res.Reject.Raw)
	}
	// A reject's detail is of the repaired text, and says so: a 0xFF
	// outside a string reads as an error about 'ï', U+FFFD's first byte.
	res, _ = comp.Compress(context.Background(), []byte("\xff{\"a\":1}"), pos)
	if res.Reject == nil || !strings.Contains(res.Reject.Detail, "1 ill-formed UTF-8 sequence(s) read as U+FFFD") {
		t.Errorf("reject %+v: the detail does not say the line was repaired", res.Reject)
	}
}

func TestFatalSummarizerStopsRun(t *testing.T) {
	comp := newComp(t, func(o *Options) {
		o.Summarizing.Summarizer = &fixedSummarizer{err: fmt.Errorf("401: %w", summary.ErrFatal)}
	})
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	_, err := Run(context.Background(), "f", &lines{data: []string{line, line}}, &buf{}, comp, Config{Workers: 2})
	if !errors.Is(err, summary.ErrFatal) || !strings.Contains(err.Error(), "f:1") && !strings.Contains(err.Error(), "f:2") {
		t.Fatalf("err = %v", err)
	}
}

type lines struct {
	data []string
	i    int
}

func (l *lines) Next() ([]byte, int64, error) {
	if l.i == len(l.data) {
		return nil, 0, io.EOF
	}
	l.i++
	return []byte(l.data[l.i-1]), int64(l.i), nil
}

type buf struct{ bytes.Buffer }

func (b *buf) Write(rec []byte) error {
	b.Buffer.Write(rec)
	b.Buffer.WriteByte('\n')
	return nil
}

// mixed returns n records of varied sizes and shapes.
func mixed(n int) []string {
	var out []string
	for i := range n {
		switch i % 5 {
		case 0:
			out = append(out, shareGPTLine("system human gpt", 1, 2, 3))
		case 1:
			out = append(out, `not json`)
		default:
			k := 50 + 40*(i%7)
			out = append(out, shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", k, k, k, k, k, k, k, k, k, k, k, k))
		}
	}
	return out
}

func TestRunOrderedAndIdenticalAcrossWorkers(t *testing.T) {
	in := mixed(200)
	var outs []string
	for _, w := range []int{1, 3, 8} {
		comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}} })
		var b buf
		var seen []int64
		sum, err := Run(context.Background(), "f", &lines{data: in}, &b, comp, Config{Workers: w, OnResult: func(r Result) error {
			seen = append(seen, r.Obs.Line)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range seen {
			if l != int64(i+1) {
				t.Fatalf("workers %d: result %d is line %d: not in input order", w, i, l)
			}
		}
		if sum.RecordsIn() != 200 || sum.RecordsRejected() != 40 || sum.RecordsOut() != 160 {
			t.Fatalf("in %d out %d rejected %d", sum.RecordsIn(), sum.RecordsOut(), sum.RecordsRejected())
		}
		if got := strings.Count(b.String(), "\n"); got != 160 {
			t.Fatalf("wrote %d records, want 160", got)
		}
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Fatal("output differs with the number of workers")
	}
}

// blockingRemote waits until want calls are in flight at once, proving
// that records waiting on the network do not hold CPU slots.
type blockingRemote struct {
	mu       sync.Mutex
	inflight int
	peak     int
	want     int
	release  chan struct{}
	once     sync.Once
}

func (b *blockingRemote) Remote() bool { return true }

func (b *blockingRemote) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	b.mu.Lock()
	b.inflight++
	b.peak = max(b.peak, b.inflight)
	if b.inflight >= b.want {
		b.once.Do(func() { close(b.release) })
	}
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-ctx.Done():
		return summary.Result{}, ctx.Err()
	case <-time.After(20 * time.Second):
		return summary.Result{}, errors.New("calls never overlapped: the CPU slot was held while waiting")
	}
	b.mu.Lock()
	b.inflight--
	b.mu.Unlock()
	return summary.Result{Text: "[CONTEXT SUMMARY]: r", APICalls: 1}, nil
}

func TestRemoteSummarizerDoesNotHoldCPU(t *testing.T) {
	br := &blockingRemote{want: 6, release: make(chan struct{})}
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = br })
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	var in []string
	for range 12 {
		in = append(in, line)
	}
	sum, err := Run(context.Background(), "f", &lines{data: in}, &buf{}, comp, Config{Workers: 1, InFlight: 12})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Count(outcome.Compressed) != 12 || br.peak < 6 {
		t.Fatalf("compressed %d, peak in flight %d", sum.Count(outcome.Compressed), br.peak)
	}
}

// slotCounter is a remote summarizer that sends each "request" within
// req.Network, as the LLM client does, and records the peak it saw.
type slotCounter struct {
	mu             sync.Mutex
	inflight, peak int
	noBound        bool // a request came without req.Network
}

func (s *slotCounter) Remote() bool { return true }

func (s *slotCounter) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	if req.Network == nil {
		s.mu.Lock()
		s.noBound = true
		s.mu.Unlock()
	} else {
		if err := req.Network.Acquire(ctx, 1); err != nil {
			return summary.Result{}, err
		}
		defer req.Network.Release(1)
	}
	s.mu.Lock()
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // the request is outstanding
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
	return summary.Result{Text: "[CONTEXT SUMMARY]: r", APICalls: 1}, nil
}

// TestRunBoundsNetwork: Run owns the bound on requests in flight and hands
// it to the summarizer; 40 records in a window of 40 never have more than
// Network requests out at once.
func TestRunBoundsNetwork(t *testing.T) {
	sc := &slotCounter{}
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = sc })
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	in := make([]string, 40)
	for i := range in {
		in[i] = line
	}
	sum, err := Run(context.Background(), "f", &lines{data: in}, &buf{}, comp, Config{Workers: 2, InFlight: 40, Network: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sc.noBound || sc.peak > 3 || sum.Count(outcome.Compressed) != 40 {
		t.Fatalf("unbounded request %v, peak %d (limit 3), compressed %d", sc.noBound, sc.peak, sum.Count(outcome.Compressed))
	}
}

func TestDryRunDoesNotCallRemote(t *testing.T) {
	br := &blockingRemote{want: 1, release: make(chan struct{})}
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = br; o.DryRun = true })
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	res, err := comp.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	// 1200 − the region's 400 + the summary's 50 + the notice's 1 word.
	if br.peak != 0 || res.Obs.Outcome != outcome.Compressed || res.Obs.TokensAfter != 1200-400+50+1 {
		t.Fatalf("calls %d outcome %s after %d", br.peak, res.Obs.Outcome, res.Obs.TokensAfter)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	br := &blockingRemote{want: 1000, release: make(chan struct{})}
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = br })
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	done := make(chan error)
	go func() {
		_, err := Run(ctx, "f", &lines{data: []string{line, line, line}}, &buf{}, comp, Config{Workers: 1})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPerRecordMetricsAndPairing(t *testing.T) {
	comp := newComp(t, func(o *Options) {
		o.PerRecordMetrics = true
		o.Budget.Target = 30
		o.Budget.SummaryTokens = 2
		o.Budget.LastN = 2
	})
	line := `{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}, ` +
		`{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "a", "content": "` + words(20, "r") + `"}, ` +
		`{"role": "assistant", "content": null, "tool_calls": [{"id": "b", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "b", "content": "` + words(20, "r") + `"}, ` +
		`{"role": "assistant", "content": "done"}, {"role": "user", "content": "thanks"}]}`
	res, err := comp.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed || len(res.Pairing) != 0 {
		t.Fatalf("outcome %s region %v pairing %v", res.Obs.Outcome, res.Obs.Region, res.Pairing)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(res.Out, &out); err != nil || out["compression_metrics"] == nil {
		t.Fatalf("no compression_metrics: %s", res.Out)
	}
}

var _ tokenize.Counter = wordCounter{}

// hangingSummarizer waits until its context ends.
type hangingSummarizer struct{}

func (hangingSummarizer) Remote() bool { return true }

func (hangingSummarizer) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	<-ctx.Done()
	return summary.Result{APICalls: 1, APIErrors: 1}, ctx.Err()
}

// TestRecordTimeout: a record whose summary does not come back in time is
// summary_failed and written unchanged; the run goes on.
func TestRecordTimeout(t *testing.T) {
	comp := newComp(t, func(o *Options) {
		o.Summarizing.Summarizer = hangingSummarizer{}
		o.Summarizing.RecordTimeout = 20 * time.Millisecond
	})
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	var b buf
	sum, err := Run(context.Background(), "f", &lines{data: []string{line, line}}, &b, comp, Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Count(outcome.SummaryFailed) != 2 || b.String() != line+"\n"+line+"\n" {
		t.Fatalf("summary_failed %d, output %q", sum.Count(outcome.SummaryFailed), b.String())
	}
}

// TestByteBudget: with a byte budget smaller than every record, records
// are admitted one at a time and the run still completes in order.
func TestByteBudget(t *testing.T) {
	in := mixed(40)
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}} })
	var want, got buf
	if _, err := Run(context.Background(), "f", &lines{data: in}, &want, comp, Config{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), "f", &lines{data: in}, &got, comp, Config{Workers: 2, InFlightBytes: 10}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatal("a tiny byte budget changed the output")
	}
}

// TestNoticeIsBudgeted: the notice appended to the system turn is counted
// when the region is sized. Without it this record's region holds exactly
// what the summary alone needs (turns 4-7, 400 tokens: 1250 − 400 + 50 =
// 900, the target), and the notice's word made the output 901 tokens, over
// target; now the region takes the next call and its result.
// With turn framing (TurnOverhead) the summary turn's own framing is
// reserved too.
func TestNoticeIsBudgeted(t *testing.T) {
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt tool gpt human",
		100, 0, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 50)
	full := &fixedSummarizer{text: "[CONTEXT SUMMARY]: " + words(48, "s")} // 50 words: S exactly
	for _, tc := range []struct {
		name     string
		notice   bool
		overhead int
	}{{"notice", true, 0}, {"framing", false, 3}, {"both", true, 2}, {"neither", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			comp := newComp(t, func(o *Options) {
				o.Summarizing.Summarizer, o.Placement.AddNotice, o.Counting.TurnOverhead = full, tc.notice, tc.overhead
				o.Budget.Target += 14 * tc.overhead // the same room per turn as without framing
			})
			res, err := comp.Compress(context.Background(), []byte(line), pos)
			if err != nil {
				t.Fatal(err)
			}
			target := 900 + 14*tc.overhead
			if res.Obs.Outcome != outcome.Compressed || res.Obs.TokensAfter > target {
				t.Fatalf("outcome %s, %d tokens after, target %d", res.Obs.Outcome, res.Obs.TokensAfter, target)
			}
			// Within the target with the notice in it: a run that drops the
			// notice fits trivially.
			if got := strings.Contains(string(res.Out), " NOTICE"); got != tc.notice {
				t.Fatalf("notice in the output: %v, want %v", got, tc.notice)
			}
		})
	}
}

// TestNoNewPairingProblem: in an OpenAI record with a user turn between a
// call and one of its results (broken input: b's result comes late), the
// region used to start at that user turn and take b's result with it,
// leaving call b without a result. Now the region keeps the pair whole:
// the output has no pairing problem the input did not have.
func TestNoNewPairingProblem(t *testing.T) {
	comp := newComp(t, func(o *Options) {
		o.Budget.Target = 40
		o.Budget.SummaryTokens = 2
		o.Budget.LastN = 2
	})
	call := func(ids ...string) string {
		var cs []string
		for _, id := range ids {
			cs = append(cs, `{"id": "`+id+`", "type": "function", "function": {"name": "ls", "arguments": "{}"}}`)
		}
		return `{"role": "assistant", "content": null, "tool_calls": [` + strings.Join(cs, ", ") + `]}`
	}
	result := func(id string, n int) string {
		return `{"role": "tool", "tool_call_id": "` + id + `", "content": "` + words(n, "r") + `"}`
	}
	line := `{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}, ` +
		call("a", "b") + `, ` + result("a", 3) + `, {"role": "user", "content": "` + words(10, "u") + `"}, ` + result("b", 20) + `, ` +
		call("c") + `, ` + result("c", 20) + `, {"role": "assistant", "content": "` + words(10, "d") + `"}, ` +
		`{"role": "assistant", "content": "done"}, {"role": "user", "content": "thanks"}]}`
	res, err := comp.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	// Without snap.KeepPairs the region was [4,8) and call b lost its result.
	if res.Obs.Region == nil || len(res.Pairing) > res.Obs.PairingProblemsBefore {
		t.Fatalf("outcome %s region %v: %d pairing problems after, %d before: %v",
			res.Obs.Outcome, res.Obs.Region, len(res.Pairing), res.Obs.PairingProblemsBefore, res.Pairing)
	}
}

// TestLlama3IPythonIsToolResult: Llama-3 writes tool results as role
// "ipython", often without a tool_call_id. They are tool results: the
// region never starts or ends between a call and its result, so a kept
// call's result is never summarised away while the call stays (nor a
// result kept whose call is gone). Before, "ipython" was an unknown role,
// and the region was free to stop right before one.
func TestLlama3IPythonIsToolResult(t *testing.T) {
	call := func(id string) string {
		return `{"role": "assistant", "content": null, "tool_calls": [{"id": "` + id + `", "type": "function", "function": {"name": "python", "arguments": "{}"}}]}`
	}
	result := func(n int) string {
		return `{"role": "ipython", "content": "` + words(n, "r") + `"}`
	}
	var turns []string
	turns = append(turns, `{"role": "system", "content": "s"}`, `{"role": "user", "content": "q"}`)
	for i, n := range []int{30, 30, 30, 30, 30, 30} {
		turns = append(turns, call(fmt.Sprintf("c%d", i)), result(n))
	}
	turns = append(turns, `{"role": "assistant", "content": "done"}`, `{"role": "user", "content": "thanks"}`)
	line := `{"messages": [` + strings.Join(turns, ", ") + `]}`
	for _, target := range []int{60, 75, 90, 110, 130, 150} {
		for _, lastN := range []int{1, 2, 3, 4, 5} {
			comp := newComp(t, func(o *Options) {
				o.Budget.Target = target
				o.Budget.SummaryTokens = 2
				o.Budget.LastN = lastN
			})
			res, err := comp.Compress(context.Background(), []byte(line), pos)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := traj.Decode(res.Out, pos, traj.Schema{})
			if err != nil {
				t.Fatalf("output: %v", err)
			}
			for i, tu := range rec.Turns {
				if tu.Name != "ipython" {
					continue
				}
				if tu.Role != traj.RoleTool {
					t.Fatalf("ipython turn read as %q, not a tool result", tu.Role)
				}
				if prev := rec.Turns[i-1]; prev.Role != traj.RoleTool && len(prev.CallIDs) == 0 {
					t.Fatalf("target %d last %d: region %v: ipython turn %d follows %q %q, not its call", target, lastN, res.Obs.Region, i, prev.Name, prev.Text)
				}
			}
			for i, tu := range rec.Turns {
				if len(tu.CallIDs) > 0 && (i+1 == len(rec.Turns) || rec.Turns[i+1].Name != "ipython") {
					t.Fatalf("target %d last %d: region %v: call at %d lost its ipython result", target, lastN, res.Obs.Region, i)
				}
			}
		}
	}
}

// TestTwoTurnListsNoted: a record holding "conversations" and "messages"
// with the same turns is compressed by the one read, which the observation
// names; one whose lists differ is rejected naming both keys.
func TestTwoTurnListsNoted(t *testing.T) {
	comp := newComp(t, nil)
	conv := `"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]`
	line := `{` + conv + `, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}`
	res, err := comp.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.SkippedUnderTarget || res.Obs.TurnListRead != "conversations" || string(res.Out) != line {
		t.Fatalf("outcome %s read %q out %s", res.Obs.Outcome, res.Obs.TurnListRead, res.Out)
	}
	line = `{` + conv + `, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "other"}]}`
	res, err = comp.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reject == nil || res.Reject.Reason != "two_turn_lists" || !strings.Contains(res.Reject.Detail, `"conversations" and "messages"`) {
		t.Fatalf("differing lists: %+v", res.Reject)
	}
}

// unfitErr is a per-record error of a sink (as format/parquet's RowError).
type unfitErr struct{ msg string }

func (e unfitErr) Error() string { return e.msg }
func (unfitErr) RecordUnfit()    {}

// pickySink refuses, as an output schema would, the records that hold
// refuse, and fails for good on those that hold fatal.
type pickySink struct {
	buf
	refuse, fatal string
}

func (s *pickySink) Write(rec []byte) error {
	switch {
	case s.fatal != "" && bytes.Contains(rec, []byte(s.fatal)):
		return errors.New("disk full")
	case bytes.Contains(rec, []byte(s.refuse)):
		return fmt.Errorf("out.parquet: row 1: %w", unfitErr{`key "conversations[1].value": want an array, got string`})
	}
	return s.buf.Write(rec)
}

// TestRunRejectsWhatTheSinkCannotHold: a record the sink does not take (an
// Unfit error) is rejected as output_schema, with the sink's error and its
// input line, and the run goes on; any other write error ends the run.
func TestRunRejectsWhatTheSinkCannotHold(t *testing.T) {
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}} })
	long := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	short := shareGPTLine("system human gpt", 1, 2, 3)
	in := []string{short, long, short}
	sink := &pickySink{refuse: "[CONTEXT SUMMARY]"}
	var rejects []*Reject
	sum, err := Run(context.Background(), "f", &lines{data: in}, sink, comp, Config{Workers: 2, OnResult: func(r Result) error {
		if r.Reject != nil {
			rejects = append(rejects, r.Reject)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.RecordsIn() != 3 || sum.RecordsOut() != 2 || sum.RecordsRejected() != 1 {
		t.Fatalf("in %d out %d rejected %d, want 3, 2, 1", sum.RecordsIn(), sum.RecordsOut(), sum.RecordsRejected())
	}
	if got := strings.Count(sink.String(), "\n"); got != 2 {
		t.Fatalf("wrote %d records, want 2", got)
	}
	if len(rejects) != 1 {
		t.Fatalf("%d rejects, want 1", len(rejects))
	}
	r := rejects[0]
	if r.Reason != RejectOutputSchema || r.Pos.Line != 2 || string(r.Raw) != long ||
		!strings.Contains(r.Detail, `row 1: key "conversations[1].value": want an array, got string`) {
		t.Fatalf("reject %+v (raw %.60s)", r, r.Raw)
	}

	sink = &pickySink{refuse: "[CONTEXT SUMMARY]", fatal: `"system"`}
	if _, err := Run(context.Background(), "f", &lines{data: in}, sink, comp, Config{Workers: 2}); err == nil || !strings.Contains(err.Error(), "writing output: disk full") {
		t.Fatalf("err = %v, want the write error to end the run", err)
	}
}

type panickingSummarizer struct{}

func (panickingSummarizer) Remote() bool { return false }

func (panickingSummarizer) Summarize(context.Context, summary.Request) (summary.Result, error) {
	panic("a bug of ours, in a worker goroutine")
}

// A panic in a worker goroutine ends the run with a crash error holding
// the panic and its stack; it does not kill the process (which would exit
// 2, the usage code).
func TestRunReturnsWorkerPanic(t *testing.T) {
	comp := newComp(t, func(o *Options) { o.Summarizing.Summarizer = panickingSummarizer{} })
	line := shareGPTLine("system human gpt tool gpt tool gpt tool gpt tool gpt human", 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	_, err := Run(context.Background(), "f", &lines{data: []string{line, line, line}}, &buf{}, comp, Config{Workers: 2})
	ce := crash.As(err)
	if ce == nil {
		t.Fatalf("err = %v, want a crash error", err)
	}
	if !strings.Contains(ce.Error(), "internal error: a bug of ours, in a worker goroutine") || !strings.Contains(string(ce.Stack), "panickingSummarizer") {
		t.Fatalf("crash %q, stack:\n%s", ce, ce.Stack)
	}
}
