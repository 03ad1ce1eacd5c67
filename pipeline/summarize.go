package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
)

// try is one way to write the record, made whole by one function and
// never changed after: a region summarised, assembled and counted
// (Compressor.try), or the prepass's changes alone (prepassOnly). The
// refit loop keeps the last one the template rendered; encode writes one
// into the record's observation.
type try struct {
	region    *[2]int // the region summarised [start, end); nil for none
	a         assembly
	counted   // account
	retention metrics.Retention
	fallback  bool // the summary came from Options.Summarizing.Fallback
}

// refits is the state of the refit loop: how often the record was
// planned again, and by how much each rendered result overshot the target
// (the planner's budget is lowered by the sum: planned.adj).
type refits struct{ n, over int }

// summarizeRegion summarises r's planned region and writes the result; with
// a template, a result over target once rendered is planned again with a
// larger region (refit) while one can be had, and the last result the
// template rendered is kept.
func (c *Compressor) summarizeRegion(ctx context.Context, r *record, fit refits) (Result, error) {
	var done *try // the last result, over target once rendered
	for {
		req := c.request(r)
		if c.estimating() {
			return c.estimate(r, req), nil
		}
		t, failed, err := c.try(ctx, r, req)
		if err != nil {
			return Result{}, err
		}
		if failed != nil {
			if done != nil {
				return c.encode(r, *done)
			}
			r.leave(outcome.SummaryFailed, failed.Error())
			return r.unchanged(), nil
		}
		if r.tmpl.stopped != nil {
			return Result{}, r.tmpl.stopped
		}
		if t.tmplErr != nil && done != nil {
			// The template refuses the larger region's result: the
			// earlier one, which it rendered, is written (over target).
			return c.encode(r, *done)
		}
		if !c.refit(&fit, t) {
			return c.encode(r, t)
		}
		done = &t
		c.planRegion(r, fit)
		c.place(r)
		if r.plan.Outcome != outcome.Compressed || (r.plan.Start == done.region[0] && r.plan.End == done.region[1]) {
			// No larger region can be summarised: summarising and
			// rendering the same one again would give the same result.
			return c.encode(r, *done)
		}
	}
}

// try summarises r's planned region, assembles the record with the
// summary and counts it. failed is the summarizer's error when the region
// has no summary (the record is then summary_failed unless an earlier try
// is kept); err is non-nil when the run must stop.
func (c *Compressor) try(ctx context.Context, r *record, req summary.Request) (t try, failed, err error) {
	sum, fallback, failed, err := c.summarize(ctx, r, req)
	if err != nil || failed != nil {
		return t, failed, err
	}
	t = try{region: &[2]int{r.plan.Start, r.plan.End}, fallback: fallback}
	ret := &t.retention // what the summary kept of the region it replaces
	ret.Tools, ret.ToolsKept, ret.Args, ret.ArgsKept = summary.Retention(req.Turns, sum.Text)
	t.a = c.assemble(r, r.plan, sum.Text)
	t.counted = c.account(r, r.plan, t.a, sum.Tokens)
	return t, nil, nil
}

// maxRefits bounds how often a record whose rendered result came out over
// target is planned again with a larger region (Compressor.refit).
const maxRefits = 4

// refit decides, with a chat template, whether a record whose rendered
// result t is over target is planned again: the planner's per-turn counts
// are an estimate of what the template renders (its framing differs by
// position: Qwen3 drops old reasoning_content, Llama-3.1 the text of
// tool-calling turns), so the overshoot is added to what the planner
// budgets besides the turns (fit.over, in planned.adj) and the region
// grows by it. It says false when the result stands: no template, it
// fits, the template refused it, or maxRefits were made.
func (c *Compressor) refit(fit *refits, t try) bool {
	if c.opts.Counting.Template == nil || t.outcome != outcome.CompressedOverLimit || t.tmplErr != nil || fit.n >= maxRefits {
		return false
	}
	fit.n++
	fit.over += t.tokens - c.opts.Budget.Target
	return true
}

