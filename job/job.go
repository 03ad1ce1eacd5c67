// Package job owns one compress run, from a [Spec] — the effective config
// and the paths and switches of one invocation — to its outputs and
// [Result]: it resolves the inputs into files and plans every output path
// (refusing collisions before anything is read), opens inputs through
// package format's one factory, builds the token counter, the summarizer
// and the [pipeline.Compressor] from the config, and samples.
//
// A run is a set of tasks (package task: files, JSONL byte ranges, runs of
// row groups or record batches). Each task runs through [pipeline.Run]
// and commits on its own in the run directory beside the output (see
// rundir.go): its records, rejects and outcome lines in segments, then a
// marker with its exact metrics state. When every task is done the outputs
// are put together from the segments — the same names and bytes one pass
// writes — with the merged metrics (and, asked, their HTML report,
// package report), and put in place together by one internal/commit
// transaction that also removes the run directory and locks the output
// set against a second run. A run that fails or is killed keeps its
// finished tasks, and the same run goes on from them; a shard
// (Spec.Shard) runs its share of the tasks under a shared lock and leaves
// the rest to [Merge]. It reports progress as events to a [Progress] and
// leaves presentation (the bar, the summary on stderr, exit codes) to its
// caller.
//
// Errors: a [UsageError] is a mistake in the spec or config (the CLI's
// exit 2); any other error failed the run (nothing was put in place; a
// [KeptError] says which tasks are kept); a Result with Partial set is a
// finished run with rejected or unsummarised records. The package starts
// no goroutine: concurrency is pipeline's.
package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/task"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

// Spec is one compress invocation.
type Spec struct {
	Config config.Config // effective and validated
	Input  string        // a file or a directory of them
	// NoRecursive keeps a directory input to its own files; by default its
	// subdirectories are walked too, and their relative paths kept in the
	// output directory.
	NoRecursive bool
	// FollowLinks makes the walk of a directory input read the links it
	// holds to files outside it too; by default they are left out, with a
	// note.
	FollowLinks bool
	// Output, Metrics, Rejects and Outcomes are paths; "" means the default
	// (see [Plan]; no outcomes file by default). Report, when set, is where
	// the run's HTML report goes (package report), with the worst cases.
	Output, Metrics, Rejects, Outcomes, Report string
	// OutputFormatSet says the output format was chosen explicitly (flag
	// or config), so an --output name's extension does not choose it.
	OutputFormatSet bool
	DryRun          bool
	// Sample, when set, processes a reproducible sample of each file.
	Sample *Sample
	// PriceIn and PriceOut are USD per million prompt and completion
	// tokens, for the cost figure in the metrics.
	PriceIn, PriceOut float64
	ToolVersion       string
	// Wait makes the run wait for another run on the same outputs to end,
	// instead of failing at once.
	Wait bool
	// Progress receives the run's events; nil for none.
	Progress Progress
	// Stdin is what an Input of "-" reads; nil means os.Stdin.
	Stdin io.Reader
	// Notes receives one line for each setting the run adjusts (a worker
	// count above the cores, capped) and for each batch file imported; nil
	// discards them.
	Notes io.Writer
	// GroupBy names the top-level record field the metrics' per-source
	// breakdown groups by; "" groups by input file.
	GroupBy string
	// TaskSize is the target size of a task (package task); 0 means
	// task.DefaultSize. It decides how work is split, resumed and shared
	// out, never the output bytes.
	TaskSize int64
	// MaxRecordBytes is the longest JSON Lines record read (the CLI's
	// default is DefaultMaxRecordBytes): a longer one
	// is rejected (record_too_large) with its size, never read whole.
	// 0 means no limit.
	MaxRecordBytes int64
	// Shard is the share of the tasks this process runs; the zero Shard
	// (or task.Single) runs them all and puts the outputs in place. A
	// shard of several leaves its tasks' parts for [Merge].
	Shard task.Shard
	// Resume requires an unfinished run of the same outputs to go on with
	// (one with the same config, inputs and task size is resumed anyway);
	// Overwrite discards an unfinished run instead of refusing one that
	// differs.
	Resume, Overwrite bool
	// BatchExport, when set, makes the run write its LLM summary requests
	// to this path as an OpenAI Batch input file instead of sending them,
	// and nothing else (batch.go); BatchImport are Batch output or error
	// files read into the summary cache before the run.
	BatchExport string
	BatchImport []string
	// CPUProfile, when set, is where a Go CPU profile of the run is
	// written (runtime/pprof): checked like every path the run writes,
	// and created only once the plan has been checked.
	CPUProfile string
}

