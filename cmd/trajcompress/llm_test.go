package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/fixtures/gen"
)

const testKey = "sk-test-DO-NOT-LEAK-4f1c"

type llmRun struct {
	code           int
	stderr         string
	out, metrics   string
	outcomes       []map[string]any
	report         map[string]map[string]any
	outputExists   bool
	inputRecords   int
	outputRecords  int
	rejectsRecords int
}

// runLLM compresses the mixed golden input through the LLM summarizer
// talking to srv on loopback, with fast retries.
func runLLM(t *testing.T, srv *mock.Server, cacheDir string, extra ...string) llmRun {
	t.Helper()
	root := repoRoot(t)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tmp := t.TempDir()
	cfgPath := filepath.Join(tmp, "c.yaml")
	os.WriteFile(cfgPath, []byte("summarization:\n  method: llm\n  api_key_env: TRAJ_TEST_KEY\n  max_retries: 3\n  retry_delay: 0.01\n  model: mock-model\n"), 0o644)
	t.Setenv("TRAJ_TEST_KEY", testKey)
	r := llmRun{out: filepath.Join(tmp, "out.jsonl"), metrics: filepath.Join(tmp, "m.json")}
	in := filepath.Join(root, "fixtures/cases/sharegpt_mixed/input.jsonl")
	args := append([]string{"compress", "--quiet", "--config", cfgPath, "--input", in, "--output", r.out,
		"--metrics", r.metrics, "--outcomes", filepath.Join(tmp, "o.jsonl"), "--rejects", filepath.Join(tmp, "r.jsonl"),
		"--base-url", hs.URL + "/v1", "--cache-dir", cacheDir, "--target-max-tokens", "1200", "--summary-target-tokens", "120"}, extra...)
	var stderr bytes.Buffer
	r.code = run(context.Background(), args, nil, &bytes.Buffer{}, &stderr)
	r.stderr = stderr.String()
	if strings.Contains(r.stderr, testKey) {
		t.Fatalf("API key printed on stderr: %s", r.stderr)
	}
	if b, err := os.ReadFile(r.metrics); err == nil {
		if bytes.Contains(b, []byte(testKey)) {
			t.Fatal("API key in the metrics")
		}
		json.Unmarshal(b, &r.report)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "o.jsonl")); err == nil {
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var m map[string]any
			json.Unmarshal(l, &m)
			r.outcomes = append(r.outcomes, m)
		}
	}
	if b, err := os.ReadFile(r.out); err == nil {
		r.outputExists = true
		r.outputRecords = bytes.Count(b, []byte("\n"))
		if bytes.Contains(b, []byte("Summary generation failed")) || bytes.Contains(b, []byte(testKey)) {
			t.Fatal("placeholder summary or key in the output")
		}
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "r.jsonl")); err == nil {
		r.rejectsRecords = bytes.Count(b, []byte("\n"))
	}
	r.inputRecords = 9 // non-blank lines of the golden input
	return r
}

func countOutcome(r llmRun, o string) int {
	n := 0
	for _, m := range r.outcomes {
		if m["outcome"] == o {
			n++
		}
	}
	return n
}

func TestLLMSummarizerAndCache(t *testing.T) {
	srv := mock.New(mock.Config{})
	cache := t.TempDir()
	first := runLLM(t, srv, cache)
	if first.code != exitPartial { // the input has 3 malformed lines
		t.Fatalf("exit %d: %s", first.code, first.stderr)
	}
	sent := srv.Requests()
	compressed := countOutcome(first, "compressed") + countOutcome(first, "compressed_over_limit")
	if sent == 0 || compressed == 0 {
		t.Fatalf("requests %d, compressed %d", sent, compressed)
	}
	if first.inputRecords != first.outputRecords+first.rejectsRecords {
		t.Fatalf("in %d != out %d + rejected %d", first.inputRecords, first.outputRecords, first.rejectsRecords)
	}
	s := first.report["summarization"]
	if s["method"] != "llm" || s["total_api_calls"].(float64) != float64(sent) || s["cache_misses"].(float64) != float64(compressed) {
		t.Errorf("summarization section %v (sent %d)", s, sent)
	}
	outFirst, _ := os.ReadFile(first.out)

	second := runLLM(t, srv, cache)
	if srv.Requests() != sent {
		t.Fatalf("rerun sent %d more requests; the cache must answer all", srv.Requests()-sent)
	}
	outSecond, _ := os.ReadFile(second.out)
	if a, b := conversations(t, outFirst), conversations(t, outSecond); a != b {
		t.Error("rerun from the cache gave different trajectories")
	}
	if h := second.report["summarization"]["cache_hits"].(float64); int(h) != compressed {
		t.Errorf("cache_hits %v, want %d", h, compressed)
	}
}

