package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

var errHelp = flag.ErrHelp

const compressUsage = `Usage: trajcompress compress --input PATH [flags]

Reads ShareGPT/Hermes ({"conversations":[{"from","value"}]}) or OpenAI
({"messages":[{"role","content",…}]}) trajectories from JSONL (.jsonl,
.jsonl.gz), Parquet (.parquet, e.g. Hugging Face hub shards) or Arrow
(.arrow, datasets save_to_disk) files, or a directory of them, and writes every
record back in input order: unchanged when it fits the target (or cannot be
compressed), otherwise with just enough of its middle replaced by one
"[CONTEXT SUMMARY]:" turn. Tool results never lose the call they answer.

Outputs (defaults follow the peer trajectory_compressor.py):
  file a.jsonl  →  a_compressed.jsonl, a_compressed_metrics.json, a_compressed_rejects.jsonl
  dir  runs/    →  runs_compressed/<same names> (x.jsonl.gz → x.jsonl),
                   runs_compressed/compression_metrics.json, runs_compressed_rejects.jsonl
Parquet and Arrow outputs keep the input's schema, plus a compression_metrics
column when per-trajectory metrics are on; --output-format converts.
Each output is written to a temporary file and renamed into place when
complete. Lines that are not trajectories go to the rejects file with their
file, line and reason; records in = records out + records rejected, always.

Every record gets one outcome: skipped_under_target, compressed,
compressed_over_limit, uncompressible (no_middle, collapsed,
region_too_small), summary_failed, or invalid. The metrics JSON keeps the
peer's sections and adds "outcomes" and "distributions".

Flags override the config file, which overrides the defaults.

`

// compressFlags are the command-line settings; set records which were given.
type compressFlags struct {
	input, output, configPath, metricsPath, rejectsPath, outcomesPath string
	tokenizer, summarizer, onFailure, summaryRole, format, outFormat  string
	model, baseURL, cacheDir, cpuProfile                              string
	tokenizerRevision                                                 string
	rpm, tpm, maxConcurrent                                           int
	priceIn, priceOut                                                 float64
	turnOverhead, target, summaryTarget, protectLastN, workers        int
	samplePercent                                                     float64
	seed                                                              uint64
	dryRun, quiet, alternation                                        bool
	set                                                               map[string]bool
}