// Sample is a reproducible sample: Percent (0 < p <= 100) of each file's
// records, chosen from Seed and the file's index, in input order.
type Sample struct {
	Percent float64
	Seed    uint64
}

// Result is what a finished run did.
type Result struct {
	Total   metrics.Summary
	Plan    Plan
	Metrics bool // the metrics file was written (Plan.Metrics)
	// MemoHits and MemoMisses are the token memo's counts.
	MemoHits, MemoMisses int64
	// Partial: some records were rejected or their summary failed.
	Partial bool
	// Shard is the share of the run this process ran; a shard of several
	// (Count > 1) put nothing in place: Total is its own tasks', Tasks how
	// many of them are done, Missing how many tasks of the whole run are
	// still to do (by any shard) before Merge.
	Shard          task.Shard
	Tasks, Missing int
	// Export and Import say what --batch-export wrote and --batch-import
	// read (nil when not asked).
	Export  *llm.ExportStats
	Import  *llm.ImportStats
	rejects bool // a rejects file was written
}

// WriteHuman writes the run's summary for a person: the outcome table,
// the token memo's figures, and where the metrics and rejects went.
func (res *Result) WriteHuman(w io.Writer) {
	res.Total.Human(w)
	fmt.Fprintf(w, "token memo: %d hits, %d misses\n", res.MemoHits, res.MemoMisses)
	if res.Metrics {
		fmt.Fprintf(w, "metrics: %s\n", res.Plan.Metrics)
	}
	if res.Plan.Report != "" {
		fmt.Fprintf(w, "report: %s\n", res.Plan.Report)
	}
	if n := res.Total.RecordsRejected(); n > 0 && res.rejects {
		fmt.Fprintf(w, "rejects: %d lines in %s\n", n, res.Plan.Rejects)
	}
}

// KeptError is the error of a run that failed (or was interrupted) after
// some of its tasks were done: they are kept in Dir for a run that goes
// on from there.
type KeptError struct {
	Err         error
	Done, Tasks int
	Dir         string
}

func (e KeptError) Error() string { return e.Err.Error() + "\n" + e.Note() }
func (e KeptError) Unwrap() error { return e.Err }

// Note says what was kept and how to go on.
func (e KeptError) Note() string {
	return fmt.Sprintf("%d of %d tasks are done and kept in %s: run the same command again to go on from there, or pass --overwrite to start over", e.Done, e.Tasks, e.Dir)
}

// UsageError is a mistake in the spec or configuration.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

func usagef(f string, a ...any) error { return UsageError{fmt.Errorf(f, a...)} }

// DefaultMaxRecordBytes is the CLI's --max-record-bytes: far above any
// real trajectory (the longest we have seen are a few MB), far below what
// holding one would cost (a 300 MB line took 1.95 GB).
const DefaultMaxRecordBytes = 256 << 20

// checkPrices refuses a price that is not a finite number >= 0: a NaN
// or infinite one cannot be written in the run manifest or the metrics.
func checkPrices(in, out float64) error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"price in", in}, {"price out", out}} {
		if !(p.v >= 0 && p.v <= math.MaxFloat64) {
			return usagef("%s: want a finite number of USD >= 0, got %v", p.name, p.v)
		}
	}
	return nil
}

// Progress receives a run's events, all from one goroutine at a time.
type Progress interface {
	// Start announces the bytes of input the run's tasks will read.
	Start(total int64)
	// Record is called for every record, in input order; readBytes is how
	// far into the current task reading has come.
	Record(res pipeline.Result, readBytes int64)
	// Done is called when a task is complete, or found done by an earlier
	// run, with its bytes of input.
	Done(bytes int64)
	// Finish is called once, when the records are done (or the run failed).
	Finish()
}

