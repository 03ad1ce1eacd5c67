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
	// record's file, traj.Pos.File) into its turn's Extra. The zero Rule
	// is imagetok.OpenAI().
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
	// rules at its own limit); each observation then carries the fate of
	// the record as read and as written (metrics.Observation.Trainer), a
	// record Template refuses as read being "skip" both times.
	Trainer func(tokens int) metrics.TrainerFate
	// Repair, when set, is given each record as read (after redaction) and
	// returns the turns of the record made acceptable to the trainer, and
	// the repairs made, or no repairs: the record is then read as if it
	// came with those turns (its output holds them, whatever its outcome),
	// and its observation names the repairs (metrics.Observation.Repairs).
	Repair func(rec *traj.Record) (turns []traj.Turn, done []string)
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
	if opts.ImageRule == (imagetok.Rule{}) {
		opts.ImageRule = imagetok.OpenAI()
	}
	if opts.Prepass != nil {
		pc := *opts.Prepass
		if pc.Counter == nil {
			pc.Counter = opts.Counter
		}
		opts.Prepass = &pc
	}
	return &Compressor{opts: opts, mapper: trainview.Mapper{Schema: opts.Schema, ToolsKey: opts.ToolsKey}}, nil
}

// count is the token count of one turn.
func (c *Compressor) count(t traj.Turn) int {
	return c.opts.Counter.Count(t.Text) + t.Extra + c.opts.TurnOverhead
}

// job is one record on its way through [Compressor.Compress]: each step
// reads what the steps before it filled in.
type job struct {
	raw      []byte
	pos      traj.Pos
	deadline time.Time // zero: none
	lim      limits    // the run's limits (none outside Run)
	cpuHeld  bool      // a CPU slot of lim is held and must be released

	rec   *traj.Record // decode
	turns []traj.Turn  // measure: the record's turns; the prepass may change some
	// imgDropped: the images list entries whose "<image>" markers the
	// prepass removed (ascending); the list is written without them.
	imgDropped []int
	roles      []traj.Role // measure: per turn
	tok        []int       // measure: per turn, as counted by c.count
	ext        int         // measure: tokens of a system prompt outside the turns
	// adj is what a whole record costs besides its turns and system prompt
	// as counted one by one: without a template, its tool schemas (as
	// JSON); with one, the templated count of the record less those
	// counts, raised by fit when a rendered result came out over target.
	// The planner budgets the turns with it; only a template's final
	// count settles a record.
	adj     int
	tmplErr error // measure: the template refused the record
	// ctx is the run's, which a template's render polls; stopped is its
	// error once a render stopped for it: the record is not settled.
	ctx     context.Context
	stopped error
	refits  int // times refit planned the record again
	// summarized: the summarizer was called for j (a later call, for a
	// larger region, adds to its figures)
	summarized bool
	fits       bool // measure: the templated record fits; turns not counted
	framing    int  // measure: the template's framing per turn, estimated (added to tok)
	// stretches caches the counts of the rendered record's stretches
	// between special tokens: its renderings share most of them.
	stretches *trainview.Stretches
	tmpl      trainview.RecordCounter // Options.Template with j's image finder (templateCounter)
	// images: the record's images as read and what each counts (nil when
	// it has none); listed is what its images-list entries that no marker
	// claims count (part of adj without a template)
	images   []imagetok.Image
	imageTok []int
	listed   int
	find     *imagetok.Finder // finder
	plan     snap.Plan        // plan, place
	obs      metrics.Observation

	// plan: what assembly will add besides the summary text (snap's
	// Budget.Reserve), and the noticed texts it measured for that, reused
	// by assemble and account.
	reserve int
	noticed []noticedTurn
	sys     string // the system prompt outside the turns with the notice; "" if not noticed
	sysTok  int
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
		res.Obs.Trainer = c.trainerFates(res.Obs)
	}
	return res, err
}

