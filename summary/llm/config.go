package llm

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/tokenize"
)

// Defaults applied by [New] to zero fields of [Config]. The retry values
// are the peer's (summarization.max_retries, retry_delay, its 30 s cap);
// MaxConcurrent is the peer's processing.max_concurrent_requests.
const (
	DefaultTemperature   = 0.3 // the peer's summarization.temperature; Config sends its own value as is
	DefaultMaxRetries    = 3
	DefaultRetryDelay    = 2 * time.Second
	DefaultMaxRetryDelay = 30 * time.Second
	DefaultMaxConcurrent = 50
	DefaultTimeout       = 120 * time.Second // per HTTP request; the record's deadline is the caller's ctx
	DefaultAPIKeyEnv     = "OPENROUTER_API_KEY"
)

// CacheDisabled as [Config.CacheDir] turns the on-disk cache off.
const CacheDisabled = "-"

// Config configures a [Client]. Zero fields take the defaults above, except
// Temperature, which is sent as is (0 is a valid temperature; set
// [DefaultTemperature] to match the peer), and the optional limits RPM and
// TPM, where 0 means no limit.
type Config struct {
	Model   string // required
	BaseURL string // required, e.g. "https://openrouter.ai/api/v1"; "/chat/completions" is appended

	// APIKeyEnv names the environment variable holding the API key (default
	// [DefaultAPIKeyEnv]). [New] reads it once; the key is sent only in the
	// Authorization header and appears in no error, cache file or [Stats].
	APIKeyEnv string

	Temperature     float64
	OmitTemperature bool // send no temperature (models whose contract fixes it, e.g. Kimi)
	Seed            *int // sent when set

	// MaxRetries is the number of attempts per request, the peer's
	// summarization.max_retries: 3 means one try and two retries.
	MaxRetries    int
	RetryDelay    time.Duration // backoff base: attempt k waits RetryDelay·2^k (+ jitter)
	MaxRetryDelay time.Duration // backoff cap, before jitter; a longer Retry-After still wins

	// MaxConcurrent is the expected number of requests in flight
	// (processing.max_concurrent_requests): it sizes the default HTTP
	// client's idle connection pool. The bound itself is the caller's:
	// [summary.Request.Network], which the pipeline owns.
	MaxConcurrent int
	RPM, TPM      int // client-side requests and tokens per minute; 0 = unlimited
	// Timeout bounds one HTTP request, reply included
	// (summarization.request_timeout, default [DefaultTimeout]); the error
	// says "timed out after N s".
	Timeout time.Duration

	// CacheDir holds the summary cache. "" means
	// os.UserCacheDir()/trajcompress/summaries; [CacheDisabled] turns it off.
	CacheDir string

	// Counter counts tokens locally: prompt sizing for TPM and [Estimate],
	// and usage when the server reports none. nil counts len(text)/4.
	Counter tokenize.Counter

	// HTTPClient, if set, sends the requests. Its own Timeout, if any,
	// applies on top of Timeout. The default client keeps MaxConcurrent idle
	// connections per host. The client uses a copy whose redirect policy is
	// its own: a redirect is followed only when it stays on BaseURL's origin
	// (scheme, host, port) and keeps the method (307, 308); any other is a
	// fatal error naming the target, so the key never reaches another origin.
	HTTPClient *http.Client

	// Redactor, when set (redaction.enabled), redacts every summary an
	// endpoint returns (a live reply, a Batch import, a cache entry read
	// back) before it is cached or returned: a reply that echoes a secret
	// puts it in neither the output nor the cache. Whether set or not, the
	// client's own API key is removed from all of them first.
	Redactor *redact.Redactor

	// ExtraBody fields are added to every request body (e.g.
	// "chat_template_kwargs": {"enable_thinking": false}). They may not
	// override the fields the client sets itself.
	ExtraBody map[string]any
}

// reserved are the request fields ExtraBody may not set.
var reserved = []string{"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "seed", "stream", "n"}

// Validate reports the first invalid field. It does not look at the
// environment; [New] checks the key.
func (c Config) Validate() error {
	if strings.TrimSpace(c.Model) == "" {
		return errors.New("llm: config: model is empty")
	}
	if c.BaseURL == "" {
		return errors.New("llm: config: base_url is empty")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("llm: config: base_url %q is not an http(s) URL", c.BaseURL)
	}
	if u.User != nil {
		return errors.New("llm: config: base_url must not carry credentials; use api_key_env")
	}
	switch {
	case c.Temperature < 0 || c.Temperature > 2:
		return fmt.Errorf("llm: config: temperature %v is outside [0, 2]", c.Temperature)
	case c.MaxRetries < 0:
		return fmt.Errorf("llm: config: max_retries %d is negative", c.MaxRetries)
	case c.RetryDelay < 0:
		return fmt.Errorf("llm: config: retry_delay %v is negative", c.RetryDelay)
	case c.MaxRetryDelay < 0:
		return fmt.Errorf("llm: config: max retry delay %v is negative", c.MaxRetryDelay)
	case c.MaxConcurrent < 0:
		return fmt.Errorf("llm: config: max_concurrent_requests %d is negative", c.MaxConcurrent)
	case c.RPM < 0:
		return fmt.Errorf("llm: config: rpm %d is negative", c.RPM)
	case c.TPM < 0:
		return fmt.Errorf("llm: config: tpm %d is negative", c.TPM)
	case c.Timeout < 0:
		return fmt.Errorf("llm: config: timeout %v is negative", c.Timeout)
	}
	for _, k := range reserved {
		if _, ok := c.ExtraBody[k]; ok {
			return fmt.Errorf("llm: config: extra body field %q is set by the client", k)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.MaxRetryDelay == 0 {
		c.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Counter == nil {
		c.Counter = approx{}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}

// approx counts one token per four bytes, rounded up.
type approx struct{}

func (approx) Count(s string) int { return (len(s) + 3) / 4 }
