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
	"time"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/internal/testenv"
)

// Secrets an endpoint's summary may echo: an AWS access key id and a
// GitHub token.
const (
	echoedAWS   = "AKIAQ2W3E4R5T6Y7U2I3"
	echoedGH    = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
	echoSummary = "[CONTEXT SUMMARY]: the agent exported AWS_ACCESS_KEY_ID=" + echoedAWS + " and pushed with " + echoedGH + "."
)

// llmConfigFile writes a config for the LLM summarizer plus extra YAML
// lines and returns its path.
func llmConfigFile(t *testing.T, dir, extra string) string {
	t.Helper()
	p := filepath.Join(dir, "c.yaml")
	os.WriteFile(p, []byte("summarization:\n  method: llm\n  api_key_env: TRAJ_TEST_KEY\n  max_retries: 2\n  retry_delay: 0.01\n  model: mock-model\n"+extra), 0o644)
	t.Setenv("TRAJ_TEST_KEY", testKey)
	return p
}

// TestLLMSummarySecretsRedacted: an endpoint whose summaries echo an AWS
// key and a GitHub token: with redaction on (the default) neither the
// output nor the summary cache holds them, on the run that asks and on the
// rerun served from the cache; with it off they are kept (so the test
// reaches them).
func TestLLMSummarySecretsRedacted(t *testing.T) {
	in := filepath.Join(repoRoot(t), mixed)
	for _, on := range []bool{true, false} {
		srv := mock.New(mock.Config{Reply: func(mock.ChatRequest) string { return echoSummary }})
		hs := httptest.NewServer(srv)
		tmp, cache := t.TempDir(), t.TempDir()
		extra := ""
		if !on {
			extra = "redaction:\n  enabled: false\n"
		}
		cfg := llmConfigFile(t, tmp, extra)
		for pass := range 2 { // the second pass is served from the cache
			out := filepath.Join(tmp, "out.jsonl")
			args := []string{"compress", "--quiet", "--config", cfg, "--input", in, "--output", out,
				"--base-url", hs.URL + "/v1", "--cache-dir", cache, "--target-max-tokens", "1200", "--summary-target-tokens", "120"}
			var stderr bytes.Buffer
			if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitPartial {
				t.Fatalf("redaction %v: exit %d: %s", on, code, stderr.String())
			}
			b, _ := os.ReadFile(out)
			if !bytes.Contains(b, []byte("the agent exported")) {
				t.Fatalf("redaction %v pass %d: no summary of the endpoint in the output", on, pass)
			}
			for _, secret := range []string{echoedAWS, echoedGH} {
				inOut, inCache := bytes.Contains(b, []byte(secret)), testenv.FileHolding(cache, secret) != ""
				if on && (inOut || inCache) {
					t.Errorf("redaction on, pass %d: %s in the output %v, in the cache %v", pass, secret, inOut, inCache)
				}
				if !on && (!inOut || !inCache) {
					t.Errorf("redaction off, pass %d: %s in the output %v, in the cache %v", pass, secret, inOut, inCache)
				}
			}
			if on && !bytes.Contains(b, []byte("[REDACTED:")) {
				t.Errorf("redaction on: no marker in the output")
			}
		}
		hs.Close()
	}
}

