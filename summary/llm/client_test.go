package llm

import (
	"context"
	"encoding/json"
	"errors"
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

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name  string
		fault mock.Fault
		cause string
		cfg   func(*Config)
	}{
		{"429 with Retry-After", mock.Fault{Kind: mock.KindRateLimit, RetryAfter: "0"}, CauseRateLimit, nil},
		{"429 without Retry-After", mock.Fault{Kind: mock.KindRateLimit}, CauseRateLimit, nil},
		{"500", mock.Fault{Kind: mock.KindServerError, Status: 500}, CauseServerError, nil},
		{"502", mock.Fault{Kind: mock.KindServerError, Status: 502}, CauseServerError, nil},
		{"503", mock.Fault{Kind: mock.KindServerError, Status: 503}, CauseServerError, nil},
		{"408", mock.Fault{Kind: mock.KindStatus, Status: 408, Body: "timeout"}, CauseTimeout, nil},
		{"truncated body", mock.Fault{Kind: mock.KindTruncated}, CauseMalformed, nil},
		{"malformed JSON", mock.Fault{Kind: mock.KindMalformed}, CauseMalformed, nil},
		{"finish_reason length", mock.Fault{Kind: mock.KindLength}, CauseLength, nil},
		{"empty content with reasoning", mock.Fault{Kind: mock.KindEmpty}, CauseEmpty, nil},
		{"only a prefix", mock.Fault{Kind: mock.KindOK, Body: "[CONTEXT SUMMARY]:  "}, CauseEmpty, nil},
		{"unclosed think", mock.Fault{Kind: mock.KindOK, Body: "<think>hmm, let me"}, CauseEmpty, nil},
		{"error in 200 body", mock.Fault{Kind: mock.KindStatus, Status: 200,
			Body: `{"error":{"code":502,"message":"provider returned error"}}`}, CauseServerError, nil},
		{"connection dropped", mock.Fault{Kind: mock.KindDrop}, CauseConnection, nil},
		{"hang past the timeout", mock.Fault{Kind: mock.KindHang}, CauseTimeout,
			func(c *Config) { c.Timeout = time.Second }}, // the retry must also answer within it
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := serve(t, mock.Config{})
			c := client(t, url, tt.cfg)
			srv.Push(tt.fault)
			res, err := c.Summarize(context.Background(), region(2, 50))
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if !strings.HasPrefix(res.Text, summary.Prefix+" ") || strings.Count(res.Text, summary.Prefix) != 1 {
				t.Errorf("text = %q", res.Text)
			}
			if res.APICalls != 2 || res.APIErrors != 1 {
				t.Errorf("calls/errors = %d/%d, want 2/1", res.APICalls, res.APIErrors)
			}
			if len(res.Retries) != 1 || res.Retries[tt.cause] != 1 {
				t.Errorf("retries = %v, want %s:1", res.Retries, tt.cause)
			}
			st := c.Stats()
			if st.Calls != 2 || st.APIErrors != 1 || st.ErrorsByCause[tt.cause] != 1 || st.Retries[tt.cause] != 1 || st.Summaries != 1 {
				t.Errorf("stats = %+v", st)
			}
			if srv.Requests() != 2 {
				t.Errorf("server saw %d requests, want 2", srv.Requests())
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, nil) // 3 attempts
	srv.Push(mock.Fault{Kind: mock.KindServerError, Status: 503}, mock.Fault{Kind: mock.KindLength},
		mock.Fault{Kind: mock.KindServerError, Status: 500})
	res, err := c.Summarize(context.Background(), region(2, 50))
	if err == nil {
		t.Fatalf("Summarize succeeded: %q", res.Text)
	}
	if errors.Is(err, summary.ErrFatal) {
		t.Errorf("exhausted retries are fatal: %v", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Cause != CauseServerError || ae.Status != 500 {
		t.Errorf("error %v does not carry the last APIError", err)
	}
	for _, want := range []string{"data.jsonl:7", "3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if res.Text != "" {
		t.Errorf("a failed summary has text %q", res.Text)
	}
	if res.APICalls != 3 || res.APIErrors != 3 || res.Retries[CauseServerError] != 1 || res.Retries[CauseLength] != 1 {
		t.Errorf("result = %+v", res)
	}
	if st := c.Stats(); st.Failed != 1 || st.ErrorsByCause[CauseServerError] != 2 || st.ErrorsByCause[CauseLength] != 1 {
		t.Errorf("stats = %+v", st)
	}
	// The next record is unaffected.
	if _, err := c.Summarize(context.Background(), region(3, 50)); err != nil {
		t.Errorf("next record: %v", err)
	}
}

func TestFatal(t *testing.T) {
	tests := []struct {
		name  string
		fault mock.Fault
		cause string
		hint  string
	}{
		{"401", mock.Fault{Kind: mock.KindUnauthorized}, CauseAuth, "rejected the API key from $" + keyEnv},
		{"403", mock.Fault{Kind: mock.KindForbidden}, CauseAuth, "rejected the API key"},
		{"402", mock.Fault{Kind: mock.KindPayment}, CauseQuota, "out of credits or quota"},
		{"quota 429", mock.Fault{Kind: mock.KindQuota}, CauseQuota, "out of credits or quota"},
		{"billing 429", mock.Fault{Kind: mock.KindStatus, Status: 429,
			Body: `{"error":{"message":"Billing hard limit has been reached"}}`}, CauseQuota, "quota"},
		{"404", mock.Fault{Kind: mock.KindStatus, Status: 404, Body: `{"error":{"message":"model not found"}}`},
			CauseNotFound, "check base_url and model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := serve(t, mock.Config{})
			c := client(t, url, nil)
			srv.Push(tt.fault)
			_, err := c.Summarize(context.Background(), region(2, 50))
			if !errors.Is(err, summary.ErrFatal) {
				t.Fatalf("error %v is not fatal", err)
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Cause != tt.cause {
				t.Errorf("error %v: want cause %s", err, tt.cause)
			}
			if !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error %q lacks %q", err, tt.hint)
			}
			if srv.Requests() != 1 {
				t.Errorf("fatal error retried: %d requests", srv.Requests())
			}
			// Later calls fail at once without sending.
			_, err2 := c.Summarize(context.Background(), region(4, 50))
			if !errors.Is(err2, summary.ErrFatal) || srv.Requests() != 1 {
				t.Errorf("after a fatal error: err %v, %d requests", err2, srv.Requests())
			}
			if st := c.Stats(); st.Fatal != 2 || st.Calls != 1 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

// TestFatalConcurrentWaiters: calls queued for the only request slot must
// see the fatal error of the call holding it and send nothing. The marker
// used to be set after the slot was released, so a waiter could slip in a
// second request (CI saw "2 requests after a 401"). Without the re-check
// after taking the slot this fails every run; with the marker set late it
// fails most runs under -race (as `make test` runs it), rarely without.
func TestFatalConcurrentWaiters(t *testing.T) {
	for round := range 20 {
		srv, url := serve(t, mock.Config{APIKey: "another-key"}) // every request gets 401
		c := client(t, url, nil)
		one := semaphore.NewWeighted(1) // the run's only request slot
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for i := range errs {
			wg.Go(func() {
				req := region(2, 50)
				req.Network = one
				req.Start = i // a distinct prompt each, so the cache cannot answer
				_, errs[i] = c.Summarize(context.Background(), req)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, summary.ErrFatal) {
				t.Fatalf("round %d: call %d: error %v is not fatal", round, i, err)
			}
		}
		if n := srv.Requests(); n != 1 {
			t.Fatalf("round %d: %d requests after a 401, want 1", round, n)
		}
		if st := c.Stats(); st.Fatal != int64(len(errs)) || st.Calls != 1 {
			t.Fatalf("round %d: stats = %+v", round, st)
		}
	}
}

// cancelCounter cancels a context the first time it counts; the client
// counts an answer without usage after it arrived, so the context ends
// between the answer and the return.
type cancelCounter struct {
	quarter
	cancel context.CancelFunc
}

func (c cancelCounter) Count(s string) int {
	c.cancel()
	return c.quarter.Count(s)
}

// TestAnswerKeptWhenContextEnds: a request that was answered is counted
// and its summary kept and cached although ctx ended right after: the
// provider bills it, and a rerun must not pay again.
func TestAnswerKeptWhenContextEnds(t *testing.T) {
	srv, url := serve(t, mock.Config{OmitUsage: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := client(t, url, func(c *Config) { c.Counter = cancelCounter{cancel: cancel} })
	res, err := c.Summarize(ctx, region(2, 100))
	if ctx.Err() == nil {
		t.Fatal("the context did not end during the call")
	}
	if err != nil || !strings.HasPrefix(res.Text, summary.Prefix) || res.APICalls != 1 {
		t.Fatalf("Summarize = %+v, %v; want the billed answer", res, err)
	}
	if st := c.Stats(); st.Calls != 1 || st.Summaries != 1 {
		t.Errorf("stats = %+v", st)
	}
	again, err := c.Summarize(context.Background(), region(2, 100))
	if err != nil || !again.CacheHit || srv.Requests() != 1 {
		t.Errorf("rerun: %+v, %v, %d requests; want a cache hit", again, err, srv.Requests())
	}
}

// TestEndedContextSendsNothing: a call whose ctx had already ended sends
// nothing and counts nothing (the slot's select used to pick the slot
// about half the time, and the failed Do counted as a call).
func TestEndedContextSendsNothing(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		req := region(2, 50)
		req.Start = i
		res, err := c.Summarize(ctx, req)
		if !errors.Is(err, context.Canceled) || res.APICalls != 0 {
			t.Fatalf("call %d: %+v, %v", i, res, err)
		}
	}
	if st := c.Stats(); st.Calls != 0 || st.APIErrors != 0 || srv.Requests() != 0 {
		t.Errorf("stats %+v, %d requests; want nothing sent or counted", st, srv.Requests())
	}
}

// TestRequestCutOffByContext: a request that ctx cuts off is a call and a
// failed request (cause timeout), so the success rate does not rise.
func TestRequestCutOffByContext(t *testing.T) {
	_, url := serve(t, mock.Config{Latency: 2 * time.Second})
	c := client(t, url, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := c.Summarize(ctx, region(2, 50))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the deadline", err)
	}
	if res.APICalls != 1 || res.APIErrors != 1 {
		t.Errorf("result counts %d calls, %d errors; want 1 and 1", res.APICalls, res.APIErrors)
	}
	if st := c.Stats(); st.Calls != 1 || st.APIErrors != 1 || st.ErrorsByCause[CauseTimeout] != 1 || st.Failed != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestBadRequestNotRetried(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, nil)
	srv.Push(mock.Fault{Kind: mock.KindStatus, Status: 400,
		Body: `{"error":{"message":"Unsupported parameter: 'seed'","type":"invalid_request_error"}}`})
	_, err := c.Summarize(context.Background(), region(2, 50))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Cause != CauseBadRequest || errors.Is(err, summary.ErrFatal) {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(err.Error(), "Unsupported parameter") {
		t.Errorf("error %q lacks the server message", err)
	}
	if srv.Requests() != 1 {
		t.Errorf("a 400 was retried: %d requests", srv.Requests())
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, nil) // backoff without Retry-After is at most 6 ms
	srv.Push(mock.Fault{Kind: mock.KindRateLimit, RetryAfter: "1"})
	start := time.Now()
	if _, err := c.Summarize(context.Background(), region(2, 50)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v, before the server's Retry-After of 1s", d)
	}
}

func TestBackoff(t *testing.T) {
	c := &Client{cfg: Config{RetryDelay: 2 * time.Second, MaxRetryDelay: 30 * time.Second}}
	tests := []struct {
		name       string
		k          int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{"first", 0, 0, 2 * time.Second, 3 * time.Second},
		{"second", 1, 0, 4 * time.Second, 6 * time.Second},
		{"capped", 10, 0, 30 * time.Second, 45 * time.Second},
		{"huge k does not overflow", 80, 0, 30 * time.Second, 45 * time.Second},
		{"Retry-After wins", 0, 20 * time.Second, 20 * time.Second, 20 * time.Second},
		{"Retry-After beyond the cap", 3, 90 * time.Second, 90 * time.Second, 90 * time.Second},
		{"backoff longer than Retry-After", 2, time.Second, 8 * time.Second, 12 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 50 {
				if d := c.backoff(tt.k, tt.retryAfter); d < tt.lo || d > tt.hi {
					t.Fatalf("backoff(%d, %v) = %v, want in [%v, %v]", tt.k, tt.retryAfter, d, tt.lo, tt.hi)
				}
			}
		})
	}
}

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Duration
	}{
		{"empty", "", 0},
		{"seconds", "7", 7 * time.Second},
		{"fraction", "0.5", 500 * time.Millisecond},
		{"zero", "0", 0},
		{"negative", "-3", 0},
		{"HTTP date", "Sun, 22 Nov 2026 10:00:30 GMT", 30 * time.Second},
		{"date in the past", "Sun, 22 Nov 2026 09:00:00 GMT", 0},
		{"garbage", "soon", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.in, now); got != tt.want {
				t.Errorf("retryAfter(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestCache(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	dir := t.TempDir()
	c := client(t, url, func(c *Config) { c.CacheDir = dir })
	req := region(3, 60)
	first, err := c.Summarize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.CacheHit || srv.Requests() != 1 {
		t.Fatalf("first call: hit=%v requests=%d", first.CacheHit, srv.Requests())
	}
	// A new client on the same directory (a rerun) sends nothing.
	c2 := client(t, url, func(c *Config) { c.CacheDir = dir })
	for range 2 {
		again, err := c2.Summarize(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !again.CacheHit || again.Text != first.Text || again.APICalls != 0 || again.PromptTokens != 0 {
			t.Errorf("rerun = %+v, want a free cache hit of %q", again, first.Text)
		}
	}
	if srv.Requests() != 1 {
		t.Errorf("rerun made %d requests, want 0", srv.Requests()-1)
	}
	if st := c2.Stats(); st.CacheHits != 2 || st.CacheMisses != 0 || st.Calls != 0 {
		t.Errorf("stats = %+v", st)
	}
	if e := c2.Estimate(req); !e.Cached || e.Requests != 0 {
		t.Errorf("estimate of a cached region = %+v", e)
	}

	// One file, under a two-hex-digit fan-out, named by the key.
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 1 {
		t.Fatalf("cache files = %v", files)
	}
	rel, _ := filepath.Rel(dir, files[0])
	sub, name := filepath.Split(rel)
	if len(sub) != 3 || !strings.HasPrefix(name, sub[:2]) || len(name) != 64+len(".json") {
		t.Errorf("cache file %q is not <2 hex>/<sha256>.json", rel)
	}

	// Other parameters are other keys.
	for name, mod := range map[string]func(*Config){
		"temperature": func(c *Config) { c.Temperature = 0.7 },
		"model":       func(c *Config) { c.Model = "other" },
		"seed":        func(c *Config) { s := 1; c.Seed = &s },
		"extra body":  func(c *Config) { c.ExtraBody = map[string]any{"top_k": 20} },
	} {
		before := srv.Requests()
		c3 := client(t, url, func(c *Config) { c.CacheDir = dir; mod(c) })
		if res, err := c3.Summarize(context.Background(), req); err != nil || res.CacheHit || srv.Requests() != before+1 {
			t.Errorf("%s changed but the cache hit: %+v %v", name, res, err)
		}
	}
	// The base URL is not part of the key.
	_, url2 := serve(t, mock.Config{})
	c4 := client(t, url2, func(c *Config) { c.CacheDir = dir })
	if res, err := c4.Summarize(context.Background(), req); err != nil || !res.CacheHit {
		t.Errorf("another base URL missed the cache: %+v %v", res, err)
	}
	// Another target is another prompt and max_tokens.
	req2 := req
	req2.TargetTokens = 50
	if res, _ := c4.Summarize(context.Background(), req2); res.CacheHit {
		t.Errorf("another target hit the cache")
	}
}

func TestCacheCorruptEntryIsAMiss(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	dir := t.TempDir()
	c := client(t, url, func(c *Config) { c.CacheDir = dir })
	req := region(2, 40)
	if _, err := c.Summarize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.WriteFile(p, []byte(`{"text":`), 0o644)
		}
		return err
	})
	res, err := c.Summarize(context.Background(), req)
	if err != nil || res.CacheHit || srv.Requests() != 2 {
		t.Errorf("corrupt entry: %+v %v, %d requests", res, err, srv.Requests())
	}
	if st := c.Stats(); st.CacheErrors != 1 {
		t.Errorf("cache errors = %d, want 1", st.CacheErrors)
	}
	// The entry was rewritten and is good again.
	if res, _ := c.Summarize(context.Background(), req); !res.CacheHit {
		t.Errorf("rewritten entry missed")
	}
}

func TestCacheDisabled(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, func(c *Config) { c.CacheDir = CacheDisabled })
	for range 2 {
		if res, err := c.Summarize(context.Background(), region(2, 40)); err != nil || res.CacheHit {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if srv.Requests() != 2 {
		t.Errorf("requests = %d, want 2", srv.Requests())
	}
}

func TestContextTooLongSplitsAndMerges(t *testing.T) {
	for _, style := range []string{"vllm", "llamacpp"} {
		t.Run(style, func(t *testing.T) {
			// Each turn is ~1000 chars (250 tokens); the prompt overhead is
			// ~200 tokens. 8 turns do not fit 900 tokens, 2 turns do.
			srv, url := serve(t, mock.Config{ContextLimit: 900, ContextStyle: style, Record: true})
			dir := t.TempDir()
			c := client(t, url, func(c *Config) { c.CacheDir = dir })
			req := region(8, 1000)
			res, err := c.Summarize(context.Background(), req)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if res.Chunks != 4 {
				t.Errorf("chunks = %d, want 4", res.Chunks)
			}
			if !strings.HasPrefix(res.Text, summary.Prefix+" mock summary (merged 4 parts)") {
				t.Errorf("text = %q", res.Text)
			}
			got := srv.Received()
			// 1 refused region, 2 refused halves, 4 chunks, 1 merge.
			if len(got) != 8 || res.APICalls != 8 || res.APIErrors != 3 {
				t.Errorf("requests = %d, calls/errors = %d/%d, want 8, 8/3", len(got), res.APICalls, res.APIErrors)
			}
			if len(res.Retries) != 0 {
				t.Errorf("context-length errors were retried: %v", res.Retries)
			}
			merge := got[len(got)-1].Request.Messages[0].Content
			for i, want := range []string{"[Part 1 - Turns 3-4]", "[Part 2 - Turns 5-6]", "[Part 3 - Turns 7-8]", "[Part 4 - Turns 9-10]"} {
				if !strings.Contains(merge, want) {
					t.Errorf("merge prompt lacks %q", want)
				}
				if !strings.Contains(merge, fmt.Sprintf("mock summary of turns %d-%d", 3+2*i, 4+2*i)) {
					t.Errorf("merge prompt lacks chunk summary %d", i+1)
				}
			}
			if strings.Contains(merge, "[CONTEXT SUMMARY]") && strings.Count(merge, "[CONTEXT SUMMARY]") != 1 {
				t.Errorf("chunk prefixes kept in the merge prompt")
			}
			if st := c.Stats(); st.Chunked != 1 || st.Chunks != 4 || st.ErrorsByCause[CauseContextLength] != 3 {
				t.Errorf("stats = %+v", st)
			}
			// A rerun costs nothing.
			again, err := c.Summarize(context.Background(), req)
			if err != nil || !again.CacheHit || again.Text != res.Text || srv.Requests() != 8 {
				t.Errorf("rerun: %+v %v, %d requests", again, err, srv.Requests())
			}
		})
	}
}

func TestContextTooLongSingleTurn(t *testing.T) {
	// A single elided turn is ~2100 chars: it can never fit 300 tokens.
	srv, url := serve(t, mock.Config{ContextLimit: 300})
	c := client(t, url, nil)
	_, err := c.Summarize(context.Background(), region(2, 5000))
	if !errors.Is(err, ErrContextLength) || errors.Is(err, summary.ErrFatal) {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(err.Error(), "data.jsonl:7") || !strings.Contains(err.Error(), "turn 3 alone") {
		t.Errorf("error %q does not say which record and turn", err)
	}
	if srv.Requests() != 2 { // the region, then turn 3 alone
		t.Errorf("requests = %d, want 2", srv.Requests())
	}
}

func TestContextCancellation(t *testing.T) {
	tests := []struct {
		name  string
		fault mock.Fault
		cfg   func(*Config)
	}{
		{"while the server hangs", mock.Fault{Kind: mock.KindHang}, nil},
		{"during backoff", mock.Fault{Kind: mock.KindServerError},
			func(c *Config) { c.RetryDelay = time.Hour; c.MaxRetryDelay = time.Hour }},
		{"during Retry-After", mock.Fault{Kind: mock.KindRateLimit, RetryAfter: "3600"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := serve(t, mock.Config{})
			c := client(t, url, func(c *Config) {
				c.Timeout = time.Hour
				if tt.cfg != nil {
					tt.cfg(c)
				}
			})
			srv.Push(tt.fault)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for srv.Requests() == 0 {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
				cancel()
			}()
			_, err := c.Summarize(ctx, region(2, 40))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want context.Canceled", err)
			}
			if errors.Is(err, summary.ErrFatal) {
				t.Errorf("cancellation is fatal")
			}
			if srv.Requests() != 1 {
				t.Errorf("requests = %d after cancel", srv.Requests())
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, func(c *Config) { c.Timeout = time.Hour })
	srv.Push(mock.Fault{Kind: mock.KindHang})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Summarize(ctx, region(2, 40))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want DeadlineExceeded", err)
	}
	if st := c.Stats(); st.Failed != 1 || st.Retries[CauseTimeout] != 0 {
		t.Errorf("stats = %+v", st)
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
