package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/summary"
)

// redirector serves on 127.0.0.1 and answers every request with status
// and Location to(r); on another path than from it hands the request to
// next (nil: 404).
func redirector(t *testing.T, status int, from string, to func(r *http.Request) string, next http.Handler) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == from {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Location", to(r))
			w.WriteHeader(status)
			fmt.Fprint(w, `{"choices":[{"message":{"content":"[CONTEXT SUMMARY]: the body of a redirect."},"finish_reason":"stop"}]}`)
			return
		}
		if next == nil {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// TestRedirectToAnotherOriginRefused: a redirect to another port is an
// error naming the target, and the second server never sees the key (nor
// any request); the body of the redirect is not taken as a summary.
func TestRedirectToAnotherOriginRefused(t *testing.T) {
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			// The other origin counts every request, whatever its method,
			// and every Authorization header it is sent.
			var hits, keys atomic.Int64
			m := mock.New(mock.Config{})
			t.Cleanup(m.Close)
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if r.Header.Get("Authorization") != "" {
					keys.Add(1)
				}
				m.ServeHTTP(w, r)
			}))
			t.Cleanup(other.Close)
			target := other.URL + "/v1/chat/completions"
			first := redirector(t, status, "/v1/chat/completions", func(*http.Request) string { return target }, nil)
			c := client(t, first.URL+"/v1", nil)
			res, err := c.Summarize(context.Background(), region(2, 50))
			if err == nil {
				t.Fatalf("a redirect to %s was followed: summary %q", target, res.Text)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), target) {
				t.Errorf("error %q does not name the target %s", err, target)
			}
			if hits.Load() != 0 || keys.Load() != 0 {
				t.Errorf("the other origin got %d requests, %d with an Authorization header", hits.Load(), keys.Load())
			}
			if !errors.Is(err, summary.ErrFatal) {
				t.Errorf("error %v is not fatal: every request would be redirected so", err)
			}
			if res.APICalls != 1 {
				t.Errorf("%d calls, want 1 (no retry)", res.APICalls)
			}
		})
	}
}

// TestRedirectSameOriginKeepingMethodFollowed: 307 and 308 to another
// path of the same origin are followed, with the body and the key.
func TestRedirectSameOriginKeepingMethodFollowed(t *testing.T) {
	for _, status := range []int{307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			m := mock.New(mock.Config{Record: true})
			t.Cleanup(m.Close)
			hs := redirector(t, status, "/v1/chat/completions", func(*http.Request) string { return "/v2/chat/completions" }, m)
			c := client(t, hs.URL+"/v1", nil)
			res, err := c.Summarize(context.Background(), region(2, 50))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, "mock summary of turns 3-4") {
				t.Errorf("text %q", res.Text)
			}
			got := m.Received()
			if len(got) != 1 || got[0].Path != "/v2/chat/completions" || got[0].Authorization != "Bearer "+testKey || len(got[0].Request.Messages) != 1 {
				t.Errorf("received %+v", got)
			}
		})
	}
}

// TestRedirectChangingMethodRefused: a same-origin 301/302/303, after which
// the request would be a GET, is an error, and nothing is sent to the
// target.
func TestRedirectChangingMethodRefused(t *testing.T) {
	for _, status := range []int{301, 302, 303} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			m := mock.New(mock.Config{Record: true})
			t.Cleanup(m.Close)
			var gets atomic.Int64
			counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
				}
				m.ServeHTTP(w, r)
			})
			hs := redirector(t, status, "/v1/chat/completions", func(*http.Request) string { return "/v2/chat/completions" }, counted)
			c := client(t, hs.URL+"/v1", nil)
			res, err := c.Summarize(context.Background(), region(2, 50))
			if err == nil {
				t.Fatalf("followed: summary %q", res.Text)
			}
			t.Log(err)
			if msg := err.Error(); !strings.Contains(msg, hs.URL+"/v2/chat/completions") || !strings.Contains(msg, "GET") {
				t.Errorf("error %q does not name the target and the method change", msg)
			}
			if gets.Load() != 0 || m.Requests() != 0 {
				t.Errorf("the target got %d requests (%d GETs)", m.Requests(), gets.Load())
			}
		})
	}
}