// Run carries out spec.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	if err := checkPrices(spec.PriceIn, spec.PriceOut); err != nil {
		return nil, err
	}
	cfg := spec.Config
	counter, err := newCounter(cfg)
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(spec)
	if err != nil {
		return nil, err
	}
	if spec.Notes != nil {
		for _, l := range plan.LeftOut {
			fmt.Fprintf(spec.Notes, "note: --input: left out %s\n", l)
		}
		for _, n := range plan.Notes {
			fmt.Fprintf(spec.Notes, "note: %s\n", n)
		}
	}
	if err := checkBatch(spec); err != nil {
		return nil, err
	}
	if spec.CPUProfile != "" { // only now: NewPlan refused it over an input
		stop, err := startProfile(spec.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	imported, err := importBatches(spec, counter)
	if err != nil {
		return nil, err
	}
	var export *llm.Exporter
	if spec.BatchExport != "" {
		spec.DryRun = true // nothing but the requests is written
		if export, err = newExporter(cfg, counter); err != nil {
			return nil, err
		}
	}
	comp, client, err := compressor(cfg, counter, spec.DryRun, spec.GroupBy, export)
	if err != nil {
		return nil, err
	}
	r := &runner{spec: spec, cfg: cfg, plan: plan, comp: comp, counter: counter, client: client, export: export, imported: imported,
		progress: spec.Progress}
	if r.progress == nil {
		r.progress = noProgress{}
	}
	// Workers bound the CPU work (the network has its own limit,
	// max_concurrent_requests), so more than the cores only costs memory.
	// The metrics keep the setting as given.
	r.workers = cfg.Processing.NumWorkers
	if n := runtime.GOMAXPROCS(0); r.workers > n {
		if spec.Notes != nil {
			fmt.Fprintf(spec.Notes, "note: %d workers requested, but they only bound CPU work and %d cores are available: using %d (LLM requests in flight are max_concurrent_requests)\n", r.workers, n, n)
		}
		r.workers = n
	}
	res, err := r.run(ctx)
	if res != nil {
		res.MemoHits, res.MemoMisses = counter.Stats()
	}
	return res, err
}

// BudgetOf is the planning budget of a config.
func BudgetOf(cfg config.Config) snap.Budget {
	return snap.Budget{
		Target:                cfg.Compression.TargetMaxTokens,
		SummaryTokens:         cfg.Compression.SummaryTargetTokens,
		LastN:                 cfg.ProtectedTurns.LastNTurns,
		ProtectFirstSystem:    cfg.ProtectedTurns.FirstSystem,
		ProtectFirstUser:      cfg.ProtectedTurns.FirstHuman,
		ProtectFirstAssistant: cfg.ProtectedTurns.FirstGPT,
		ProtectFirstTool:      cfg.ProtectedTurns.FirstTool,
	}
}

// compressor builds the record path of a config: the summarizer (the LLM
// client, its estimator in a dry run, the batch exporter when given, or
// the deterministic one) and the Compressor. client is nil unless the LLM
// client is in use.
func compressor(cfg config.Config, counter tokenize.Counter, dryRun bool, groupBy string, export *llm.Exporter) (*pipeline.Compressor, *llm.Client, error) {
	var summ summary.Summarizer
	var client *llm.Client
	var err error
	if export != nil {
		summ = export
	} else if cfg.Summarization.Method == "llm" {
		if summ, client, err = newLLM(cfg, counter, dryRun); err != nil {
			return nil, nil, err
		}
	} else {
		summ = summary.Deterministic{Counter: counter}
	}
	opts := pipeline.Options{
		Budget:           BudgetOf(cfg),
		Counter:          counter,
		TurnOverhead:     cfg.Tokenizer.TurnOverhead,
		Schema:           schemaOf(cfg),
		Summarizer:       summ,
		RecordTimeout:    cfg.Processing.Timeout(),
		SummaryRole:      traj.Role(cfg.Output.SummaryRole),
		Alternate:        cfg.Output.Alternation,
		AddNotice:        cfg.Output.AddSummaryNotice,
		NoticeText:       cfg.Output.SummaryNoticeText,
		PerRecordMetrics: cfg.Metrics.PerTrajectory,
		DryRun:           dryRun,
		GroupBy:          groupBy,
	}
	if cfg.Summarization.OnFailure == "fallback" {
		opts.Fallback = summary.Deterministic{Counter: counter}
	}
	opts.ToolsKey = cfg.Input.ToolsKey
	if tmpl, err := trainview.Resolve(cfg.Tokenizer.ChatTemplate, counter); err != nil {
		return nil, nil, usagef("%v", err)
	} else if tmpl != nil {
		opts.Template = &trainview.Counter{Template: tmpl, Tokens: counter}
	}
	if cfg.Redaction.Enabled {
		opts.Redactor = redact.Default()
	}
	if cfg.Compression.Prepass {
		opts.Prepass = &prepass.Config{}
	}
	comp, err := pipeline.NewCompressor(opts)
	if err != nil {
		return nil, nil, UsageError{err}
	}
	return comp, client, nil
}

func schemaOf(cfg config.Config) traj.Schema {
	return traj.Schema{Dialect: traj.Dialect(cfg.Input.Format), TurnsKey: cfg.Input.TurnsKey, RoleKey: cfg.Input.RoleKey, ContentKey: cfg.Input.ContentKey}
}

// commitFault is the run's commit fault hook ([commit.Options].Fault): nil
// but in this package's tests, which fail or kill a run after each step of
// its commit.
var commitFault func(step string) error

// runner carries one run.
type runner struct {
	spec     Spec
	cfg      config.Config
	plan     Plan
	comp     *pipeline.Compressor
	counter  *tokenize.MemoCounter
	client   *llm.Client   // nil unless the LLM summarizer is in use
	export   *llm.Exporter // --batch-export
	imported *llm.ImportStats
	progress Progress
	workers  int // CPU workers: the setting, capped at the cores
	shard    task.Shard

	layouts []format.Layout
	tasks   []task.Task
	dir     *runDir
	markers []*marker // per task: its marker once done
	stamps  []*stamp  // per file: its identity when the run planned (nil: standard input)
	// committed is how far the markers cover each segment; segs are the
	// segments open for appending.
	committed map[string]int64
	segs      map[string]*segFile

	anchor    string         // the output set's anchor (Plan.anchor, or in scratch), locked
	runAnchor string         // where the run directory is named after: anchor, or in scratch
	scratch   string         // a private directory to remove at the end, or ""
	tx        *commit.Tx     // the run's commit (one process for every task, merge)
	shared    *commit.Shared // a shard's share of the output set's lock

	wantRejects                   bool          // a rejects file is written
	directRejects, directOutcomes *jsonl.Writer // side files written in place (devices, FIFOs, -)

	vouched  []*vouched // the outputs the metrics vouch for
	rows     []int64    // records written to each file's output
	staged   []string   // where each file's output is staged in the commit
	total    metrics.Summary
	llm      llmStats
	inputFP  string
	worst    *report.Worst // for the HTML report; nil without one
	madeDirs []string      // output directories this run made, parents first
}

// Anchor is the path a run's output set is named after, the --output
// that merge takes: the output file, the output directory, or (a dry run)
// the metrics file.
func (p Plan) Anchor(dry bool) string { return p.anchor(dry) }

func (p Plan) anchor(dry bool) string {
	switch {
	case dry:
		return filepath.Clean(p.Metrics)
	case p.Dir != "":
		return filepath.Clean(p.Dir)
	}
	return filepath.Clean(p.Files[0].Out)
}

func (r *runner) run(ctx context.Context) (_ *Result, err error) {
	start := time.Now()
	p := r.plan
	defer func() {
		if err != nil {
			r.removeMadeDirs()
		}
	}()
	r.shard = r.spec.Shard
	if r.shard.Count < 1 {
		r.shard = task.Single
	}
	if r.shard.Count > 1 && p.Files[0].In == format.Stdin {
		return nil, usagef("--input -: standard input cannot be sharded (each shard reads its own share of the files)")
	}
	if r.shard.Count > 1 && r.export != nil {
		return nil, usagef("--batch-export gathers the requests of the whole run in one process: it cannot be sharded")
	}
	if err := r.stampInputs(); err != nil {
		return nil, err
	}
	if r.layouts, r.tasks, err = listing(p, r.spec.Sample != nil, r.spec.TaskSize); err != nil {
		return nil, err
	}
	if err := r.begin(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.abort()
			if kept := r.dropEmptyRun(); kept > 0 {
				err = KeptError{Err: err, Done: kept, Tasks: len(r.tasks), Dir: r.dir.path}
			}
		}
	}()
	if err := r.openRun(); err != nil {
		return nil, err
	}
	var total int64
	var mine []task.Task
	for _, t := range r.tasks {
		if t.Mine(r.shard.Index, r.shard.Count) {
			mine = append(mine, t)
			total += t.SpanEnd - t.SpanStart
		}
	}
	r.progress.Start(total)
	for _, t := range mine {
		if r.markers[t.Index] != nil {
			r.progress.Done(t.SpanEnd - t.SpanStart)
			continue
		}
		if err := r.runLocked(ctx, t); err != nil {
			r.progress.Finish()
			return nil, err
		}
		r.progress.Done(t.SpanEnd - t.SpanStart)
	}
	r.progress.Finish()
	if err := r.closeSegs(); err != nil {
		return nil, err
	}
	if r.shard.Count > 1 {
		return r.shardResult()
	}
	return r.assemble(start)
}

