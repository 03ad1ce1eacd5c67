package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/task"
)

var errHelp = flag.ErrHelp

const compressUsage = `Usage: trajcompress compress --input PATH [flags]

Reads ShareGPT/Hermes ({"conversations":[{"from","value"}]}) or OpenAI
({"messages":[{"role","content",…}]}) trajectories from JSONL (.jsonl,
.ndjson), JSON arrays (.json, LLaMA-Factory datasets; streamed), each plain
or gzip, zstd, bzip2 or xz (.gz, .zst, .bz2, .xz; told by content), Parquet
(.parquet, e.g. Hugging Face hub shards) or Arrow (.arrow, datasets
save_to_disk) files, or a directory of them, and writes every
record back in input order: unchanged when it fits the target (or cannot be
compressed), otherwise with just enough of its middle replaced by one
"[CONTEXT SUMMARY]:" turn. Tool results (tool, observation, Llama-3
ipython turns) never lose the call they answer. A record holding both
"conversations" and "messages" is read by one when both hold the same turns
(turn_list_read in its outcome line), else rejected (two_turn_lists).

A directory is walked recursively (Hugging Face repos keep shards under
data/ and per-config subfolders), each directory's entries in name order,
and the relative paths are kept in the output directory; hidden files and
directories (.git, .cache) are left out; --no-recursive reads only the
directory's own files. Every other file left out (not a data name, metadata,
an empty Parquet or Arrow file, a Git LFS pointer, a symbolic link to a file
outside the directory unless --follow-links) is named in a note with the
reason. Outputs are written uncompressed: --output o.jsonl.zst writes
o.jsonl, with a note.

Nothing a run writes — outputs, metrics, rejects, outcomes, --report,
--cpuprofile, --batch-export, the summary cache — may be an input (by any
name) or inside the input directory, where a later run would read it as
input: the run is refused before anything is written. A symbolic link is
written through only at a path you named (--output, --metrics, …); one at
a name trajcompress chose (a_compressed.jsonl, files in the output
directory) is an error naming it. New files get mode 0666 &^ umask; a file
written over keeps its mode.

Outputs (defaults follow the peer trajectory_compressor.py):
  file a.jsonl  →  a_compressed.jsonl, a_compressed_metrics.json, a_compressed_rejects.jsonl
  dir  runs/    →  runs_compressed/<same names> (x.jsonl.zst → x.jsonl),
                   runs_compressed/compression_metrics.json, runs_compressed_rejects.jsonl
Parquet and Arrow outputs keep the input's schema, plus a compression_metrics
column when per-trajectory metrics are on; --output-format converts.
Each output is written to a temporary file and renamed into place when
complete (a symbolic link output you named: the file it points to, never
the link).
Rejects, outcomes and metrics may also be -, /dev/stdout, /dev/fd/N, a FIFO
or a device: those are written directly, streamed, with no rename and no
all-or-nothing promise; record outputs must be files.
Lines that are not trajectories go to the rejects file with their
file, line and reason; records in = records out + records rejected, always;
so do JSON Lines records longer than --max-record-bytes, with their size,
never read whole, and records a Parquet or Arrow output cannot hold (a
row that does not fit its schema: reason output_schema, the writer's
error as the detail). A summary, notice or digest written as a string
where the content column is a list of parts becomes one text part
[{"type": "text", "text": …}]. Outputs named here that cannot be written, and inputs
that cannot be read, are refused (exit 2) before any work.
Every output is valid UTF-8: ill-formed bytes in the input are replaced by
U+FFFD and counted (outcomes.records_utf8_repaired); a rejected line keeps
its bytes (raw_base64). A UTF-8 BOM is skipped; LF, CRLF and CR end lines;
output lines end in LF.

A run is a set of tasks (--target-task-size): each commits its part of the
outputs on its own in a hidden run directory beside the output, so a run
that is killed or fails goes on from its finished tasks when run again
with the same config and inputs (--resume; --overwrite starts over);
a finished task is reused only once its segments hash to what its marker
recorded and its counts agree (else it is run again, with a note). Its
outputs are put in place when every task is done, exactly as one pass
would write them. --shard I --num-shards N (or a Slurm, Kubernetes or AWS
Batch array's index) runs one share of the tasks, on any number of
machines sharing the output's file system; "trajcompress merge --output
OUTPUT" then puts the outputs together.

Secrets — cloud, VCS, chat and LLM provider keys, private key blocks,
JWTs, passwords in URLs, NAME=value of secret-named variables (gitleaks'
rules) — are replaced with typed markers such as [REDACTED:aws_access_token]
in every record written, every rejected line, and so in every text sent to
a summarizer; the metrics count them per kind ("redaction"), never a value.
A summary an LLM endpoint returns (live, from a Batch import or the cache)
is redacted too, before it is cached or written.
Config redaction.enabled: false turns this off.

--prepass (config compression.prepass) first makes a record over target
smaller without removing a turn, within the middle only: old images become
short texts (as --drop-old-images), identical tool results become
back-references, large old ones one-line digests, oversized tool-call
arguments are shrunk; a region is summarised only if that is not enough.
The metrics ("prepass") and outcome lines say which records fit by the
prepass alone and the tokens each step saved.

--drop-old-images (config compression.drop_old_images; part of --prepass)
replaces, within the middle of a record over target, each image older than
the newest image-bearing turn with a short stable text, "[image removed:
1920x1080 png]" ("[image removed]" when its size is unknown), oldest first,
until the record fits: an OpenAI or Anthropic image part becomes a text part
in its place, a LLaMA-Factory <image> marker becomes the text and its entry
leaves the record's images list. The newest image-bearing turn, the head and
the tail are never touched; images are never decoded or re-encoded. A record
that fits by this alone is compressed with no summary. The outcome lines
("images_removed", "image_tokens_saved") and the metrics ("images") count
the images removed and the tokens that saved, as the turns are counted.
A summarised region's deterministic summary says how many images it held
and their sizes.

With --trainer-config (a LLaMA-Factory, axolotl or TRL training YAML) each
record is counted, fitted and written as that trainer will read it: its
model is the tokenizer, its cutoff_len / sequence_len / max_length the
target, LLaMA-Factory's own templates (with --alternation on) or the chat
template as axolotl and TRL render it; rows LLaMA-Factory would skip for
their shape are repaired where that loses nothing it trains on (--no-repair
only reports). The outcome lines (trainer_before, trainer_after, repairs)
and the metrics ("trainer") say what the trainer loses of each row before
and after; docs/trainers.md has each trainer's rules.

Every record gets one outcome: skipped_under_target, compressed,
compressed_over_limit, uncompressible (no_middle, collapsed,
region_too_small, alternation, chat_template), summary_failed, or invalid. The metrics JSON keeps the
peer's sections and adds "outcomes", "distributions" (with the histograms),
"groups", "prepass", "images", "redaction" and "retention" (the share of the region's
tool names and of the paths and commands of its tool calls that its summary
names).

OpenAI Batch (half the price, no rate limits; --summarizer llm):
  --batch-export requests.jsonl   writes the summary requests the run needs
      (regions already in the summary cache left out) as an OpenAI Batch
      input file and exits: no records, no metrics (unless --metrics).
      Run it (OpenAI: upload with purpose "batch", endpoint
      /v1/chat/completions, completion_window 24h; or locally
      vllm run-batch -i requests.jsonl -o results.jsonl), then
  --batch-import results.jsonl [--batch-import errors.jsonl]
      reads the batch's output (and error) file into the summary cache,
      each answer checked as a live one, and compresses: the regions
      answered cost no request. With --batch-export too, it exports what is
      still missing instead.

Flags override the config file, which overrides the defaults.

`

