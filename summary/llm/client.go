package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

// message is one chat message of a request.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Client is a [summary.Summarizer] backed by an OpenAI-compatible
// chat.completions endpoint. It is safe for concurrent use; all calls share
// its concurrency and rate limits, its cache and its [Stats].
type Client struct {
	cfg    Config
	apiKey string // never leaves the Authorization header
	// keys are the spellings of the API key (as written, lower and upper
	// case) that are replaced in every summary before Config.Redactor
	// runs; empty for a key shorter than redact.MinSecretLen or none.
	keys []string
	// known is the key as the environment holds it (also for an offline
	// client), for Redactor, which builds records' redactor once.
	known    string
	redOnce  sync.Once
	redactor *redact.Redactor
	redErr   error
	url      string
	http     *http.Client
	rpm      *perMinute
	tpm      *perMinute
	cache    *cache
	now      func() time.Time

	fatal atomic.Pointer[error] // the first fatal error; later calls return it

	mu    sync.Mutex
	stats Stats
}

var _ summary.Summarizer = (*Client)(nil)

// New validates c, reads the API key from the environment variable
// c.APIKeyEnv, and opens the cache. It fails if the variable is unset or
// empty (the error names the variable, never a value) or the cache
// directory cannot be created.
func New(c Config) (*Client, error) { return newClient(c, true) }

// NewOffline is [New] without an API key, for what needs the client's
// requests, cache and answer checks but sends nothing: a batch import
// ([Client.ImportBatch]). Its Summarize fails. When c.APIKeyEnv names a
// variable that holds a key, the key is still redacted from what it
// imports ([Client.Redactor]), never sent.
func NewOffline(c Config) (*Client, error) { return newClient(c, false) }

func newClient(c Config, needKey bool) (*Client, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	if _, err := json.Marshal(c.ExtraBody); err != nil {
		return nil, fmt.Errorf("llm: config: extra body is not JSON: %w", err)
	}
	key, envKey := "", ""
	if c.APIKeyEnv != "" {
		envKey = strings.TrimSpace(os.Getenv(c.APIKeyEnv))
	}
	if needKey {
		key = envKey
		if key == "" {
			return nil, fmt.Errorf("llm: environment variable %s is unset or empty: it must hold the API key for %s", c.APIKeyEnv, c.BaseURL)
		}
	}
	// The key itself, whatever its format, is redacted from every summary
	// and cache entry: an endpoint that echoes it must not get it written.
	// An offline client sends nothing, but the answers it imports may
	// echo the key too: it knows the key when the variable holds one.
	var keys []string
	if len(envKey) >= redact.MinSecretLen {
		for _, k := range []string{envKey, strings.ToLower(envKey), strings.ToUpper(envKey)} {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	ch, err := openCache(c.CacheDir)
	if err != nil {
		return nil, err
	}
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient // a copy: its redirect policy is replaced
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 2 * c.MaxConcurrent
		t.MaxIdleConnsPerHost = c.MaxConcurrent
		hc.Transport = t
	}
	hc.CheckRedirect = checkRedirect
	return &Client{
		cfg:    c,
		apiKey: key,
		keys:   keys,
		known:  envKey,
		url:    c.BaseURL + "/chat/completions",
		http:   &hc,
		rpm:    newPerMinute(c.RPM),
		tpm:    newPerMinute(c.TPM),
		cache:  ch,
		now:    time.Now,
		stats:  Stats{ErrorsByCause: map[string]int64{}, Retries: map[string]int64{}},
	}, nil
}

// Stats are a client's running totals. Maps are keyed by the Cause
// constants.
type Stats struct {
	Summaries int64 // Summarize calls that returned a summary
	Failed    int64 // Summarize calls that failed without a fatal error
	Fatal     int64 // Summarize calls that failed with a fatal error

	Calls         int64            // HTTP requests sent (the peer's total_api_calls)
	APIErrors     int64            // requests that failed (the peer's total_errors)
	ErrorsByCause map[string]int64 // failed requests by cause
	Retries       map[string]int64 // failed requests followed by another attempt, by cause
	Chunked       int64            // regions split because they exceeded the context window
	Chunks        int64            // chunk summaries made for split regions
	CacheHits     int64            // Summarize calls served from the cache
	CacheMisses   int64            // Summarize calls not in the cache
	CacheErrors   int64            // cache reads or writes that failed (the call went on)
	Redacted      int64            // summaries (replies or cached) in which Config.Redactor replaced a secret

	PromptTokens     int64 // from usage, local count when absent
	CompletionTokens int64
}

// SuccessRate is the peer's summarization.success_rate: 1 − errors/calls.
func (s Stats) SuccessRate() float64 {
	return 1 - float64(s.APIErrors)/float64(max(s.Calls, 1))
}

// Stats returns a copy of the running totals.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.ErrorsByCause = copyMap(c.stats.ErrorsByCause)
	s.Retries = copyMap(c.stats.Retries)
	return s
}

