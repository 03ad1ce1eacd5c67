// Package job owns one compress run, from a [Spec] — the effective config
// and the paths and switches of one invocation — to its outputs and
// [Result]: it resolves the inputs into files and plans every output path
// (refusing collisions before anything is read), opens inputs through
// package format's one factory, builds the token counter, the summarizer
// and the [pipeline.Compressor] from the config (package jobcore, which
// the Beam module shares), and samples.
//
// Besides its tasks a run has three parts: the output set (outset.go: the
// lock, the commit transaction, staging, the side files, the directories
// made, the commit point), the run directory (rundir.go: segments,
// markers, what is committed) and the assembler (assemble.go: the parts
// put together and in place).
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
// the rest to [Merge]. Nothing read back from the run directory is
// trusted (verify.go): a task is reused only once its marker matches its
// checksum, its segments hash to what the marker recorded and its counts
// agree; a resumed run runs a task that fails again, a merge refuses it
// ([ErrUnverified]). It reports progress as events to a [Progress] and
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
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/internal/crash"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/task"
	"github.com/trajcompress/trajcompress/tokenize"
)

// Spec is one compress invocation: the config, the [Settings] its run
// directory keeps, and what belongs to this process only.
type Spec struct {
	Config config.Config // effective and validated; persisted as JSON (run.json "config")
	// Settings are what decides what the run writes: persisted in the run
	// directory's manifest, and what [Merge] finishes the run with.
	Settings
	// The rest is process-local (see processLocal in spec_test.go): how
	// this process runs, never what the run writes.
	ToolVersion string
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

// Sample is a reproducible sample (package jobcore).
type Sample = jobcore.Sample

// UsageError is a mistake in the spec or configuration (package jobcore).
type UsageError = jobcore.UsageError

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

func usagef(f string, a ...any) error { return UsageError{Err: fmt.Errorf(f, a...)} }

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
	counter, err := jobcore.NewCounter(cfg)
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(spec)
	if err != nil {
		return nil, err
	}
	planNotes(spec.Notes, plan)
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
	var imageNote strings.Builder
	comp, client, err := jobcore.Compressor(cfg, counter, spec.DryRun, spec.GroupBy, export, &imageNote)
	if err != nil {
		return nil, err
	}
	r := &runner{spec: spec, inputs: &inputs{plan: plan},
		engine: engine{comp: comp, counter: counter, client: client, batch: batchIO{export, imported}, progress: spec.Progress}}
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
		if found, _ := res.Total.Images(); found > 0 && imageNote.Len() > 0 && spec.Notes != nil {
			// How images were counted matters only to a run that had one.
			fmt.Fprint(spec.Notes, imageNote.String())
		}
	}
	return res, err
}