// runLocked runs task t; a shard takes the task's lock first, so that
// two processes given the same shard never run one task together (the
// second leaves it to the first).
func (r *runner) runLocked(ctx context.Context, t task.Task) error {
	if r.shard.Count == 1 {
		return r.runTask(ctx, t)
	}
	lk, ok, err := r.dir.lockTask(t.Index)
	if err != nil {
		return err
	}
	if !ok {
		r.note("note: task %d is being run by another process: left to it\n", t.Index)
		return nil
	}
	defer lk.Abort()
	if m, err := r.dir.marker(t.Index); err != nil || m != nil { // done meanwhile
		r.markers[t.Index] = m
		return err
	}
	return r.runTask(ctx, t)
}

// dropEmptyRun removes, after a failure, the run directory of a run of
// every task that finished none: there is nothing to resume, and a failed
// run leaves nothing behind. One that finished some keeps them; it
// returns how many, for the error to say so.
func (r *runner) dropEmptyRun() (kept int) {
	if r.dir == nil {
		return 0
	}
	for _, m := range r.markers {
		if m != nil {
			kept++
		}
	}
	if kept == 0 && r.shard.Count == 1 {
		os.RemoveAll(r.dir.path)
	}
	return kept
}

// begin locks the output set, its side files with it (see sideFiles):
// exclusively for a run of every task (its commit puts the outputs in
// place), shared for a shard (shards run together; a whole run or a merge
// waits for them). It opens the side files written in place (devices,
// FIFOs, -).
func (r *runner) begin() (err error) {
	p, dry := r.plan, r.spec.DryRun
	anchor := p.anchor(dry)
	if r.export != nil {
		anchor = filepath.Clean(r.spec.BatchExport)
	}
	r.runAnchor = anchor
	if commit.IsDirect(anchor) || r.export != nil {
		// A dry run whose metrics go to a device, a FIFO or -, and a batch
		// export (whose requests are gathered in memory): their tasks are
		// kept in a private directory for the time of the run, which
		// cannot be resumed. An export still locks its file.
		tmp, err := os.MkdirTemp("", "trajcompress-run-")
		if err != nil {
			return err
		}
		r.scratch, r.runAnchor = tmp, filepath.Join(tmp, "run")
		if commit.IsDirect(anchor) {
			anchor = r.runAnchor
		}
	}
	r.anchor = anchor
	if err := r.mkdirs(filepath.Dir(anchor)); err != nil {
		return err
	}
	var sides []string
	if r.export == nil { // an export writes nothing but its requests
		sides = p.sideFiles(dry, dry && r.spec.Rejects == "")
	}
	for _, s := range sides {
		if err := r.mkdirs(filepath.Dir(s)); err != nil {
			return err
		}
	}
	if r.shard.Count > 1 {
		r.shared, err = commit.Share(anchor, r.spec.Wait, sides...)
	} else {
		r.tx, err = commit.Begin(anchor, commit.Options{Wait: r.spec.Wait, Fault: commitFault, Also: sides})
	}
	if err != nil {
		if errors.Is(err, commit.ErrLocked) {
			return UsageError{err}
		}
		return err
	}
	defer func() {
		if err != nil {
			r.abort()
		}
	}()
	// A dry run writes only the metrics (and the files named explicitly).
	r.wantRejects = !dry || r.spec.Rejects != ""
	if r.wantRejects && commit.IsDirect(p.Rejects) {
		if r.directRejects, err = directSide(p.Rejects); err != nil {
			return err
		}
	}
	if p.Outcomes != "" && commit.IsDirect(p.Outcomes) {
		if r.directOutcomes, err = directSide(p.Outcomes); err != nil {
			return err
		}
	}
	return nil
}