func parseCompressFlags(args []string, stderr io.Writer) (*compressFlags, error) {
	f := &compressFlags{}
	fs := flag.NewFlagSet("compress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, compressUsage)
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nExit status: 0 ok, 1 failed, 2 usage, 3 partial (rejects or failed summaries), 130 interrupted.\n")
	}
	fs.StringVar(&f.input, "input", "", "input `PATH`: a .jsonl, .jsonl.gz, .parquet or .arrow file, or a directory of them (required)")
	fs.StringVar(&f.output, "output", "", "output file (or directory, for a directory input); default: input name + output_suffix")
	fs.StringVar(&f.configPath, "config", "", "peer-compatible YAML `FILE` (trajectory_compression.yaml); default: built-in defaults")
	fs.StringVar(&f.metricsPath, "metrics", "", "where to write the aggregate metrics JSON (default: beside the output file, or inside the output directory)")
	fs.StringVar(&f.rejectsPath, "rejects", "", "where to write rejected lines as JSONL (default: <output stem>_rejects.jsonl)")
	fs.StringVar(&f.outcomesPath, "outcomes", "", "write one JSON line per input record with its outcome to `PATH`")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "o200k_base (default), cl100k_base, chars4 (code points / 4, the peer's fallback), a tokenizer.json or tiktoken.model path, a model directory, or a Hugging Face model id found in the local HF cache (never downloaded)")
	fs.StringVar(&f.tokenizerRevision, "tokenizer-revision", "", "Hugging Face revision (branch, tag or commit) of a --tokenizer model id (config tokenizer.revision; default main)")
	fs.IntVar(&f.turnOverhead, "turn-overhead", 0, "tokens added per turn for chat-template framing")
	fs.IntVar(&f.target, "target-max-tokens", 0, "token budget per trajectory (config compression.target_max_tokens, default 15250)")
	fs.IntVar(&f.summaryTarget, "summary-target-tokens", 0, "token budget of the summary turn (default 750)")
	fs.IntVar(&f.protectLastN, "protect-last-n", 0, "number of final turns never compressed (default 4)")
	fs.IntVar(&f.workers, "workers", 0, "CPU workers (default: all cores)")
	fs.Float64Var(&f.samplePercent, "sample-percent", 0, "process a reproducible sample of this percentage (0 < p <= 100) of each file, in input order")
	fs.Uint64Var(&f.seed, "seed", 42, "seed for --sample-percent")
	fs.BoolVar(&f.dryRun, "dry-run", false, "analyse and write the metrics, but write no output records (nor a rejects file, unless --rejects is given)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar and no summary on stderr")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof)")
	fs.StringVar(&f.summarizer, "summarizer", "", "deterministic (default: offline, extractive) or llm (summarization.* settings)")
	fs.StringVar(&f.onFailure, "on-summary-failure", "", "skip (default: record written unchanged as summary_failed) or fallback (deterministic summary)")
	fs.StringVar(&f.summaryRole, "summary-role", "", "role of the summary turn: user (default), assistant or system")
	fs.StringVar(&f.format, "format", "", "record dialect: sharegpt or openai (default: detected per record)")
	fs.StringVar(&f.outFormat, "output-format", "", "jsonl, parquet or arrow (default: the input's format)")
	fs.BoolVar(&f.alternation, "alternation", false, "keep strict user/assistant alternation (LLaMA-Factory, Mistral templates): merge the summary into the adjacent user-side turn instead of inserting one; see trajcompress validate")
	fs.StringVar(&f.model, "model", "", "LLM summarizer: model (summarization.model)")
	fs.StringVar(&f.baseURL, "base-url", "", "LLM summarizer: OpenAI-compatible base URL; POST {base-url}/chat/completions (summarization.base_url)")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "LLM summarizer: summary cache directory, \"-\" to disable (default: user cache dir/trajcompress/summaries)")
	fs.IntVar(&f.maxConcurrent, "max-concurrent-requests", 0, "LLM summarizer: requests in flight (processing.max_concurrent_requests, default 50)")
	fs.IntVar(&f.rpm, "rpm", 0, "LLM summarizer: client-side requests-per-minute limit (0: none)")
	fs.IntVar(&f.tpm, "tpm", 0, "LLM summarizer: client-side tokens-per-minute limit (0: none)")
	fs.Float64Var(&f.priceIn, "price-in", 0, "USD per million prompt tokens, for the cost figure in the metrics")
	fs.Float64Var(&f.priceOut, "price-out", 0, "USD per million completion tokens, for the cost figure in the metrics")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usagef("compress: unexpected argument %q (flags go before; did you mean --input %s?)", fs.Arg(0), fs.Arg(0))
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.input == "" {
		return nil, usagef("compress: --input is required (see trajcompress compress -h)")
	}
	if f.set["sample-percent"] && !(f.samplePercent > 0 && f.samplePercent <= 100) { // NaN fails too
		return nil, usagef("--sample-percent must be in (0, 100], got %v", f.samplePercent)
	}
	return f, nil
}