// planNotes writes what the plan left out of the inputs, and its notes, to
// w (nil: nowhere).
func planNotes(w io.Writer, plan Plan) {
	if w == nil {
		return
	}
	for _, l := range plan.LeftOut {
		fmt.Fprintf(w, "note: --input: left out %s\n", l)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// commitFault gives the commit fault hook ([commit.Options].Fault) of the
// output set anchored at its argument: nil but in this package's tests,
// which fail or kill a run after each step of its commit. It is set once,
// before any test runs, and looks the hook up by the anchor, so that runs
// in different directories can run at the same time, each with its own.
var commitFault func(anchor string) func(step string) error

// faultAt is the commit fault hook of the output set anchored at anchor.
func faultAt(anchor string) func(step string) error {
	if commitFault == nil {
		return nil
	}
	return commitFault(anchor)
}

// runner carries one run: it runs the tasks (tasks.go) into the run
// directory, and has the assembler put the outputs together and in place
// once every task is done.
type runner struct {
	spec  Spec
	shard task.Shard
	*inputs
	engine
	out *outputSet
	dir *runDir
}

// engine is what runs the records of a task: the compressor and what it
// was built with, and where the events go.
type engine struct {
	comp     *pipeline.Compressor
	counter  *tokenize.MemoCounter
	client   *llm.Client // nil unless the LLM summarizer is in use
	batch    batchIO
	progress Progress
	workers  int // CPU workers: the setting, capped at the cores
}

// batchIO is what a run exchanges in OpenAI Batch files: the exporter of
// --batch-export, what --batch-import read.
type batchIO struct {
	export   *llm.Exporter
	imported *llm.ImportStats
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
	r.out = newOutputSet(r.plan, r.spec)
	defer func() {
		if err != nil {
			r.out.removeMadeDirs()
		}
	}()
	if err := r.checkShard(); err != nil {
		return nil, err
	}
	if r.inputs, err = newInputs(r.plan, r.spec.Sample != nil, r.spec.TaskSize); err != nil {
		return nil, err
	}
	if err := r.out.lock(r.plan, r.spec, r.batch.export != nil, r.shard.Count > 1); err != nil {
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
	// A panic from here on (ours, in this goroutine; the record path's own
	// goroutines return theirs as errors) still aborts the run above, and
	// names the run directory for the CLI to write the stack to.
	defer func() {
		if ce := crash.As(err); ce != nil && ce.Dir == "" && r.dir != nil {
			ce.Dir = r.dir.path
		}
	}()
	defer crash.Recover(&err)
	if err := r.openRun(); err != nil {
		return nil, err
	}
	if err := r.runTasks(ctx); err != nil {
		return nil, err
	}
	if err := r.dir.closeSegs(); err != nil {
		return nil, err
	}
	if r.shard.Count > 1 {
		return r.shardResult()
	}
	return r.assembler().assemble(start)
}

// checkShard sets the share of the tasks this process runs, refusing
// what cannot be sharded.
func (r *runner) checkShard() error {
	r.shard = r.spec.Shard
	if r.shard.Count < 1 {
		r.shard = task.Single
	}
	if r.shard.Count > 1 && r.plan.Files[0].In == format.Stdin {
		return usagef("--input -: standard input cannot be sharded (each shard reads its own share of the files)")
	}
	if r.shard.Count > 1 && r.batch.export != nil {
		return usagef("--batch-export gathers the requests of the whole run in one process: it cannot be sharded")
	}
	return nil
}

// runTasks runs this process's share of the tasks, skipping those done.
func (r *runner) runTasks(ctx context.Context) error {
	var total int64
	var mine []task.Task
	for _, t := range r.tasks {
		if t.Mine(r.shard.Index, r.shard.Count) {
			mine = append(mine, t)
			total += t.SpanEnd - t.SpanStart
		}
	}
	r.progress.Start(total)
	defer r.progress.Finish()
	for _, t := range mine {
		if r.dir.markers[t.Index] == nil {
			if err := r.runLocked(ctx, t); err != nil {
				return err
			}
		}
		r.progress.Done(t.SpanEnd - t.SpanStart)
	}
	return nil
}

// abort gives up the run: its open segments, and everything the output
// set started (the staged outputs, the lock).
func (r *runner) abort() {
	if r.dir != nil {
		r.dir.closeAll()
	}
	r.out.abort()
}

// assembler is the assembler of the run, once its tasks are done.
func (r *runner) assembler() *assembler {
	a := &assembler{spec: r.spec, inputs: r.inputs, dir: r.dir, out: r.out, batch: r.batch}
	if r.comp != nil {
		if t := r.comp.Template(); t != nil {
			a.template = t // resolved once, by jobcore.Compressor
		}
	}
	return a
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
	m, err := r.dir.marker(t.Index)
	if err != nil {
		return err
	}
	if m != nil && r.dir.verify(m, t, nil) == "" { // done meanwhile
		r.dir.markers[t.Index] = m
		return nil
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
	for _, m := range r.dir.markers {
		if m != nil {
			kept++
		}
	}
	if kept == 0 && r.shard.Count == 1 {
		os.RemoveAll(r.dir.path)
	}
	return kept
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
	if r.dir, err = openRunDir(r.out.runAnchor, want, r.spec.Resume, r.spec.Overwrite, r.shard.Count > 1, r.note); err != nil {
		return err
	}
	if r.comp != nil && r.comp.Template() != nil {
		// strftime_now renders the run's time, whenever a task runs.
		clock, err := r.dir.man.templateClock()
		if err != nil {
			return err
		}
		r.comp.Template().SetClock(clock)
	}
	done, err := r.dir.readMarkers(r.tasks)
	if err != nil {
		return err
	}
	// Every task this process would run is verified before it is reused
	// (verify.go); a task that fails is run again. A shard checks only
	// the markers of its siblings' tasks (it reads their line counts),
	// leaving their segments to them and to the merge.
	mine := func(t task.Task) bool { return t.Mine(r.shard.Index, r.shard.Count) }
	faults := r.dir.verifyMarkers(r.tasks, mine)
	for k, f := range faults {
		done--
		switch {
		case k == maxFaultNotes:
			r.note("note: and %d more tasks of the unfinished run in %s fail verification\n", len(faults)-k, r.dir.path)
		case k > maxFaultNotes:
		case mine(r.tasks[f.task]):
			r.note("note: %s of the unfinished run in %s is run again: %s\n", r.describe(f.task), r.dir.path, f.why)
		default:
			r.note("note: %s of the unfinished run in %s, another shard's, fails verification (a merge refuses it until that shard runs again): %s\n", r.describe(f.task), r.dir.path, f.why)
		}
	}
	if err := r.checkMarkers(r.dir); err != nil {
		return err
	}
	if done > 0 && r.shard.Count == 1 {
		r.note("note: resuming the unfinished run in %s: %d of %d tasks are done\n", r.dir.path, done, len(r.tasks))
	}
	return nil
}

// manifest describes this run for its run directory.
func (r *runner) manifest() (manifest, error) {
	cfgJSON, cfgFP := jobcore.SampledConfigFingerprint(r.spec.Config, r.spec.Sample)
	m := manifest{
		Version: runVersion, Tool: r.spec.ToolVersion, Build: Build(), Config: cfgFP, Listing: listingFingerprint(r.plan, r.spec.Input),
		TaskSize: task.Round(r.spec.TaskSize), Tasks: len(r.tasks),
		Spec: specJSON{Config: cfgJSON, Settings: r.spec.Settings},
	}
	if r.counter != nil {
		m.Tokenizer = tokenize.Describe(r.counter)
	}
	if r.comp != nil {
		m.ImageTokens = r.comp.ImageRule().String()
		if tc := r.comp.Template(); tc != nil {
			m.ChatTemplate = tc.Hash()
		}
	}
	return m, nil
}

// shardResult is what a shard did: its own tasks' metrics, and where the
// merge will put the outputs.
func (r *runner) shardResult() (*Result, error) {
	res := &Result{Plan: r.plan, Shard: r.shard, rejects: r.out.wantRejects}
	for _, t := range r.tasks {
		if m := r.dir.markers[t.Index]; m != nil && t.Mine(r.shard.Index, r.shard.Count) {
			s, err := m.summary()
			if err != nil {
				return nil, err
			}
			res.Total.Merge(s)
			res.Tasks++
		}
	}
	for _, t := range r.tasks { // what the other shards did meanwhile
		if r.dir.markers[t.Index] == nil {
			if m, err := r.dir.marker(t.Index); err == nil && (m == nil || m.bad == "") {
				r.dir.markers[t.Index] = m
			}
		}
	}
	res.Missing = len(r.dir.missingTasks())
	if err := r.out.closeDirect(); err != nil {
		return nil, err
	}
	r.abort() // releases the shared lock; the parts stay
	res.Partial = res.Total.RecordsRejected() > 0 || res.Total.Count(outcome.SummaryFailed) > 0
	return res, nil
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
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close() // a diagnostic file: a close error cannot change the run's outputs
	}, nil
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
