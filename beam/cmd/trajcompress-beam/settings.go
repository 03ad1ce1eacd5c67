package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/trajcompress/trajcompress/config"
)

// groups are the option groups of compress a Beam run honours: the
// settings of one record's compression, counted as compress counts it.
var groups = []config.Group{config.TokenizerGroup, config.TemplateGroup, config.TrainerGroup, config.RepairGroup,
	config.ImageGroup, config.RecordGroup, config.BudgetGroup, config.PrepassGroup, config.PlacementGroup}

// notApplying are the flags of `trajcompress compress` a Beam run does
// not take, each with the reason; every other compress flag has a flag
// of the same name here (TestCompressParity).
var notApplying = map[string]string{
	// Config option groups left out.
	"output-format":           "the pipeline writes JSONL part files",
	"summarizer":              "the pipeline runs the deterministic summarizer only (each worker would hold its own rate limits, cache and API key)",
	"on-summary-failure":      "the deterministic summarizer does not fail",
	"model":                   "LLM summarizer only",
	"base-url":                "LLM summarizer only",
	"cache-dir":               "LLM summarizer only",
	"max-concurrent-requests": "LLM summarizer only",
	"rpm":                     "LLM summarizer only",
	"tpm":                     "LLM summarizer only",
	"batch-export":            "LLM summarizer only",
	"batch-import":            "LLM summarizer only",
	"price-in":                "LLM summarizer only (the cost of its requests)",
	"price-out":               "LLM summarizer only (the cost of its requests)",
	"workers":                 "the runner sets the parallelism (Dataflow --num_workers, Flink --parallelism)",
	// compress's own flags.
	"metrics":          "written into --output (config metrics.output_file)",
	"rejects":          "written into --output as rejects.jsonl",
	"outcomes":         "per-record outcome lines are not written by the pipeline",
	"report":           "make it from the metrics: trajcompress report",
	"sample-percent":   "every record is processed",
	"seed":             "every record is processed (the seed of --sample-percent)",
	"dry-run":          "a Beam run writes its outputs",
	"follow-links":     "links out of a directory input are left out",
	"quiet":            "no progress bar: the runner reports progress",
	"wait":             "the runner schedules the job; --overwrite replaces an earlier run's outputs",
	"max-record-bytes": "textio reads JSON Lines records",
	"resume":           "the runner retries failed work itself",
	"shard":            "the runner shares the work out",
	"num-shards":       "the runner shares the work out",
	"cpuprofile":       "Beam's --cpu_profiling profiles the workers",
}

// printNotApplying ends the help with the compress flags a Beam run does
// not take, and why.
func printNotApplying(w io.Writer) {
	fmt.Fprintln(w, "\nFlags of trajcompress compress that a Beam run does not take:")
	names := make([]string, 0, len(notApplying))
	for n := range notApplying {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  --%s: %s\n", n, notApplying[n])
	}
}
