package summary

import (
	"context"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// Prefix starts every summary text, exactly once.
const Prefix = "[CONTEXT SUMMARY]:"

// Request is one region of one record to summarise.
type Request struct {
	Turns        []traj.Turn // the turns being replaced, in order
	Start        int         // index of Turns[0] in the record, for "[Turn i - ROLE]" labels
	TargetTokens int         // summary_target_tokens: the summary must not exceed it
	RecordID     string      // "file:line" of the record, for error messages only
	// Counter is the run's token counter (nil outside a run). A summarizer
	// that counts the summary with it reports the count in Result.Tokens.
	Counter tokenize.Counter
	// Network, when set, bounds the requests in flight across the run: a
	// remote summarizer holds one unit of it for each request it sends, and
	// only while that request is outstanding (not during backoff or rate
	// waits). The pipeline owns it and sizes it (processing
	// max_concurrent_requests); nil means no bound. A
	// *golang.org/x/sync/semaphore.Weighted is a Slots.
	Network Slots
	// Images are the images of Turns (package imagetok; Image.Turn is the
	// record's index), for the summary to say how many the region held and
	// their sizes; nil when it held none.
	Images []imagetok.Image
}

// Slots is a counting semaphore.
type Slots interface {
	Acquire(ctx context.Context, n int64) error
	Release(n int64)
}

// Result is a finished summary and what it cost.
type Result struct {
	Text string // starts with [Prefix]
	// Tokens is Request.Counter's count of Text when the summarizer
	// counted it so, and 0 when it did not (Text is never empty), so the
	// pipeline need not count it again.
	Tokens int

	APICalls         int  // requests sent (0 for offline summarizers and cache hits)
	APIErrors        int  // requests that failed
	CacheHit         bool // served from the on-disk cache
	PromptTokens     int
	CompletionTokens int

	// Retries counts failed requests that were retried, by cause
	// ("rate_limit", "server_error", "timeout", "connection", "length",
	// "empty", "malformed"); nil when there were none.
	Retries map[string]int
	// Chunks is how many pieces the region was summarised in: 1 normally,
	// more when it exceeded the server's context window and was split and
	// merged, 0 for offline summarizers and cache hits.
	Chunks int
}

// Summarizer turns a region into a summary. Implementations are safe for
// concurrent use. An error means this record could not be summarised (its
// outcome becomes summary_failed) unless it wraps [ErrFatal], which stops
// the run.
type Summarizer interface {
	Summarize(ctx context.Context, req Request) (Result, error)
	// Remote says whether Summarize waits on the network. The pipeline
	// frees a record's CPU slot while a remote summarizer runs, bounds its
	// requests with Request.Network, and does not call it at all in a dry
	// run (it estimates the summary instead: see [Estimator]). A local
	// summarizer is CPU work and runs inside the record's CPU slot.
	Remote() bool
}

// Estimator is implemented by remote summarizers that can say, without
// sending anything, what summarising req would cost: requests, prompt
// tokens and (at most) completion tokens. A dry run uses it.
type Estimator interface {
	Estimate(req Request) Result
}

// Remote reports false: the deterministic summarizer is CPU work.
func (Deterministic) Remote() bool { return false }
