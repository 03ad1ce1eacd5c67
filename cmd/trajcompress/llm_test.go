package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
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
