// Package job owns one compress run, from a [Spec] — the effective config
// and the paths and switches of one invocation — to its outputs and
// [Result]: it resolves the inputs into files and plans every output path
// (refusing collisions before anything is read), opens inputs through
// package format's one factory, builds the token counter, the summarizer
// and the [pipeline.Compressor] from the config, samples, runs each file
// through [pipeline.Run], writes rejects and outcome lines, fingerprints
// config and inputs, writes the metrics, and puts the outputs in place
// together only when the whole run succeeded, through one
// internal/commit transaction that also locks the output set against a
// second run. It reports progress as
// events to a [Progress] and leaves presentation (the bar, the summary on
// stderr, exit codes) to its caller.
//
// Errors: a [UsageError] is a mistake in the spec or config (the CLI's
// exit 2); any other error failed the run (nothing was put in place); a
// Result with Partial set is a finished run with rejected or unsummarised
// records. The package starts no goroutine: concurrency is pipeline's.
package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

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
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// Spec is one compress invocation.
type Spec struct {
	Config config.Config // effective and validated
	Input  string        // a file or a directory of them
	// Output, Metrics, Rejects and Outcomes are paths; "" means the default
	// (see [Plan]; no outcomes file by default).
	Output, Metrics, Rejects, Outcomes string
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
	// BatchExport, when set, makes the run write its LLM summary requests
	// to this path as an OpenAI Batch input file instead of sending them,
	// and nothing else (batch.go); BatchImport are Batch output or error
	// files read into the summary cache before the run.
	BatchExport string
	BatchImport []string
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
	if n := res.Total.RecordsRejected(); n > 0 && res.rejects {
		fmt.Fprintf(w, "rejects: %d lines in %s\n", n, res.Plan.Rejects)
	}
}

// UsageError is a mistake in the spec or configuration.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

func usagef(f string, a ...any) error { return UsageError{fmt.Errorf(f, a...)} }

// Progress receives a run's events, all from one goroutine at a time.
type Progress interface {
	// Start announces the files of the run.
	Start(files []File)
	// Record is called for every record, in input order; readBytes is how
	// far into the current file reading has come.
	Record(res pipeline.Result, readBytes int64)
	// FileDone is called when a file is complete, with its size.
	FileDone(size int64)
	// Finish is called once, when the records are done (or the run failed).
	Finish()
}