func copyMap(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (c *Client) count(f func(s *Stats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.stats)
}

// Summarize summarises req.Turns. The text starts with [summary.Prefix]
// exactly once. Errors:
//   - ctx's error (wrapped) as soon as ctx is done, unless an answer
//     had already arrived: that one is billed, so it is returned and cached;
//   - an error wrapping [summary.ErrFatal] and an [*APIError] for bad
//     credentials (401/403), exhausted credits or quota (402, quota 429)
//     and a wrong model or base URL (404); once one occurred, every later
//     call returns it without sending anything;
//   - otherwise a non-fatal error naming req.RecordID when the retries ran
//     out or the server refused the request; the record should be left
//     unchanged. No placeholder text is ever returned.
//
// A region too long for the server's context window is split in halves
// until each chunk is accepted, and the chunk summaries are merged with one
// more request.
func (c *Client) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	var res summary.Result
	start := time.Now()
	if len(req.Turns) == 0 {
		return res, fmt.Errorf("llm: %s: no turns to summarise", req.RecordID)
	}
	if req.TargetTokens <= 0 {
		return res, fmt.Errorf("llm: %s: target tokens %d is not positive", req.RecordID, req.TargetTokens)
	}
	if f := c.fatal.Load(); f != nil {
		c.count(func(s *Stats) { s.Fatal++ })
		return res, *f
	}
	if c.apiKey == "" {
		return res, fmt.Errorf("%w: llm: no API key (an offline client sends nothing)", summary.ErrFatal)
	}
	run := &call{c: c, res: &res, target: req.TargetTokens, net: req.Network}
	msgs := []message{{Role: "user", Content: RegionPrompt(req.Turns, req.Start, req.TargetTokens)}}
	key := c.key(msgs, 2*req.TargetTokens)

	if e, ok := c.lookup(key); ok {
		res.Text, res.CacheHit = e.Text, true
		c.count(func(s *Stats) { s.CacheHits++; s.Summaries++ })
		return res, nil
	}
	c.count(func(s *Stats) { s.CacheMisses++ })

	text, err := run.send(ctx, msgs)
	if errors.Is(err, ErrContextLength) && ctx.Err() == nil {
		text, err = run.split(ctx, req.Turns, req.Start)
	}
	if err == nil { // a rejected reply is retried once, never cached
		text, err = run.validated(ctx, req, msgs, text)
	}
	if err == nil {
		c.store(key, entry{Text: text, Model: c.cfg.Model})
		res.Text = text
		if res.Chunks == 0 {
			res.Chunks = 1
		}
		c.count(func(s *Stats) { s.Summaries++ })
		return res, nil
	}
	return res, c.fail(ctx, start, req.RecordID, err)
}

// fail turns the error of a Summarize call started at start into its
// documented form and counts it.
func (c *Client) fail(ctx context.Context, start time.Time, id string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, summary.ErrFatal) {
		c.count(func(s *Stats) { s.Failed++ })
		return fmt.Errorf("llm: %s: %w", id, callerError(ctx, start))
	}
	if errors.Is(err, summary.ErrFatal) {
		c.count(func(s *Stats) { s.Fatal++ })
		return err
	}
	var ae *APIError
	if errors.As(err, &ae) && ae.Fatal() {
		f := c.setFatal(ae)
		c.count(func(s *Stats) { s.Fatal++ })
		return f
	}
	c.count(func(s *Stats) { s.Failed++ })
	return fmt.Errorf("llm: %s: %w", id, err)
}

