package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

const (
	keyEnv  = "TRAJCOMPRESS_TEST_LLM_KEY"
	testKey = "sk-test-Zq9Xv7DistinctiveKey-4242"
)

// quarter counts len/4 tokens, like a cheap tokenizer.
type quarter struct{}

func (quarter) Count(s string) int { return len(s) / 4 }

// serve starts cfg's mock on 127.0.0.1 and returns it with its base URL.
func serve(t *testing.T, cfg mock.Config) (*mock.Server, string) {
	t.Helper()
	s := mock.New(cfg)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close() // release hanging handlers before the server waits on them
		hs.Close()
	})
	return s, hs.URL + "/v1"
}

// client returns a client of baseURL with fast retries and a private cache.
func client(t *testing.T, baseURL string, mod func(*Config)) *Client {
	t.Helper()
	t.Setenv(keyEnv, testKey)
	cfg := Config{
		Model:         "test-model",
		BaseURL:       baseURL,
		APIKeyEnv:     keyEnv,
		Temperature:   0.3,
		RetryDelay:    time.Millisecond,
		MaxRetryDelay: 4 * time.Millisecond,
		Timeout:       10 * time.Second,
		CacheDir:      t.TempDir(),
		Counter:       quarter{},
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// region is a request of n turns of about size bytes each.
// region makes a request of n turns of size characters, at least 100: the
// mock's reply (about 25 tokens under quarter) must be shorter than the
// region it replaces, or Validate rejects it.
func region(n, size int) summary.Request {
	size = max(size, 100)
	turns := make([]traj.Turn, n)
	for i := range turns {
		role, name := traj.RoleAssistant, "gpt"
		if i%2 == 1 {
			role, name = traj.RoleTool, "tool"
		}
		text := fmt.Sprintf("turn %d: ", i)
		turns[i] = traj.Turn{Role: role, Name: name, Text: text + strings.Repeat("x", max(size-len(text), 0))}
	}
	return summary.Request{Turns: turns, Start: 3, TargetTokens: 100, RecordID: "data.jsonl:7"}
}

func TestSummarizeRequestShape(t *testing.T) {
	srv, url := serve(t, mock.Config{Record: true, APIKey: testKey})
	seed := 1234
	c := client(t, url, func(c *Config) {
		c.Seed = &seed
		c.ExtraBody = map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}
	})
	req := region(3, 40)
	req.Turns[0].Text = "Der Nutzer fragt nach dem Wetter in Köln."
	res, err := c.Summarize(context.Background(), req)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	if !strings.HasPrefix(res.Text, summary.Prefix+" mock summary of turns 3-5") {
		t.Errorf("text = %q", res.Text)
	}
	if res.APICalls != 1 || res.APIErrors != 0 || res.CacheHit || res.Chunks != 1 {
		t.Errorf("result = %+v", res)
	}
	got := srv.Received()
	if len(got) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(got))
	}
	r := got[0]
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", r.Path)
	}
	if r.Authorization != "Bearer "+testKey {
		t.Errorf("Authorization header is not the bearer key")
	}
	if res.PromptTokens != (len(r.Request.Messages[0].Content)+3)/4 || res.CompletionTokens == 0 {
		t.Errorf("usage not taken from the response: %+v", res)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"model": "test-model", "max_tokens": 200.0, "max_completion_tokens": 200.0,
		"temperature": 0.3, "seed": 1234.0, "stream": false, "n": 1.0,
	} {
		if body[k] != want {
			t.Errorf("body[%q] = %v, want %v", k, body[k], want)
		}
	}
	if kw, _ := body["chat_template_kwargs"].(map[string]any); kw["enable_thinking"] != false {
		t.Errorf("extra body missing: %v", body["chat_template_kwargs"])
	}
	msgs := r.Request.Messages
	if len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("messages = %+v", msgs)
	}
	for _, want := range []string{
		"SAME LANGUAGE", "[Turn 3 - GPT]:\nDer Nutzer fragt nach dem Wetter in Köln.",
		"[Turn 4 - TOOL]:\n", "[Turn 5 - GPT]:\n", "Target approximately 100 tokens",
		"exact values", `starting with "[CONTEXT SUMMARY]:"`,
	} {
		if !strings.Contains(msgs[0].Content, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
}

func TestOmitTemperatureAndUsageFallback(t *testing.T) {
	srv, url := serve(t, mock.Config{Record: true, OmitUsage: true})
	c := client(t, url, func(c *Config) { c.OmitTemperature = true })
	res, err := c.Summarize(context.Background(), region(2, 100))
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Received()[0]
	if strings.Contains(string(r.Raw), "temperature") {
		t.Errorf("temperature sent: %s", r.Raw)
	}
	var q quarter
	// The completion is counted as received: without the end marker
	// Normalize adds (the mock's reply carries the prefix already).
	wantPrompt, wantCompletion := q.Count(r.Request.Messages[0].Content), q.Count(strings.TrimSuffix(res.Text, "\n"+summary.EndMarker))
	if res.PromptTokens != wantPrompt || res.CompletionTokens != wantCompletion {
		t.Errorf("local usage = %d/%d, want %d/%d", res.PromptTokens, res.CompletionTokens,
			wantPrompt, wantCompletion)
	}
}

func TestKeyNeverLeaks(t *testing.T) {
	echo := `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`
	srv, url := serve(t, mock.Config{})
	dir := t.TempDir()
	c := client(t, url, func(c *Config) { c.CacheDir = dir; c.MaxRetries = 2 })
	var errs []error
	// A server that echoes the key in retryable and fatal errors.
	srv.Push(mock.Fault{Kind: mock.KindStatus, Status: 500, Body: echo},
		mock.Fault{Kind: mock.KindStatus, Status: 500, Body: echo})
	_, err := c.Summarize(context.Background(), region(2, 40))
	errs = append(errs, err)
	if _, err := c.Summarize(context.Background(), region(3, 40)); err != nil { // succeeds and writes a cache entry
		t.Fatal(err)
	}
	srv.Push(mock.Fault{Kind: mock.KindStatus, Status: 401, Body: echo})
	_, err = c.Summarize(context.Background(), region(4, 40))
	errs = append(errs, err)
	_, err = c.Summarize(context.Background(), region(5, 40))
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("error %d is nil", i)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testKey) {
			t.Errorf("error %d leaks the key: %v", i, err)
		}
		if !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("error %d lost the redacted server message: %v", i, err)
		}
	}
	if s := fmt.Sprintf("%+v %#v", c.Stats(), c.Stats()); strings.Contains(s, testKey) {
		t.Errorf("stats leak the key")
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
			if b, _ := os.ReadFile(p); strings.Contains(string(b), testKey) {
				t.Errorf("cache file %s holds the key", p)
			}
		}
		return err
	})
	if n == 0 {
		t.Errorf("no cache file written")
	}
}