func TestLLMFailuresNeverLoseRows(t *testing.T) {
	faults := make([]mock.Fault, 200)
	for i := range faults {
		faults[i] = mock.Fault{Kind: mock.KindServerError, Status: 503}
	}
	t.Run("skip", func(t *testing.T) {
		srv := mock.New(mock.Config{})
		srv.Push(faults...)
		r := runLLM(t, srv, "-")
		if r.code != exitPartial || countOutcome(r, "summary_failed") == 0 {
			t.Fatalf("exit %d, summary_failed %d: %s", r.code, countOutcome(r, "summary_failed"), r.stderr)
		}
		if r.inputRecords != r.outputRecords+r.rejectsRecords {
			t.Fatalf("rows lost: in %d, out %d, rejected %d", r.inputRecords, r.outputRecords, r.rejectsRecords)
		}
		if n := r.report["summary"]["trajectories_failed"].(float64); int(n) != countOutcome(r, "summary_failed") {
			t.Errorf("trajectories_failed %v", n)
		}
		if r.report["summarization"]["retries_by_cause"].(map[string]any)["server_error"] == nil {
			t.Errorf("retries by cause missing: %v", r.report["summarization"])
		}
	})
	t.Run("fallback", func(t *testing.T) {
		srv := mock.New(mock.Config{})
		srv.Push(faults...)
		r := runLLM(t, srv, "-", "--on-summary-failure", "fallback")
		if countOutcome(r, "summary_failed") != 0 || r.report["summarization"]["fallbacks"].(float64) == 0 {
			t.Fatalf("fallback not used: %v", r.report["summarization"])
		}
	})
}

func TestLLMFatalStopsRun(t *testing.T) {
	srv := mock.New(mock.Config{APIKey: "another-key"}) // every request gets 401
	// One request in flight, so "nothing is sent after the 401" is exact.
	r := runLLM(t, srv, "-", "--max-concurrent-requests", "1")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	if r.outputExists {
		t.Error("output put in place after a fatal error")
	}
	if srv.Requests() != 1 {
		t.Errorf("%d requests after a 401, want 1", srv.Requests())
	}
	if !strings.Contains(r.stderr, "401") {
		t.Errorf("stderr does not say why: %s", r.stderr)
	}
}

func TestLLMDryRunSendsNothing(t *testing.T) {
	srv := mock.New(mock.Config{})
	r := runLLM(t, srv, "-", "--dry-run", "--price-in", "1", "--price-out", "4")
	if srv.Requests() != 0 {
		t.Fatalf("dry run sent %d requests", srv.Requests())
	}
	if r.outputExists {
		t.Error("dry run wrote output records")
	}
	s := r.report["summarization"]
	if s["estimated"] != true || s["total_api_calls"].(float64) == 0 || s["cost_usd"] == nil {
		t.Errorf("dry-run estimate: %v", s)
	}
}