// effectiveConfig loads the config file (if named) and applies the flags.
func (f *compressFlags) effectiveConfig() (config.Config, error) {
	cfg := config.Default()
	if f.configPath != "" {
		var err error
		if cfg, err = config.Load(f.configPath); err != nil {
			return cfg, usageError{err}
		}
	}
	if f.set["tokenizer"] {
		cfg.Tokenizer.Name = f.tokenizer
	}
	if f.set["tokenizer-revision"] {
		cfg.Tokenizer.Revision = f.tokenizerRevision
	}
	if f.set["turn-overhead"] {
		cfg.Tokenizer.TurnOverhead = f.turnOverhead
	}
	if f.set["target-max-tokens"] {
		cfg.Compression.TargetMaxTokens = f.target
	}
	if f.set["summary-target-tokens"] {
		cfg.Compression.SummaryTargetTokens = f.summaryTarget
	}
	if f.set["protect-last-n"] {
		cfg.ProtectedTurns.LastNTurns = f.protectLastN
	}
	if f.set["workers"] {
		cfg.Processing.NumWorkers = f.workers
	}
	if f.set["summarizer"] {
		cfg.Summarization.Method = f.summarizer
	}
	if f.set["on-summary-failure"] {
		cfg.Summarization.OnFailure = f.onFailure
	}
	if f.set["summary-role"] {
		cfg.Output.SummaryRole = f.summaryRole
	}
	if f.set["format"] {
		cfg.Input.Format = f.format
	}
	if f.set["output-format"] {
		cfg.Output.Format = f.outFormat
	}
	if f.set["alternation"] {
		cfg.Output.Alternation = f.alternation
	}
	if f.set["model"] {
		cfg.Summarization.Model = f.model
	}
	if f.set["base-url"] {
		cfg.Summarization.BaseURL = f.baseURL
	}
	if f.set["cache-dir"] {
		cfg.Summarization.CacheDir = f.cacheDir
	}
	if f.set["rpm"] {
		cfg.Summarization.RPM = f.rpm
	}
	if f.set["tpm"] {
		cfg.Summarization.TPM = f.tpm
	}
	if f.set["max-concurrent-requests"] {
		cfg.Processing.MaxConcurrentRequests = f.maxConcurrent
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{fmt.Errorf("flags: %w", err)}
	}
	return cfg, nil
}

