package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSetupDiffers is wrapped by the error [Compare] returns when the two
// documents were produced with a different tokenizer, config or input and
// Rules.AllowDifferentSetup is false.
var ErrSetupDiffers = errors.New("check: runs differ in setup")

// SetupKeys are the dotted paths that must agree for two runs to be
// comparable.
var SetupKeys = []string{"run.tokenizer", "run.tokenizer_kind", "run.tokenizer_sha256", "run.chat_template_sha256", "run.image_tokens", "run.config_fingerprint", "run.input_fingerprint", "run.dry_run"}

// ignoredPrefix is the section that varies between identical runs.
const ignoredPrefix = "processing"

// A Rule bounds how far one metric may move from the baseline.
//
// The change is run − baseline. MaxIncrease limits how far it may rise and
// MaxDecrease how far it may fall (both are non-negative magnitudes); a nil
// limit means that direction is unbounded. With Relative the limits are
// fractions of |baseline| (0.02 = 2 %). Exact demands equality and is the only
// rule that accepts non-numeric values. Min and Max bound the run's value
// itself, whatever the baseline's (a floor under a retention rate, say).
// An Optional rule's change limits are skipped when the baseline has no
// number at its path (an older baseline, or a rate that was null there);
// Min and Max still apply.
type Rule struct {
	Path        string   `yaml:"path"`
	MaxIncrease *float64 `yaml:"max_increase"`
	MaxDecrease *float64 `yaml:"max_decrease"`
	Relative    bool     `yaml:"relative"`
	Exact       bool     `yaml:"exact"`
	Min         *float64 `yaml:"min"`
	Max         *float64 `yaml:"max"`
	Optional    bool     `yaml:"optional"`
}

// Rules is a gate: the rules to apply and whether a setup mismatch is
// tolerated.
type Rules struct {
	Rules               []Rule `yaml:"rules"`
	AllowDifferentSetup bool   `yaml:"allow_different_setup"`
}

// Validate reports the first malformed rule: an empty or ignored path, a
// duplicate path, a negative limit, a rule with no limit at all, or Exact
// combined with a limit.
func (r Rules) Validate() error {
	seen := make(map[string]int, len(r.Rules))
	for i, ru := range r.Rules {
		n := i + 1
		switch {
		case ru.Path == "":
			return fmt.Errorf("check: rule %d: empty path", n)
		case ru.Path == ignoredPrefix || strings.HasPrefix(ru.Path, ignoredPrefix+"."):
			return fmt.Errorf("check: rule %d (%s): processing.* varies between identical runs and cannot be gated", n, ru.Path)
		case ru.Exact && (ru.MaxIncrease != nil || ru.MaxDecrease != nil || ru.Relative || ru.Min != nil || ru.Max != nil):
			return fmt.Errorf("check: rule %d (%s): exact cannot be combined with max_increase, max_decrease, relative, min or max", n, ru.Path)
		case !ru.Exact && ru.MaxIncrease == nil && ru.MaxDecrease == nil && ru.Min == nil && ru.Max == nil:
			return fmt.Errorf("check: rule %d (%s): needs max_increase, max_decrease, min, max or exact", n, ru.Path)
		case ru.Min != nil && ru.Max != nil && *ru.Min > *ru.Max:
			return fmt.Errorf("check: rule %d (%s): min %v is above max %v", n, ru.Path, *ru.Min, *ru.Max)
		case ru.MaxIncrease != nil && !(*ru.MaxIncrease >= 0) || ru.MaxDecrease != nil && !(*ru.MaxDecrease >= 0):
			return fmt.Errorf("check: rule %d (%s): limits must be non-negative numbers", n, ru.Path)
		}
		if prev, ok := seen[ru.Path]; ok {
			return fmt.Errorf("check: rule %d (%s): path already used by rule %d", n, ru.Path, prev)
		}
		seen[ru.Path] = n
	}
	return nil
}

func ptr(f float64) *float64 { return &f }

// RetentionRules bounds what summaries keep (the metrics' retention
// section): each rate may fall by at most maxDrop from the baseline's
// (skipped when the baseline has no rate: older metrics, or no region
// summarised), and, when minTools or minPaths is above 0, may not be
// under it.
func RetentionRules(maxDrop, minTools, minPaths float64) []Rule {
	var out []Rule
	for _, r := range []struct {
		path string
		min  float64
	}{{"retention.tool_names.rate", minTools}, {"retention.paths_commands.rate", minPaths}} {
		ru := Rule{Path: r.path, MaxDecrease: ptr(maxDrop), Optional: true}
		if r.min > 0 {
			ru.Min = ptr(r.min)
		}
		out = append(out, ru)
	}
	return out
}