// setFatal records ae as the run's fatal error, unless one was recorded
// before, and returns the error wrapping [summary.ErrFatal] with a hint
// naming the setting to check.
func (c *Client) setFatal(ae *APIError) error {
	var hint string
	switch ae.Cause {
	case CauseAuth:
		hint = fmt.Sprintf("%s rejected the API key from $%s", c.cfg.BaseURL, c.cfg.APIKeyEnv)
	case CauseQuota:
		hint = fmt.Sprintf("the account behind $%s at %s is out of credits or quota", c.cfg.APIKeyEnv, c.cfg.BaseURL)
	case CauseRedirect:
		hint = fmt.Sprintf("%s redirects the requests (check base_url)", c.cfg.BaseURL)
	default:
		hint = fmt.Sprintf("%s does not serve model %q (check base_url and model)", c.cfg.BaseURL, c.cfg.Model)
	}
	f := fmt.Errorf("%w: %s: %w", summary.ErrFatal, hint, ae)
	c.fatal.CompareAndSwap(nil, &f)
	return f
}

// call is the state of one Summarize call.
type call struct {
	c      *Client
	res    *summary.Result
	target int
	net    summary.Slots // the run's bound on requests in flight; nil: none
}

// split summarises turns in chunks that fit the context window, halving
// until the server accepts each one, then merges the chunk summaries.
func (r *call) split(ctx context.Context, turns []traj.Turn, start int) (string, error) {
	parts, err := r.chunks(ctx, turns, start)
	if err != nil {
		return "", err
	}
	r.res.Chunks = len(parts)
	r.c.count(func(s *Stats) { s.Chunked++; s.Chunks += int64(len(parts)) })
	return r.merge(ctx, parts)
}

// chunks returns the summaries of consecutive chunks covering turns.
func (r *call) chunks(ctx context.Context, turns []traj.Turn, start int) ([]part, error) {
	if len(turns) > 1 {
		// A region the server refused is halved without asking again.
		mid := len(turns) / 2
		a, err := r.chunk(ctx, turns[:mid], start)
		if err != nil {
			return nil, err
		}
		b, err := r.chunk(ctx, turns[mid:], start+mid)
		if err != nil {
			return nil, err
		}
		return append(a, b...), nil
	}
	return nil, fmt.Errorf("turn %d alone does not fit the server's context window: %w", start, ErrContextLength)
}

// chunk summarises one chunk, splitting it further if it is still too long.
func (r *call) chunk(ctx context.Context, turns []traj.Turn, start int) ([]part, error) {
	msgs := []message{{Role: "user", Content: RegionPrompt(turns, start, r.target)}}
	text, err := r.cached(ctx, msgs)
	if errors.Is(err, ErrContextLength) && ctx.Err() == nil {
		return r.chunks(ctx, turns, start)
	}
	if err != nil {
		return nil, err
	}
	return []part{{first: start, last: start + len(turns) - 1, text: text}}, nil
}

// merge combines chunk summaries with one request; if even the merge
// prompt is too long, it merges each half first.
func (r *call) merge(ctx context.Context, parts []part) (string, error) {
	if len(parts) == 1 {
		return parts[0].text, nil
	}
	msgs := []message{{Role: "user", Content: mergePrompt(parts, r.target)}}
	text, err := r.cached(ctx, msgs)
	if !errors.Is(err, ErrContextLength) || ctx.Err() != nil || len(parts) < 3 {
		return text, err
	}
	mid := len(parts) / 2
	a, err := r.merge(ctx, parts[:mid])
	if err != nil {
		return "", err
	}
	b, err := r.merge(ctx, parts[mid:])
	if err != nil {
		return "", err
	}
	return r.merge(ctx, []part{
		{first: parts[0].first, last: parts[mid-1].last, text: a},
		{first: parts[mid].first, last: parts[len(parts)-1].last, text: b},
	})
}