func budgetOf(cfg config.Config) snap.Budget {
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

// job is one input file and where its records go.
type job struct {
	in, out           string
	inFormat, outForm string
}

// plan resolves the input into jobs and the side-file paths.
type outputs struct {
	jobs                       []job
	dir                        string // output directory (directory mode) or ""
	metrics, rejects, outcomes string
}

func resolveOutputs(f *compressFlags, cfg config.Config) (outputs, error) {
	var o outputs
	st, err := os.Stat(f.input)
	if err != nil {
		return o, usageError{fmt.Errorf("--input: %w", err)}
	}
	suffix := cfg.Output.OutputSuffix
	outFormat := func(in string) string {
		if cfg.Output.Format != "" {
			return cfg.Output.Format
		}
		return in
	}
	if st.IsDir() {
		in := filepath.Clean(f.input)
		o.dir = f.output
		if o.dir == "" {
			o.dir = in + suffix
			if abs, err := filepath.Abs(in); err == nil && (in == "." || in == "..") {
				o.dir = abs + suffix // "--input ." names its output after the directory, beside it
			}
		}
		ents, err := os.ReadDir(in)
		if err != nil {
			return o, err
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && formatOf(e.Name()) != "" {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return o, usagef("--input %s: no .jsonl, .jsonl.gz, .parquet or .arrow files in this directory", in)
		}
		seen := map[string]string{}
		for _, n := range names {
			inF := formatOf(n)
			outF := outFormat(inF)
			out := filepath.Join(o.dir, stem(n)+extOf(outF))
			if prev, dup := seen[out]; dup {
				return o, usagef("--input %s: %s and %s would both be written to %s", in, prev, n, out)
			}
			seen[out] = n
			o.jobs = append(o.jobs, job{in: filepath.Join(in, n), out: out, inFormat: inF, outForm: outF})
		}
		o.metrics = filepath.Join(o.dir, cfg.Metrics.OutputFile)
		o.rejects = filepath.Clean(o.dir) + "_rejects.jsonl"
	} else {
		inF := formatOf(f.input)
		if inF == "" {
			inF = fmtJSONL // any other name is read as JSONL, gzip detected by content
		}
		outF := outFormat(inF)
		out := f.output
		if out == "" {
			out = filepath.Join(filepath.Dir(f.input), stem(f.input)+suffix+extOf(outF))
		} else if !f.set["output-format"] && cfg.Output.Format == "" {
			if of := formatOf(out); of != "" {
				outF = of // --output b.parquet means Parquet
			}
		}
		o.jobs = []job{{in: f.input, out: out, inFormat: inF, outForm: outF}}
		o.metrics = filepath.Join(filepath.Dir(out), stem(out)+"_metrics.json")
		o.rejects = filepath.Join(filepath.Dir(out), stem(out)+"_rejects.jsonl")
	}
	if f.metricsPath != "" {
		o.metrics = f.metricsPath
	}
	if f.rejectsPath != "" {
		o.rejects = f.rejectsPath
	}
	o.outcomes = f.outcomesPath
	return o, checkPaths(o)
}

// checkPaths refuses, before anything is read, outputs that would
// overwrite an input or each other, and an output that is a directory.
func checkPaths(o outputs) error {
	type named struct{ what, path string }
	var outs []named
	for _, j := range o.jobs {
		outs = append(outs, named{"output", j.out})
	}
	outs = append(outs, named{"--metrics", o.metrics}, named{"--rejects", o.rejects}, named{"--outcomes", o.outcomes})
	for i, a := range outs {
		if a.path == "" {
			continue
		}
		if st, err := os.Stat(a.path); err == nil && st.IsDir() {
			return usagef("%s %s is a directory", a.what, a.path)
		}
		if a.what == "output" && strings.HasSuffix(a.path, ".gz") {
			return usagef("output %s: gzip output is not supported (gzip input is); name it .jsonl", a.path)
		}
		for _, j := range o.jobs {
			if samePath(a.path, j.in) {
				return usagef("refusing to write %s %s over its own input %s (choose another path)", a.what, a.path, j.in)
			}
		}
		for _, b := range outs[i+1:] {
			if b.path != "" && samePath(a.path, b.path) {
				return usagef("%s and %s are the same file %s", a.what, b.what, a.path)
			}
		}
	}
	return nil
}

func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

func cmdCompress(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseCompressFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := f.effectiveConfig()
	if err != nil {
		return err
	}
	base, err := tokenize.NewRevision(cfg.Tokenizer.Name, cfg.Tokenizer.Revision)
	if err != nil {
		return usagef("tokenizer.name %q: %v (set tokenizer.name in the config or pass --tokenizer)", cfg.Tokenizer.Name, err)
	}
	// 512 texts of at most 64 KiB: at most 32 MiB, plenty for the system
	// prompts and tool schemas that repeat (bench/README.md, "End to end").
	counter := tokenize.Memo(base, 512)
	outs, err := resolveOutputs(f, cfg)
	if err != nil {
		return err
	}
	var summ summary.Summarizer
	var client *llm.Client
	remote := cfg.Summarization.Method == "llm"
	if remote {
		if summ, client, err = newLLM(cfg, counter, f.dryRun); err != nil {
			return err
		}
	} else {
		summ = summary.Deterministic{Counter: counter}
	}
	opts := pipeline.Options{
		Budget:           budgetOf(cfg),
		Counter:          counter,
		TurnOverhead:     cfg.Tokenizer.TurnOverhead,
		Schema:           traj.Schema{Dialect: traj.Dialect(cfg.Input.Format), TurnsKey: cfg.Input.TurnsKey, RoleKey: cfg.Input.RoleKey, ContentKey: cfg.Input.ContentKey},
		Summarizer:       summ,
		RecordTimeout:    cfg.Processing.Timeout(),
		SummaryRole:      traj.Role(cfg.Output.SummaryRole),
		Alternate:        cfg.Output.Alternation,
		AddNotice:        cfg.Output.AddSummaryNotice,
		NoticeText:       cfg.Output.SummaryNoticeText,
		PerRecordMetrics: cfg.Metrics.PerTrajectory,
		DryRun:           f.dryRun,
	}
	if cfg.Summarization.OnFailure == "fallback" {
		opts.Fallback = summary.Deterministic{Counter: counter}
	}
	comp, err := pipeline.NewCompressor(opts)
	if err != nil {
		return usageError{err}
	}
	runCfg := pipeline.Config{Workers: cfg.Processing.NumWorkers}
	if remote {
		w := runCfg.Workers
		if w <= 0 {
			w = 2
		}
		// Records waiting out a retry hold their place in the ordered output:
		// a wide window keeps the other requests flowing meanwhile.
		runCfg.InFlight = max(256, w+8*cfg.Processing.MaxConcurrentRequests)
	}

	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	r := &runner{f: f, cfg: cfg, outs: outs, comp: comp, runCfg: runCfg, stderr: stderr, counter: counter, client: client}
	return r.run(ctx)
}

// runner carries one compress invocation.
type runner struct {
	f       *compressFlags
	cfg     config.Config
	outs    outputs
	comp    *pipeline.Compressor
	runCfg  pipeline.Config
	stderr  io.Writer
	counter *tokenize.MemoCounter
	client  *llm.Client // nil unless the LLM summarizer is in use

	// inputHash fingerprints the inputs. xxh3-128, not sha256: it detects a
	// changed input as well (nothing here is adversarial) at a small part of
	// the cost; sha256 was 4% of a run's CPU (bench/README.md).
	inputHash *xxh3.Hasher

	rejects  *jsonl.Writer
	outcomes *jsonl.Writer
	total    metrics.Summary
	progress *progress
}

func (r *runner) run(ctx context.Context) (err error) {
	start := time.Now()
	if r.outs.dir != "" && !r.f.dryRun {
		if _, serr := os.Stat(r.outs.dir); os.IsNotExist(serr) {
			defer func() {
				if err != nil {
					os.Remove(r.outs.dir) // only if still empty: ours, unused
				}
			}()
		}
		if err := os.MkdirAll(r.outs.dir, 0o755); err != nil {
			return err
		}
	}
	// A dry run writes only the metrics (and the files named explicitly).
	if !r.f.dryRun || r.f.rejectsPath != "" {
		if r.rejects, err = createBeside(r.outs.rejects); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				r.rejects.Abort()
			}
		}()
	}
	if r.outs.outcomes != "" {
		if r.outcomes, err = createBeside(r.outs.outcomes); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				r.outcomes.Abort()
			}
		}()
	}
	r.inputHash = xxh3.New()
	r.progress = newProgress(r.stderr, r.f.quiet, r.outs.jobs)
	// Each file's output is complete in a staged file when its job ends; all
	// of them are put in place together only when the whole run succeeded,
	// so a failure or Ctrl-C in a later file leaves no output in place
	// (and no earlier file's rejects unreported).
	if !r.f.dryRun {
		defer func() {
			if err != nil {
				for _, j := range r.outs.jobs {
					os.Remove(staged(j.out))
				}
			}
		}()
	}
	for i, j := range r.outs.jobs {
		if err := r.runJob(ctx, i, j); err != nil {
			r.progress.finish()
			return err
		}
	}
	r.progress.finish()
	if r.rejects != nil {
		if err := r.rejects.Close(); err != nil {
			return fmt.Errorf("rejects %s: %w", r.outs.rejects, err)
		}
	}
	if r.outcomes != nil {
		if err := r.outcomes.Close(); err != nil {
			return fmt.Errorf("outcomes %s: %w", r.outs.outcomes, err)
		}
	}
	budget := budgetOf(r.cfg)
	info := metrics.RunInfo{
		Tokenizer:        r.cfg.Tokenizer.Name,
		TurnOverhead:     r.cfg.Tokenizer.TurnOverhead,
		Budget:           &budget,
		Start:            start,
		End:              time.Now(),
		Summarizer:       r.cfg.Summarization.Method,
		PriceIn:          r.f.priceIn,
		PriceOut:         r.f.priceOut,
		ToolVersion:      version,
		InputFingerprint: inputFingerprint(r.inputHash),
	}
	if ti := tokenize.Describe(r.counter); ti.Hash != "" {
		info.TokenizerKind, info.TokenizerSplit, info.TokenizerSHA256 = ti.Kind, ti.Split, ti.Hash
	}
	info.Config, info.ConfigFingerprint = fingerprint(r.cfg, r.f)
	if r.cfg.Summarization.Method == "llm" {
		info.Model = r.cfg.Summarization.Model
		info.Estimated = r.f.dryRun
		if r.client != nil && !r.f.dryRun {
			st := r.client.Stats()
			info.RetriesByCause, info.ErrorsByCause = st.Retries, st.ErrorsByCause
			info.CacheMisses = &st.CacheMisses
		}
	}
	report := r.total.Report(info)
	if r.cfg.Metrics.Enabled || r.f.metricsPath != "" {
		if err := writeReport(r.outs.metrics, report); err != nil {
			return err
		}
	}
	// Last, the outputs: everything else they depend on is in place.
	if !r.f.dryRun {
		for _, j := range r.outs.jobs {
			if err := os.Rename(staged(j.out), j.out); err != nil {
				return fmt.Errorf("output %s: %w", j.out, err)
			}
		}
	}
	if !r.f.quiet {
		r.total.Human(r.stderr)
		hits, misses := r.counter.Stats()
		fmt.Fprintf(r.stderr, "token memo: %d hits, %d misses\n", hits, misses)
		if r.cfg.Metrics.Enabled || r.f.metricsPath != "" {
			fmt.Fprintf(r.stderr, "metrics: %s\n", r.outs.metrics)
		}
		if n := r.total.RecordsRejected(); n > 0 && r.rejects != nil {
			fmt.Fprintf(r.stderr, "rejects: %d lines in %s\n", n, r.outs.rejects)
		}
	}
	if r.total.RecordsRejected() > 0 || r.total.Count(snap.SummaryFailed) > 0 {
		return errPartial
	}
	return nil
}