// sideFiles are the side files of a run (metrics, rejects unless
// noRejects, outcomes, report) that the lock of its anchor does not
// cover: regular files (not a device, a FIFO or -), not the anchor itself
// (a dry run's metrics), not inside the output directory. Each is locked
// with the output set, so that two runs given one --metrics (or
// --rejects, ...) path never both write it, one's lost.
func (p Plan) sideFiles(dry, noRejects bool) []string {
	anchor := p.anchor(dry)
	var out []string
	for _, s := range []string{p.Metrics, p.Rejects, p.Outcomes, p.Report} {
		if s == "" || (noRejects && s == p.Rejects) || commit.IsDirect(s) || filepath.Clean(s) == anchor {
			continue
		}
		if rel, err := filepath.Rel(anchor, s); !dry && p.Dir != "" && err == nil && filepath.IsLocal(rel) {
			continue
		}
		out = append(out, filepath.Clean(s))
	}
	return out
}

// openRun opens (or creates) the run directory and reads the markers of
// the tasks already done.
func (r *runner) openRun() error {
	want, err := r.manifest()
	if err != nil {
		return err
	}
	if r.dir, err = openRunDir(r.runAnchor, want, r.spec.Resume, r.spec.Overwrite, r.shard.Count > 1, r.note); err != nil {
		return err
	}
	r.markers = make([]*marker, len(r.tasks))
	r.committed, r.segs = map[string]int64{}, map[string]*segFile{}
	done := 0
	for _, t := range r.tasks {
		m, err := r.dir.marker(t.Index)
		if err != nil {
			return err
		}
		r.markers[t.Index] = m
		if m == nil {
			continue
		}
		done++
		for _, sp := range []*span{m.Output, m.Rejects, m.Outcomes} {
			if sp != nil {
				r.committed[sp.Seg] = max(r.committed[sp.Seg], sp.End)
			}
		}
	}
	if err := r.checkMarkers(); err != nil {
		return err
	}
	if done > 0 && r.shard.Count == 1 {
		r.note("note: resuming the unfinished run in %s: %d of %d tasks are done\n", r.dir.path, done, len(r.tasks))
	}
	return nil
}