// compressFlags are the command-line settings that are not config
// settings (those are config's option groups, config.CompressGroups).
type compressFlags struct {
	input, output, configPath, metricsPath, rejectsPath, outcomesPath, reportPath, cpuProfile, groupBy string
	priceIn, priceOut, samplePercent, maxRejectRate                                                    float64
	seed                                                                                               uint64
	dryRun, quiet, wait, noRecursive, followLinks                                                      bool
	taskSize, maxRecord                                                                                string
	shard, numShards                                                                                   int
	resume, overwrite                                                                                  bool
	batchExport                                                                                        string
	batchImport                                                                                        stringList
}

// stringList is a flag that may be given more than once.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func cmdCompress(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f compressFlags
	fs := newFlagSet("compress", stderr, compressUsage, "\nExit status: 0 ok, 1 failed, 2 usage (or another run holds these outputs), 3 partial (rejects or failed summaries), 4 mostly rejected (see --max-reject-rate), 130 interrupted.\nWith --batch-export: 0 when the requests file is written (no records were: import its results and run again), 3 when some input lines were rejected, 2 usage (not --summarizer llm, or the summary cache disabled).\n")
	f.define(fs)
	cf := config.AddFlags(fs, config.CompressGroups...)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("compress: unexpected argument %q (flags go before; did you mean --input %s?)", fs.Arg(0), fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.check(set); err != nil {
		return err
	}
	cfg, notes, err := job.Effective(f.configPath, cf)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, n)
	}
	spec, err := f.spec(cfg, set, stdin, stderr)
	if err != nil {
		return err
	}
	res, err := job.Run(ctx, spec)
	if err != nil {
		return err
	}
	f.report(stderr, res)
	return resultCode(res, f.maxRejectRate)
}