// TestRetryAfterDateCapped: a Retry-After given as an HTTP date far ahead
// is ignored as a numeric one beyond a day is: the next attempt comes
// after the usual backoff, not in 2100.
func TestRetryAfterDateCapped(t *testing.T) {
	for _, ra := range []string{"Fri, 01 Jan 2100 00:00:00 GMT", "999999999"} {
		t.Run(ra, func(t *testing.T) {
			srv, url := serve(t, mock.Config{})
			c := client(t, url, nil)
			srv.Push(mock.Fault{Kind: mock.KindRateLimit, RetryAfter: ra})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := c.Summarize(ctx, region(2, 50)); err != nil {
				t.Fatalf("Retry-After %q: %v", ra, err)
			}
			if srv.Requests() != 2 {
				t.Errorf("requests %d, want 2", srv.Requests())
			}
		})
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if d := retryAfter(now.Add(maxRetryAfter+time.Second).Format(http.TimeFormat), now); d != 0 {
		t.Errorf("a date a day and a second ahead: %v, want 0 as %q gives %v", d, "86401", retryAfter("86401", now))
	}
	if d := retryAfter(now.Add(maxRetryAfter).Format(http.TimeFormat), now); d != maxRetryAfter {
		t.Errorf("a date a day ahead: %v, want %v", d, maxRetryAfter)
	}
}

// countingTransport counts the bytes the client reads of response bodies.
type countingTransport struct{ read atomic.Int64 }

func (ct *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if resp != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &ct.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestReplyOverCap: a 20 MiB reply, with or without a Content-Length, is
// an error saying it is over the cap, and no more than the cap is read.
func TestReplyOverCap(t *testing.T) {
	const size = 20 << 20
	for _, withLength := range []bool{true, false} {
		t.Run(fmt.Sprintf("content-length=%v", withLength), func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				head := `{"choices":[{"message":{"content":"[CONTEXT SUMMARY]: `
				tail := `"},"finish_reason":"stop"}]}`
				if withLength {
					w.Header().Set("Content-Length", fmt.Sprint(len(head)+size+len(tail)))
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, head)
				chunk := strings.Repeat("x", 1<<16)
				for range size / len(chunk) {
					if _, err := io.WriteString(w, chunk); err != nil {
						return // the client hung up
					}
				}
				io.WriteString(w, tail)
			}))
			t.Cleanup(hs.Close)
			ct := &countingTransport{}
			c := client(t, hs.URL+"/v1", func(c *Config) {
				c.HTTPClient = &http.Client{Transport: ct}
				c.MaxRetries = 1
			})
			_, err := c.Summarize(context.Background(), region(2, 50))
			if err == nil || !strings.Contains(err.Error(), "over the 4 MiB cap") {
				t.Fatalf("error %v, want one saying the reply is over the 4 MiB cap", err)
			}
			t.Logf("%v; read %d bytes", err, ct.read.Load())
			if n := ct.read.Load(); n > maxReply+1 {
				t.Errorf("read %d bytes of the reply, over the cap of %d", n, maxReply)
			}
		})
	}
}

// TestRequestTimeoutSaysSo: a server that never answers within the
// per-request timeout gives "timed out after N s" naming the setting.
func TestRequestTimeoutSaysSo(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, func(c *Config) { c.Timeout = 300 * time.Millisecond; c.MaxRetries = 1 })
	srv.Push(mock.Fault{Kind: mock.KindHang})
	_, err := c.Summarize(context.Background(), region(2, 40))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.Contains(msg, "timed out after 0.3 s") || !strings.Contains(msg, "summarization.request_timeout") || strings.Contains(msg, "deadline exceeded") {
		t.Errorf("error %q", msg)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Cause != CauseTimeout {
		t.Errorf("error %v is not a timeout APIError", err)
	}
}

// TestCallerDeadlineSaysSo: the caller's deadline (the record's) gives
// "timed out after N s" too, with the caller's cause when it set one, and
// still matches context.DeadlineExceeded.
func TestCallerDeadlineSaysSo(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, func(c *Config) { c.Timeout = time.Hour })
	srv.Push(mock.Fault{Kind: mock.KindHang}, mock.Fault{Kind: mock.KindHang})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Summarize(ctx, region(2, 40))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 0.2 s") || strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("error %q", err)
	}
	cause := &summary.TimeoutError{After: 150 * time.Millisecond, Setting: "processing.per_trajectory_timeout"}
	ctx, cancel = context.WithTimeoutCause(context.Background(), 150*time.Millisecond, cause)
	defer cancel()
	_, err = c.Summarize(ctx, region(3, 40))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 0.15 s (processing.per_trajectory_timeout)") {
		t.Errorf("error %q", err)
	}
}