// request is the summary request for the planned region.
func (c *Compressor) request(r *record) summary.Request {
	return summary.Request{
		Turns:        r.m.turns[r.plan.Start:r.plan.End],
		Start:        r.plan.Start,
		TargetTokens: c.opts.Budget.SummaryTokens,
		RecordID:     r.in.pos.String(),
		Counter:      c.opts.Counting.Counter,
		Network:      r.lim.network(),
		Images:       c.regionImages(r),
	}
}

// remote reports whether the summarizer waits on the network.
func (c *Compressor) remote() bool { return c.opts.Summarizing.Summarizer.Remote() }

// estimating reports whether summaries are estimated instead of made: a
// dry run with a remote summarizer sends nothing.
func (c *Compressor) estimating() bool { return c.opts.DryRun && c.remote() }

// estimate settles a dry-run record from the summary's budget of S tokens
// and the summarizer's estimate of its calls, if it has one.
func (c *Compressor) estimate(r *record, req summary.Request) Result {
	n := len(r.m.roles)
	r.obs.Region = &[2]int{r.plan.Start, r.plan.End}
	after := r.m.ext + r.plan.adj + r.plan.Total - r.plan.RegionTokens + c.opts.Budget.SummaryTokens + r.plan.reserve
	r.obs.Settle(snap.Settle(after, c.opts.Budget), after, r.plan.TurnsAfter(n))
	r.obs.SummaryCalls = 1
	if e, ok := c.opts.Summarizing.Summarizer.(summary.Estimator); ok {
		est := e.Estimate(req)
		r.obs.SummaryCalls, r.obs.CacheHit = est.APICalls, est.CacheHit
		r.obs.PromptTokens, r.obs.CompletionTokens = est.PromptTokens, est.CompletionTokens
	}
	return r.unchanged()
}

// summarize asks the summarizer (then the fallback, if any) for the region's
// summary, and adds its calls to the record's figures. A remote summarizer
// waits without holding a CPU slot. fallback says the summary came from
// Options.Summarizing.Fallback; failed is the error of a region left without
// a summary; err is non-nil when the run must stop.
func (c *Compressor) summarize(ctx context.Context, r *record, req summary.Request) (sum summary.Result, fallback bool, failed, err error) {
	remote := c.remote()
	if remote {
		r.lim.release()
	}
	sum, err = c.callSummarizer(ctx, r.in.deadline, req)
	if remote {
		if aerr := r.lim.acquire(ctx); aerr != nil {
			return sum, false, nil, aerr
		}
	}
	if !r.summarized {
		r.summarized = true
		r.obs.SummaryCalls, r.obs.SummaryErrors = sum.APICalls, sum.APIErrors
		r.obs.CacheHit, r.obs.PromptTokens, r.obs.CompletionTokens = sum.CacheHit, sum.PromptTokens, sum.CompletionTokens
	} else { // a larger region after a rendered result over target: the calls add up
		r.obs.SummaryCalls += sum.APICalls
		r.obs.SummaryErrors += sum.APIErrors
		r.obs.CacheHit = r.obs.CacheHit && sum.CacheHit
		r.obs.PromptTokens += sum.PromptTokens
		r.obs.CompletionTokens += sum.CompletionTokens
	}
	if err == nil {
		return sum, false, nil, nil
	}
	if ctx.Err() != nil {
		return sum, false, nil, context.Cause(ctx)
	}
	if errors.Is(err, summary.ErrFatal) {
		return sum, false, nil, fmt.Errorf("%s: %w", r.in.pos, err)
	}
	if c.opts.Summarizing.Fallback == nil {
		return sum, false, err, nil
	}
	fb, ferr := c.opts.Summarizing.Fallback.Summarize(ctx, req)
	if ferr != nil {
		return sum, false, ferr, nil
	}
	sum.Text, sum.Tokens = fb.Text, fb.Tokens
	return sum, true, nil, nil
}

// callSummarizer calls the summarizer within the record's deadline, whose
// cause says "timed out after N s (processing.per_trajectory_timeout)".
func (c *Compressor) callSummarizer(ctx context.Context, deadline time.Time, req summary.Request) (summary.Result, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, deadline,
			&summary.TimeoutError{After: c.opts.Summarizing.RecordTimeout, Setting: "processing.per_trajectory_timeout"})
		defer cancel()
	}
	return c.opts.Summarizing.Summarizer.Summarize(ctx, req)
}
