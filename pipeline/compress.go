package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// DefaultNotice is the peer's default summary_notice_text.
const DefaultNotice = "\n\nSome of your previous tool responses may be summarized to preserve context."

// Options configure a [Compressor]. The zero value is not usable: Counter
// and Summarizer are required; see [Options.Validate].
type Options struct {
	Budget       snap.Budget
	Counter      tokenize.Counter // counts turn texts; wrap it in tokenize.Memo
	TurnOverhead int              // tokens added per turn for chat-template framing
	Schema       traj.Schema

	Summarizer summary.Summarizer
	// Fallback, when set, summarises a region whose Summarizer failed
	// (after its retries); the record's metrics say so. When nil such a
	// record is summary_failed and written unchanged.
	Fallback summary.Summarizer
	// RecordTimeout bounds the time of one record from the start of its
	// Compress call (0: none); the summarizer gets what is left. A record
	// whose summary has not arrived by then is summary_failed, never
	// dropped (a summary that arrived in time is used).
	RecordTimeout time.Duration

	SummaryRole traj.Role // role of the summary turn; "" means user (as the peer)
	// Alternate keeps strict user/assistant alternation around the summary
	// (LLaMA-Factory, Mistral templates): see alternate.go. The summary is
	// then user-side, so SummaryRole must be user.
	Alternate  bool
	AddNotice  bool // append NoticeText to the system turns of the head
	NoticeText string

	PerRecordMetrics bool // add "compression_metrics" to compressed records
	DryRun           bool // plan and count; remote summarizers are not called
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	var errs []error
	if o.Counter == nil {
		errs = append(errs, errors.New("pipeline: no token counter"))
	}
	if o.Summarizer == nil {
		errs = append(errs, errors.New("pipeline: no summarizer"))
	}
	if o.TurnOverhead < 0 {
		errs = append(errs, fmt.Errorf("--turn-overhead must be >= 0, got %d", o.TurnOverhead))
	}
	if err := o.Budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Schema.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch o.SummaryRole {
	case "", traj.RoleUser, traj.RoleAssistant, traj.RoleSystem:
	default:
		errs = append(errs, fmt.Errorf("summary role %q: want user, assistant or system", o.SummaryRole))
	}
	if o.Alternate && o.SummaryRole != "" && o.SummaryRole != traj.RoleUser {
		errs = append(errs, fmt.Errorf("alternation mode merges the summary into user-side turns: the summary role must be user, not %q", o.SummaryRole))
	}
	return errors.Join(errs...)
}

// Reject is an input line that is not a usable trajectory.
type Reject struct {
	Pos    traj.Pos
	Reason string
	Detail string
	Raw    []byte
}

// Result is what became of one input record.
type Result struct {
	// Out is the record to write (the input bytes exactly when unchanged);
	// nil for a rejected record.
	Out    []byte
	Obs    metrics.Observation
	Reject *Reject
	// Pairing lists tool-pairing problems found by id in the output
	// (OpenAI dialect); input that was already broken is reported, never
	// repaired.
	Pairing []snap.PairProblem
	// Fallback is set when the summary came from Options.Fallback.
	Fallback bool
}

// Compressor compresses one record at a time; it is safe for concurrent
// use. [Run] calls it from many goroutines. It holds no limits of its own:
// [Run] owns them and passes them to each call.
type Compressor struct {
	opts Options
}

// NewCompressor checks opts and returns a Compressor.
func NewCompressor(opts Options) (*Compressor, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.SummaryRole == "" {
		opts.SummaryRole = traj.RoleUser
	}
	return &Compressor{opts: opts}, nil
}

func (c *Compressor) count(t traj.Turn) int {
	return c.opts.Counter.Count(t.Text) + t.Extra + c.opts.TurnOverhead
}

// Compress decides and applies the outcome of one input line. Per-record
// problems become the result's outcome; the error is non-nil only when the
// run must stop: ctx was cancelled, or the summarizer failed with
// [summary.ErrFatal]. Compress itself bounds nothing; [Run] adds the limits.
func (c *Compressor) Compress(ctx context.Context, raw []byte, pos traj.Pos) (Result, error) {
	return c.compress(ctx, raw, pos, limits{})
}