// cached is send behind the cache: chunk and merge summaries are cached
// too, so a rerun after a failed merge does not pay for the chunks again.
func (r *call) cached(ctx context.Context, msgs []message) (string, error) {
	key := r.c.key(msgs, 2*r.target)
	if e, ok := r.c.lookup(key); ok {
		return e.Text, nil
	}
	text, err := r.send(ctx, msgs)
	if err == nil {
		r.c.store(key, entry{Text: text, Model: r.c.cfg.Model})
	}
	return text, err
}

// send makes one request with retries and returns the normalised summary.
func (r *call) send(ctx context.Context, msgs []message) (string, error) {
	c := r.c
	maxTokens := 2 * r.target
	body := c.body(msgs, maxTokens)
	promptEst := 0
	if c.tpm != nil { // counting is CPU work; only the TPM limiter needs it up front
		for _, m := range msgs {
			promptEst += c.cfg.Counter.Count(m.Content)
		}
	}
	var last *APIError
	for attempt := range c.cfg.MaxRetries {
		if attempt > 0 {
			if err := sleep(ctx, c.backoff(attempt-1, last.RetryAfter)); err != nil {
				return "", err
			}
		}
		if f := c.fatal.Load(); f != nil {
			return "", *f
		}
		text, u, err := c.attempt(ctx, r.net, body, msgs, promptEst, maxTokens)
		// A request that was sent is counted (and a complete answer kept)
		// even when ctx ended meanwhile: the provider bills it.
		if u.sent {
			r.res.APICalls++
			r.res.PromptTokens += u.prompt
			r.res.CompletionTokens += u.completion
			c.count(func(s *Stats) {
				s.Calls++
				s.PromptTokens += int64(u.prompt)
				s.CompletionTokens += int64(u.completion)
			})
			if err == nil {
				return text, nil
			}
		}
		if ctx.Err() != nil {
			if u.sent { // a request cut off by ctx failed; it is not retried
				r.noteError(err, false)
			}
			return "", ctx.Err()
		}
		if f := c.fatal.Load(); f != nil && !u.sent {
			return "", *f // another call's fatal error came while this one waited
		}
		last = err
		r.noteError(err, err.Retryable() && attempt+1 < c.cfg.MaxRetries)
		if !err.Retryable() {
			return "", err
		}
	}
	return "", fmt.Errorf("summary failed after %d attempts: %w", c.cfg.MaxRetries, last)
}

// noteError counts a failed request, and its retry when retry is set.
func (r *call) noteError(err *APIError, retry bool) {
	r.res.APIErrors++
	if retry {
		if r.res.Retries == nil {
			r.res.Retries = map[string]int{}
		}
		r.res.Retries[err.Cause]++
	}
	r.c.count(func(s *Stats) {
		s.APIErrors++
		s.ErrorsByCause[err.Cause]++
		if retry {
			s.Retries[err.Cause]++
		}
	})
}

// backoff is the wait before retry k+1: min(RetryDelay·2^k, MaxRetryDelay)
// plus up to half of that as jitter, and never less than the server's
// Retry-After.
func (c *Client) backoff(k int, retryAfter time.Duration) time.Duration {
	d := c.cfg.RetryDelay
	for i := 0; i < k && d < c.cfg.MaxRetryDelay; i++ {
		d *= 2
	}
	d = min(d, c.cfg.MaxRetryDelay)
	if d > 0 {
		d += rand.N(d/2 + 1)
	}
	return max(d, retryAfter)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// usage is what one attempt cost.
type usage struct {
	sent               bool // the request went out
	prompt, completion int
}

// body is the JSON request body.
func (c *Client) body(msgs []message, maxTokens int) []byte {
	m := make(map[string]any, len(c.cfg.ExtraBody)+8)
	for k, v := range c.cfg.ExtraBody {
		m[k] = v
	}
	m["model"] = c.cfg.Model
	m["messages"] = msgs
	m["max_tokens"] = maxTokens
	m["max_completion_tokens"] = maxTokens
	if !c.cfg.OmitTemperature {
		m["temperature"] = c.cfg.Temperature
	}
	if c.cfg.Seed != nil {
		m["seed"] = *c.cfg.Seed
	}
	m["stream"] = false
	m["n"] = 1
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("llm: request body: %v", err)) // New checked ExtraBody
	}
	return b
}

