package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/summary"
)

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
