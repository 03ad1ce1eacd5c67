package pipeline

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

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
	// Fallback is set when the summary came from Options.Summarizing.Fallback.
	Fallback bool
	// read is the record as read (repaired, redacted), for the trainer's
	// fate of it (Options.Trainer.Fate); unrepaired is it before its repair
	// (nil: not repaired).
	read, unrepaired []byte
}

// Compressor compresses one record at a time; it is safe for concurrent
// use. [Run] calls it from many goroutines. It holds no limits of its own:
// [Run] owns them and passes them to each call.
type Compressor struct {
	opts   Options
	mapper trainview.Mapper
}

// NewCompressor checks opts and returns a Compressor.
func NewCompressor(opts Options) (*Compressor, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Placement.Role == "" {
		opts.Placement.Role = traj.RoleUser
	}
	if opts.Counting.ImageRule == nil {
		opts.Counting.ImageRule = imagetok.OpenAI()
	}
	if opts.Prepass != nil {
		pc := *opts.Prepass
		if pc.Counter == nil {
			pc.Counter = opts.Counting.Counter
		}
		opts.Prepass = &pc
	}
	return &Compressor{opts: opts, mapper: trainview.Mapper{Schema: opts.Counting.Schema, ToolsKey: opts.Counting.ToolsKey, Axolotl: trainview.ReadsAsAxolotl(opts.Counting.Template)}}, nil
}

// count is the token count of one turn.
func (c *Compressor) count(t traj.Turn) int {
	return c.opts.Counting.Counter.Count(t.Text) + t.Extra + c.opts.Counting.TurnOverhead
}

// record is one record on its way through [Compressor.Compress]. Its
// state is cut by the step that writes it, one small struct each, in the
// order of the steps (see the package doc); a step reads what the steps
// before it wrote. What a summarised region makes of the record is no part
// of it: each try is a value (try) that the refit loop keeps or drops.
type record struct {
	in  input        // the line and its place: redact, decode and repair rewrite raw
	lim recordLimits // the run's limits and whether the record holds a CPU slot
	rec *traj.Record // decode (repair decodes the repaired line again)
	// obs is what the steps record about the record as read; a try's
	// results join it when that try is written (encode).
	obs  metrics.Observation
	img  imageState    // countImages
	tmpl templateState // the templated counts: the record's counter, its cache, a stop
	m    measured      // measure; the prepass replaces it when it changes turns
	plan planned       // planRegion and place
	// summarized: the summarizer was called for the record (a later call,
	// for a larger region, adds to its figures in obs)
	summarized bool
}

// input is the line of a record and where it came from.
type input struct {
	raw      []byte // as read; redacted, UTF-8 repaired and repaired for the trainer by those steps
	pos      traj.Pos
	deadline time.Time // zero: none
	// ctx is the run's, which a template's render polls.
	ctx context.Context
	// unrepaired is raw before the trainer's repair (repair sets it), for
	// the trainer's fate of the row as the user gave it.
	unrepaired []byte
}

// recordLimits are the run's limits (none outside Run) as one record
// holds them.
type recordLimits struct {
	limits
	cpuHeld bool // a CPU slot of limits is held and must be released
}

// acquire takes a CPU slot for the record.
func (l *recordLimits) acquire(ctx context.Context) error {
	if err := l.acquireCPU(ctx); err != nil {
		return err
	}
	l.cpuHeld = true
	return nil
}

// release releases the record's CPU slot if it holds one.
func (l *recordLimits) release() {
	if l.cpuHeld {
		l.releaseCPU()
		l.cpuHeld = false
	}
}

// Template is the chat-template counter records are counted with
// (Options.Counting.Template), or nil for none.
func (c *Compressor) Template() trainview.RecordCounter { return c.opts.Counting.Template }

// ImageRule is the rule images are counted by (Options.Counting.ImageRule).
func (c *Compressor) ImageRule() imagetok.Rule { return c.opts.Counting.ImageRule }

// Compress decides and applies the outcome of one input line. Per-record
// problems become the result's outcome; the error is non-nil only when the
// run must stop: ctx was cancelled, or the summarizer failed with
// [summary.ErrFatal].
//
// The steps, in order: redact the line's secrets, decode it (repairing
// ill-formed UTF-8), count its images (Options.Counting.ImageRule), measure
// its turns, plan the region (snap), run the prepass on the middle (which
// may make the record fit with no region summarised), place the summary
// (alternation mode), summarize the region, assemble the new turns, account
// for their tokens (and what the summary kept of the region), encode the
// record. Each step may settle the record early; it is then written
// unchanged (its secrets redacted). Compress itself bounds nothing; [Run]
// adds its limits.
func (c *Compressor) Compress(ctx context.Context, raw []byte, pos traj.Pos) (Result, error) {
	return c.compress(ctx, raw, pos, limits{})
}

