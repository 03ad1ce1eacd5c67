package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// noticedTurn is head turn i with the notice appended, and its count.
type noticedTurn struct {
	i   int
	t   traj.Turn
	tok int
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

// repair applies Options.Repair to j's record: the repaired record is
// encoded and read again, so that every later step sees it as input.
func (c *Compressor) repair(j *job) {
	if c.opts.Repair == nil {
		return
	}
	turns, done := c.opts.Repair(j.rec)
	if len(done) == 0 {
		return
	}
	raw := j.rec.AppendJSON(nil, turns)
	rec, err := traj.Decode(raw, j.pos, c.opts.Schema)
	if err != nil {
		return // not a record once repaired: kept as read
	}
	j.raw, j.rec = raw, rec
	j.obs.Repairs = done
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

// prepassSaved is the tokens the prepass saved, all steps.
func (j *job) prepassSaved() int {
	n := j.obs.ImageTokensSaved
	for _, s := range j.obs.Prepass.Saved {
		n += s
	}
	return n
}

// leave settles a record that is written unchanged: what the prepass
// would have saved is not written either.
func (j *job) leave(oc outcome.Outcome, reason string) {
	j.obs.Leave(oc, reason)
	j.obs.Prepass.Fit, j.obs.Prepass.Saved = false, [metrics.NumPrepassSteps]int{}
	j.obs.ImagesRemoved, j.obs.ImageTokensSaved = 0, 0
}

// decode reads the line as a trajectory; a line that is not one becomes a
// Reject (and an invalid observation). Ill-formed UTF-8 is repaired first
// (jsonx.RepairUTF8: U+FFFD per maximal subpart, counted in the
// observation), so that every output is valid UTF-8 whatever the input
// held and token counts are of the text as written; a rejected line keeps
// its bytes as read.
func (c *Compressor) decode(j *job) *Reject {
	read := j.raw
	j.raw, j.obs.UTF8Repaired = jsonx.RepairUTF8(j.raw)
	rec, err := traj.Decode(j.raw, j.pos, c.opts.Schema)
	if err != nil {
		var de *traj.DecodeError
		errors.As(err, &de)
		j.obs.Reject(de.Reason)
		detail := de.Detail
		if n := j.obs.UTF8Repaired; n > 0 {
			// The detail is of the repaired text: say so, or a byte 0xFF
			// reads as an error about 'ï' (U+FFFD's first byte).
			detail += fmt.Sprintf(" (in the line with its %d ill-formed UTF-8 sequence(s) read as U+FFFD; raw_base64 holds the bytes as read)", n)
		}
		return &Reject{Pos: j.pos, Reason: de.Reason, Detail: detail, Raw: read}
	}
	j.rec = rec
	j.obs.TurnListRead = ""
	if rec.OtherTurnsKey != "" {
		j.obs.TurnListRead = "conversations"
		if rec.Dialect == traj.DialectOpenAI {
			j.obs.TurnListRead = "messages"
		}
	}
	return nil
}

// measure counts every turn, and a system prompt kept outside the turn
// list, and reports the input's tool-pairing problems.
func (c *Compressor) measure(j *job) {
	j.turns = j.rec.Turns
	n := len(j.turns)
	defer func() {
		if j.rec.Dialect == traj.DialectOpenAI {
			// Reported for every record: a record written unchanged carries the
			// problems of its input; a compressed one is rechecked in account.
			j.obs.PairingProblems = len(snap.CheckPairing(j.rec.Turns))
			j.obs.PairingProblemsBefore = j.obs.PairingProblems
		}
	}()
	templated := -1
	if c.opts.Template != nil {
		c.findParts(j)
		t, err := c.templated(j, j.turns, j.rec.System, nil)
		if err != nil {
			j.tmplErr = err
		} else if templated = t; t <= c.opts.Budget.Target {
			// It fits as the trainer sees it: its turns need no count.
			j.fits = true
			j.obs.Measure(t, n)
			return
		}
	}
	j.roles, j.tok = make([]traj.Role, n), make([]int, n)
	total := 0
	for i, t := range j.turns {
		j.roles[i], j.tok[i] = t.Role, c.countTurn(j, i, t)
		total += j.tok[i]
	}
	if j.rec.SystemKey != "" {
		j.ext = c.opts.Counter.Count(j.rec.System) + c.opts.TurnOverhead
	}
	j.adj = 0
	switch {
	case templated >= 0:
		// What the template adds beyond the texts is mostly framing per
		// turn: spread it over the turns, so that the planner credits a
		// region with the framing it removes too (the rendered result
		// decides anyway: Compressor.refit).
		// The tool schemas are rendered once, whatever the turns: a fixed
		// cost of the record (in adj), estimated by the tokens of their
		// JSON, not framing any turn is credited with.
		tools := 0
		if v, err := c.mapper.Tools(j.rec); err == nil && v != nil {
			tools = min(c.opts.Counter.Count(string(v)), max(templated-total-j.ext, 0))
		}
		if extra := templated - total - j.ext - tools; extra > 0 && n > 0 {
			// All of it, the remainder too (one more for the first
			// extra % n turns): a region is credited with its share.
			j.framing = extra / n
			rem := extra % n
			for i := range j.tok {
				j.tok[i] += j.framing
				if i < rem {
					j.tok[i]++
				}
			}
			total += extra
		}
		j.adj = templated - total - j.ext
	case c.opts.Template == nil:
		// Without a template the tool schemas are still part of what the
		// trainer sees: the tokens of their JSON, once per record.
		if tools, err := c.mapper.Tools(j.rec); err == nil && tools != nil {
			j.adj = c.opts.Counter.Count(string(tools))
		}
		j.adj += j.listed
	}
	j.obs.Measure(total+j.ext+j.adj, n)
}

// turnBudget is the budget of the turns: the system prompt outside them is
// a fixed, protected part of the record, so the turns get what is left.
func (c *Compressor) turnBudget(j *job) snap.Budget {
	b := c.opts.Budget
	b.Target -= j.ext + j.adj
	b.Reserve = j.reserve
	return b
}

// planRegion chooses the region to summarise (snap.Compute). The region
// is sized for everything the output holds besides the summary text: a
// record that is to be compressed is planned again with that reserve. An
// earlier summary of ours in the middle is then taken into the region
// (snap.Absorb), and in the OpenAI dialect the region is kept off
// call/result pairs by id (snap.KeepPairs).
func (c *Compressor) planRegion(j *job) {
	j.reserve = 0
	j.plan = snap.Compute(j.roles, j.tok, c.turnBudget(j))
	if j.plan.Outcome == outcome.Compressed {
		if j.reserve = c.reserve(j); j.reserve > 0 {
			j.plan = snap.Compute(j.roles, j.tok, c.turnBudget(j))
		}
	}
	// A summary of ours in the middle is taken into the region: one
	// updated summary, never a second beside it.
	j.plan = snap.Absorb(j.plan, j.roles, j.tok, earlierSummaries(j))
	if j.plan.Outcome == outcome.Compressed && j.rec.Dialect == traj.DialectOpenAI {
		// Never separate a call from its result, even in broken input.
		j.plan = snap.KeepPairs(j.plan, j.roles, j.tok, snap.PairCuts(j.turns), c.turnBudget(j))
	}
}

// earlierSummaries marks the turns of a Compressed plan's middle that hold
// a summary trajcompress wrote (summary.IsSummary); nil when none does.
func earlierSummaries(j *job) []bool {
	if j.plan.Outcome != outcome.Compressed {
		return nil
	}
	var marks []bool
	for i := j.plan.HeadEnd; i < j.plan.TailStart; i++ {
		if summary.IsSummary(j.turns[i].Text) {
			if marks == nil {
				marks = make([]bool, len(j.turns))
			}
			marks[i] = true
		}
	}
	return marks
}

// reserve measures what assembling j adds besides the summary text: the
// summary turn's framing (TurnOverhead) and the notice (see notice). (The
// region's start does not depend on the reserve, so the noticed turns are
// the same after planning again.)
func (c *Compressor) reserve(j *job) int {
	return max(c.opts.TurnOverhead+j.framing+c.notice(j, j.plan.Start), 0)
}

// notice measures what the notice adds to a record compressed from turn
// start on: it is appended to the system turns before start, or else to
// the system prompt outside the turns. It records the noticed texts and
// their counts in j for assemble and account.
func (c *Compressor) notice(j *job, start int) int {
	j.noticed, j.sys, j.sysTok = j.noticed[:0], "", 0
	if !c.opts.AddNotice {
		return 0
	}
	r := 0
	for i, t := range j.turns[:start] {
		if t.Role == traj.RoleSystem {
			nt := j.rec.AppendText(t, c.opts.NoticeText)
			k := c.count(nt)
			j.noticed = append(j.noticed, noticedTurn{i: i, t: nt, tok: k})
			r += k - j.tok[i]
		}
	}
	if len(j.noticed) == 0 && j.rec.SystemKey != "" {
		j.sys = j.rec.System + c.opts.NoticeText
		j.sysTok = c.opts.Counter.Count(j.sys) + c.opts.TurnOverhead
		r += j.sysTok - j.ext
	}
	return r
}

// prepass makes a record over target smaller without removing a turn,
// before any region is summarised (Options.Prepass): within the middle
// between the protected head and tail, old images become short texts
// (when asked for), identical tool results back-references, large old
// ones one-line digests, oversized tool-call arguments are shrunk, in that
// order, until the record fits (package prepass). It reports whether the record now fits with no region
// summarised (notice included). When the prepass changed the record but
// it still does not fit, the region is planned again on the changed
// turns.
func (c *Compressor) prepass(j *job) bool {
	p := j.plan
	if c.opts.Prepass == nil || p.Outcome == outcome.SkippedUnderTarget || p.HeadEnd >= p.TailStart {
		return false
	}
	j.obs.Prepass.Ran = true
	limit := c.opts.Budget.Target - j.ext - j.adj - c.notice(j, p.HeadEnd)
	fits := func(saved int) bool { return p.Total-saved <= limit }
	cfg := *c.opts.Prepass
	if cfg.DropOldImages || cfg.ImagesOnly {
		cfg.Finder = c.finder(j)
	}
	turns, rep := prepass.Apply(j.rec, j.turns, p.HeadEnd, p.TailStart, fits, cfg)
	if !rep.Changed() {
		return false
	}
	j.obs.Prepass.Saved = rep.Saved
	j.obs.ImagesRemoved, j.obs.ImageTokensSaved = rep.ImagesRemoved, rep.ImageTokensSaved
	j.imgDropped = rep.ImagesDropped
	j.turns = turns
	for i := p.HeadEnd; i < p.TailStart; i++ {
		if turns[i].Made() {
			turns[i].Extra = c.madeImageTokens(j, i, turns[i])
			j.tok[i] = c.count(turns[i]) + j.framing
		}
	}
	if rep.Fits {
		j.obs.Prepass.Fit = true
		return true
	}
	c.planRegion(j)
	return false
}

// finder finds the images of j's record: relative paths name files beside
// its input file. Every search of the record's images (counting, the
// image step, the summary's, the templated count) uses it; it is made once
// per record.
func (c *Compressor) finder(j *job) *imagetok.Finder {
	if j.find == nil {
		j.find = &imagetok.Finder{Memo: true} // one record's, in one goroutine
		if j.pos.File != "" {
			j.find.Dir = filepath.Dir(j.pos.File)
		}
	}
	return j.find
}

// regionImages are the images of the planned region's turns, for the
// summary; nil when it holds none.
func (c *Compressor) regionImages(j *job) []imagetok.Image {
	// Markers pair with the list over the whole record.
	all, _ := prepass.FindImages(c.finder(j), j.turns, imagesList(j))
	var out []imagetok.Image
	for _, im := range all {
		if im.Turn >= j.plan.Start && im.Turn < j.plan.End {
			out = append(out, im)
		}
	}
	return out
}

// imagesList is the record's images list as the prepass left it (nil
// when none), paired with the markers of j.turns.
func imagesList(j *job) []byte {
	if f, ok := prepass.ImagesListWithout(j.rec, j.imgDropped); ok {
		return f.Value
	}
	_, list := prepass.ImagesField(j.rec)
	return list
}

// imagesField is the images list to write with the assembled record, when
// it changes: without the entries of the markers the prepass removed and
// of those in the summarised region [p.Start, p.End), so that the markers
// left and the list stay paired.
func imagesField(j *job) (traj.Field, bool) {
	dropped := j.imgDropped
	if j.plan.Start < j.plan.End {
		if region := prepass.RegionMarkers(j.rec, j.plan.Start, j.plan.End); len(region) > 0 {
			dropped = append(slices.Clip(dropped), region...)
			slices.Sort(dropped)
			dropped = slices.Compact(dropped)
		}
	}
	return prepass.ImagesListWithout(j.rec, dropped)
}

// prepassOnly assembles a record that the prepass changed and in which no
// region is summarised, for account: it fits, or no region can be
// summarised (it is then compressed_over_limit). The notice is added as
// for any compressed record.
func (c *Compressor) prepassOnly(j *job) assembly {
	h := j.plan.HeadEnd
	j.plan = snap.Plan{Outcome: outcome.Compressed, Start: h, End: h, HeadEnd: h, TailStart: j.plan.TailStart}
	c.notice(j, h)
	return c.assemble(j, "")
}

// place decides, in alternation mode, how the summary joins its neighbours
// (snap.PlaceAlternating); otherwise the summary is a turn of its own.
func (c *Compressor) place(j *job) {
	if c.opts.Alternate {
		j.plan = snap.PlaceAlternating(j.plan, j.roles, j.tok, c.turnBudget(j))
	}
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

// assembly is a compressed record's new turn list and the top-level fields
// to set.
type assembly struct {
	turns  []traj.Turn
	fields []traj.Field
	// sysTokens is the count of the system prompt outside the turns, after
	// the notice went into it (j.ext when it did not).
	sysTokens int
}

// assemble splices the summary text into the record as the plan says: the
// head (with the notice on its system turns, or on the system prompt
// outside them), the summary as a turn of its own or merged into a
// neighbour, then the rest. An empty text (the prepass made the record
// fit) adds no summary.
func (c *Compressor) assemble(j *job, text string) assembly {
	rec, p := j.rec, j.plan
	a := assembly{sysTokens: j.ext}
	out := make([]traj.Turn, 0, p.TurnsAfter(len(j.roles)))
	noticed := false
	for i, t := range j.turns[:p.Start] {
		if c.opts.AddNotice && t.Role == traj.RoleSystem {
			if k := noticedAt(j.noticed, i); k >= 0 { // measured by reserve
				t = j.noticed[k].t
			} else { // the placement moved the region's start
				t = rec.AppendText(t, c.opts.NoticeText)
			}
			noticed = true
		}
		out = append(out, t)
	}
	if noticed {
		j.sys = "" // a system turn took the notice after all
	} else if c.opts.AddNotice && j.sys == "" && rec.SystemKey != "" {
		j.sys = rec.System + c.opts.NoticeText
		j.sysTok = c.opts.Counter.Count(j.sys) + c.opts.TurnOverhead
	}
	if j.sys != "" {
		a.fields = append(a.fields, rec.SystemField(j.sys))
		a.sysTokens = j.sysTok
	}
	if f, ok := imagesField(j); ok {
		a.fields = append(a.fields, f)
	}
	rest := j.turns[p.End:]
	switch {
	case text == "":
	case p.Placement == snap.Insert:
		out = append(out, rec.NewTurn(c.opts.SummaryRole, text))
	case p.Placement == snap.MergeNext:
		out = append(out, rec.PrependText(rest[0], text+"\n\n"))
		rest = rest[1:]
	case p.Placement == snap.MergePrev:
		last := len(out) - 1
		out[last] = rec.AppendText(out[last], "\n\n"+text)
	}
	a.turns = append(out, rest...)
	return a
}

// account counts the assembled record and settles its outcome: a turn kept
// as read costs what measure counted, a made or changed one is counted
// again, except an inserted summary turn whose text the summarizer counted
// with our counter (sumTokens > 0). It returns the output's tool-pairing
// problems (OpenAI dialect).
func (c *Compressor) account(j *job, a assembly, sumTokens int) []snap.PairProblem {
	var after int
	if c.opts.Template != nil {
		// The templated count replaces the per-turn sum: no turn is
		// counted on its own.
		sys := j.rec.System
		if j.sys != "" {
			sys = j.sys
		}
		t, err := c.templated(j, a.turns, sys, a.fields)
		if err != nil {
			// Rendered the input, refuses the output (e.g. a summary turn
			// out of the order it wants): over target for certain.
			j.tmplErr = err
			t = c.opts.Budget.Target + 1
		}
		after = t
	} else {
		after = c.turnSum(j, a, sumTokens)
	}
	j.obs.Settle(snap.Settle(after, c.opts.Budget), after, len(a.turns))
	if j.rec.Dialect != traj.DialectOpenAI {
		return nil
	}
	pairing := snap.CheckPairing(a.turns)
	j.obs.PairingProblems = len(pairing)
	return pairing
}

// turnSum is the assembled record's tokens as the sum of its turns' (plus
// the system prompt's and the record's adjustment).
func (c *Compressor) turnSum(j *job, a assembly, sumTokens int) int {
	p, n := j.plan, len(j.roles)
	after := a.sysTokens
	for i, t := range a.turns {
		switch {
		case !t.Made():
			// The head keeps its indices; the rest is the input's suffix.
			k := i
			if i >= p.Start {
				k = n - len(a.turns) + i
			}
			after += j.tok[k]
		case i == p.Start && p.Placement == snap.Insert && sumTokens > 0:
			after += sumTokens + t.Extra + c.opts.TurnOverhead
		case i < p.Start && noticedAt(j.noticed, i) >= 0:
			after += j.noticed[noticedAt(j.noticed, i)].tok
		default:
			after += c.count(t)
		}
	}
	return after + j.adj + c.imageDrift(j, a.turns, a.fields)
}

// encode writes the compressed record, with its compression_metrics when
// per-record metrics are on; a dry run keeps the input bytes.
func (c *Compressor) encode(j *job, a assembly, pairing []snap.PairProblem) (Result, error) {
	if j.stopped != nil {
		return Result{}, j.stopped
	}
	if j.tmplErr != nil {
		// The template rendered the record as read but refuses what
		// compression made of it (account): written unchanged, as a
		// record it refuses as read, with its message.
		j.obs.TemplateError = "once compressed: " + j.tmplErr.Error()
		j.obs.TokensAfter, j.obs.TurnsAfter = j.obs.TokensBefore, j.obs.TurnsBefore
		j.obs.PairingProblems = j.obs.PairingProblemsBefore
		j.leave(outcome.Uncompressible, string(outcome.ChatTemplate))
		return j.unchanged(), nil
	}
	res := Result{Out: j.raw, Pairing: pairing, Fallback: j.obs.Fallback}
	if c.opts.DryRun {
		res.Obs = j.obs
		return res, nil
	}
	if c.opts.PerRecordMetrics {
		b, err := j.obs.TrajectoryJSON()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", j.pos, err)
		}
		a.fields = append(a.fields, traj.Field{Key: metrics.TrajectoryKey, Value: b})
	}
	res.Out = j.rec.AppendJSON(nil, a.turns, a.fields...) // sized to the output, not the input
	res.Obs = j.obs
	return res, nil
}

// templated is the count of turns (with system outside them and fields
// written with them: an images list the prepass or the summary changed) of
// j's record as the trainer sees it: Options.Template. When the template
// renders no images (its Images is nil), each image of turns counts the
// rule's tokens on top of the rendered text (Turn.Extra, and the images
// list entries no marker claims: j.listed), as without a template.
func (c *Compressor) templated(j *job, turns []traj.Turn, system string, fields []traj.Field) (int, error) {
	bp, _ := viewBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	v, err := c.mapper.ViewBuf(*bp, j.rec, turns, system)
	if err != nil {
		viewBufs.Put(bp)
		return 0, fmt.Errorf("%s: %w", c.opts.Template.Name(), err)
	}
	if key, list := prepass.ImagesField(j.rec); list != nil {
		for _, f := range fields {
			if f.Key == key {
				v.Images = f.Value
			}
		}
	}
	if j.stretches == nil {
		j.stretches = &trainview.Stretches{}
	}
	tc := c.templateCounter(j)
	ctx := j.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	n, err := tc.CountContext(ctx, v, j.stretches)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		j.stopped = err // the run is stopping: not the template's refusal
	}
	// Nothing of the view outlives the count (the rendered text and the
	// stretches are copies; a template's error message is cloned), so its
	// buffer is reused by the next record's.
	*bp = v.Messages[:0]
	viewBufs.Put(bp)
	if err != nil || countsImages(tc) || j.images == nil {
		return n, err
	}
	for _, t := range turns {
		n += t.Extra
	}
	return n + j.listed + c.imageDrift(j, turns, fields), nil
}

// templateCounter is Options.Template for j's record: when it expands
// images, its Images reads them with j's finder (relative paths name
// files beside the record's input file).
func (c *Compressor) templateCounter(j *job) trainview.RecordCounter {
	if j.tmpl != nil {
		return j.tmpl
	}
	j.tmpl = c.opts.Template
	if t, ok := j.tmpl.(*trainview.Counter); ok {
		if im := t.Images; im != nil && im.Finder == nil && j.pos.File != "" {
			tc, ic := *t, *im
			ic.Finder = c.finder(j)
			tc.Images = &ic
			j.tmpl = &tc
		}
	}
	return j.tmpl
}

// countsImages says whether rc counts the images it renders itself (a
// *trainview.Counter with Images).
func countsImages(rc trainview.RecordCounter) bool {
	t, ok := rc.(*trainview.Counter)
	return ok && t.Images != nil
}

// viewBufs holds the buffers templated builds the views' messages in: a
// record's are about its size, so reusing them spares allocating and
// clearing that much memory per rendering. sync.Pool drops them at GCs.
var viewBufs sync.Pool

// noticedAt is the index in ns of head turn i, or -1 when reserve did not
// notice it.
func noticedAt(ns []noticedTurn, i int) int {
	for k, n := range ns {
		if n.i == i {
			return k
		}
	}
	return -1
}