// conversations returns the turn lists of a JSONL output, without the
// per-record metrics (whose summarization_api_calls rightly differ between
// a run that called the API and one served from the cache).
func conversations(t *testing.T, b []byte) string {
	t.Helper()
	var out strings.Builder
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m struct {
			C json.RawMessage `json:"conversations"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		out.Write(m.C)
		out.WriteByte('\n')
	}
	return out.String()
}

// TestLLMFatalKeepsFinishedWork: summaries finished before a fatal error
// stay in the cache, so the rerun (after fixing the key) pays nothing for
// them.
func TestLLMFatalKeepsFinishedWork(t *testing.T) {
	srv := mock.New(mock.Config{})
	srv.Push(mock.Fault{Kind: mock.KindOK}, mock.Fault{Kind: mock.KindOK}, mock.Fault{Kind: mock.KindUnauthorized})
	cache := t.TempDir()
	first := runLLM(t, srv, cache, "--max-concurrent-requests", "1")
	if first.code != exitError || first.outputExists {
		t.Fatalf("exit %d, output in place %v", first.code, first.outputExists)
	}
	if srv.Requests() != 3 {
		t.Fatalf("%d requests, want 3 (two answered, then the 401)", srv.Requests())
	}
	second := runLLM(t, srv, cache, "--max-concurrent-requests", "1")
	if second.code != exitPartial {
		t.Fatalf("rerun: exit %d: %s", second.code, second.stderr)
	}
	compressed := countOutcome(second, "compressed") + countOutcome(second, "compressed_over_limit")
	if sent := srv.Requests() - 3; sent != int64(compressed-2) {
		t.Fatalf("rerun sent %d requests for %d summaries: the 2 finished before the 401 were not reused", sent, compressed)
	}
}

// TestResumeSendsNoRequestTwice: an LLM run stopped
// half-way — by a fatal error, then by SIGKILL — and run again pays for
// no summary twice: the summaries finished before the stop are in the
// cache, the finished tasks are not run again. The mock server counts the
// requests: after a clean stop (a 401, one request in flight at most)
// the run and its resume send as many as one uninterrupted run plus the
// refused one, none twice; after a kill, only requests the killed process
// had not cached yet are sent again: at most the 2 in flight and the 2
// whose answers were being checked and cached (the client lets a request's
// slot go when the answer has arrived). The resumed outputs hold the same
// conversations.
func TestResumeSendsNoRequestTwice(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	var b bytes.Buffer
	gen.Generate(gen.Options{Count: 160, Seed: 31, MedianTokens: 3000, P99Tokens: 20000}, func(line []byte) error {
		b.Write(line)
		return b.WriteByte('\n')
	})
	os.WriteFile(in, b.Bytes(), 0o644)
	cfg := filepath.Join(tmp, "c.yaml")
	os.WriteFile(cfg, []byte("compression:\n  target_max_tokens: 4000\nsummarization:\n  method: llm\n  api_key_env: TRAJ_TEST_KEY\n  max_retries: 1\n  retry_delay: 0.01\n  model: mock-model\n"), 0o644)
	t.Setenv("TRAJ_TEST_KEY", testKey)
	args := func(url, out, cache string) []string {
		return []string{"compress", "--quiet", "--config", cfg, "--input", in, "--output", out, "--target-task-size", "1MiB",
			"--base-url", url + "/v1", "--cache-dir", cache, "--max-concurrent-requests", "2"}
	}
	// One uninterrupted run: how many requests, which conversations.
	srv := mock.New(mock.Config{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ref := filepath.Join(tmp, "ref.jsonl")
	var stderr0 bytes.Buffer
	if code := run(context.Background(), args(hs.URL, ref, filepath.Join(tmp, "c0")), nil, io.Discard, &stderr0); code != exitOK && code != exitPartial {
		t.Fatalf("uninterrupted: exit %d: %s", code, stderr0.String())
	}
	want := srv.Requests()
	refB, _ := os.ReadFile(ref)
	if want < 20 {
		t.Fatalf("only %d summaries: the test needs more", want)
	}

	bodies := func(s *mock.Server) (dups int) {
		seen := map[string]bool{}
		for _, r := range s.Received() {
			if r.Fault != mock.KindOK {
				continue
			}
			if seen[string(r.Raw)] {
				dups++
			}
			seen[string(r.Raw)] = true
		}
		return dups
	}
	t.Run("fatal", func(t *testing.T) {
		srv := mock.New(mock.Config{Record: true})
		hs := httptest.NewServer(srv)
		defer hs.Close()
		var script []mock.Fault
		for range want / 2 {
			script = append(script, mock.Fault{Kind: mock.KindOK})
		}
		srv.Push(append(script, mock.Fault{Kind: mock.KindUnauthorized})...)
		out, cache := filepath.Join(tmp, "fatal.jsonl"), filepath.Join(tmp, "c1")
		var stderr bytes.Buffer
		a := append(args(hs.URL, out, cache)[:len(args(hs.URL, out, cache))-2], "--max-concurrent-requests", "1")
		if code := run(context.Background(), a, nil, io.Discard, &stderr); code != exitError || !strings.Contains(stderr.String(), "tasks are done and kept") {
			t.Fatalf("first run: exit %d: %s", code, stderr.String())
		}
		first := srv.Requests()
		if code := run(context.Background(), a, nil, io.Discard, io.Discard); code != exitOK && code != exitPartial {
			t.Fatalf("resumed: exit %d", code)
		}
		got := srv.Requests()
		t.Logf("uninterrupted: %d requests; stopped by a 401 after %d (%d answered), resumed: %d more, %d in all; %d answered twice",
			want, first, first-1, got-first, got, bodies(srv))
		if got != want+1 || bodies(srv) != 0 {
			t.Fatalf("%d requests in all (want %d + the refused one), %d answered twice", got, want, bodies(srv))
		}
		outB, _ := os.ReadFile(out)
		if conversations(t, outB) != conversations(t, refB) {
			t.Fatal("the resumed run's conversations differ from the uninterrupted run's")
		}
	})
	t.Run("kill", func(t *testing.T) {
		srv := mock.New(mock.Config{Record: true, Latency: 5 * time.Millisecond})
		hs := httptest.NewServer(srv)
		defer hs.Close()
		out, cache := filepath.Join(tmp, "kill.jsonl"), filepath.Join(tmp, "c2")
		cmd := cliCmd(t, nil, args(hs.URL, out, cache)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for srv.Requests() < want/2 {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		first := srv.Requests()
		if code := run(context.Background(), args(hs.URL, out, cache), nil, io.Discard, io.Discard); code != exitOK && code != exitPartial {
			t.Fatalf("resumed: exit %d", code)
		}
		got := srv.Requests()
		dups := bodies(srv)
		t.Logf("uninterrupted: %d requests; killed after %d, resumed: %d more, %d in all; %d sent again (not yet cached at the kill: at most 4)",
			want, first, got-first, got, dups)
		if dups > 4 || got > want+4 {
			t.Fatalf("%d requests in all for %d summaries, %d sent twice: more than the killed process could have had uncached", got, want, dups)
		}
		outB, _ := os.ReadFile(out)
		if conversations(t, outB) != conversations(t, refB) {
			t.Fatal("the resumed run's conversations differ from the uninterrupted run's")
		}
	})
}

// TestLLMRequestsRedacted: a secret in a region to summarise reaches the
// endpoint as its marker only; with redaction off it would be sent.
func TestLLMRequestsRedacted(t *testing.T) {
	root := repoRoot(t)
	in := filepath.Join(root, "fixtures/cases/prepass_secrets/input.jsonl")
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	const jwtStart = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZ2VudCIs"
	if !bytes.Contains(raw, []byte(jwtStart)) {
		t.Fatal("the input lost its planted JWT")
	}
	for _, redaction := range []bool{true, false} {
		srv := mock.New(mock.Config{Record: true})
		hs := httptest.NewServer(srv)
		tmp := t.TempDir()
		cfgPath := filepath.Join(tmp, "c.yaml")
		cfg := "summarization:\n  method: llm\n  api_key_env: TRAJ_TEST_KEY\n  model: mock-model\n"
		if !redaction {
			cfg += "redaction:\n  enabled: false\n"
		}
		os.WriteFile(cfgPath, []byte(cfg), 0o644)
		t.Setenv("TRAJ_TEST_KEY", testKey)
		args := []string{"compress", "--quiet", "--config", cfgPath, "--input", in, "--output", filepath.Join(tmp, "o.jsonl"),
			"--base-url", hs.URL + "/v1", "--cache-dir", "-", "--target-max-tokens", "2500", "--summary-target-tokens", "200"}
		var stderr bytes.Buffer
		code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr)
		hs.Close()
		if code != exitPartial { // one malformed line
			t.Fatalf("redaction %v: exit %d: %s", redaction, code, stderr.String())
		}
		sent, marked := false, false
		for _, rq := range srv.Received() {
			sent = sent || bytes.Contains(rq.Raw, []byte(jwtStart))
			marked = marked || bytes.Contains(rq.Raw, []byte("[REDACTED:jwt]"))
		}
		if len(srv.Received()) == 0 {
			t.Fatalf("redaction %v: no request sent", redaction)
		}
		if redaction && (sent || !marked) {
			t.Errorf("redaction on: JWT sent %v, marker sent %v", sent, marked)
		}
		if !redaction && !sent {
			t.Errorf("redaction off: the JWT was not in any request (the test does not reach the region)")
		}
	}
}

// batchArgs are the compress arguments of the batch tests: input (from
// the repository root) through the LLM summarizer at srvURL, cache in
// cache.
func batchArgs(t *testing.T, tmp, srvURL, cache, input string, extra ...string) []string {
	t.Helper()
	cfgPath := filepath.Join(tmp, "c.yaml")
	os.WriteFile(cfgPath, []byte("summarization:\n  method: llm\n  api_key_env: TRAJ_TEST_KEY\n  max_retries: 2\n  retry_delay: 0.01\n  model: mock-model\n"), 0o644)
	t.Setenv("TRAJ_TEST_KEY", testKey)
	in := filepath.Join(repoRoot(t), input)
	return append([]string{"compress", "--quiet", "--config", cfgPath, "--input", in, "--output", filepath.Join(tmp, "out.jsonl"),
		"--rejects", filepath.Join(tmp, "rejects.jsonl"), "--base-url", srvURL + "/v1", "--cache-dir", cache,
		"--target-max-tokens", "1200", "--summary-target-tokens", "120"}, extra...)
}

type batchReq struct {
	CustomID string `json:"custom_id"`
	Method   string `json:"method"`
	URL      string `json:"url"`
	Body     struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	} `json:"body"`
}

func readBatchReqs(t *testing.T, path string) []batchReq {
	t.Helper()
	var out []batchReq
	for _, l := range readLines(t, path) {
		var r batchReq
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}

// runMockBatch runs the requests file through the mock's Files and
// Batches routes, as a user would through OpenAI's, and returns the
// downloaded output file's path.
func runMockBatch(t *testing.T, url, reqPath, tmp string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "requests.jsonl")
	b, _ := os.ReadFile(reqPath)
	fw.Write(b)
	mw.Close()
	var file, batch map[string]any
	post := func(path, ctype string, r io.Reader, into *map[string]any) {
		resp, err := http.Post(url+path, ctype, r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(into)
	}
	post("/v1/files", mw.FormDataContentType(), &body, &file)
	post("/v1/batches", "application/json", strings.NewReader(`{"input_file_id": "`+file["id"].(string)+`", "endpoint": "/v1/chat/completions", "completion_window": "24h"}`), &batch)
	if batch["status"] != "completed" || batch["error_file_id"] != nil {
		t.Fatalf("batch %v", batch)
	}
	resp, err := http.Get(url + "/v1/files/" + batch["output_file_id"].(string) + "/content")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := filepath.Join(tmp, "results.jsonl")
	data, _ := io.ReadAll(resp.Body)
	os.WriteFile(out, data, 0o644)
	return out
}

const (
	mixed   = "fixtures/cases/sharegpt_mixed/input.jsonl"
	example = "fixtures/example/agent_runs.jsonl.gz"
)

// TestBatchRoundTrip: --batch-export writes the requests and nothing
// else, sending nothing; the mock runs them as a batch; --batch-import
// caches the answers and the run sends zero requests, giving the same
// records as a live run.
func TestBatchRoundTrip(t *testing.T) {
	srv := mock.New(mock.Config{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tmp, cache := t.TempDir(), t.TempDir()
	reqPath := filepath.Join(tmp, "requests.jsonl")
	var stderr bytes.Buffer
	code := run(context.Background(), batchArgs(t, tmp, hs.URL, cache, mixed, "--batch-export", reqPath), nil, &bytes.Buffer{}, &stderr)
	if code != exitPartial { // the input has malformed lines
		t.Fatalf("export: exit %d: %s", code, stderr.String())
	}
	if srv.Requests() != 0 {
		t.Fatalf("export sent %d requests", srv.Requests())
	}
	for _, f := range []string{"out.jsonl", "out_metrics.json", "compression_metrics.json"} {
		if _, err := os.Stat(filepath.Join(tmp, f)); err == nil {
			t.Errorf("export wrote %s", f)
		}
	}
	reqs := readBatchReqs(t, reqPath)
	if len(reqs) == 0 || !strings.Contains(stderr.String(), "wrote "+strconv.Itoa(len(reqs))+" summary requests") || !strings.Contains(stderr.String(), "--batch-import") {
		t.Fatalf("%d requests; stderr: %s", len(reqs), stderr.String())
	}
	if !strings.Contains(stderr.String(), "input records were rejected") { // exit 3 says why
		t.Errorf("the export does not say that input lines were rejected: %s", stderr.String())
	}
	for _, r := range reqs {
		if !strings.HasPrefix(r.CustomID, "tc1-120-") || r.Method != "POST" || r.URL != "/v1/chat/completions" || r.Body.Model != "mock-model" || len(r.Body.Messages) != 1 {
			t.Fatalf("request %+v", r)
		}
	}

	results := runMockBatch(t, hs.URL, reqPath, tmp)
	before := srv.Requests()
	stderr.Reset()
	code = run(context.Background(), batchArgs(t, tmp, hs.URL, cache, mixed, "--batch-import", results), nil, &bytes.Buffer{}, &stderr)
	if code != exitPartial {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	if n := srv.Requests() - before; n != 0 {
		t.Fatalf("the run after the import sent %d requests", n)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("%d summaries imported", len(reqs))) {
		t.Errorf("stderr: %s", stderr.String())
	}
	batchOut, _ := os.ReadFile(filepath.Join(tmp, "out.jsonl"))
	if !bytes.Contains(batchOut, []byte("mock summary")) {
		t.Fatal("no summary in the output")
	}

	// A live run with an empty cache writes the same records.
	live := t.TempDir()
	if code := run(context.Background(), batchArgs(t, live, hs.URL, t.TempDir(), mixed), nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitPartial {
		t.Fatalf("live: exit %d", code)
	}
	// (Their per-record metrics differ: a cached summary made no call.)
	liveOut, _ := os.ReadFile(filepath.Join(live, "out.jsonl"))
	if a, b := withoutRecordMetrics(t, batchOut), withoutRecordMetrics(t, liveOut); a != b {
		t.Errorf("records from the batch differ from a live run's:\n%s\n%s", a, b)
	}
	// Exporting again finds every summary cached.
	stderr.Reset()
	run(context.Background(), batchArgs(t, tmp, hs.URL, cache, mixed, "--batch-export", filepath.Join(tmp, "again.jsonl")), nil, &bytes.Buffer{}, &stderr)
	if len(readLines(t, filepath.Join(tmp, "again.jsonl"))) != 0 || !strings.Contains(stderr.String(), "nothing to request") {
		t.Errorf("second export: %s", stderr.String())
	}
}

// TestBatchImportHandMade: a results file with an answer, a failed
// request, an answer the checks reject, a repeated line, a line not of
// ours, a broken line, and missing ids: only the good answer is cached,
// and the run requests every other region live.
func TestBatchImportHandMade(t *testing.T) {
	srv := mock.New(mock.Config{Record: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tmp, cache := t.TempDir(), t.TempDir()
	reqPath := filepath.Join(tmp, "requests.jsonl")
	if code := run(context.Background(), batchArgs(t, tmp, hs.URL, cache, example, "--target-max-tokens", "8000", "--batch-export", reqPath), nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitPartial {
		t.Fatalf("export: exit %d", code)
	}
	reqs := readBatchReqs(t, reqPath)
	if len(reqs) < 4 {
		t.Fatalf("only %d requests; the test needs 4", len(reqs))
	}
	answer := func(id, content string) string {
		body, _ := json.Marshal(map[string]any{"id": "chatcmpl-x", "object": "chat.completion", "model": "mock-model",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10}})
		return `{"id": "batch_req_1", "custom_id": "` + id + `", "response": {"status_code": 200, "request_id": "r1", "body": ` + string(body) + `}, "error": null}`
	}
	lines := []string{
		answer(reqs[0].CustomID, "[CONTEXT SUMMARY]: the agent read the files and ran the tests."),
		`{"id": "batch_req_2", "custom_id": "` + reqs[1].CustomID + `", "response": null, "error": {"code": "server_error", "message": "internal"}}`,
		answer(reqs[2].CustomID, "[CONTEXT SUMMARY]: "+strings.Repeat("far too long ", 400)),
		answer(reqs[0].CustomID, "[CONTEXT SUMMARY]: a second answer to the first request."),
		answer("someone-else-7", "[CONTEXT SUMMARY]: not ours"),
		`{"custom_id": "tc1-120-5-`,
		// reqs[3:] are missing.
	}
	results := filepath.Join(tmp, "results.jsonl")
	os.WriteFile(results, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	var stderr bytes.Buffer
	code := run(context.Background(), batchArgs(t, tmp, hs.URL, cache, example, "--target-max-tokens", "8000", "--batch-import", results), nil, &bytes.Buffer{}, &stderr)
	if code != exitPartial {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"6 lines: 1 summaries imported", "1 requests failed in the batch map[server_error:1]", "1 answers rejected", "1 repeated", "1 lines of requests trajcompress did not write", "1 lines that are not Batch output lines (lines [6])"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, stderr.String())
		}
	}
	// Every request but the first was made live (the rejected answer was
	// not cached), each once.
	sent := map[string]bool{}
	for _, rq := range srv.Received() {
		sent[rq.Request.Messages[0].Content] = true
	}
	if len(srv.Received()) != len(reqs)-1 || sent[reqs[0].Body.Messages[0].Content] {
		t.Errorf("%d live requests for %d exported; the imported one sent: %v", len(srv.Received()), len(reqs), sent[reqs[0].Body.Messages[0].Content])
	}
	if want := fmt.Sprintf("note: %d summary requests were sent live although 1 answers were imported", len(reqs)-1); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q: %s", want, stderr.String())
	}
	out, _ := os.ReadFile(filepath.Join(tmp, "out.jsonl"))
	if !bytes.Contains(out, []byte("the agent read the files and ran the tests.")) || bytes.Contains(out, []byte("far too long")) {
		t.Error("the output does not hold the imported answer, or holds the rejected one")
	}
}

