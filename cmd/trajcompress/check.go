package main

import (
	"errors"
	"flag"
	"io"

	"github.com/trajcompress/trajcompress/check"
	"github.com/trajcompress/trajcompress/check/checkfile"
)

const checkUsage = `Usage: trajcompress check --baseline BASE.json [flags] RUN.json

Compares the metrics JSON of a run (written by "trajcompress compress")
against a committed baseline and exits non-zero when a figure regressed
beyond its tolerance, printing a table of every rule: metric, baseline,
run, change, limit, status. Timestamps and durations are never compared.

It refuses to compare runs made with a different tokenizer, config or
input (the "run" section's fingerprints) unless --allow-different-setup:
such a difference is a changed setup, not a regression.

Default rules: tokens.overall_compression_ratio may rise (get worse) by at
most --max-ratio-regression; outcomes.failed_to_fit may rise by at most
--max-failed-to-fit-increase; rejected/invalid records and failed summaries
may not rise; records_in must be equal; the retention rates (the share of
the summarised regions' tool names, and of the paths and commands of their
calls, that the summaries name) may fall by at most --max-retention-drop
when the baseline has them, and may not be under --min-tool-retention and
--min-path-retention when those are given. --rules FILE replaces them
with a YAML list:

  rules:
    - {path: tokens.overall_compression_ratio, max_increase: 0.005}
    - {path: outcomes.compressed, max_decrease: 0.02, relative: true}
    - {path: outcomes.records_in, exact: true}
    - {path: retention.paths_commands.rate, min: 0.9}

It also refuses a RUN.json whose outputs are not the files it vouches for
(run.outputs: each file's size and xxh3-128, paths relative to RUN.json),
unless --no-verify-outputs.

Exit status: 0 within bounds, 1 regressed, 2 usage, an unreadable or
malformed metrics file, a different setup, or outputs that do not match.

Flags:
`

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", stderr, checkUsage, "")
	baseline := fs.String("baseline", "", "baseline metrics JSON (required)")
	gate := defineGateFlags(fs)
	noVerify := fs.Bool("no-verify-outputs", false, "do not check that the outputs RUN.json vouches for (run.outputs: sizes and hashes) are there and unchanged")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *baseline == "" || fs.NArg() != 1 {
		return usagef("check: want --baseline BASE.json and one RUN.json (see trajcompress check -h)")
	}
	rules, err := gate.rules()
	if err != nil {
		return err
	}
	res, err := checkfile.Compare(*baseline, fs.Arg(0), rules, !*noVerify)
	if err != nil {
		// Not a regression: a missing or malformed file, another setup,
		// or outputs that are not the ones the run's metrics vouch for.
		return usageError{err}
	}
	res.WriteTable(stdout)
	if res.Regressed {
		return errRegressed
	}
	return nil
}

// gateFlags are the flags that choose the gate's rules, shared by check
// and report.
type gateFlags struct {
	maxRatio, maxFail              *float64
	maxRetDrop, minTools, minPaths *float64
	rulesPath                      *string
	allow                          *bool
}

func defineGateFlags(fs *flag.FlagSet) *gateFlags {
	return &gateFlags{
		maxRatio:   fs.Float64("max-ratio-regression", 0.01, "largest allowed rise of tokens.overall_compression_ratio (absolute)"),
		maxFail:    fs.Float64("max-failed-to-fit-increase", 0, "largest allowed rise of outcomes.failed_to_fit"),
		maxRetDrop: fs.Float64("max-retention-drop", 0.01, "largest allowed fall of retention.tool_names.rate and retention.paths_commands.rate (absolute; when the baseline has them)"),
		minTools:   fs.Float64("min-tool-retention", 0, "fail when retention.tool_names.rate is under this (0: no floor)"),
		minPaths:   fs.Float64("min-path-retention", 0, "fail when retention.paths_commands.rate is under this (0: no floor)"),
		rulesPath:  fs.String("rules", "", "YAML rules file replacing the default rules"),
		allow:      fs.Bool("allow-different-setup", false, "compare even when tokenizer, config or input fingerprints differ"),
	}
}

// rules returns the rules the flags choose.
func (g *gateFlags) rules() (check.Rules, error) {
	rules := check.DefaultRules(*g.maxRatio, *g.maxFail)
	rules.Rules = append(rules.Rules, check.RetentionRules(*g.maxRetDrop, *g.minTools, *g.minPaths)...)
	if *g.rulesPath != "" {
		var err error
		if rules, err = checkfile.LoadRules(*g.rulesPath); err != nil {
			return rules, usageError{err}
		}
	}
	rules.AllowDifferentSetup = rules.AllowDifferentSetup || *g.allow
	return rules, nil
}

// errRegressed: check found a regression (exit 1, the table says which).
var errRegressed = errors.New("check: regressed beyond tolerance (see the table)")
