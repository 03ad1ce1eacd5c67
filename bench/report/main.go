// Command reportbench builds the metrics of a synthetic run of N records
// through the metrics API (no trajectories: one observation per record,
// log-normal token lengths around 4,000 with a long tail to 400,000,
// the usual outcome mix, 80 values of a --group-by field so that the
// breakdown overflows into other) and renders its HTML report with package
// report, as compress --report does. It writes DIR/metrics.json and
// DIR/report.html and prints their sizes and the time each step took
// (the aim: a report for ten million records opens as fast as one for
// two hundred; the browser timing is report/testdata/browser's).
//
//	go run ./bench/report [-records 1000000] [-out bin/bench-report]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/snap"
)

func main() {
	n := flag.Int("records", 1_000_000, "records in the synthetic run")
	out := flag.String("out", "bin/bench-report", "directory for metrics.json and report.html")
	target := flag.Int("target", 15250, "target_max_tokens of the synthetic run")
	flag.Parse()
	if err := run(*n, *target, *out); err != nil {
		fmt.Fprintln(os.Stderr, "reportbench:", err)
		os.Exit(1)
	}
}

func run(n, target int, dir string) error {
	t0 := time.Now()
	var s metrics.Summary
	r := rand.New(rand.NewPCG(15, uint64(n)))
	worst := report.NewWorst(report.DefaultWorst)
	for i := range n {
		o := observe(r, i, target)
		s.Observe(o)
		worst.Observe(o)
	}
	built := time.Since(t0)
	b := snap.DefaultBudget()
	b.Target = target
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	rep := s.Report(metrics.RunInfo{Tokenizer: "o200k_base", Budget: &b, Start: start, End: start.Add(time.Duration(n) * 10 * time.Microsecond),
		Summarizer: "deterministic", ToolVersion: "bench", GroupBy: "model", InputFingerprint: "xxh3-128:synthetic"})
	var doc bytes.Buffer
	if err := rep.WriteJSON(&doc); err != nil {
		return err
	}
	t1 := time.Now()
	var page bytes.Buffer
	if err := report.Render(&page, report.Input{Name: "metrics.json", Metrics: doc.Bytes(), Worst: worst}); err != nil {
		return err
	}
	rendered := time.Since(t1)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.json"), doc.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("records %d: metrics.json %d bytes (observed in %v), report.html %d bytes (rendered in %v)\n",
		n, doc.Len(), built.Round(time.Millisecond), page.Len(), rendered.Round(time.Microsecond))
	return nil
}

// observe is one synthetic record.
func observe(r *rand.Rand, i, target int) metrics.Observation {
	before := int(math.Min(math.Exp(8.3+r.NormFloat64()*1.1), 400_000))
	o := metrics.Observation{Source: "synthetic.jsonl", Line: int64(i + 1), Group: fmt.Sprintf("model-%02d", r.IntN(80)),
		TokensBefore: before, TokensAfter: before, TurnsBefore: 20 + r.IntN(200)}
	o.TurnsAfter = o.TurnsBefore
	switch {
	case r.IntN(100) == 0:
		o.Outcome, o.RejectReason = outcome.Invalid, "invalid_json"
	case before <= target:
		o.Outcome = outcome.SkippedUnderTarget
	case r.IntN(10) == 0:
		o.Outcome, o.Reason = outcome.Uncompressible, string(outcome.AllReasons()[r.IntN(3)])
	default:
		o.Outcome, o.TokensAfter = outcome.Compressed, target-r.IntN(target/4)
		if r.IntN(5) == 0 {
			o.Outcome, o.TokensAfter = outcome.CompressedOverLimit, target+r.IntN(before-target+1)
		}
		o.TurnsAfter = max(o.TurnsBefore/3, 5)
		o.Region = &[2]int{4, 4 + o.TurnsBefore - o.TurnsAfter + 1}
	}
	return o
}