// DefaultRules returns the gate described by the CLI flags
// --max-ratio-regression and --max-failed-to-fit-increase: the overall
// compression ratio (after/before, higher is worse) may rise by at most
// maxRatioRegression (absolute), outcomes.failed_to_fit may rise by at most
// maxFailedToFitIncrease records, outcomes.records_rejected,
// outcomes.invalid and summary.trajectories_failed may not rise, and
// outcomes.records_in must be equal.
func DefaultRules(maxRatioRegression float64, maxFailedToFitIncrease float64) Rules {
	return Rules{Rules: []Rule{
		{Path: "tokens.overall_compression_ratio", MaxIncrease: ptr(maxRatioRegression)},
		{Path: "outcomes.failed_to_fit", MaxIncrease: ptr(maxFailedToFitIncrease)},
		{Path: "outcomes.records_rejected", MaxIncrease: ptr(0)},
		{Path: "outcomes.invalid", MaxIncrease: ptr(0)},
		{Path: "summary.trajectories_failed", MaxIncrease: ptr(0)},
		{Path: "outcomes.records_in", Exact: true},
	}}
}

// Status is the verdict on one row.
type Status string

// Row verdicts. StatusMissing and StatusInvalid count as regressions.
const (
	StatusOK        Status = "ok"
	StatusImproved  Status = "improved"
	StatusRegressed Status = "REGRESSED"
	StatusMissing   Status = "MISSING"
	StatusInvalid   Status = "INVALID"
	StatusSkipped   Status = "skipped" // an optional rule the baseline has no number for
)

// Failed reports whether the status fails the gate.
func (s Status) Failed() bool {
	return s == StatusRegressed || s == StatusMissing || s == StatusInvalid
}

// A Row is the verdict on one rule. Baseline and Run hold the values as they
// appear in the documents (numbers verbatim, "<missing>" when absent);
// Change is the formatted difference and Limit the formatted bound.
type Row struct {
	Rule     Rule
	Baseline string
	Run      string
	Change   string
	Limit    string
	Status   Status
	// Delta is run − baseline (NaN when either side is not a number).
	Delta float64
}

// A Result is the outcome of [Compare]: one row per rule in rule order.
// Regressed is true when any row failed. SetupDiffers lists the setup keys
// whose values differ ("run.tokenizer: \"a\" != \"b\""); it is only
// non-empty when Rules.AllowDifferentSetup was set.
type Result struct {
	Rows         []Row
	Regressed    bool
	SetupDiffers []string
}

// Document is a decoded metrics JSON document ([ParseDocument]), for
// comparing with [CompareDocuments] without decoding it again.
type Document struct{ m map[string]any }

// ParseDocument decodes b as a metrics document. Its error is the one
// [Compare] gives when b is not one (empty, not JSON, not one JSON
// object), without saying which side it was: checkfile.Compare names the
// file instead.
func ParseDocument(b []byte) (Document, error) {
	m, err := decode(b)
	return Document{m}, err
}

// Compare checks run against baseline, both aggregate metrics JSON documents.
// It returns an error when a document is not a JSON object, when the rules
// are invalid, or when the setup differs (wrapping [ErrSetupDiffers]) and
// r.AllowDifferentSetup is false. Anything else, including missing values,
// is reported in the rows.
func Compare(baseline, run []byte, r Rules) (Result, error) {
	if err := r.Validate(); err != nil {
		return Result{}, err
	}
	bdoc, err := ParseDocument(baseline)
	if err != nil {
		return Result{}, fmt.Errorf("check: baseline: %w", err)
	}
	rdoc, err := ParseDocument(run)
	if err != nil {
		return Result{}, fmt.Errorf("check: run: %w", err)
	}
	return compareDocs(bdoc.m, rdoc.m, r)
}

// CompareDocuments is [Compare] on documents already decoded.
func CompareDocuments(baseline, run Document, r Rules) (Result, error) {
	if err := r.Validate(); err != nil {
		return Result{}, err
	}
	return compareDocs(baseline.m, run.m, r)
}

