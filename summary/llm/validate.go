package llm

import (
	"context"
	"fmt"

	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
)

// CauseInvalid is the cause of a reply [Validate] rejected.
const CauseInvalid = "invalid"

// MaxOverTarget bounds a summary: at most this many times
// summary_target_tokens.
const MaxOverTarget = 1.5

// Validate checks a normalised summary (see [Normalize]) against the
// region it replaces: it must be non-empty, at most [MaxOverTarget] ×
// target tokens, and shorter than the region (regionTokens). It returns
// nil when the summary is acceptable, else the violation, phrased so it
// can be told to the model.
func Validate(text string, target, regionTokens int, counter tokenize.Counter) error {
	body := summary.SummaryBody(text)
	if body == "" {
		return fmt.Errorf("the summary is empty")
	}
	limit := int(MaxOverTarget * float64(target))
	n := counter.Count(text)
	if n > limit {
		return fmt.Errorf("the summary is %d tokens long; it must be at most %d tokens", n, limit)
	}
	if n >= regionTokens {
		return fmt.Errorf("the summary is %d tokens long, not shorter than the %d tokens of the turns it replaces; it must be shorter than %d tokens", n, regionTokens, regionTokens)
	}
	return nil
}

// retryPrompt is the follow-up that states why a summary was rejected.
func retryPrompt(violation error, target int) string {
	return fmt.Sprintf("Your summary was rejected: %v. Write it again, following every instruction above, in about %d tokens: only the summary, starting with %q and ending with the line %q.",
		violation, target, summary.Prefix, summary.EndMarker)
}

// validated is the check of a final summary in [Client.Summarize]: text is
// returned when it passes [Validate]; otherwise the rejection counts as
// one failed attempt and the request is sent once more with the violation
// stated after the rejected reply. A second rejection is a non-retryable
// *[APIError] with [CauseInvalid]: the caller's failure policy applies
// (the record is left unchanged). Nothing rejected is returned, so nothing
// rejected is cached.
func (r *call) validated(ctx context.Context, req summary.Request, msgs []message, text string) (string, error) {
	counter := req.Counter
	if counter == nil {
		counter = r.c.cfg.Counter
	}
	region := 0
	for _, t := range req.Turns {
		region += counter.Count(t.Text)
	}
	violation := Validate(text, req.TargetTokens, region, counter)
	if violation == nil {
		return text, nil
	}
	r.noteError(&APIError{Status: 200, Cause: CauseInvalid, Message: violation.Error()}, true)
	retry := append(append([]message(nil), msgs...),
		message{Role: "assistant", Content: text},
		message{Role: "user", Content: retryPrompt(violation, req.TargetTokens)})
	again, err := r.send(ctx, retry)
	if err != nil {
		return "", err
	}
	if violation = Validate(again, req.TargetTokens, region, counter); violation != nil {
		ae := &APIError{Status: 200, Cause: CauseInvalid, Message: "summary rejected twice: " + violation.Error()}
		r.noteError(ae, false)
		return "", ae
	}
	return again, nil
}
