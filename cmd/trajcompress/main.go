// Command trajcompress makes LLM agent trajectories fit a token budget by
// replacing just enough of the middle of each one with a summary, never
// separating a tool call from its result and never losing a row.
//
// Run "trajcompress help" for the commands and "trajcompress CMD -h" for
// each command's flags. This package is the CLI only: flags (the config
// flags in one table, flags.go) → config → package job → exit code, plus
// help texts and the progress bar. main wires signals (SIGINT, SIGTERM,
// SIGHUP) and exit codes; everything else is in run, which tests call
// directly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/trajcompress/trajcompress/job"
)

// Exit codes, documented in the help text.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitPartial     = 3
	exitRejected    = 4
	exitInterrupted = 130
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `trajcompress — make agent trajectories fit a token budget, losing no row.

Usage:
  trajcompress compress --input PATH [flags]   compress a JSONL, JSON, Parquet or Arrow file, or a directory of them
  trajcompress fixtures --output PATH [flags]  generate synthetic trajectories from a seed
  trajcompress check --baseline B.json R.json  fail when a run's metrics regressed against a baseline
  trajcompress report R.json --output R.html   a self-contained HTML page about a run (charts, tables, the gate)
  trajcompress merge --output OUTPUT           put a sharded run's outputs together once every shard is done
  trajcompress validate --dialect D FILE...    report records a trainer would reject for their role order
  trajcompress version                         print the version
  trajcompress help                            this text

Run "trajcompress CMD -h" for the flags of each command.

Exit status:
  0    every record was read and written
  1    the run failed (I/O error, fatal summarizer error); no output was put in place
  2    bad usage or configuration, an unreadable input, or another run
       holds the same outputs
  3    partial: the run finished, but some records were rejected (see the
       rejects file) or their summary failed (written unchanged)
  4    mostly rejected: more than --max-reject-rate of the records were
       rejected (a wrong --format or input, most likely); the outputs and
       the rejects file are in place to look at
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP); nothing of the run is put
       in place, its finished tasks are kept for the next run on the same
       outputs to go on from (a second signal kills at once)
`

func main() {
	// Records are short-lived and the live heap is small (a run's RSS is
	// ~50 MB at the default 100%): a GC target of 400% trades ~50 MB of
	// memory for ~9% of wall time (bench/README.md, "End to end"). GOGC
	// still overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// But 400% of a large live heap is a lot: a Parquet run holding
	// ~115 MB live reached 750 MB of RSS, and records of tens of MB do the
	// same. A soft limit makes the GC collect before the heap passes
	// 256 MiB, whatever the percentage; a live heap above it (one huge
	// record) still grows. GOMEMLIMIT still overrides.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// After the first signal the run winds down cleanly; a second one
	// kills the process (the default disposition, restored by stop).
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// newFlagSet is a subcommand's flag set: -h prints head, the flags, then
// tail.
func newFlagSet(name string, stderr io.Writer, head, tail string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, head)
		fs.PrintDefaults()
		fmt.Fprint(stderr, tail)
	}
	return fs
}

// parse parses args; -h is errHelp (exit 0), a bad flag a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err}
	}
	return nil
}

// usageError is a mistake in the command line or configuration: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// errRejected reports a finished run in which more than --max-reject-rate
// of the records were rejected.
var errRejected = errors.New("too many records were rejected")

// errPartial reports a finished run in which some records were rejected or
// not summarised.
var errPartial = errors.New("some records were rejected or could not be summarised")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "compress":
		err = cmdCompress(ctx, args[1:], stdin, stdout, stderr)
	case "fixtures":
		err = cmdFixtures(args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(args[1:], stdout, stderr)
	case "report":
		err = cmdReport(args[1:], stdout, stderr)
	case "merge":
		err = cmdMerge(args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "trajcompress", version)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "trajcompress: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var je job.UsageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errRejected):
		fmt.Fprintln(stderr, "trajcompress:", err)
		return exitRejected
	case errors.Is(err, errPartial):
		return exitPartial
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "trajcompress: interrupted; no partial output was put in place")
		var kept job.KeptError
		if errors.As(err, &kept) {
			fmt.Fprintln(stderr, "trajcompress:", kept.Note())
		}
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &je):
		fmt.Fprintln(stderr, "trajcompress:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "trajcompress:", err)
		return exitError
	}
}