// Run carries out spec.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	cfg := spec.Config
	base, err := tokenize.NewRevision(cfg.Tokenizer.Name, cfg.Tokenizer.Revision)
	if err != nil {
		return nil, usagef("tokenizer.name %q: %v (set tokenizer.name in the config or pass --tokenizer)", cfg.Tokenizer.Name, err)
	}
	// 512 texts of at most 64 KiB: at most 32 MiB, plenty for the system
	// prompts and tool schemas that repeat (bench/README.md, "End to end").
	counter := tokenize.Memo(base, 512)
	plan, err := NewPlan(spec)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(spec, plan); err != nil {
		return nil, err
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
	comp, client, err := compressor(cfg, counter, spec.DryRun, export)
	if err != nil {
		return nil, err
	}
	r := &runner{spec: spec, cfg: cfg, plan: plan, comp: comp, counter: counter, client: client, export: export, imported: imported,
		progress: spec.Progress, staged: make([]string, len(plan.Files))}
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
func compressor(cfg config.Config, counter tokenize.Counter, dryRun bool, export *llm.Exporter) (*pipeline.Compressor, *llm.Client, error) {
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
	}
	if cfg.Summarization.OnFailure == "fallback" {
		opts.Fallback = summary.Deterministic{Counter: counter}
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

	// inputHash fingerprints the inputs. xxh3-128, not sha256: it detects a
	// changed input as well (nothing here is adversarial) at a small part of
	// the cost; sha256 was 4% of a run's CPU (bench/README.md).
	inputHash *xxh3.Hasher

	tx       *commit.Tx
	staged   []string // where each file's output is written until the commit
	rejects  format.Writer
	outcomes format.Writer
	vouched  []*vouched // the outputs the metrics vouch for
	total    metrics.Summary
}

func (r *runner) run(ctx context.Context) (_ *Result, err error) {
	start := time.Now()
	p := r.plan
	if p.Dir != "" && !r.spec.DryRun {
		if _, serr := os.Stat(p.Dir); os.IsNotExist(serr) {
			defer func() {
				if err != nil {
					os.Remove(p.Dir) // only if still empty: ours, unused
				}
			}()
		}
		if err := os.MkdirAll(p.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := r.begin(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.abort()
		}
	}()
	r.inputHash = xxh3.New()
	r.progress.Start(p.Files)
	for i, f := range p.Files {
		if err := r.file(ctx, i, f); err != nil {
			r.progress.Finish()
			return nil, err
		}
	}
	r.progress.Finish()
	return r.finish(start)
}

// begin starts the run's commit (internal/commit): every output is staged
// in it, put in place together and only when the whole run succeeded; its
// lock keeps a second run off the same outputs. It stages the record
// outputs and opens the rejects and outcomes files.
func (r *runner) begin() (err error) {
	p, dry := r.plan, r.spec.DryRun
	anchor := p.Metrics
	if r.export != nil {
		anchor = r.spec.BatchExport
	}
	if !dry {
		anchor = p.Files[0].Out
		if p.Dir != "" {
			anchor = p.Dir
		}
	}
	if err := os.MkdirAll(filepath.Dir(anchor), 0o755); err != nil {
		return err
	}
	if r.tx, err = commit.Begin(anchor, commit.Options{Wait: r.spec.Wait}); err != nil {
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
	if !dry {
		for i := range p.Files {
			if r.staged[i], err = r.stage(p.Files[i].Out); err != nil {
				return err
			}
		}
	}
	// A dry run writes only the metrics (and the files named explicitly).
	if !dry || r.spec.Rejects != "" {
		if r.rejects, err = r.createJSONL(p.Rejects); err != nil {
			return err
		}
	}
	if p.Outcomes != "" {
		if r.outcomes, err = r.createJSONL(p.Outcomes); err != nil {
			return err
		}
	}
	return nil
}

// abort discards everything begin started.
func (r *runner) abort() {
	if r.rejects != nil {
		r.rejects.Abort()
	}
	if r.outcomes != nil {
		r.outcomes.Abort()
	}
	r.tx.Abort()
}

// finish closes the side files, writes the metrics (staged last, so put in
// place last) and commits.
func (r *runner) finish(start time.Time) (*Result, error) {
	p := r.plan
	if r.rejects != nil {
		if err := r.rejects.Close(); err != nil {
			return nil, fmt.Errorf("rejects %s: %w", p.Rejects, err)
		}
	}
	if r.outcomes != nil {
		if err := r.outcomes.Close(); err != nil {
			return nil, fmt.Errorf("outcomes %s: %w", p.Outcomes, err)
		}
	}
	res := &Result{Plan: p, rejects: r.rejects != nil, Import: r.imported}
	if r.export != nil {
		st, err := r.writeExport()
		if err != nil {
			return nil, err
		}
		res.Export = &st
	}
	// An export made nothing final: its metrics only if asked for.
	if r.export == nil && r.cfg.Metrics.Enabled || r.spec.Metrics != "" {
		info := r.runInfo(start)
		var err error
		if info.Outputs, err = r.outputs(p.Metrics); err != nil {
			return nil, err
		}
		if err := r.writeReport(p.Metrics, r.total.Report(info)); err != nil {
			return nil, err
		}
		res.Metrics = true
	}
	if err := r.tx.Commit(); err != nil {
		return nil, err
	}
	res.Total = r.total
	res.Partial = r.total.RecordsRejected() > 0 || r.total.Count(outcome.SummaryFailed) > 0
	return res, nil
}

// stage stages the regular-file output path in the run's commit and
// returns where to write it. A device, FIFO or "-" is refused here: only
// JSONL side files may be written directly (see createJSONL).
func (r *runner) stage(path string) (string, error) {
	sp, kind, err := r.tx.File(path)
	if err != nil {
		return "", UsageError{err}
	}
	if kind == commit.Direct {
		return "", usagef("output %s is not a regular file: record outputs are written to files (rejects, outcomes and metrics may go to a device, a FIFO or -)", path)
	}
	return sp, nil
}

// createJSONL opens a JSONL side file: staged in the commit, or written
// directly when path is a device, a FIFO or "-" (no atomicity then).
func (r *runner) createJSONL(path string) (format.Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil && path != "-" {
		return nil, err
	}
	sp, kind, err := r.tx.File(path)
	if err != nil {
		return nil, UsageError{err}
	}
	if kind == commit.Direct {
		return jsonl.NewDirect(path)
	}
	w, err := jsonl.Create(sp)
	if err != nil {
		return nil, err
	}
	return r.vouch(path, sp, format.JSONL, w), nil
}

func (r *runner) writeReport(path string, rep metrics.Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil && path != "-" {
		return err
	}
	sp, kind, err := r.tx.File(path)
	if err != nil {
		return UsageError{err}
	}
	if kind == commit.Direct {
		w, err := jsonl.OpenDirect(path)
		if err == nil {
			err = rep.WriteJSON(w)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("metrics %s: %w", path, err)
		}
		return nil
	}
	f, err := atomicfile.Create(sp)
	if err == nil {
		err = f.Finish(rep.WriteJSON(f))
	}
	if err != nil {
		return fmt.Errorf("metrics %s: %w", path, err)
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
		InputFingerprint: inputFingerprint(r.inputHash),
		DryRun:           r.spec.DryRun,
		Prepass:          r.cfg.Compression.Prepass,
		Redaction:        r.cfg.Redaction.Enabled,
	}
	if ti := tokenize.Describe(r.counter); ti.Hash != "" {
		info.TokenizerKind, info.TokenizerSplit, info.TokenizerSHA256 = ti.Kind, ti.Split, ti.Hash
	}
	info.Config, info.ConfigFingerprint = fingerprint(r.cfg, r.spec.Sample)
	if r.cfg.Summarization.Method == "llm" {
		info.Model = r.cfg.Summarization.Model
		info.Estimated = r.spec.DryRun
		if r.client != nil && !r.spec.DryRun {
			st := r.client.Stats()
			info.RetriesByCause, info.ErrorsByCause = st.Retries, st.ErrorsByCause
			info.CacheMisses = &st.CacheMisses
		}
	}
	return info
}

// file runs one input file through the pipeline into its staged output.
func (r *runner) file(ctx context.Context, idx int, f File) (err error) {
	// The input fingerprint covers every byte of every input, sampled or not.
	fmt.Fprintf(r.inputHash, "%s\n", filepath.Base(f.In))
	in, err := format.Open(f.In, format.Options{Hash: r.inputHash, Ctx: ctx, Stdin: r.spec.Stdin})
	if err != nil {
		return err
	}
	defer in.Close()
	if err := in.CheckTurnsColumn(f.In, r.cfg.Input.TurnsKey); err != nil {
		return err
	}
	var src pipeline.Source = in
	if s := r.spec.Sample; s != nil {
		keep, err := sampleLines(ctx, f.In, s.Percent, s.Seed, idx)
		if err != nil {
			return err
		}
		src = &sampledSource{src: in, keep: keep}
	}
	var out format.Writer
	if !r.spec.DryRun {
		extra := ""
		if r.cfg.Metrics.PerTrajectory {
			extra = metrics.TrajectoryKey
		}
		if out, err = format.Create(r.staged[idx], f.OutFormat, in.Schema, extra); err != nil {
			return renamed(err, r.staged[idx], f.Out)
		}
		out = r.vouch(f.Out, r.staged[idx], f.OutFormat, namedWriter{out, r.staged[idx], f.Out})
		defer func() {
			if err != nil {
				out.Abort()
			}
		}()
	}
	cfg := pipeline.Config{Workers: r.workers, Network: r.cfg.Processing.MaxConcurrentRequests}
	cfg.OnResult = func(res pipeline.Result) error {
		if res.Reject != nil && r.rejects != nil {
			if err := r.rejects.Write(RejectLine(res.Reject)); err != nil {
				return fmt.Errorf("rejects %s: %w", r.plan.Rejects, err)
			}
		}
		if r.outcomes != nil {
			if err := r.outcomes.Write(res.Obs.AppendJSON(nil)); err != nil {
				return fmt.Errorf("outcomes %s: %w", r.plan.Outcomes, err)
			}
		}
		r.progress.Record(res, in.BytesRead())
		return nil
	}
	var sink pipeline.Sink
	if out != nil {
		sink = out
	}
	sum, err := pipeline.Run(ctx, f.In, src, sink, r.comp, cfg)
	if err != nil {
		return err
	}
	if out != nil {
		if err := out.Close(); err != nil {
			return fmt.Errorf("output %s: %w", f.Out, err)
		}
	}
	size := int64(0)
	if st, err := os.Stat(f.In); err == nil {
		size = st.Size()
	}
	r.progress.FileDone(size)
	r.total.Merge(sum)
	return nil
}

type noProgress struct{}

func (noProgress) Start([]File)                  {}
func (noProgress) Record(pipeline.Result, int64) {}
func (noProgress) FileDone(int64)                {}
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
