package llm

import (
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
)

// Estimate is what summarising one region would send, for --dry-run cost
// figures. It assumes the region fits the context window (no split).
type Estimate struct {
	Requests            int  // 1, or 0 when the summary is already cached
	PromptTokens        int  // local count of the prompt
	MaxCompletionTokens int  // max_tokens: 2 × the target
	Cached              bool // a [Client] already holds this summary
}

// EstimateRequest counts what req would cost without a client, a key or the
// network. counter nil counts len/4.
func EstimateRequest(req summary.Request, counter tokenize.Counter) Estimate {
	if counter == nil {
		counter = approx{}
	}
	return Estimate{
		Requests:            1,
		PromptTokens:        counter.Count(RegionPrompt(req.Turns, req.Start, req.TargetTokens)),
		MaxCompletionTokens: 2 * req.TargetTokens,
	}
}

// Estimate is [EstimateRequest] with the client's counter that also
// consults the cache: a cached summary costs nothing. It sends nothing.
func (c *Client) Estimate(req summary.Request) Estimate {
	e := EstimateRequest(req, c.cfg.Counter)
	msgs := []message{{Role: "user", Content: RegionPrompt(req.Turns, req.Start, req.TargetTokens)}}
	if _, ok, _ := c.cache.get(c.key(msgs, 2*req.TargetTokens)); ok {
		e.Requests, e.PromptTokens, e.MaxCompletionTokens, e.Cached = 0, 0, 0, true
	}
	return e
}