func TestNew(t *testing.T) {
	t.Setenv("TRAJCOMPRESS_TEST_UNSET", "")
	_, err := New(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "TRAJCOMPRESS_TEST_UNSET", CacheDir: CacheDisabled})
	if err == nil || !strings.Contains(err.Error(), "TRAJCOMPRESS_TEST_UNSET") {
		t.Errorf("missing key: error %v does not name the variable", err)
	}
	t.Setenv(keyEnv, testKey)
	_, err = New(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: keyEnv, ExtraBody: map[string]any{"f": func() {}}, CacheDir: CacheDisabled})
	if err == nil {
		t.Errorf("unmarshalable extra body accepted")
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Model: "m", BaseURL: "https://openrouter.ai/api/v1"}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no model", func(c *Config) { c.Model = " " }, "model"},
		{"no base url", func(c *Config) { c.BaseURL = "" }, "base_url"},
		{"not http", func(c *Config) { c.BaseURL = "ftp://x/v1" }, "base_url"},
		{"credentials in url", func(c *Config) { c.BaseURL = "https://u:p@x/v1" }, "credentials"},
		{"temperature", func(c *Config) { c.Temperature = 3 }, "temperature"},
		{"retries", func(c *Config) { c.MaxRetries = -1 }, "max_retries"},
		{"retry delay", func(c *Config) { c.RetryDelay = -1 }, "retry_delay"},
		{"concurrency", func(c *Config) { c.MaxConcurrent = -1 }, "max_concurrent_requests"},
		{"rpm", func(c *Config) { c.RPM = -1 }, "rpm"},
		{"tpm", func(c *Config) { c.TPM = -1 }, "tpm"},
		{"timeout", func(c *Config) { c.Timeout = -1 }, "timeout"},
		{"reserved extra", func(c *Config) { c.ExtraBody = map[string]any{"max_tokens": 1} }, "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mod(&c)
			err := c.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	_, url := serve(t, mock.Config{})
	c := client(t, url, nil)
	req := region(2, 10)
	req.TargetTokens = 0
	if _, err := c.Summarize(context.Background(), req); err == nil {
		t.Errorf("zero target accepted")
	}
	if _, err := c.Summarize(context.Background(), summary.Request{TargetTokens: 10}); err == nil {
		t.Errorf("empty region accepted")
	}
}

func TestConcurrencyLimit(t *testing.T) {
	srv, url := serve(t, mock.Config{Latency: 20 * time.Millisecond, ErrorRate: 0.2, Seed: 7, RetryAfter: "0"})
	c := client(t, url, func(c *Config) { c.MaxRetries = 10 })
	const n = 40
	net := semaphore.NewWeighted(4) // the bound the pipeline passes in each request
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			req := region(2+i%5, 30+i)
			req.Network = net
			_, errs[i] = c.Summarize(context.Background(), req)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if p := srv.MaxInFlight(); p > 4 || p < 1 {
		t.Errorf("server saw %d requests in flight, limit 4", p)
	}
	st := c.Stats()
	if st.Summaries != n || st.Calls != srv.Requests() || st.Calls-st.APIErrors != n {
		t.Errorf("stats = %+v, server requests %d", st, srv.Requests())
	}
}

func TestEstimateRequest(t *testing.T) {
	req := region(3, 100)
	e := EstimateRequest(req, quarter{})
	want := quarter{}.Count(RegionPrompt(req.Turns, req.Start, req.TargetTokens))
	if e.Requests != 1 || e.PromptTokens != want || e.MaxCompletionTokens != 200 || e.Cached {
		t.Errorf("estimate = %+v, want prompt %d", e, want)
	}
}
