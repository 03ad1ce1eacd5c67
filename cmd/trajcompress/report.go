package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/report"
)

const reportUsage = `Usage: trajcompress report RUN_METRICS.json [--baseline BASE.json] [--outcomes OUTCOMES.jsonl] --output report.html

Writes one self-contained HTML page about a compress run, from its metrics
alone (never its outputs): records in, out and rejected, tokens before and
after, the token-length distribution before and after on one log-scaled
chart with the target, outcomes and uncompressible reasons, and the
per-source table (per input file, or per value of the field given to
compress --group-by). With --outcomes (the run's compress --outcomes
file), the worst cases: the records furthest over target and the biggest
savings. With --baseline, the checks "trajcompress check" applies, each
with its bound and verdict (the same rule flags), and the distributions
after compression of both runs overlaid.

The page loads nothing (no script, no font, no network), follows the
system's dark mode, fits a phone's width and prints; each chart has a table
of the same figures under it. "compress --report PATH" writes the same page
at the end of a run.

Flags:
`

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr, reportUsage, "\nExit status: 0 written (whatever the gate decided), 1 the page could not be written, 2 usage or an unreadable metrics, baseline, outcomes or rules file.\n")
	output := fs.String("output", "", "where to write the HTML page (required; - for standard output)")
	baseline := fs.String("baseline", "", "metrics JSON of a baseline run: show the savings gate against it")
	outcomes := fs.String("outcomes", "", "the run's --outcomes file: show the worst cases")
	gate := defineGateFlags(fs)
	// The metrics file may come before, between or after the flags.
	var files []string
	for {
		if err := parse(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files, args = append(files, fs.Arg(0)), fs.Args()[1:]
	}
	if len(files) != 1 {
		return usagef("report: want one RUN_METRICS.json (see trajcompress report -h)")
	}
	metricsPath := files[0]
	if *output == "" {
		return usagef("report: --output is required (see trajcompress report -h)")
	}
	in := report.Input{Name: filepath.Base(metricsPath)}
	var err error
	if in.Metrics, err = readfile.Read(metricsPath, "metrics file", readfile.MetricsLimit); err != nil {
		return usageError{fmt.Errorf("report: %w", err)}
	}
	if *baseline != "" {
		if in.Baseline, err = readfile.Read(*baseline, "metrics file", readfile.MetricsLimit); err != nil {
			return usageError{fmt.Errorf("report: --baseline: %w", err)}
		}
		in.BaselineName = filepath.Base(*baseline)
		if in.Rules, err = gate.rules(); err != nil {
			return err
		}
	}
	if *outcomes != "" {
		if in.Worst, err = readOutcomes(*outcomes); err != nil {
			return usageError{err}
		}
	}
	for _, p := range []string{metricsPath, *baseline, *outcomes} {
		if p != "" && *output != "-" && sameFile(p, *output) {
			return usagef("report: --output %s would overwrite the input %s", *output, p)
		}
	}
	var page bytes.Buffer
	if err := report.Render(&page, in); err != nil {
		return usageError{err}
	}
	if *output == "-" {
		_, err := stdout.Write(page.Bytes())
		return err
	}
	f, err := atomicfile.Create(*output)
	if err == nil {
		_, werr := f.Write(page.Bytes())
		err = f.Finish(werr)
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// readOutcomes reads the worst cases of an --outcomes file.
func readOutcomes(path string) (*report.Worst, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: --outcomes: %w", err)
	}
	defer f.Close()
	w := report.NewWorst(report.DefaultWorst)
	return w, report.ReadOutcomes(f, path, w)
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
