package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/summary"
)

// maxReply is the least cap on the bytes read of one reply (a summary is a
// few KB); [replyCap] raises it for large summary budgets. With 50
// requests in flight, replies hold at most 50 × the cap in memory.
const maxReply = 4 << 20

// maxErrorBody caps what is read of a reply that is not 2xx: only its
// error message (cut to 300 bytes) is kept.
const maxErrorBody = 64 << 10

// replyCap is the cap on a 2xx reply to a request of maxTokens: 4 MiB, or
// 32 bytes per token of max_tokens when that is more.
func replyCap(maxTokens int) int64 { return max(maxReply, 32*int64(maxTokens)) }

// overCap is the error of a reply over the cap: what was read is dropped.
func overCap(limit, contentLength int64) *APIError {
	msg := fmt.Sprintf("reply body over the %s cap: stopped reading there", mib(limit))
	if contentLength > limit {
		msg = fmt.Sprintf("reply body over the %s cap (Content-Length %d): not read", mib(limit), contentLength)
	}
	return &APIError{Status: http.StatusOK, Cause: CauseMalformed, Message: msg}
}

// mib writes n bytes in MiB: "4 MiB", "6.5 MiB".
func mib(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
}

// readReply reads a 2xx reply of at most limit bytes: one announced or
// found to be longer is an error, and no more than limit+1 bytes of it
// are read.
func readReply(resp *http.Response, limit int64) ([]byte, *APIError, error) {
	if resp.ContentLength > limit {
		return nil, overCap(limit, resp.ContentLength), nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(raw)) > limit {
		return nil, overCap(limit, -1), nil
	}
	return raw, nil, nil
}

// requestTimeout is the setting behind Config.Timeout, named when a
// request runs out of it.
const requestTimeout = "summarization.request_timeout"

// callerError is what a Summarize call whose ctx ended reports: ctx's
// cause, and for a bare deadline "timed out after N s", N counted from
// start, the call's start.
func callerError(ctx context.Context, start time.Time) error {
	cause := context.Cause(ctx)
	if cause != context.DeadlineExceeded {
		return cause
	}
	after := time.Since(start)
	if dl, ok := ctx.Deadline(); ok {
		after = dl.Sub(start)
	}
	return &summary.TimeoutError{After: after.Round(10 * time.Millisecond), Setting: "the caller's deadline"}
}

// redirectError is a redirect the client refuses to follow.
type redirectError struct {
	status int    // the redirect's status
	target string // where it pointed, resolved
	why    string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("not followed to %s: %s", e.target, e.why)
}

// maxRedirects is how many same-origin redirects a request follows.
const maxRedirects = 10

// checkRedirect is the client's redirect policy: follow a redirect only
// when it stays on the origin (scheme, host and port) of the request it
// redirects and keeps its method (a 307 or 308), so that the API key, in
// the Authorization header, never reaches another origin and a POST never
// turns into a GET whose answer would be taken for a summary. (Go's own
// policy sends the header to another port of the same host, and follows
// 301-303 with a GET.)
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	e := &redirectError{target: req.URL.Redacted()}
	if req.Response != nil {
		e.status = req.Response.StatusCode
	}
	switch {
	case origin(req.URL) != origin(first.URL):
		e.why = fmt.Sprintf("another origin than base_url's, %s, the only one the API key is sent to", origin(first.URL))
	case req.Method != first.Method:
		e.why = fmt.Sprintf("the redirect turns the %s into a %s", first.Method, req.Method)
	case len(via) >= maxRedirects:
		e.why = fmt.Sprintf("stopped after %d redirects", maxRedirects)
	default:
		return nil
	}
	return e
}

// origin is u's scheme, host and port, the port explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}