// define defines compress's own flags on fs.
func (f *compressFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "input `PATH`: a .jsonl, .ndjson or .json (JSON array) file, each plain or .gz, .zst, .bz2 or .xz, a .parquet or .arrow file, a directory of them, or - for JSONL or a JSON array on standard input (then --output is required) (required)")
	fs.StringVar(&f.output, "output", "", "output file (or directory, for a directory input); default: input name + output_suffix")
	fs.StringVar(&f.configPath, "config", "", "peer-compatible YAML `FILE` (trajectory_compression.yaml); default: built-in defaults")
	fs.StringVar(&f.metricsPath, "metrics", "", "where to write the aggregate metrics JSON (default: beside the output file, or inside the output directory)")
	fs.StringVar(&f.rejectsPath, "rejects", "", "where to write rejected lines as JSONL (default: <output stem>_rejects.jsonl)")
	fs.StringVar(&f.outcomesPath, "outcomes", "", "write one JSON line per input record with its outcome to `PATH`")
	fs.StringVar(&f.reportPath, "report", "", "also write the run's HTML report to `PATH`: the page \"trajcompress report\" makes of the metrics, with the worst cases of the run")
	fs.StringVar(&f.groupBy, "group-by", "", "break the metrics down (the \"groups\" section, the report's per-source table) by this top-level record `FIELD`, e.g. model or task, instead of by input file; at most 64 values are named, the rest counted as other")
	fs.Float64Var(&f.samplePercent, "sample-percent", 0, "process a reproducible sample of this percentage (0 < p <= 100) of each file, in input order")
	fs.Uint64Var(&f.seed, "seed", 42, "seed for --sample-percent")
	fs.BoolVar(&f.dryRun, "dry-run", false, "analyse and write the metrics, but write no output records (nor a rejects file, unless --rejects is given)")
	fs.BoolVar(&f.noRecursive, "no-recursive", false, "for a directory --input, read only its own files, not its subdirectories")
	fs.BoolVar(&f.followLinks, "follow-links", false, "for a directory --input, also read its symbolic links to files outside it (default: left out, with a note); links to directories are never followed")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar and no summary on stderr")
	fs.BoolVar(&f.wait, "wait", false, "when another run is writing the same outputs (or the same --metrics, --rejects, --outcomes or --report file), wait for it to end (default: fail at once, exit 2)")
	fs.StringVar(&f.taskSize, "target-task-size", "256MiB", "split the run into tasks of about `SIZE` of input (8MiB, 256MiB, 1GiB; 1000MB): a large JSONL file by byte range, Parquet and Arrow files by row groups and record batches; tasks are what a resumed run skips and shards share out, never a change to the output bytes")
	fs.StringVar(&f.maxRecord, "max-record-bytes", "256MiB", "reject a JSON Lines record (line) longer than `SIZE` as record_too_large, with its size, without reading it whole (a 300 MB line would take about 2 GB of memory); 0 for no limit")
	fs.BoolVar(&f.resume, "resume", false, "go on with the unfinished run of these outputs (also the default when one with the same config and inputs is there); fail if there is none")
	fs.BoolVar(&f.overwrite, "overwrite", false, "discard an unfinished run of these outputs instead of refusing one with other settings (or started by another trajcompress build)")
	fs.IntVar(&f.shard, "shard", -1, "run only the tasks whose number modulo --num-shards is `I` (0-based), leaving their parts for trajcompress merge; default from the environment of Slurm job arrays, Kubernetes Indexed Jobs or AWS Batch array jobs")
	fs.IntVar(&f.numShards, "num-shards", -1, "how many shards share the run (`N`); default SLURM_ARRAY_TASK_COUNT under Slurm, required with --shard, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof); like every path written, it may not be an input, nor inside the input directory")
	fs.Float64Var(&f.maxRejectRate, "max-reject-rate", 0.5, "exit 4 instead of 3 when more than this fraction of the records is rejected (0 <= r <= 1)")
	fs.Float64Var(&f.priceIn, "price-in", 0, "USD per million prompt tokens, for the cost figure in the metrics (a finite number >= 0)")
	fs.Float64Var(&f.priceOut, "price-out", 0, "USD per million completion tokens, for the cost figure in the metrics (a finite number >= 0)")
	fs.StringVar(&f.batchExport, "batch-export", "", "write the LLM summary requests of the run to `FILE` as an OpenAI Batch input file and exit, writing no records (see above)")
	fs.Var(&f.batchImport, "batch-import", "read an OpenAI Batch output or error `FILE` into the summary cache before the run (repeatable; see above)")
}