// compress is Compress within lim: it holds a CPU slot for its CPU work,
// frees it while a remote summarizer waits, and hands the summarizer the
// run's bound on requests in flight.
func (c *Compressor) compress(ctx context.Context, raw []byte, pos traj.Pos, lim limits) (Result, error) {
	// The record's deadline starts now and covers all of it (the CPU work
	// cannot be interrupted, but it counts against the summarizer's time).
	deadline := time.Time{}
	if c.opts.RecordTimeout > 0 {
		deadline = time.Now().Add(c.opts.RecordTimeout)
	}
	if err := lim.acquireCPU(ctx); err != nil {
		return Result{}, err
	}
	held := true
	defer func() {
		if held {
			lim.releaseCPU()
		}
	}()
	obs := metrics.Observation{Source: pos.File, Line: pos.Line}
	rec, err := traj.Decode(raw, pos, c.opts.Schema)
	if err != nil {
		var de *traj.DecodeError
		errors.As(err, &de)
		obs.Outcome, obs.RejectReason = snap.Invalid, de.Reason
		return Result{Obs: obs, Reject: &Reject{Pos: pos, Reason: de.Reason, Detail: de.Detail, Raw: raw}}, nil
	}
	n := len(rec.Turns)
	roles := make([]traj.Role, n)
	tok := make([]int, n)
	for i, t := range rec.Turns {
		roles[i], tok[i] = t.Role, c.count(t)
	}
	// A system prompt kept outside the turn list costs tokens too: it is a
	// fixed, protected part of the record, so the turns get what is left.
	ext := 0
	if rec.SystemKey != "" {
		ext = c.opts.Counter.Count(rec.System) + c.opts.TurnOverhead
	}
	budget := c.opts.Budget
	budget.Target -= ext
	plan := snap.Compute(roles, tok, budget)
	if rec.Dialect == traj.DialectOpenAI {
		// Reported for every record: a record written unchanged carries the
		// problems of its input; a compressed one is rechecked below.
		obs.PairingProblems = len(snap.CheckPairing(rec.Turns))
	}
	obs.TokensBefore, obs.TokensAfter = plan.Total+ext, plan.Total+ext
	obs.TurnsBefore, obs.TurnsAfter = n, n
	res := Result{Out: raw}
	switch plan.Outcome {
	case snap.SkippedUnderTarget:
		obs.Outcome = snap.SkippedUnderTarget
		res.Obs = obs
		return res, nil
	case snap.Uncompressible:
		obs.Outcome, obs.Reason = snap.Uncompressible, string(plan.Reason)
		res.Obs = obs
		return res, nil
	}
	how := insertTurn
	if c.opts.Alternate {
		end, h, ok := placeAlternating(roles, plan.Start, plan.End, plan.TailStart)
		if !ok {
			// Better unchanged than in a form the trainer would reject.
			obs.Outcome, obs.Reason = snap.Uncompressible, string(snap.Alternation)
			res.Obs = obs
			return res, nil
		}
		how = h
		if end != plan.End {
			plan.End, plan.RegionTokens = end, 0
			for _, k := range tok[plan.Start:end] {
				plan.RegionTokens += k
			}
		}
		if plan.RegionTokens <= c.opts.Budget.SummaryTokens {
			obs.Outcome, obs.Reason = snap.Uncompressible, string(snap.RegionTooSmall)
			res.Obs = obs
			return res, nil
		}
	}
	obs.Region = &[2]int{plan.Start, plan.End}

	req := summary.Request{
		Turns:        rec.Turns[plan.Start:plan.End],
		Start:        plan.Start,
		TargetTokens: c.opts.Budget.SummaryTokens,
		RecordID:     pos.String(),
		Counter:      c.opts.Counter,
		Network:      lim.network(),
	}
	remote := c.opts.Summarizer.Remote()
	if remote && c.opts.DryRun {
		// Estimate: the summary is budgeted at S tokens; nothing is sent.
		after := ext + plan.Total - plan.RegionTokens + c.opts.Budget.SummaryTokens + c.opts.TurnOverhead
		obs.TokensAfter, obs.TurnsAfter = after, plan.TurnsAfter(n)
		obs.Outcome = snap.Settle(after, c.opts.Budget)
		obs.SummaryCalls = 1
		if e, ok := c.opts.Summarizer.(summary.Estimator); ok {
			est := e.Estimate(req)
			obs.SummaryCalls, obs.CacheHit = est.APICalls, est.CacheHit
			obs.PromptTokens, obs.CompletionTokens = est.PromptTokens, est.CompletionTokens
		}
		res.Obs = obs
		return res, nil
	}
	if remote {
		lim.releaseCPU()
		held = false
	}
	sum, err := c.summarize(ctx, deadline, req)
	if remote {
		if aerr := lim.acquireCPU(ctx); aerr != nil {
			return Result{}, aerr
		}
		held = true
	}
	obs.SummaryCalls, obs.SummaryErrors = sum.APICalls, sum.APIErrors
	obs.CacheHit, obs.PromptTokens, obs.CompletionTokens = sum.CacheHit, sum.PromptTokens, sum.CompletionTokens
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, context.Cause(ctx)
		}
		if errors.Is(err, summary.ErrFatal) {
			return Result{}, fmt.Errorf("%s: %w", pos, err)
		}
		if c.opts.Fallback == nil {
			obs.Outcome = snap.SummaryFailed
			obs.Reason = err.Error()
			obs.Region = nil
			res.Obs = obs
			return res, nil
		}
		fb, ferr := c.opts.Fallback.Summarize(ctx, req)
		if ferr != nil {
			obs.Outcome, obs.Reason, obs.Region = snap.SummaryFailed, ferr.Error(), nil
			res.Obs = obs
			return res, nil
		}
		sum.Text, sum.Tokens, res.Fallback, obs.Fallback = fb.Text, fb.Tokens, true, true
	}

	// Assemble: head (notice on its system turns) + summary + rest.
	out := make([]traj.Turn, 0, plan.TurnsAfter(n))
	after := ext
	noticed := false
	for i, t := range rec.Turns[:plan.Start] {
		if c.opts.AddNotice && t.Role == traj.RoleSystem {
			t = rec.AppendText(t, c.opts.NoticeText)
			after += c.count(t)
			noticed = true
		} else {
			after += tok[i]
		}
		out = append(out, t)
	}
	var fields []traj.Field
	if c.opts.AddNotice && !noticed && rec.SystemKey != "" {
		// The record's system prompt lives outside the turns: the notice goes there.
		sys := rec.System + c.opts.NoticeText
		fields = append(fields, rec.SystemField(sys))
		after += c.opts.Counter.Count(sys) + c.opts.TurnOverhead - ext
	}
	rest := rec.Turns[plan.End:]
	for i := plan.End; i < n; i++ {
		after += tok[i]
	}
	switch how {
	case insertTurn:
		st := rec.NewTurn(c.opts.SummaryRole, sum.Text)
		if sum.Tokens > 0 { // counted by the summarizer with our counter
			after += sum.Tokens + st.Extra + c.opts.TurnOverhead
		} else {
			after += c.count(st)
		}
		out = append(out, st)
	case mergeNext:
		merged := rec.PrependText(rest[0], sum.Text+"\n\n")
		after += c.count(merged) - tok[plan.End]
		out = append(out, merged)
		rest = rest[1:]
	case mergePrev:
		last := len(out) - 1
		after -= c.count(out[last])
		out[last] = rec.AppendText(out[last], "\n\n"+sum.Text)
		after += c.count(out[last])
	}
	out = append(out, rest...)
	obs.TokensAfter, obs.TurnsAfter = after, len(out)
	obs.Outcome = snap.Settle(after, c.opts.Budget)
	if rec.Dialect == traj.DialectOpenAI {
		res.Pairing = snap.CheckPairing(out)
		obs.PairingProblems = len(res.Pairing)
	}
	if c.opts.DryRun {
		res.Obs = obs
		return res, nil
	}
	if c.opts.PerRecordMetrics {
		cm := metrics.NewTrajectoryMetrics(obs)
		b, err := json.Marshal(cm)
		if err != nil {
			return Result{}, fmt.Errorf("%s: compression_metrics: %w", pos, err)
		}
		fields = append(fields, traj.Field{Key: "compression_metrics", Value: b})
	}
	res.Out = rec.AppendJSON(make([]byte, 0, len(raw)), out, fields...)
	res.Obs = obs
	return res, nil
}

func (c *Compressor) summarize(ctx context.Context, deadline time.Time, req summary.Request) (summary.Result, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	return c.opts.Summarizer.Summarize(ctx, req)
}
