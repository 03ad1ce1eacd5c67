package pipeline

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
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
	// ImageRule counts each image of a record (package imagetok: content
	// parts, and "<image>" markers paired with the record's images list,
	// whose relative paths are resolved against the directory of the
	// record's file, traj.Pos.File) into its turn's Extra. nil is
	// imagetok.OpenAI().
	ImageRule imagetok.Rule

	// Template, when set (tokenizer.chat_template), makes every count of a
	// whole record the count of the record as the trainer sees it: its
	// messages and tool schemas (package trainview) rendered by the model's
	// chat template and tokenized. A record is then skipped_under_target
	// only when its templated count is at or under the target, and
	// compressed only when its rendered result is; the per-turn counts
	// only guide the planner (see Compressor.fit). A record the template
	// refuses is uncompressible, reason chat_template, written unchanged.
	// Images: when the Counter's Images is set, it counts the images the
	// template renders (their relative paths against the record's file's
	// directory when its Finder is nil; a refusal of its placeholder is
	// the template's refusal); when nil, each image found in the record
	// adds its ImageRule tokens to the templated count. A record whose
	// images list the prepass or the summary rewrote is counted with the
	// rewritten list.
	//
	// Any trainview.RecordCounter counts: a *trainview.Counter (a model's
	// chat template, as transformers, axolotl and TRL render it) or a
	// trainer's own renderer (LLaMA-Factory's templates); Images apply to
	// a *trainview.Counter only, any other counts each image by ImageRule.
	Template trainview.RecordCounter
	// Trainer, when set (a run with a trainer's config), says what that
	// trainer does to a row of so many tokens as Template counts them (its
	// rules at its own limit); view returns the row's view, for a rule
	// that looks at more than its length (which tokens are trained), and
	// is called only by such a rule. Each observation then carries the
	// fate of the record as read and as written
	// (metrics.Observation.Trainer), a record Template refuses as read
	// being "skip" both times.
	Trainer func(tokens int, view func() (trainview.View, error)) metrics.TrainerFate
	// Repair, when set, is given each record as read (after redaction) and
	// returns the turns of the record made acceptable to the trainer, and
	// the repairs made, or no repairs: the record is then read as if it
	// came with those turns (its output holds them, whatever its outcome),
	// and its observation names the repairs (metrics.Observation.Repairs).
	Repair func(rec *traj.Record) (turns []traj.Turn, done []string)
	// Unrepaired, when set, is the trainer's fate of a repaired record as
	// the user gave it (LLaMA-Factory: it skips the row, whatever its
	// length); nil means Trainer's fate of the record before its repair
	// (axolotl: the messages it cannot map left out, and its length).
	Unrepaired func(tokens int, view func() (trainview.View, error)) metrics.TrainerFate
	// ToolsKey names the record field holding its tool schemas ("" means
	// "tools"). Without a Template the schemas are counted as the tokens
	// of their JSON, once per record.
	ToolsKey string

	Summarizer summary.Summarizer
	// Fallback, when set, summarises a region whose Summarizer failed
	// (after its retries); the record's metrics say so. When nil such a
	// record is summary_failed and written unchanged.
	Fallback summary.Summarizer
	// RecordTimeout bounds the time of one record from the start of its
	// Compress call (0: none); the summarizer gets what is left. A record
	// whose summary has not arrived by then is summary_failed, never
	// dropped (a summary that arrived in time is used); the summarizer's
	// context then reports a [summary.TimeoutError] as its cause.
	RecordTimeout time.Duration

	SummaryRole traj.Role // role of the summary turn; "" means user (as the peer)
	// Alternate keeps strict user/assistant alternation around the summary
	// (LLaMA-Factory, Mistral templates): see [snap.PlaceAlternating]. The
	// summary is then user-side, so SummaryRole must be user.
	Alternate  bool
	AddNotice  bool // append NoticeText to the system turns of the head
	NoticeText string

	PerRecordMetrics bool // add "compression_metrics" to compressed records
	DryRun           bool // plan and count; remote summarizers are not called

	// GroupBy, when set, names the top-level record field whose value is
	// each record's group in the metrics' per-source breakdown
	// (Observation.Group, metrics.GroupName); a rejected line that is still
	// a JSON object is grouped by it too.
	GroupBy string
	// Redactor, when set (redaction.enabled), replaces the secrets of every
	// input line with typed markers before any other step reads it: see
	// [Compressor.Compress].
	Redactor *redact.Redactor
	// Prepass, when set (compression.prepass, or
	// compression.drop_old_images alone: ImagesOnly), makes a record over
	// target smaller without removing a turn before any region of it is
	// summarised (package prepass). Its Counter is the Compressor's
	// counter when unset; its Finder is made per record, with the
	// directory of the record's input file.
	Prepass *prepass.Config
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
	if err := o.Budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Schema.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := snap.ValidateSettings(o.TurnOverhead, o.SummaryRole, o.Alternate); err != nil {
		errs = append(errs, err)
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
	// read is the record as read (repaired, redacted), for the trainer's
	// fate of it (Options.Trainer); unrepaired is it before its repair
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
	if opts.SummaryRole == "" {
		opts.SummaryRole = traj.RoleUser
	}
	if opts.ImageRule == nil {
		opts.ImageRule = imagetok.OpenAI()
	}
	if opts.Prepass != nil {
		pc := *opts.Prepass
		if pc.Counter == nil {
			pc.Counter = opts.Counter
		}
		opts.Prepass = &pc
	}
	return &Compressor{opts: opts, mapper: trainview.Mapper{Schema: opts.Schema, ToolsKey: opts.ToolsKey, Axolotl: trainview.ReadsAsAxolotl(opts.Template)}}, nil
}