// manifest describes this run for its run directory.
func (r *runner) manifest() (manifest, error) {
	cfgJSON, cfgFP := fingerprint(r.cfg, r.spec.Sample)
	m := manifest{
		Version: runVersion, Tool: r.spec.ToolVersion, Build: Build(), Config: cfgFP, Listing: listingFingerprint(r.plan, r.spec.Input),
		TaskSize: task.Round(r.spec.TaskSize), Tasks: len(r.tasks),
		Spec: specJSON{
			Config: cfgJSON, Input: r.spec.Input, NoRecursive: r.spec.NoRecursive, FollowLinks: r.spec.FollowLinks,
			Output: r.spec.Output, Metrics: r.spec.Metrics, Rejects: r.spec.Rejects, Outcomes: r.spec.Outcomes, Report: r.spec.Report,
			OutputFormatSet: r.spec.OutputFormatSet, DryRun: r.spec.DryRun, Sample: r.spec.Sample,
			PriceIn: r.spec.PriceIn, PriceOut: r.spec.PriceOut, GroupBy: r.spec.GroupBy, TaskSize: r.spec.TaskSize,
			MaxRecordBytes: r.spec.MaxRecordBytes,
		},
	}
	if r.counter != nil {
		m.Tokenizer = tokenize.Describe(r.counter)
	}
	return m, nil
}