func (r *runner) runJob(ctx context.Context, idx int, j job) (err error) {
	// The input fingerprint covers every byte of every input, sampled or not.
	fmt.Fprintf(r.inputHash, "%s\n", filepath.Base(j.in))
	var src source
	var schema inputSchema
	var bytesRead func() int64
	if j.inFormat == fmtJSONL {
		file, err := os.Open(j.in)
		if err != nil {
			return err
		}
		defer file.Close()
		rd, err := jsonl.NewReader(io.TeeReader(file, r.inputHash), j.in)
		if err != nil {
			return err
		}
		src, bytesRead = rd, rd.BytesRead
	} else {
		if err := hashFile(ctx, r.inputHash, j.in); err != nil {
			return err
		}
		if src, schema, err = openTabular(j.in, j.inFormat); err != nil {
			return err
		}
		if err := checkTurnsColumn(j.in, schema, r.cfg.Input.TurnsKey); err != nil {
			src.Close()
			return err
		}
		bytesRead = func() int64 { return 0 } // progress moves when the file is done
	}
	defer src.Close()
	var psrc pipeline.Source = src
	if r.f.set["sample-percent"] {
		keep, err := sampleLines(ctx, j.in, r.f.samplePercent, r.f.seed, idx)
		if err != nil {
			return err
		}
		psrc = &sampledSource{src: src, keep: keep}
	}
	var out sink
	if !r.f.dryRun {
		extra := ""
		if r.cfg.Metrics.PerTrajectory {
			extra = "compression_metrics"
		}
		if out, err = createSink(staged(j.out), j.outForm, schema, extra); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				out.Abort()
			}
		}()
	}
	cfg := r.runCfg
	cfg.OnResult = func(res pipeline.Result) error {
		if res.Reject != nil && r.rejects != nil {
			if err := r.rejects.Write(rejectLine(res.Reject)); err != nil {
				return fmt.Errorf("rejects %s: %w", r.outs.rejects, err)
			}
		}
		if r.outcomes != nil {
			if err := r.outcomes.Write(res.Obs.AppendJSON(nil)); err != nil {
				return fmt.Errorf("outcomes %s: %w", r.outs.outcomes, err)
			}
		}
		r.progress.observe(res, bytesRead())
		return nil
	}
	var psink pipeline.Sink
	if out != nil {
		psink = out
	}
	sum, err := pipeline.Run(ctx, j.in, psrc, psink, r.comp, cfg)
	if err != nil {
		return err
	}
	if out != nil {
		if err := out.Close(); err != nil {
			return fmt.Errorf("output %s: %w", j.out, err)
		}
	}
	size := int64(0)
	if st, err := os.Stat(j.in); err == nil {
		size = st.Size()
	}
	r.progress.fileDone(size)
	r.total.Merge(sum)
	return nil
}