func compareDocs(bdoc, rdoc map[string]any, r Rules) (Result, error) {
	var res Result
	for _, k := range SetupKeys {
		bv, bok := lookup(bdoc, k)
		rv, rok := lookup(rdoc, k)
		if bok == rok && (!bok || sameJSON(bv, rv)) {
			continue
		}
		res.SetupDiffers = append(res.SetupDiffers, fmt.Sprintf("%s: %s != %s", k, show(bv, bok), show(rv, rok)))
	}
	if len(res.SetupDiffers) > 0 && !r.AllowDifferentSetup {
		return Result{SetupDiffers: res.SetupDiffers}, fmt.Errorf("%w (%s); pass --allow-different-setup (rules: allow_different_setup: true) to compare anyway",
			ErrSetupDiffers, strings.Join(res.SetupDiffers, "; "))
	}
	for _, ru := range r.Rules {
		row := evaluate(ru, bdoc, rdoc)
		if row.Status.Failed() {
			res.Regressed = true
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func decode(b []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("the file is empty, not a metrics JSON document")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: trailing data at offset %d", dec.InputOffset())
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// lookup resolves a dotted path; a key that itself contains dots is found
// too, the longest key matching first.
func lookup(doc map[string]any, path string) (any, bool) {
	if v, ok := doc[path]; ok {
		return v, true
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] != '.' {
			continue
		}
		sub, ok := doc[path[:i]].(map[string]any)
		if !ok {
			continue
		}
		if v, ok := lookup(sub, path[i+1:]); ok {
			return v, true
		}
	}
	return nil, false
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func show(v any, ok bool) string {
	if !ok {
		return "<missing>"
	}
	if n, isNum := v.(json.Number); isNum {
		return n.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	return f, err == nil && !math.IsInf(f, 0)
}

func evaluate(ru Rule, bdoc, rdoc map[string]any) Row {
	bv, bok := lookup(bdoc, ru.Path)
	rv, rok := lookup(rdoc, ru.Path)
	row := Row{Rule: ru, Baseline: show(bv, bok), Run: show(rv, rok), Limit: limitText(ru), Change: "", Delta: math.NaN()}
	bf, bnum := number(bv)
	rf, rnum := number(rv)
	if needsBase := ru.Exact || ru.MaxIncrease != nil || ru.MaxDecrease != nil; !bnum && (ru.Optional || !needsBase) {
		// Only the bounds on the run's own value apply.
		row.Status = ownBounds(ru, rf, rok, rnum)
		return row
	}
	if !bok || !rok {
		row.Status = StatusMissing
		return row
	}
	if ru.Exact && !(bnum && rnum) {
		row.Status = StatusOK
		row.Change = "="
		if !sameJSON(bv, rv) {
			row.Status, row.Change = StatusRegressed, "changed"
		}
		return row
	}
	if !bnum || !rnum {
		row.Status = StatusInvalid
		return row
	}
	d := rf - bf
	row.Delta = d
	row.Change = signed(d)
	if ru.Relative {
		row.Change += " (" + percent(d, bf) + ")"
	}
	row.Status = compare(ru, bf, rf)
	return row
}

// ownBounds is the status of a run's value (rf; rok: present, rnum: a
// number) under the rule's bounds on it alone, Min and Max.
func ownBounds(ru Rule, rf float64, rok, rnum bool) Status {
	switch {
	case ru.Min == nil && ru.Max == nil:
		return StatusSkipped
	case !rok:
		return StatusMissing
	case !rnum:
		return StatusInvalid
	case ru.Min != nil && rf < *ru.Min || ru.Max != nil && rf > *ru.Max:
		return StatusRegressed
	}
	return StatusOK
}

// compare is the status of the run's number rf against the baseline's bf
// under the rule, with a tolerance for rounding.
func compare(ru Rule, bf, rf float64) Status {
	d := rf - bf
	tol := 1e-9 * math.Max(1, math.Max(math.Abs(bf), math.Abs(rf)))
	if ru.Exact {
		if math.Abs(d) > tol {
			return StatusRegressed
		}
		return StatusOK
	}
	scale := 1.0
	if ru.Relative {
		scale = math.Abs(bf)
	}
	over := func(lim *float64, amount float64) bool {
		if lim == nil {
			return false
		}
		return amount > *lim*scale+tol
	}
	switch {
	case over(ru.MaxIncrease, d) || over(ru.MaxDecrease, -d),
		ru.Min != nil && rf < *ru.Min-tol, ru.Max != nil && rf > *ru.Max+tol:
		return StatusRegressed
	case ru.MaxIncrease != nil && ru.MaxDecrease == nil && d < -tol,
		ru.MaxDecrease != nil && ru.MaxIncrease == nil && d > tol:
		return StatusImproved
	}
	return StatusOK
}

// num formats a float readably: integers without a fraction, others with at
// most 6 decimals and no trailing zeros.
func num(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	s := strconv.FormatFloat(f, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func signed(f float64) string {
	s := num(f)
	if s == "-0" {
		s = "0"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

func percent(d, base float64) string {
	if base == 0 {
		if d == 0 {
			return "+0%"
		}
		return "n/a"
	}
	return signed(math.Round(d/math.Abs(base)*10000)/100) + "%"
}

func limitText(ru Rule) string {
	if ru.Exact {
		return "= baseline"
	}
	unit := func(f float64) string {
		if ru.Relative {
			return num(f*100) + "%"
		}
		return num(f)
	}
	var parts []string
	if ru.MaxIncrease != nil {
		parts = append(parts, "≤ +"+unit(*ru.MaxIncrease))
	}
	if ru.MaxDecrease != nil {
		parts = append(parts, "≥ -"+unit(*ru.MaxDecrease))
	}
	if ru.Min != nil {
		parts = append(parts, "≥ "+num(*ru.Min))
	}
	if ru.Max != nil {
		parts = append(parts, "≤ "+num(*ru.Max))
	}
	return strings.Join(parts, ", ")
}
