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

// summarizeRegion summarises j's planned region and writes the result; with
// a template, a result over target once rendered is planned again with a
// larger region (refit) while one can be had, and the last result the
// template rendered is kept.
func (c *Compressor) summarizeRegion(ctx context.Context, j *job) (Result, error) {
	var done *fitted // the last result, over target once rendered
	for {
		j.obs.Region = &[2]int{j.plan.Start, j.plan.End}
		req := c.request(j)
		if c.estimating() {
			return c.estimate(j, req), nil
		}
		sum, ok, err := c.summarize(ctx, j, req)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			if done != nil {
				return done.encode(c, j)
			}
			return j.unchanged(), nil
		}
		j.retain(req, sum.Text)
		a := c.assemble(j, sum.Text)
		pairing := c.account(j, a, sum.Tokens)
		if j.stopped != nil {
			return Result{}, j.stopped
		}
		if j.tmplErr != nil && done != nil {
			// The template refuses the larger region's result: the
			// earlier one, which it rendered, is written (over target).
			j.tmplErr = nil
			return done.encode(c, j)
		}
		if !c.refit(j) {
			return c.encode(j, a, pairing)
		}
		done = &fitted{a: a, pairing: pairing, obs: j.obs, plan: j.plan}
		c.planRegion(j)
		c.place(j)
		if j.plan.Outcome != outcome.Compressed || (j.plan.Start == done.plan.Start && j.plan.End == done.plan.End) {
			// No larger region can be summarised: summarising and
			// rendering the same one again would give the same result.
			return done.encode(c, j)
		}
	}
}

// maxRefits bounds how often a record whose rendered result came out over
// target is planned again with a larger region (Compressor.refit).
const maxRefits = 4

// refit decides, with a chat template, whether a record whose rendered
// result is over target is planned again: the planner's per-turn counts
// are an estimate of what the template renders (its framing differs by
// position: Qwen3 drops old reasoning_content, Llama-3.1 the text of
// tool-calling turns), so the overshoot is added to what the planner
// budgets besides the turns (j.adj) and the region grows by it. It says
// false when the result stands: no template, it fits, the template
// refused it, or maxRefits were made.
func (c *Compressor) refit(j *job) bool {
	if c.opts.Template == nil || j.obs.Outcome != outcome.CompressedOverLimit || j.tmplErr != nil || j.refits >= maxRefits {
		return false
	}
	j.refits++
	j.adj += j.obs.TokensAfter - c.opts.Budget.Target
	return true
}

// fitted is a compressed result kept while a larger region is tried.
type fitted struct {
	a       assembly
	pairing []snap.PairProblem
	obs     metrics.Observation
	plan    snap.Plan
}

// encode writes the kept result: the larger region could not be made.
func (f *fitted) encode(c *Compressor, j *job) (Result, error) {
	o := j.obs // the calls of every try
	j.obs, j.plan = f.obs, f.plan
	j.obs.SummaryCalls, j.obs.SummaryErrors, j.obs.CacheHit = o.SummaryCalls, o.SummaryErrors, o.CacheHit
	j.obs.PromptTokens, j.obs.CompletionTokens = o.PromptTokens, o.CompletionTokens
	return c.encode(j, f.a, f.pairing)
}

// request is the summary request for the planned region.
func (c *Compressor) request(j *job) summary.Request {
	return summary.Request{
		Turns:        j.turns[j.plan.Start:j.plan.End],
		Start:        j.plan.Start,
		TargetTokens: c.opts.Budget.SummaryTokens,
		RecordID:     j.pos.String(),
		Counter:      c.opts.Counter,
		Network:      j.lim.network(),
		Images:       c.regionImages(j),
	}
}

// remote reports whether the summarizer waits on the network.
func (c *Compressor) remote() bool { return c.opts.Summarizer.Remote() }

