// Command trajcompress makes LLM agent trajectories fit a token budget by
// replacing just enough of the middle of each one with a summary, never
// separating a tool call from its result and never losing a row.
//
// Run "trajcompress help" for the commands and "trajcompress CMD -h" for
// each command's flags. This package is the CLI only: flags (the config
// flags are config's option groups) → config → package job → exit code, plus
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
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/trajcompress/trajcompress/internal/crash"
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
  1    the run failed (I/O error, fatal summarizer error, or an internal
       error: a bug, whose stack trace is written to a file named on
       stderr); no output was put in place
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

// parse parses args; -h prints the help and is errHelp (exit 0). A bad
// flag or value is a usage error: the flag package's one line saying what
// is wrong, then where the help is, not the help itself (a hundred lines
// around the one that matters).
func parse(fs *flag.FlagSet, args []string) error {
	help := fs.Usage
	fs.Usage = func() {} // flag calls it for -h and for every error
	err := fs.Parse(args)
	fs.Usage = help
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return errHelp
		}
		fmt.Fprintf(fs.Output(), "run 'trajcompress %s -h' for help\n", fs.Name())
		return usageError{errFlagReported}
	}
	return nil
}

// errFlagReported is a bad command line the flag package has already
// described on stderr: exitCode prints nothing more for it.
var errFlagReported = errors.New("bad command line (described above)")

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
	return exitCode(dispatch(ctx, args, stdin, stdout, stderr), stderr)
}

// dispatch runs the command args name. A panic in it (a bug of ours) is
// returned as a crash error (exit 1), and so is one in the record path's
// goroutines, which return theirs.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	defer crash.Recover(&err)
	if testHookDispatch != nil {
		testHookDispatch(args)
	}
	switch args[0] {
	case "compress":
		return cmdCompress(ctx, args[1:], stdin, stdout, stderr)
	case "fixtures":
		return cmdFixtures(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "trajcompress", version)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "trajcompress: unknown command %q\n\n%s", args[0], usage)
		return usageError{errFlagReported}
	}
	return err
}

// testHookDispatch, when set (by this package's tests only), is called
// with the arguments before the command runs.
var testHookDispatch func(args []string)

func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var je job.UsageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case crash.As(err) != nil:
		// Before the other cases: a panic is never a usage mistake or an
		// interruption, whatever it wraps.
		reportCrash(crash.As(err), stderr)
		return exitError
	case errors.Is(err, errFlagReported):
		return exitUsage
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

// reportCrash prints the one line of a panic and writes its stack to a
// file: in the run directory when the run had one, else in the temporary
// directory.
func reportCrash(ce *crash.Error, stderr io.Writer) {
	fmt.Fprintln(stderr, "trajcompress:", ce)
	name := fmt.Sprintf("trajcompress-crash-%s-%d.txt", time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
	body := fmt.Appendf(nil, "trajcompress %s\npanic: %v\n\n%s", version, ce.Value, ce.Stack)
	var err error
	// The run directory, unless the aborted run removed it (no task had
	// finished): then the temporary directory.
	for _, dir := range []string{ce.Dir, os.TempDir()} {
		if dir == "" {
			continue
		}
		path := filepath.Join(dir, name)
		if err = os.WriteFile(path, body, 0o644); err == nil {
			fmt.Fprintln(stderr, "trajcompress: stack trace written to", path)
			return
		}
	}
	fmt.Fprintf(stderr, "trajcompress: the stack trace could not be written (%v):\n%s", err, ce.Stack)
}