func TestBatchExportRefused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(repoRoot(t), "fixtures/cases/sharegpt_mixed/input.jsonl")
	for _, args := range [][]string{
		{"compress", "--input", in, "--output", filepath.Join(tmp, "o.jsonl"), "--batch-export", filepath.Join(tmp, "r.jsonl")},                                                 // deterministic
		{"compress", "--input", in, "--summarizer", "llm", "--cache-dir", "-", "--output", filepath.Join(tmp, "o.jsonl"), "--batch-export", filepath.Join(tmp, "r.jsonl")},      // no cache
		{"compress", "--input", in, "--summarizer", "llm", "--cache-dir", t.TempDir(), "--output", filepath.Join(tmp, "o.jsonl"), "--batch-export", in},                         // over the input
		{"compress", "--input", in, "--summarizer", "llm", "--cache-dir", t.TempDir(), "--output", filepath.Join(tmp, "o.jsonl"), "--batch-import", filepath.Join(tmp, "none")}, // missing file
		{"compress", "--input", in, "--summarizer", "llm", "--cache-dir", t.TempDir(), "--output", filepath.Join(tmp, "o.jsonl"), "--batch-export", "-"},                        // not a file: refused before the run
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args[len(args)-2:], code, exitUsage, stderr.String())
		}
	}
}

// withoutRecordMetrics is a JSONL file's records without their
// compression_metrics.
func withoutRecordMetrics(t *testing.T, b []byte) string {
	t.Helper()
	var out []string
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "compression_metrics")
		j, _ := json.Marshal(m)
		out = append(out, string(j))
	}
	return strings.Join(out, "\n")
}