// TestBatchImportSecretsRedacted: Batch answers that echo secrets are
// redacted before they are cached, and so before the run writes them.
func TestBatchImportSecretsRedacted(t *testing.T) {
	srv := mock.New(mock.Config{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tmp, cache := t.TempDir(), t.TempDir()
	reqPath := filepath.Join(tmp, "requests.jsonl")
	if code := run(context.Background(), batchArgs(t, tmp, hs.URL, cache, mixed, "--batch-export", reqPath), nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitPartial {
		t.Fatalf("export: exit %d", code)
	}
	reqs := readBatchReqs(t, reqPath)
	var lines []string
	for _, r := range reqs {
		body, _ := json.Marshal(map[string]any{"object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": echoSummary}, "finish_reason": "stop"}}})
		lines = append(lines, `{"id": "batch_req_1", "custom_id": "`+r.CustomID+`", "response": {"status_code": 200, "request_id": "r", "body": `+string(body)+`}, "error": null}`)
	}
	results := filepath.Join(tmp, "results.jsonl")
	os.WriteFile(results, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	var stderr bytes.Buffer
	if code := run(context.Background(), batchArgs(t, tmp, hs.URL, cache, mixed, "--batch-import", results), nil, &bytes.Buffer{}, &stderr); code != exitPartial {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	if srv.Requests() != 0 {
		t.Errorf("%d requests sent after importing every answer", srv.Requests())
	}
	out, _ := os.ReadFile(filepath.Join(tmp, "out.jsonl"))
	if !bytes.Contains(out, []byte("the agent exported")) {
		t.Fatal("no imported summary in the output")
	}
	for _, secret := range []string{echoedAWS, echoedGH} {
		if bytes.Contains(out, []byte(secret)) || testenv.FileHolding(cache, secret) != "" {
			t.Errorf("%s in the output or the cache", secret)
		}
	}
	if want := "answers had secrets redacted"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q: %s", want, stderr.String())
	}
}

// TestLLMTimeoutsSaySo: an endpoint that never answers gives records
// summary_failed with "timed out after N s" naming the setting whose
// limit ran out, not "context deadline exceeded".
func TestLLMTimeoutsSaySo(t *testing.T) {
	in := filepath.Join(repoRoot(t), mixed)
	for _, tc := range []struct{ yaml, want string }{
		{"  request_timeout: 0.3\nprocessing:\n  per_trajectory_timeout: 60\n", "timed out after 0.3 s (summarization.request_timeout)"},
		{"processing:\n  per_trajectory_timeout: 0.5\n", "timed out after 0.5 s (processing.per_trajectory_timeout)"},
	} {
		srv := mock.New(mock.Config{Latency: time.Minute})
		hs := httptest.NewServer(srv)
		tmp := t.TempDir()
		cfg := llmConfigFile(t, tmp, tc.yaml)
		outcomes := filepath.Join(tmp, "o.jsonl")
		args := []string{"compress", "--quiet", "--config", cfg, "--input", in, "--output", filepath.Join(tmp, "out.jsonl"), "--outcomes", outcomes,
			"--base-url", hs.URL + "/v1", "--cache-dir", "-", "--target-max-tokens", "1200", "--summary-target-tokens", "120"}
		var stderr bytes.Buffer
		code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr)
		srv.Close()
		hs.Close()
		if code != exitPartial {
			t.Fatalf("%s: exit %d: %s", tc.want, code, stderr.String())
		}
		b, _ := os.ReadFile(outcomes)
		if !bytes.Contains(b, []byte(tc.want)) || bytes.Contains(b, []byte("deadline exceeded")) {
			t.Errorf("outcomes lack %q:\n%s", tc.want, b)
		}
	}
}

// TestLLMKeyNeverWritten: with --summarizer llm, the run's own API key,
// in a format no rule knows, is in neither the output nor the summary
// cache, as written or case-folded, whether an endpoint echoes it into its
// summaries or an input record holds it; on the run that asks and on the
// rerun served from the cache.
func TestLLMKeyNeverWritten(t *testing.T) {
	const key = "Zq8/Lm3+Vx7~Rt2.Kp9aaaa-Wn4Hs6Yb1Qe5"
	spellings := []string{key, strings.ToLower(key), strings.ToUpper(key)}
	src, err := os.ReadFile(filepath.Join(repoRoot(t), mixed))
	if err != nil {
		t.Fatal(err)
	}
	tmp, cache := t.TempDir(), t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	planted := bytes.Replace(src, []byte(`"What is 2+2?"`), []byte(`"What is 2+2? My key: `+key+`, shouted `+strings.ToUpper(key)+`"`), 1)
	if bytes.Equal(planted, src) {
		t.Fatal("the input changed: nothing to plant the key into")
	}
	os.WriteFile(in, planted, 0o644)
	hs := httptest.NewServer(mock.New(mock.Config{Reply: mock.EchoKeyReply}))
	defer hs.Close()
	cfg := llmConfigFile(t, tmp, "")
	t.Setenv("TRAJ_TEST_KEY", key)
	for pass := range 2 { // the second pass is served from the cache
		out := filepath.Join(tmp, "out.jsonl")
		args := []string{"compress", "--quiet", "--config", cfg, "--input", in, "--output", out, "--overwrite",
			"--base-url", hs.URL + "/v1", "--cache-dir", cache, "--target-max-tokens", "1200", "--summary-target-tokens", "120"}
		var stderr bytes.Buffer
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitPartial && code != exitOK {
			t.Fatalf("pass %d: exit %d: %s", pass, code, stderr.String())
		}
		b, _ := os.ReadFile(out)
		if !bytes.Contains(b, []byte("the agent authenticated with [REDACTED:llm_api_key]")) {
			t.Fatalf("pass %d: no summary of the endpoint, redacted, in the output", pass)
		}
		if !bytes.Contains(b, []byte("What is 2+2? My key: [REDACTED:llm_api_key], shouted [REDACTED:llm_api_key]")) {
			t.Errorf("pass %d: the input record's key not replaced", pass)
		}
		for _, k := range spellings {
			if bytes.Contains(b, []byte(k)) || testenv.FileHolding(cache, k) != "" {
				t.Errorf("pass %d: %q in the output %v, in the cache %q", pass, k, bytes.Contains(b, []byte(k)), testenv.FileHolding(cache, k))
			}
		}
	}
}