// trainerFates is what Options.Trainer does to the record as read and as
// written.
func (c *Compressor) trainerFates(o metrics.Observation) *[2]metrics.TrainerFate {
	if o.TemplateError != "" && !strings.HasPrefix(o.TemplateError, "once compressed: ") {
		skip := metrics.TrainerFate{Action: "skip"}
		return &[2]metrics.TrainerFate{skip, skip}
	}
	f := [2]metrics.TrainerFate{c.opts.Trainer(o.TokensBefore), c.opts.Trainer(o.TokensBefore)}
	if !o.Outcome.Unchanged() {
		f[1] = c.opts.Trainer(o.TokensAfter)
	}
	if len(o.Repairs) > 0 {
		f[0] = metrics.TrainerFate{Action: "skip"} // as read, before its repair
	}
	return &f
}

// compressRecord is compress without the trainer's fates.
func (c *Compressor) compressRecord(ctx context.Context, raw []byte, pos traj.Pos, lim limits) (Result, error) {
	j := job{raw: raw, pos: pos, deadline: c.deadline(), lim: lim, ctx: ctx}
	j.obs = metrics.Observation{Source: pos.File, Line: pos.Line, Record: pos.Record}
	if err := lim.acquireCPU(ctx); err != nil {
		return Result{}, err
	}
	j.cpuHeld = true
	defer c.releaseHeld(&j)

	c.redact(&j)
	if rej := c.decode(&j); rej != nil {
		if c.opts.GroupBy != "" {
			j.obs.Group = metrics.GroupName(jsonx.Lookup(raw, c.opts.GroupBy))
		}
		return Result{Obs: j.obs, Reject: rej}, nil
	}
	if c.opts.GroupBy != "" {
		j.obs.Group = metrics.GroupName(j.rec.Field(c.opts.GroupBy))
	}
	c.repair(&j)
	c.countImages(&j)
	c.measure(&j)
	if j.stopped != nil {
		return Result{}, j.stopped
	}
	if j.tmplErr != nil {
		j.obs.TemplateError = j.tmplErr.Error()
		j.leave(outcome.Uncompressible, string(outcome.ChatTemplate))
		return j.unchanged(), nil
	}
	if j.fits {
		j.leave(outcome.SkippedUnderTarget, "")
		return j.unchanged(), nil
	}
	c.planRegion(&j)
	if c.prepass(&j) { // fits with no region summarised
		a := c.prepassOnly(&j)
		pairing := c.account(&j, a, 0)
		if !c.refit(&j) {
			return c.encode(&j, a, pairing)
		}
		// Fit per turn, not once rendered: summarise a region after all.
		j.obs.Prepass.Fit = false
		c.planRegion(&j)
	}
	c.place(&j)
	if j.plan.Outcome != outcome.Compressed {
		if j.prepassSaved() > 0 {
			// No region can be summarised, but the prepass made the
			// record smaller: written so, still over target. (Old images
			// whose text the count finds dearer than the images, which
			// it may not see, leave the record as it came.)
			a := c.prepassOnly(&j)
			return c.encode(&j, a, c.account(&j, a, 0))
		}
		j.leave(j.plan.Outcome, string(j.plan.Reason))
		return j.unchanged(), nil
	}
	return c.summarizeRegion(ctx, &j)
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

// releaseHeld releases the job's CPU slot if it holds one.
func (c *Compressor) releaseHeld(j *job) {
	if j.cpuHeld {
		j.lim.releaseCPU()
		j.cpuHeld = false
	}
}

// unchanged is the result of a record written as it came in (its secrets
// redacted).
func (j *job) unchanged() Result { return Result{Out: j.raw, Obs: j.obs} }

// leave settles a record that is written unchanged: what the prepass
// would have saved is not written either.
func (j *job) leave(oc outcome.Outcome, reason string) {
	j.obs.Leave(oc, reason)
	j.obs.Prepass.Fit, j.obs.Prepass.Saved = false, [metrics.NumPrepassSteps]int{}
	j.obs.ImagesRemoved, j.obs.ImageTokensSaved = 0, 0
}