// key is the cache key of a request.
func (c *Client) key(msgs []message, maxTokens int) string {
	km := keyMaterial{Model: c.cfg.Model, Messages: msgs, MaxTokens: maxTokens, Seed: c.cfg.Seed, Extra: c.cfg.ExtraBody}
	if !c.cfg.OmitTemperature {
		t := c.cfg.Temperature
		km.Temperature = &t
	}
	return cacheKey(km)
}

// lookup reads key's cache entry, its text redacted (an entry written
// before summaries were redacted may hold a secret).
func (c *Client) lookup(key string) (entry, bool) {
	e, ok, err := c.cache.get(key)
	if err != nil {
		c.count(func(s *Stats) { s.CacheErrors++ })
	}
	if ok {
		e.Text = c.scrub(e.Text)
	}
	return e, ok
}

// scrub passes a summary an endpoint wrote through Config.Redactor (when
// set), before it is cached or used, and counts it when a secret was
// replaced.
func (c *Client) scrub(text string) string {
	out, changed := c.redact(text)
	if changed {
		c.count(func(s *Stats) { s.Redacted++ })
	}
	return out
}

// redact removes the API key's spellings from text, then runs
// Config.Redactor (when set) on it; changed reports a replacement. A
// summary is plain text, so replacing the key's bytes is exact, and done
// first, no rule can take part of it.
func (c *Client) redact(text string) (out string, changed bool) {
	for _, k := range c.keys {
		if strings.Contains(text, k) {
			text, changed = strings.ReplaceAll(text, k, keyMarker), true
		}
	}
	if c.cfg.Redactor == nil {
		return text, changed
	}
	out, counts := c.cfg.Redactor.RedactString(text)
	return out, changed || counts != nil
}

// keyRuleID names the API key's marker, keyMarker.
const (
	keyRuleID = "llm-api-key"
	keyMarker = "[REDACTED:llm_api_key]"
)

// Redactor returns what records should be redacted with when the client
// is in use: [Config.Redactor] (nothing when nil) plus the client's own
// API key as a known secret, as written, in lower case and in upper case,
// whatever its format (redact.WithSecrets; a key shorter than
// redact.MinSecretLen bytes, a local server's dummy, is left out), the
// marker the summaries get too. Built once, on the first call; nil when
// there is nothing to redact.
func (c *Client) Redactor() (*redact.Redactor, error) {
	c.redOnce.Do(func() {
		c.redactor, c.redErr = redact.WithSecrets(c.cfg.Redactor, keyRuleID, c.known)
	})
	return c.redactor, c.redErr
}

func (c *Client) store(key string, e entry) {
	if err := c.cache.put(key, e); err != nil {
		c.count(func(s *Stats) { s.CacheErrors++ })
	}
}

// attempt sends one request within the rate limits, holding one unit of
// net (when set) while it is outstanding. It sends nothing and returns a
// nil error (u.sent false) when ctx has ended before it got its slot, or a
// fatal error was recorded by then.
func (c *Client) attempt(ctx context.Context, net summary.Slots, body []byte, msgs []message, promptEst, maxTokens int) (string, usage, *APIError) {
	var u usage
	if err := c.rpm.wait(ctx, 1); err != nil {
		return "", u, nil
	}
	if err := c.tpm.wait(ctx, promptEst+maxTokens); err != nil {
		return "", u, nil
	}
	if net != nil {
		if err := net.Acquire(ctx, 1); err != nil {
			return "", u, nil
		}
		defer net.Release(1)
	}
	// A call holding the slot records a fatal error before it lets the slot
	// go, so with one slot nothing is sent after a 401. (Acquire may succeed
	// when ctx had already ended: check it again.)
	if ctx.Err() != nil || c.fatal.Load() != nil {
		return "", u, nil
	}

	actx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout,
		&summary.TimeoutError{After: c.cfg.Timeout, Setting: requestTimeout})
	defer cancel()
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", u, c.apiErr(&APIError{Cause: CauseConnection, Message: err.Error()})
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("Authorization", "Bearer "+c.apiKey)
	u.sent = true
	resp, err := c.http.Do(hr)
	var re *redirectError
	if errors.As(err, &re) {
		ae := c.apiErr(&APIError{Status: re.status, Cause: CauseRedirect, Message: re.Error()})
		_ = c.setFatal(ae) // recorded for every later call; this one returns ae itself
		return "", u, ae
	}
	if err != nil {
		return "", u, c.transportErr(actx, 0, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		ae := c.apiErr(statusError(resp.StatusCode, raw, resp.Header, c.now()))
		if ae.Fatal() {
			_ = c.setFatal(ae) // recorded for every later call; this one returns ae itself
		}
		return "", u, ae
	}
	raw, ae, err := readReply(resp, replyCap(maxTokens))
	if err != nil {
		return "", u, c.transportErr(actx, resp.StatusCode, err)
	}
	if ae != nil {
		return "", u, c.apiErr(ae)
	}
	text, u, ae := c.parse(raw, msgs, u)
	if ae != nil {
		return "", u, ae
	}
	return c.scrub(text), u, nil
}

