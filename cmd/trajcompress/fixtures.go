package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/job"
)

func fixturesUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: trajcompress fixtures --output PATH [flags]

Generates synthetic agent trajectories, deterministically: the same seed
and flags give byte-identical files on any machine. Use them as benchmark
fixtures, or commit a small set with its expected metrics and gate CI with
"trajcompress check".

Profiles:
`)
	for _, p := range gen.Profiles() {
		fmt.Fprintf(&b, "  %-20s %s\n", p.Name, p.Description)
	}
	b.WriteString("\nFlags:\n")
	return b.String()
}

func cmdFixtures(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fixtures", stderr, fixturesUsage(), "")
	var o gen.Options
	var output, fmtName string
	fs.StringVar(&output, "output", "", "file to write (required); written atomically")
	fs.IntVar(&o.Count, "count", 100, "number of records (lines); JSON arrays, Parquet and Arrow leave out the malformed ones, which cannot be records there")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed: the same seed and flags give the same bytes")
	fs.StringVar(&o.Dialect, "dialect", "sharegpt", "sharegpt (Hermes conversations/from/value) or openai (messages with tool_calls)")
	fs.StringVar(&o.Profile, "profile", "mix", "profile (see above)")
	fs.IntVar(&o.MedianTokens, "median-tokens", 0, "median record length in tokens (log-normal; default 8000)")
	fs.IntVar(&o.P99Tokens, "p99-tokens", 0, "99th percentile record length in tokens (default 10 × median)")
	fs.StringVar(&fmtName, "format", "jsonl", "jsonl, json (one JSON array), parquet or arrow")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("fixtures: unexpected argument %q", fs.Arg(0))
	}
	if output == "" {
		return usagef("fixtures: --output is required")
	}
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
		return fmt.Errorf("--output %s: %w", output, err)
	}
	n, skipped, err := job.Fixtures(o, fmtName, output)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d records to %s", n, output)
	if skipped > 0 {
		fmt.Fprintf(stderr, " (%d malformed lines left out: %s records must be objects)", skipped, fmtName)
	}
	fmt.Fprintln(stderr)
	return nil
}