// estimating reports whether summaries are estimated instead of made: a
// dry run with a remote summarizer sends nothing.
func (c *Compressor) estimating() bool { return c.opts.DryRun && c.remote() }

// estimate settles a dry-run record from the summary's budget of S tokens
// and the summarizer's estimate of its calls, if it has one.
func (c *Compressor) estimate(j *job, req summary.Request) Result {
	n := len(j.roles)
	after := j.ext + j.adj + j.plan.Total - j.plan.RegionTokens + c.opts.Budget.SummaryTokens + j.reserve
	j.obs.Settle(snap.Settle(after, c.opts.Budget), after, j.plan.TurnsAfter(n))
	j.obs.SummaryCalls = 1
	if e, ok := c.opts.Summarizer.(summary.Estimator); ok {
		est := e.Estimate(req)
		j.obs.SummaryCalls, j.obs.CacheHit = est.APICalls, est.CacheHit
		j.obs.PromptTokens, j.obs.CompletionTokens = est.PromptTokens, est.CompletionTokens
	}
	return j.unchanged()
}

// summarize asks the summarizer (then the fallback, if any) for the
// region's summary. A remote summarizer waits without holding a CPU slot.
// ok is false when the record is summary_failed (settled); err is non-nil
// when the run must stop.
func (c *Compressor) summarize(ctx context.Context, j *job, req summary.Request) (sum summary.Result, ok bool, err error) {
	remote := c.remote()
	if remote {
		c.releaseHeld(j)
	}
	sum, err = c.callSummarizer(ctx, j.deadline, req)
	if remote {
		if aerr := j.lim.acquireCPU(ctx); aerr != nil {
			return sum, false, aerr
		}
		j.cpuHeld = true
	}
	if !j.summarized {
		j.summarized = true
		j.obs.SummaryCalls, j.obs.SummaryErrors = sum.APICalls, sum.APIErrors
		j.obs.CacheHit, j.obs.PromptTokens, j.obs.CompletionTokens = sum.CacheHit, sum.PromptTokens, sum.CompletionTokens
	} else { // a larger region after a rendered result over target: the calls add up
		j.obs.SummaryCalls += sum.APICalls
		j.obs.SummaryErrors += sum.APIErrors
		j.obs.CacheHit = j.obs.CacheHit && sum.CacheHit
		j.obs.PromptTokens += sum.PromptTokens
		j.obs.CompletionTokens += sum.CompletionTokens
	}
	if err == nil {
		return sum, true, nil
	}
	if ctx.Err() != nil {
		return sum, false, context.Cause(ctx)
	}
	if errors.Is(err, summary.ErrFatal) {
		return sum, false, fmt.Errorf("%s: %w", j.pos, err)
	}
	if c.opts.Fallback == nil {
		j.leave(outcome.SummaryFailed, err.Error())
		return sum, false, nil
	}
	fb, ferr := c.opts.Fallback.Summarize(ctx, req)
	if ferr != nil {
		j.leave(outcome.SummaryFailed, ferr.Error())
		return sum, false, nil
	}
	sum.Text, sum.Tokens, j.obs.Fallback = fb.Text, fb.Tokens, true
	return sum, true, nil
}

// retain records what the summary kept of the region it replaces: its
// tool names, paths and commands (summary.Retention).
func (j *job) retain(req summary.Request, text string) {
	r := &j.obs.Retention
	r.Tools, r.ToolsKept, r.Args, r.ArgsKept = summary.Retention(req.Turns, text)
}

// callSummarizer calls the summarizer within the record's deadline, whose
// cause says "timed out after N s (processing.per_trajectory_timeout)".
func (c *Compressor) callSummarizer(ctx context.Context, deadline time.Time, req summary.Request) (summary.Result, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, deadline,
			&summary.TimeoutError{After: c.opts.RecordTimeout, Setting: "processing.per_trajectory_timeout"})
		defer cancel()
	}
	return c.opts.Summarizer.Summarize(ctx, req)
}