// shardResult is what a shard did: its own tasks' metrics, and where the
// merge will put the outputs.
func (r *runner) shardResult() (*Result, error) {
	res := &Result{Plan: r.plan, Shard: r.shard, rejects: r.wantRejects}
	for _, t := range r.tasks {
		if m := r.markers[t.Index]; m != nil && t.Mine(r.shard.Index, r.shard.Count) {
			s, err := m.summary()
			if err != nil {
				return nil, err
			}
			res.Total.Merge(s)
			res.Tasks++
		}
	}
	for _, t := range r.tasks { // what the other shards did meanwhile
		if r.markers[t.Index] == nil {
			if m, err := r.dir.marker(t.Index); err == nil {
				r.markers[t.Index] = m
			}
		}
	}
	res.Missing = len(r.missingTasks())
	if err := r.closeDirect(); err != nil {
		return nil, err
	}
	r.abort() // releases the shared lock; the parts stay
	res.Partial = res.Total.RecordsRejected() > 0 || res.Total.Count(outcome.SummaryFailed) > 0
	return res, nil
}

// mkdirs makes dir and its missing parents, remembering which it made.
func (r *runner) mkdirs(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil { // 0777 &^ umask, as mkdir(1)
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		r.madeDirs = append(r.madeDirs, missing[i])
	}
	return nil
}

// removeMadeDirs removes, deepest first, the directories mkdirs made, if
// they are still empty: a failed run leaves no trace of its own.
func (r *runner) removeMadeDirs() {
	for i := len(r.madeDirs) - 1; i >= 0; i-- {
		os.Remove(r.madeDirs[i])
	}
	r.madeDirs = nil
}

// abort discards everything begin started: the staged outputs, the lock.
// The run directory stays: its finished tasks are what a resumed run
// skips.
func (r *runner) abort() {
	for name, sg := range r.segs {
		sg.close()
		delete(r.segs, name)
	}
	if r.tx != nil {
		r.tx.Abort()
	}
	if r.shared != nil {
		r.shared.Release()
		r.shared = nil
	}
	r.dropScratch()
}

// dropScratch removes the private run directory of a dry run that writes
// no file.
func (r *runner) dropScratch() {
	if r.scratch != "" {
		os.RemoveAll(r.scratch)
		r.scratch = ""
	}
}

// startProfile starts a Go CPU profile written to path; stop ends it.
func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path) // 0666 &^ umask; one written over keeps its mode
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// stageFile stages path in the run's commit: following a symbolic link
// there when the user named the path, refusing one at a name the run
// chose (see [commit.NotLink]).
func (r *runner) stageFile(path string) (string, commit.Kind, error) {
	s := r.spec
	for _, named := range []string{s.Metrics, s.Rejects, s.Outcomes, s.Report, s.BatchExport} {
		if named != "" && path == named {
			return r.tx.File(path)
		}
	}
	if r.plan.Dir == "" && s.Output != "" && path == s.Output {
		return r.tx.File(path)
	}
	return r.tx.FileNoFollow(path)
}

// stage stages the regular-file output path in the run's commit and
// returns where to write it. A device, FIFO or "-" is refused here: only
// JSONL side files may be written directly (see createJSONL).
func (r *runner) stage(path string) (string, error) {
	sp, kind, err := r.stageFile(path)
	if err != nil {
		return "", UsageError{err}
	}
	if kind == commit.Direct {
		return "", usagef("output %s is not a regular file: record outputs are written to files (rejects, outcomes and metrics may go to a device, a FIFO or -)", path)
	}
	return sp, nil
}