// transportErr classifies an error without a usable answer.
func (c *Client) transportErr(actx context.Context, status int, err error) *APIError {
	cause := CauseConnection
	var ne net.Error
	switch {
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		cause = CauseTimeout
		err = context.Cause(actx) // "timed out after N s (summarization.request_timeout)", or ctx's own cause
	case errors.As(err, &ne) && ne.Timeout():
		cause = CauseTimeout
	case status != 0:
		cause = CauseMalformed // the status came but the body broke off
		err = fmt.Errorf("truncated body: %w", err)
	}
	return c.apiErr(&APIError{Status: status, Cause: cause, Message: err.Error()})
}

// apiErr redacts the key from e's message and clips it.
func (c *Client) apiErr(e *APIError) *APIError {
	if c.apiKey != "" {
		for _, k := range []string{c.apiKey, strings.ToLower(c.apiKey), strings.ToUpper(c.apiKey)} {
			e.Message = strings.ReplaceAll(e.Message, k, "[REDACTED]")
		}
	}
	e.Message = clip(e.Message, 300)
	return e
}

// chatResponse is the part of a chat.completion the client reads.
type chatResponse struct {
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
		Error        *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// parse reads a 200 answer.
func (c *Client) parse(raw []byte, msgs []message, u usage) (string, usage, *APIError) {
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseMalformed, Message: "invalid JSON body: " + err.Error()})
	}
	if cr.Error != nil {
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseServerError, Message: "error in body: " + cr.Error.Message})
	}
	if len(cr.Choices) == 0 {
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseMalformed, Message: "no choices in body"})
	}
	ch := cr.Choices[0]
	content := contentText(ch.Message.Content)
	if cr.Usage != nil && (cr.Usage.PromptTokens > 0 || cr.Usage.CompletionTokens > 0) {
		u.prompt, u.completion = cr.Usage.PromptTokens, cr.Usage.CompletionTokens
	} else {
		for _, m := range msgs {
			u.prompt += c.cfg.Counter.Count(m.Content)
		}
		u.completion = c.cfg.Counter.Count(content) +
			c.cfg.Counter.Count(ch.Message.ReasoningContent+ch.Message.Reasoning)
	}
	if ch.Error != nil {
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseServerError, Message: "error in choice: " + ch.Error.Message})
	}
	finish := ""
	if ch.FinishReason != nil {
		finish = strings.ToLower(strings.TrimSpace(*ch.FinishReason))
	}
	switch finish {
	case "length":
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseLength, Message: "finish_reason length: the summary was cut at max_tokens"})
	case "content_filter":
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseBadRequest, Message: "finish_reason content_filter"})
	}
	text, ok := Normalize(content)
	if !ok {
		msg := "no summary text in the reply"
		if ch.Message.ReasoningContent != "" || ch.Message.Reasoning != "" || strings.Contains(content, "<think>") {
			msg += " (the budget went to reasoning)"
		}
		return "", u, c.apiErr(&APIError{Status: 200, Cause: CauseEmpty, Message: msg})
	}
	return text, u, nil
}

// contentText reads message.content: a string, null, or a list of
// {"type":"text","text":…} parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// Remote reports true: the client waits on the network (see
// [summary.Summarizer]).
func (c *Client) Remote() bool { return true }