// count is the token count of one turn.
func (c *Compressor) count(t traj.Turn) int {
	return c.opts.Counter.Count(t.Text) + t.Extra + c.opts.TurnOverhead
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
// (Options.Template), or nil for none.
func (c *Compressor) Template() trainview.RecordCounter { return c.opts.Template }

// ImageRule is the rule images are counted by (Options.ImageRule).
func (c *Compressor) ImageRule() imagetok.Rule { return c.opts.ImageRule }

// Compress decides and applies the outcome of one input line. Per-record
// problems become the result's outcome; the error is non-nil only when the
// run must stop: ctx was cancelled, or the summarizer failed with
// [summary.ErrFatal].
//
// The steps, in order: redact the line's secrets, decode it (repairing
// ill-formed UTF-8), count its images (Options.ImageRule), measure its
// turns, plan the region (snap), run the prepass on the middle (which may
// make the record fit with no region summarised), place the summary
// (alternation mode), summarize the region, assemble the new turns,
// account for their tokens (and what the summary kept of the region),
// encode the record. Each step may settle the
// record early; it is then written unchanged (its secrets redacted).
// Compress itself bounds nothing; [Run] adds its limits.
func (c *Compressor) Compress(ctx context.Context, raw []byte, pos traj.Pos) (Result, error) {
	return c.compress(ctx, raw, pos, limits{})
}

// compress is Compress within lim: the record holds a CPU slot for its CPU
// work, frees it while a remote summarizer waits, and hands the summarizer
// the run's bound on requests in flight.
func (c *Compressor) compress(ctx context.Context, raw []byte, pos traj.Pos, lim limits) (Result, error) {
	res, err := c.compressRecord(ctx, raw, pos, lim)
	if err == nil && res.Reject == nil && c.opts.Trainer != nil {
		res.Obs.Trainer = c.trainerFates(res)
	}
	return res, err
}

// trainerFates is what Options.Trainer does to the record as read and as
// written.
func (c *Compressor) trainerFates(res Result) *[2]metrics.TrainerFate {
	o := res.Obs
	if o.TemplateError != "" && !strings.HasPrefix(o.TemplateError, "once compressed: ") {
		skip := metrics.TrainerFate{Action: "skip"}
		return &[2]metrics.TrainerFate{skip, skip}
	}
	view := func(raw []byte) func() (trainview.View, error) {
		return func() (trainview.View, error) { return c.mapper.Record(raw) }
	}
	f := [2]metrics.TrainerFate{c.opts.Trainer(o.TokensBefore, view(res.read)), {}}
	f[1] = f[0]
	if !o.Outcome.Unchanged() {
		f[1] = c.opts.Trainer(o.TokensAfter, view(res.Out))
	}
	if len(o.Repairs) > 0 && res.unrepaired != nil {
		// As the user gave it, before its repair.
		rule := c.opts.Trainer
		if c.opts.Unrepaired != nil {
			rule = c.opts.Unrepaired
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
	if c.opts.RecordTimeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(c.opts.RecordTimeout)
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