// createBeside creates the directory of path and an atomic writer for it.
func createBeside(path string) (*jsonl.Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return jsonl.Create(path)
}

func writeReport(path string, rep metrics.Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := atomicfile.Create(path)
	if err == nil {
		err = f.Finish(rep.WriteJSON(f))
	}
	if err != nil {
		return fmt.Errorf("metrics %s: %w", path, err)
	}
	return nil
}

// fingerprint returns the effective config as JSON, and a sha256 over the
// settings that can change the output: not the worker counts, request
// limits, cache location or output names, nor the LLM settings when the
// deterministic summarizer is in use; sampling is included (it changes
// which records are processed).
func fingerprint(cfg config.Config, f *compressFlags) (json.RawMessage, string) {
	full, _ := json.Marshal(cfg) // plain data: cannot fail
	c := cfg
	c.Processing.NumWorkers, c.Processing.MaxConcurrentRequests = 0, 0
	c.Summarization.CacheDir, c.Summarization.RPM, c.Summarization.TPM = "", 0, 0
	c.Metrics.OutputFile, c.Output.OutputSuffix = "", ""
	if c.Summarization.Method == "deterministic" {
		c.Summarization = config.Summarization{Method: c.Summarization.Method}
		c.Processing.PerTrajectoryTimeout = 0
	}
	sample := struct {
		Config  config.Config `json:"config"`
		Percent float64       `json:"sample_percent,omitempty"`
		Seed    uint64        `json:"sample_seed,omitempty"`
	}{Config: c}
	if f.set["sample-percent"] {
		sample.Percent, sample.Seed = f.samplePercent, f.seed
	}
	b, _ := json.Marshal(sample)
	sum := sha256.Sum256(b)
	return full, "sha256:" + hex.EncodeToString(sum[:])
}

// hashFile adds a file's bytes to h (tabular inputs are read by offset,
// not as a stream, so they are hashed in a pass of their own).
func hashFile(ctx context.Context, h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(h, ctxReader{ctx, f})
	return err
}

// ctxReader stops reading once ctx is done, so a long pre-pass heeds Ctrl-C.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// staged is where a job's finished output waits until the whole run has
// succeeded: a hidden name beside the destination, which no input pattern
// matches.
func staged(out string) string {
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".partial")
}

func inputFingerprint(h *xxh3.Hasher) string {
	sum := h.Sum128().Bytes()
	return "xxh3-128:" + hex.EncodeToString(sum[:])
}