// check refuses flag values out of range, before the config is read.
func (f *compressFlags) check(set map[string]bool) error {
	if f.input == "" {
		return usagef("compress: --input is required (see trajcompress compress -h)")
	}
	if set["sample-percent"] && !(f.samplePercent > 0 && f.samplePercent <= 100) { // NaN fails too
		return usagef("--sample-percent must be in (0, 100], got %v", f.samplePercent)
	}
	if !(f.maxRejectRate >= 0 && f.maxRejectRate <= 1) {
		return usagef("--max-reject-rate must be in [0, 1], got %v", f.maxRejectRate)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"--price-in", f.priceIn}, {"--price-out", f.priceOut}} {
		if !(p.v >= 0 && p.v <= math.MaxFloat64) { // NaN and ±Inf fail too
			return usagef("%s must be a finite number of USD >= 0, got %v", p.name, p.v)
		}
	}
	if set["num-shards"] && f.numShards < 1 {
		return usagef("--num-shards must be 1 or more, got %d", f.numShards)
	}
	if set["shard"] && f.shard < 0 {
		return usagef("--shard must be 0 or more (below --num-shards), got %d", f.shard)
	}
	return nil
}

// spec is the job the flags and the effective config ask for.
func (f *compressFlags) spec(cfg config.Config, set map[string]bool, stdin io.Reader, stderr io.Writer) (job.Spec, error) {
	taskSize, err := task.ParseSize(f.taskSize)
	if err != nil {
		return job.Spec{}, usagef("--target-task-size: %v", err)
	}
	maxRecord, err := parseMaxRecord(f.maxRecord)
	if err != nil {
		return job.Spec{}, usagef("--max-record-bytes: %v", err)
	}
	shard, err := task.ShardOf(f.shard, f.numShards, os.Getenv)
	if err != nil {
		return job.Spec{}, usageError{err}
	}
	if f.resume && f.overwrite {
		return job.Spec{}, usagef("--resume and --overwrite: choose one")
	}
	spec := job.Spec{
		Config: cfg,
		Settings: job.Settings{
			Input: f.input, NoRecursive: f.noRecursive, FollowLinks: f.followLinks,
			Paths: job.Paths{Output: f.output, Metrics: f.metricsPath, Rejects: f.rejectsPath, Outcomes: f.outcomesPath, Report: f.reportPath,
				OutputFormatSet: set["output-format"]},
			DryRun: f.dryRun, PriceIn: f.priceIn, PriceOut: f.priceOut, GroupBy: f.groupBy,
			TaskSize: taskSize, MaxRecordBytes: maxRecord,
		},
		Wait: f.wait, Shard: shard, Resume: f.resume, Overwrite: f.overwrite, ToolVersion: version,
		Progress: newProgress(stderr, f.quiet), Stdin: stdin, Notes: prefixed{stderr},
		BatchExport: f.batchExport, BatchImport: f.batchImport, CPUProfile: f.cpuProfile,
	}
	if set["sample-percent"] {
		spec.Sample = &job.Sample{Percent: f.samplePercent, Seed: f.seed}
	}
	return spec, nil
}