// writeSide writes the side file data (the metrics, the HTML report) to
// path: staged in the commit, or directly to a device, a FIFO or "-".
func (r *runner) writeSide(path, what string, data []byte) error {
	if err := r.mkdirs(filepath.Dir(path)); err != nil && path != "-" {
		return err
	}
	sp, kind, err := r.stageFile(path)
	if err != nil {
		return UsageError{err}
	}
	if kind == commit.Direct {
		w, err := jsonl.OpenDirect(path)
		if err == nil {
			_, err = w.Write(data)
			if _, fd := commit.FD(path); !fd { // standard output and the like stay open
				if cerr := w.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", what, path, err)
		}
		return nil
	}
	f, err := atomicfile.Create(sp)
	if err == nil {
		_, werr := f.Write(data)
		err = f.Finish(werr)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	return nil
}

// runInfo is the run block of the metrics.
func (r *runner) runInfo(start time.Time) metrics.RunInfo {
	budget := BudgetOf(r.cfg)
	info := metrics.RunInfo{
		Tokenizer:        r.cfg.Tokenizer.Name,
		TurnOverhead:     r.cfg.Tokenizer.TurnOverhead,
		Budget:           &budget,
		Start:            start,
		End:              time.Now(),
		Summarizer:       r.cfg.Summarization.Method,
		PriceIn:          r.spec.PriceIn,
		PriceOut:         r.spec.PriceOut,
		ToolVersion:      r.spec.ToolVersion,
		InputFingerprint: r.inputFP,
		DryRun:           r.spec.DryRun,
		GroupBy:          r.spec.GroupBy,
		Prepass:          r.cfg.Compression.Prepass,
		Redaction:        r.cfg.Redaction.Enabled,
	}
	if ti := r.dir.man.Tokenizer; ti.Hash != "" {
		info.TokenizerKind, info.TokenizerSplit, info.TokenizerSHA256 = ti.Kind, ti.Split, ti.Hash
	}
	if r.counter != nil {
		if tmpl, err := trainview.Resolve(r.cfg.Tokenizer.ChatTemplate, r.counter); err == nil && tmpl != nil {
			info.ChatTemplate, info.ChatTemplateSHA256 = tmpl.Path, tmpl.Hash
		}
	}
	info.Config, info.ConfigFingerprint = fingerprint(r.cfg, r.spec.Sample)
	if r.cfg.Summarization.Method == "llm" {
		info.Model = r.cfg.Summarization.Model
		info.Estimated = r.spec.DryRun
		if !r.spec.DryRun {
			info.RetriesByCause, info.ErrorsByCause = r.llm.Retries, r.llm.ErrorsByCause
			info.CacheMisses = &r.llm.CacheMisses
		}
	}
	return info
}

// sourceName names an input in the metrics' per-source breakdown: its
// path relative to the input directory, or its base name, so that the
// metrics do not depend on where the inputs are.
func (r *runner) sourceName(f File) string {
	if f.In == format.Stdin {
		return "(standard input)"
	}
	if r.plan.Dir != "" {
		if rel, err := filepath.Rel(r.spec.Input, f.In); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(f.In)
}

// trajectoryColumn is compression_metrics as a column: in a Parquet or
// Arrow output that lacks it, a struct of the fields of
// metrics.TrajectoryMetrics, typed from its zero value (ints, a float
// ratio, booleans, the region struct), whatever the records hold.
var trajectoryColumn = func() format.Column {
	sample, err := metrics.Observation{}.TrajectoryJSON()
	if err != nil {
		panic(err) // a fixed value: cannot fail
	}
	return format.Column{Name: metrics.TrajectoryKey, Sample: sample}
}()

type noProgress struct{}

func (noProgress) Start(int64)                   {}
func (noProgress) Record(pipeline.Result, int64) {}
func (noProgress) Done(int64)                    {}
func (noProgress) Finish()                       {}

// namedWriter reports its errors under the user's output name, not the
// staged temporary name it writes to.
type namedWriter struct {
	format.Writer
	staged, name string
}

func (w namedWriter) Write(rec []byte) error { return renamed(w.Writer.Write(rec), w.staged, w.name) }
func (w namedWriter) Close() error           { return renamed(w.Writer.Close(), w.staged, w.name) }

// renamed is err with the staged path replaced by the user's name in its
// text; errors.Is and As still see the original.
func renamed(err error, staged, name string) error {
	if err == nil || !strings.Contains(err.Error(), staged) {
		return err
	}
	return renamedError{err, staged, name}
}

type renamedError struct {
	err          error
	staged, name string
}

func (e renamedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.staged, e.name) }
func (e renamedError) Unwrap() error { return e.err }
