package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Causes of a failed request, the keys of [Stats.Retries],
// [Stats.ErrorsByCause] and summary.Result.Retries.
const (
	CauseRateLimit     = "rate_limit"     // 429 (not quota)
	CauseServerError   = "server_error"   // 5xx, or an error inside a 200 body
	CauseTimeout       = "timeout"        // 408, or no answer within Config.Timeout
	CauseConnection    = "connection"     // dial, reset, EOF before a status
	CauseLength        = "length"         // finish_reason "length"
	CauseEmpty         = "empty"          // no summary text in the reply
	CauseMalformed     = "malformed"      // 200 with a truncated or invalid body
	CauseContextLength = "context_length" // 400 context too long: split, not retried
	CauseBadRequest    = "bad_request"    // other 4xx, content filter: not retried
	CauseAuth          = "auth"           // 401/403: fatal
	CauseQuota         = "quota"          // 402, quota/billing 429: fatal
	CauseNotFound      = "not_found"      // 404 (wrong base_url or model): fatal
	CauseRedirect      = "redirect"       // a redirect to another origin, or turning the POST into a GET: fatal
)

// APIError is one failed request. Message is the server's message (or the
// transport error), cut to 300 bytes and with the API key redacted.
type APIError struct {
	Status     int           // HTTP status, 0 when none was received
	Cause      string        // one of the Cause constants
	Message    string        // what the server or transport said
	RetryAfter time.Duration // the server's Retry-After, 0 if absent
}

func (e *APIError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm: %s (HTTP %d): %s", e.Cause, e.Status, e.Message)
	}
	return fmt.Sprintf("llm: %s: %s", e.Cause, e.Message)
}

// Retryable reports whether another attempt may succeed.
func (e *APIError) Retryable() bool {
	switch e.Cause {
	case CauseRateLimit, CauseServerError, CauseTimeout, CauseConnection,
		CauseLength, CauseEmpty, CauseMalformed:
		return true
	}
	return false
}

// Fatal reports whether no other request can succeed either.
func (e *APIError) Fatal() bool {
	switch e.Cause {
	case CauseAuth, CauseQuota, CauseNotFound, CauseRedirect:
		return true
	}
	return false
}

// ErrContextLength matches (with [errors.Is]) a request the server refused
// because the prompt does not fit its context window.
var ErrContextLength = errors.New("llm: prompt exceeds the server's context window")

// Is makes errors.Is(err, ErrContextLength) true for context-length errors.
func (e *APIError) Is(target error) bool {
	return target == ErrContextLength && e.Cause == CauseContextLength
}

// errorBody is the OpenAI / OpenRouter / llama.cpp error envelope.
type errorBody struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// statusError classifies a non-2xx answer.
func statusError(status int, body []byte, h http.Header, now time.Time) *APIError {
	msg, typ, code := parseErrorBody(body)
	e := &APIError{Status: status, Message: msg, RetryAfter: retryAfter(h.Get("Retry-After"), now)}
	lower := strings.ToLower(msg + " " + typ + " " + code)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Cause = CauseAuth
	case status == http.StatusPaymentRequired:
		e.Cause = CauseQuota
	case status == http.StatusTooManyRequests && isQuota(lower):
		e.Cause = CauseQuota
	case status == http.StatusTooManyRequests:
		e.Cause = CauseRateLimit
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Cause = CauseTimeout
	case status >= 500:
		e.Cause = CauseServerError
	case isContextLength(status, lower):
		e.Cause = CauseContextLength
	case status == http.StatusNotFound:
		e.Cause = CauseNotFound
	default:
		e.Cause = CauseBadRequest
	}
	return e
}

func isQuota(lower string) bool {
	for _, s := range []string{"insufficient_quota", "quota", "billing", "credits", "insufficient funds"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// isContextLength recognises the context-window errors of vLLM, SGLang,
// llama.cpp, OpenAI and OpenRouter (400, sometimes 413 or 422).
func isContextLength(status int, lower string) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge &&
		status != http.StatusUnprocessableEntity {
		return false
	}
	for _, s := range []string{
		"maximum context length", "context_length_exceeded", "exceed_context_size",
		"exceeds the available context size", "context length", "context window",
		"prompt is too long", "too many tokens", "input is too long",
	} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// parseErrorBody extracts message, type and code from an error body; a body
// that is not the JSON envelope becomes the message itself.
func parseErrorBody(body []byte) (msg, typ, code string) {
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
		code = strings.Trim(string(eb.Error.Code), `"`)
		if code == "null" {
			code = ""
		}
		return eb.Error.Message, eb.Error.Type, code
	}
	return strings.TrimSpace(string(body)), "", ""
}

// retryAfter parses a Retry-After value: delay-seconds (fractions allowed,
// as some gateways send them) or an HTTP date. A delay of more than
// [maxRetryAfter], in either form, is ignored (the backoff applies), as is
// anything else.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > maxRetryAfter.Seconds() {
			return 0 // also keeps a huge s from overflowing
		}
		d = time.Duration(s * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 || d > maxRetryAfter {
		return 0
	}
	return d
}

// clip cuts s to n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// maxRetryAfter is the longest Retry-After honoured, in either form.
const maxRetryAfter = 24 * time.Hour