// report writes what the finished run did for a person on stderr: the
// summary (unless --quiet), what to do after an export, a note on live
// requests despite imported answers, and a shard's next step.
func (f *compressFlags) report(stderr io.Writer, res *job.Result) {
	if !f.quiet && res.Export == nil {
		res.WriteHuman(stderr)
	}
	if res.Export != nil {
		writeExportNext(stderr, res, f.batchExport)
	}
	if res.Import != nil && res.Import.Imported > 0 && res.Total.SummaryCalls() > 0 {
		fmt.Fprintf(stderr, "trajcompress: note: %d summary requests were sent live although %d answers were imported: those regions had no imported answer. If the batch was exported for this run, it was made with other settings (model, prompt, config or input), and its answers match no region now.\n",
			res.Total.SummaryCalls(), res.Import.Imported)
	}
	if res.Shard.Count > 1 {
		from := ""
		if res.Shard.From != "--shard" {
			from = " (from " + res.Shard.From + ")"
		}
		fmt.Fprintf(stderr, "trajcompress: shard %d of %d%s: %d tasks done here; %d tasks of the run still to do by any shard. When every shard is done: trajcompress merge --output %s\n",
			res.Shard.Index, res.Shard.Count, from, res.Tasks, res.Missing, res.Plan.Anchor(f.dryRun))
	}
}

// parseMaxRecord reads --max-record-bytes: a size as --target-task-size
// takes it, or 0 for no limit.
func parseMaxRecord(s string) (int64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	return task.ParseSize(s)
}

// resultCode is the error (exit code) of a finished run or merge: too
// many rejects (exit 4), partial (3), or none.
func resultCode(res *job.Result, maxRejectRate float64) error {
	if in, rej := res.Total.RecordsIn(), res.Total.RecordsRejected(); in > 0 && float64(rej) > maxRejectRate*float64(in) {
		return fmt.Errorf("%w: %d of %d records (%.0f%%), more than --max-reject-rate %v; see %s (is the input what --format and the config expect?)",
			errRejected, rej, in, 100*float64(rej)/float64(in), maxRejectRate, res.Plan.Rejects)
	}
	if res.Partial {
		return errPartial
	}
	return nil
}

// prefixed writes the job's notes as the CLI's other messages are written.
type prefixed struct{ w io.Writer }

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(p.w, "trajcompress: %s", b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// writeExportNext tells what --batch-export wrote and what to do next.
func writeExportNext(w io.Writer, res *job.Result, path string) {
	e := res.Export
	fmt.Fprintf(w, "trajcompress: wrote %d summary requests (%.1f MB) to %s; %d regions were in the summary cache already, %d repeated a request. No records were written.\n",
		e.Requests, float64(e.Bytes)/1e6, path, e.Cached, e.Repeated)
	if rej := res.Total.RecordsRejected(); rej > 0 {
		where := "name --rejects FILE to see them"
		if res.Plan.Rejects != "" {
			where = "see " + res.Plan.Rejects
		}
		fmt.Fprintf(w, "trajcompress: %d of %d input records were rejected (not trajectories; they need no summary): %s.\n", rej, res.Total.RecordsIn(), where)
	}
	if e.Requests == 0 {
		fmt.Fprintln(w, "trajcompress: nothing to request: run again without --batch-export; every summary is in the cache.")
		return
	}
	if e.Requests > llm.BatchMaxRequests || e.Bytes > llm.BatchMaxBytes {
		fmt.Fprintf(w, "trajcompress: note: OpenAI takes at most %d requests and %d MB per batch file; split it (any lines, any order) or run it with vllm run-batch.\n", llm.BatchMaxRequests, llm.BatchMaxBytes>>20)
	}
	fmt.Fprintf(w, `Next:
  1. run the batch: OpenAI Files API (purpose "batch"), then POST /v1/batches with
     {"input_file_id": …, "endpoint": "/v1/chat/completions", "completion_window": "24h"};
     when it is completed, download output_file_id (and error_file_id, if any).
     Or locally: vllm run-batch -i %[1]s -o results.jsonl --model <model>
  2. run the same command again with --batch-import results.jsonl (and --batch-import errors.jsonl)
     in place of --batch-export: each answer is checked and cached, and the run compresses with them.
`, path)
}