// compress is Compress within lim: the record holds a CPU slot for its CPU
// work, frees it while a remote summarizer waits, and hands the summarizer
// the run's bound on requests in flight.
func (c *Compressor) compress(ctx context.Context, raw []byte, pos traj.Pos, lim limits) (Result, error) {
	res, err := c.compressRecord(ctx, raw, pos, lim)
	if err == nil && res.Reject == nil && c.opts.Trainer.Fate != nil {
		res.Obs.Trainer = c.trainerFates(res)
	}
	return res, err
}

// trainerFates is what Options.Trainer.Fate does to the record as read and
// as written.
func (c *Compressor) trainerFates(res Result) *[2]metrics.TrainerFate {
	o := res.Obs
	if o.TemplateError != "" && !strings.HasPrefix(o.TemplateError, "once compressed: ") {
		skip := metrics.TrainerFate{Action: "skip"}
		return &[2]metrics.TrainerFate{skip, skip}
	}
	// A rule may ask for the view more than once (axolotl's labelling,
	// then its roles): it is built once.
	view := func(raw []byte) func() (trainview.View, error) {
		return sync.OnceValues(func() (trainview.View, error) { return c.mapper.Record(raw) })
	}
	f := [2]metrics.TrainerFate{c.opts.Trainer.Fate(o.TokensBefore, view(res.read)), {}}
	f[1] = f[0]
	if !o.Outcome.Unchanged() {
		f[1] = c.opts.Trainer.Fate(o.TokensAfter, view(res.Out))
	}
	if len(o.Repairs) > 0 && res.unrepaired != nil {
		// As the user gave it, before its repair.
		rule := c.opts.Trainer.Fate
		if c.opts.Trainer.Unrepaired != nil {
			rule = c.opts.Trainer.Unrepaired
		}
		f[0] = rule(o.TokensBefore, view(res.unrepaired))
	}
	return &f
}

// compressRecord is compress without the trainer's fates.
func (c *Compressor) compressRecord(ctx context.Context, raw []byte, pos traj.Pos, lim limits) (Result, error) {
	r := record{in: input{raw: raw, pos: pos, deadline: c.deadline(), ctx: ctx}, lim: recordLimits{limits: lim}}
	r.obs = metrics.Observation{Source: pos.File, Line: pos.Line, Record: pos.Record}
	if err := r.lim.acquire(ctx); err != nil {
		return Result{}, err
	}
	defer r.lim.release()

	c.redact(&r)
	if rej := c.decode(&r); rej != nil {
		if c.opts.GroupBy != "" {
			r.obs.Group = metrics.GroupName(jsonx.Lookup(raw, c.opts.GroupBy))
		}
		return Result{Obs: r.obs, Reject: rej}, nil
	}
	if c.opts.GroupBy != "" {
		r.obs.Group = metrics.GroupName(r.rec.Field(c.opts.GroupBy))
	}
	c.repair(&r)
	c.countImages(&r)
	fits, tmplErr := c.measure(&r)
	if r.tmpl.stopped != nil {
		return Result{}, r.tmpl.stopped
	}
	if tmplErr != nil {
		r.obs.TemplateError = tmplErr.Error()
		r.leave(outcome.Uncompressible, string(outcome.ChatTemplate))
		return r.unchanged(), nil
	}
	if fits {
		r.leave(outcome.SkippedUnderTarget, "")
		return r.unchanged(), nil
	}
	var fit refits
	c.planRegion(&r, fit)
	if c.prepass(&r) { // fits with no region summarised
		t := c.prepassOnly(&r)
		if !c.refit(&fit, t) {
			return c.encode(&r, t)
		}
		// Fit per turn, not once rendered: summarise a region after all.
		r.obs.Prepass.Fit = false
		c.planRegion(&r, fit)
	}
	c.place(&r)
	if r.plan.Outcome != outcome.Compressed {
		if r.prepassSaved() > 0 {
			// No region can be summarised, but the prepass made the
			// record smaller: written so, still over target. (Old images
			// whose text the count finds dearer than the images, which
			// it may not see, leave the record as it came.)
			return c.encode(&r, c.prepassOnly(&r))
		}
		r.leave(r.plan.Outcome, string(r.plan.Reason))
		return r.unchanged(), nil
	}
	return c.summarizeRegion(ctx, &r, fit)
}

// deadline is when a record started now must be done (zero: no limit). It
// covers all of the record: the CPU work cannot be interrupted, but it
// counts against the summarizer's time.
func (c *Compressor) deadline() time.Time {
	if c.opts.Summarizing.RecordTimeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(c.opts.Summarizing.RecordTimeout)
}

// unchanged is the result of a record written as it came in (its secrets
// redacted).
func (r *record) unchanged() Result {
	return Result{Out: r.in.raw, Obs: r.obs, read: r.in.raw, unrepaired: r.in.unrepaired}
}

// leave settles a record that is written unchanged: what the prepass
// would have saved is not written either.
func (r *record) leave(oc outcome.Outcome, reason string) {
	r.obs.Leave(oc, reason)
	r.obs.Prepass.Fit, r.obs.Prepass.Saved = false, [metrics.NumPrepassSteps]int{}
	r.obs.ImagesRemoved, r.obs.ImageTokensSaved = 0, 0
}
