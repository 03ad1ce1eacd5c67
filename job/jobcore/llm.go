package jobcore

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/tokenize"
)

// LLMConfig maps the summarization, processing and redaction sections onto
// the client: with redaction on, what an endpoint returns (live, imported
// from a Batch file, or from the cache) is redacted too.
func LLMConfig(cfg config.Config, counter tokenize.Counter) llm.Config {
	s := cfg.Summarization
	return llm.Config{
		Model:         s.Model,
		BaseURL:       s.BaseURL,
		APIKeyEnv:     s.APIKeyEnv,
		Temperature:   s.Temperature,
		MaxRetries:    s.MaxRetries,
		RetryDelay:    time.Duration(s.RetryDelay * float64(time.Second)),
		MaxConcurrent: cfg.Processing.MaxConcurrentRequests,
		RPM:           s.RPM,
		TPM:           s.TPM,
		Timeout:       time.Duration(s.RequestTimeout * float64(time.Second)),
		CacheDir:      s.CacheDir,
		Counter:       counter,
		Redactor:      redactor(cfg),
	}
}

// redactor is the redactor of the run (nil: redaction.enabled is off):
// the records' secrets, and those of every summary an endpoint returns.
func redactor(cfg config.Config) *redact.Redactor {
	if !cfg.Redaction.Enabled {
		return nil
	}
	return redact.Default()
}

// estimator stands in for the LLM summarizer in a dry run: the pipeline
// never calls a remote summarizer then, it asks for an estimate. With the
// API key set the real client's estimate also sees the cache (cached
// regions cost nothing); without it, nothing needs a key.
type estimator struct {
	client  *llm.Client // nil without a key
	counter tokenize.Counter
}

func (estimator) Remote() bool { return true }

func (estimator) Summarize(context.Context, summary.Request) (summary.Result, error) {
	return summary.Result{}, errors.New("dry run: no request is sent")
}

func (e estimator) Estimate(req summary.Request) summary.Result {
	var est llm.Estimate
	if e.client != nil {
		est = e.client.Estimate(req)
	} else {
		est = llm.EstimateRequest(req, e.counter)
	}
	return summary.Result{APICalls: est.Requests, PromptTokens: est.PromptTokens,
		CompletionTokens: est.MaxCompletionTokens, CacheHit: est.Cached}
}

// newLLM builds the LLM summarizer, or its estimator for a dry run.
func newLLM(cfg config.Config, counter tokenize.Counter, dryRun bool) (summary.Summarizer, *llm.Client, error) {
	lc := LLMConfig(cfg, counter)
	if dryRun {
		if os.Getenv(lc.APIKeyEnv) == "" {
			return estimator{counter: counter}, nil, nil
		}
		c, err := llm.New(lc)
		if err != nil {
			return nil, nil, UsageError{Err: err}
		}
		return estimator{client: c, counter: counter}, c, nil
	}
	c, err := llm.New(lc)
	if err != nil {
		return nil, nil, UsageError{Err: err}
	}
	return c, c, nil
}
