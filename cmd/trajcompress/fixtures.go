package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/format/jsonl"
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
	fs := flag.NewFlagSet("fixtures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, fixturesUsage())
		fs.PrintDefaults()
	}
	var o gen.Options
	var output, format string
	fs.StringVar(&output, "output", "", "file to write (required); written atomically")
	fs.IntVar(&o.Count, "count", 100, "number of records (lines); Parquet and Arrow leave out the malformed ones, which cannot be rows")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed: the same seed and flags give the same bytes")
	fs.StringVar(&o.Dialect, "dialect", "sharegpt", "sharegpt (Hermes conversations/from/value) or openai (messages with tool_calls)")
	fs.StringVar(&o.Profile, "profile", "mix", "profile (see above)")
	fs.IntVar(&o.MedianTokens, "median-tokens", 0, "median record length in tokens (log-normal; default 8000)")
	fs.IntVar(&o.P99Tokens, "p99-tokens", 0, "99th percentile record length in tokens (default 10 × median)")
	fs.StringVar(&format, "format", "jsonl", "jsonl, parquet or arrow")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err}
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
	switch format {
	case "jsonl":
		w, err := jsonl.Create(output)
		if err != nil {
			return err
		}
		n := 0
		if err := gen.Generate(o, func(line []byte) error { n++; return w.Write(line) }); err != nil {
			w.Abort()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d records to %s\n", n, output)
		return nil
	case "parquet", "arrow":
		return writeTabularFixtures(o, format, output, stderr)
	}
	return usagef("fixtures: --format must be jsonl, parquet or arrow, got %q", format)
}

// writeTabularFixtures writes the generated records as Parquet or Arrow,
// with a schema inferred from the first records. Lines that are not
// trajectory objects cannot be rows; they are left out, and counted.
func writeTabularFixtures(o gen.Options, format, output string, stderr io.Writer) error {
	w, err := newTabularSink(output, format, inputSchema{}, "")
	if err != nil {
		return err
	}
	n, skipped := 0, 0
	err = gen.Generate(o, func(line []byte) error {
		if !decodable(line) {
			skipped++
			return nil
		}
		n++
		return w.Write(line)
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		w.Abort()
		return err
	}
	fmt.Fprintf(stderr, "wrote %d records to %s", n, output)
	if skipped > 0 {
		fmt.Fprintf(stderr, " (%d malformed lines left out: %s rows must be objects)", skipped, format)
	}
	fmt.Fprintln(stderr)
	return nil
}
