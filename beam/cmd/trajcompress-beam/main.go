// Command trajcompress-beam runs `trajcompress compress` as an Apache
// Beam pipeline (package trajbeam) on the runner --runner names: prism
// (the default: in this process), dataflow, flink or spark (through the
// portable job server), universal. It takes compress's main flags
// (--input, --output, --config and the settings below) beside Beam's
// own (--runner, --endpoint, --project, --region, --temp_location, …).
//
// The same binary is the pipeline's worker: on a runner that starts it
// as one, beam.Init runs the worker harness and never returns.
//
// Exit status as compress's: 0 ok; 1 failed; 2 usage or config error; 3
// partial (some lines were rejected); 4 mostly rejected (more than
// --max-reject-rate of the records).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/trajcompress/trajcompress/beam/trajbeam"
	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/task"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

var (
	input       = flag.String("input", "", "a .jsonl/.jsonl.gz/.parquet/.arrow file or a directory of them (walked as compress walks it), or a glob on a Beam file system (gs://bucket/runs/*.jsonl)")
	output      = flag.String("output", "", "output directory, local or gs://bucket/dir: part-NNNNN-of-NNNNN.jsonl, rejects.jsonl and the metrics")
	configPath  = flag.String("config", "", "the peer's YAML config (trajectory_compression.yaml); the flags below override it")
	noRecursive = flag.Bool("no-recursive", false, "read only a directory input's own files, not its subdirectories")
	overwrite   = flag.Bool("overwrite", false, "replace the outputs of an earlier run in --output")
	groupBy     = flag.String("group-by", "", "break the metrics down by this top-level record field instead of by input file")
	maxReject   = flag.Float64("max-reject-rate", 0.5, "exit 4 when more than this share of the records was rejected")
	taskSize    = flag.String("target-task-size", "256MiB", "size of a unit of work of a Parquet or Arrow file (a run of row groups or record batches), as compress's: 8MiB, 256MiB, 1GiB; plain JSONL is split by textio (64 MB), gzip JSONL and JSON arrays are read whole")

	// settings are config's option groups: the settings of compress that
	// apply to a Beam run, with compress's names and texts.
	settings = config.AddFlags(flag.CommandLine, groups...)
)

const usageText = `Usage: trajcompress-beam --input IN --output DIR [--config FILE] [settings] [Beam options]

Runs trajcompress compress as an Apache Beam pipeline: the same per-record
compression, the same rejects (numbered, in input order) and the same
metrics, written as JSONL part files whose order is the runner's.

  trajcompress-beam --input runs/ --output out/                      # prism, in this process
  trajcompress-beam --input 'gs://b/runs/*.jsonl' --output gs://b/out \
      --runner dataflow --project P --region R --temp_location gs://b/tmp
  trajcompress-beam --input /data/runs --output /data/out \
      --runner flink --endpoint localhost:8099 --environment_type LOOPBACK

See docs/beam.md for Dataflow, Flink and Spark. Every path a setting
names (a tokenizer, a chat template, a trainer config, images) must be
readable by the workers.

`

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usageText)
		flag.PrintDefaults()
		printNotApplying(flag.CommandLine.Output())
	}
	flag.Parse()
	// As trajcompress's main (bench/README.md, "End to end"): records are
	// short-lived, a GC target of 400% saves CPU time; a soft limit of
	// 256 MiB bounds what that costs in memory. Set before beam.Init, so
	// that a worker started from this binary runs with them too. GOGC and
	// GOMEMLIMIT still override.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
	}
	beam.Init()
	os.Exit(run(context.Background(), os.Stderr))
}

type usageError struct{ error }

func run(ctx context.Context, stderr io.Writer) int {
	if *input == "" || *output == "" {
		fmt.Fprintln(stderr, "trajcompress-beam: --input and --output are required (-h for help)")
		return 2
	}
	start := time.Now()
	cfg, err := effectiveConfig(stderr)
	size, serr := task.ParseSize(*taskSize)
	if err == nil && serr != nil {
		err = usageError{fmt.Errorf("--target-task-size: %w", serr)}
	}
	if err == nil {
		var plan trajbeam.Plan
		opts := trajbeam.Options{Config: cfg, Input: *input, NoRecursive: *noRecursive, Output: *output,
			Overwrite: *overwrite, GroupBy: *groupBy, ToolVersion: version, Start: start, TaskSize: size}
		runID := fmt.Sprintf("%s-%d", start.UTC().Format("20060102T150405"), os.Getpid())
		if plan, err = trajbeam.NewPlan(ctx, opts, runID); err != nil {
			err = usageError{err}
		} else {
			p, s := beam.NewPipelineWithRoot()
			trajbeam.Build(s, plan, opts)
			if err = beamx.Run(ctx, p); err == nil {
				return report(ctx, plan, stderr)
			}
		}
	}
	fmt.Fprintln(stderr, "trajcompress-beam:", err)
	if errors.As(err, &usageError{}) || errors.As(err, &jobcore.UsageError{}) {
		return 2
	}
	return 1
}

// effectiveConfig is the config file (or the defaults) with the settings
// given applied and the trainer's (jobcore.Effective, as compress takes
// it), validated; the trainer config's warnings go to stderr.
func effectiveConfig(stderr io.Writer) (config.Config, error) {
	cfg, notes, err := jobcore.Effective(*configPath, settings)
	for _, n := range notes {
		fmt.Fprintln(stderr, n)
	}
	return cfg, err
}

// report prints where the outputs are, from the metrics the run wrote,
// and the exit status they call for.
func report(ctx context.Context, plan trajbeam.Plan, stderr io.Writer) int {
	fs, err := filesystem.New(ctx, plan.Metrics)
	if err != nil {
		fmt.Fprintln(stderr, "trajcompress-beam:", err)
		return 1
	}
	defer fs.Close()
	b, err := filesystem.Read(ctx, fs, plan.Metrics)
	if err != nil {
		// A runner that returns before the job ends (--async) leaves
		// the metrics to come.
		fmt.Fprintf(stderr, "trajcompress-beam: submitted; the metrics will be at %s\n", plan.Metrics)
		return 0
	}
	var rep metrics.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		fmt.Fprintln(stderr, "trajcompress-beam:", plan.Metrics, err)
		return 1
	}
	o := rep.Outcomes
	fmt.Fprintf(stderr, "records: %d in, %d out (%d compressed, %d over limit, %d uncompressible, %d skipped), %d rejected\n",
		o.RecordsIn, o.RecordsOut, o.Compressed, o.CompressedOverLimit, o.Uncompressible, o.SkippedUnderTarget, o.RecordsRejected)
	fmt.Fprintf(stderr, "output: %s (%d files)\nmetrics: %s\n", plan.Output, len(rep.Run.Outputs)-1, plan.Metrics)
	switch {
	case o.RecordsIn > 0 && float64(o.RecordsRejected) > *maxReject*float64(o.RecordsIn):
		fmt.Fprintf(stderr, "rejects: %s — most records were rejected: the wrong --format or input?\n", plan.Rejects)
		return 4
	case o.RecordsRejected > 0:
		fmt.Fprintf(stderr, "rejects: %d lines in %s\n", o.RecordsRejected, plan.Rejects)
		return 3
	}
	return 0
}
