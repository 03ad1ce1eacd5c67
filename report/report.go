package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/trajcompress/trajcompress/check"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
)

// Input is what a report is made of.
type Input struct {
	// Name is the metrics file's name, shown in the title.
	Name string
	// Metrics is the run's metrics JSON (compress --metrics).
	Metrics []byte
	// Baseline, when set, is the metrics JSON of a baseline run: the report
	// then applies Rules to the two as `trajcompress check` does and
	// overlays the two distributions. BaselineName is shown for it.
	Baseline     []byte
	BaselineName string
	Rules        check.Rules
	// Worst, when set, holds the worst cases of the run (from compress,
	// or an --outcomes file with [ReadOutcomes]). It must have seen as many
	// records as the metrics count.
	Worst *Worst
}

//go:embed page.html
var pageHTML string

//go:embed style.css
var styleCSS string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// Render writes the HTML report of in to w: one self-contained page (no
// script, no external resource; a Content-Security-Policy meta tag forbids
// any), the same bytes for the same input. It returns an error, before
// writing anything, when a document is not trajcompress metrics JSON,
// when a histogram or the rules are malformed, or when Worst saw another
// number of records than the metrics count; write errors are returned as
// they are.
func Render(w io.Writer, in Input) error {
	p, err := build(in)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// parseMetrics reads a metrics document.
func parseMetrics(b []byte, what string) (*metrics.Report, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("report: %s is not a metrics JSON document: %v", what, err)
	}
	for _, k := range []string{"summary", "tokens", "outcomes"} {
		if _, ok := probe[k]; !ok {
			return nil, fmt.Errorf("report: %s has no %q section: not the metrics of trajcompress compress", what, k)
		}
	}
	var r metrics.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("report: %s: %w", what, err)
	}
	return &r, nil
}

// page is what the template shows; every number is formatted here.
type page struct {
	Title, Name             string
	Style                   template.CSS
	ToolVersion, Start, End string
	Headline                []stat
	Run                     []kv
	Notes                   []string
	Dist                    *distView
	Outcomes                *chart
	OutcomeRows             []barRow
	RecordsIn               string
	Sources                 *sourcesView
	Worst                   *worstTables
	Gate                    *gateView
}

// stat is one headline figure. Path is the metrics key it shows
// (data-metric), Value its text as in the metrics file.
type stat struct {
	Label, Value, Unit, Path, Title, Class string
}

type kv struct{ Key, Value string }

type distView struct {
	Chart     *chart
	Series    []series
	Rows      []histRow
	Quantiles []quantRow
	Counts    []string // per series, the histogram's count
}

type histRow struct {
	Range  string
	Counts []string
}

type quantRow struct {
	Name               string
	P50, P90, P99, Max string
}

// build turns the input into the page.
func build(in Input) (*page, error) {
	r, err := parseMetrics(in.Metrics, nameOr(in.Name, "the metrics"))
	if err != nil {
		return nil, err
	}
	p := &page{Name: in.Name, Style: template.CSS(styleCSS), ToolVersion: r.Run.ToolVersion, Start: r.Processing.StartTime, End: r.Processing.EndTime}
	p.Title = "trajcompress report"
	if in.Name != "" {
		p.Title += ": " + in.Name
	}
	target := int64(0)
	if b := r.Run.Budget; b != nil {
		target = int64(b.TargetMaxTokens)
	}
	o := r.Outcomes
	p.Headline = []stat{
		intStat("records in", "outcomes.records_in", o.RecordsIn, ""),
		intStat("records out", "outcomes.records_out", o.RecordsOut, "written to the output: all but the rejected"),
		intStat("rejected", "outcomes.records_rejected", o.RecordsRejected, "invalid lines, in the rejects file"),
		{Label: "over target before", Value: comma(o.RecordsOut - o.SkippedUnderTarget), Path: "", Class: "derived",
			Title: "records out − skipped_under_target: the records that did not fit as read"},
		intStat("over target after", "summary.trajectories_still_over_limit", r.Summary.TrajectoriesStillOverLimit,
			"compressed_over_limit + uncompressible + summary_failed"),
		intStat("failed to fit", "outcomes.failed_to_fit", o.FailedToFit, "compressed_over_limit + uncompressible"),
		intStat("tokens before", "tokens.total_before", r.Tokens.TotalBefore, ""),
		intStat("tokens after", "tokens.total_after", r.Tokens.TotalAfter, ""),
		intStat("tokens saved", "tokens.total_saved", r.Tokens.TotalSaved, ""),
		{Label: "ratio after/before", Value: r.Tokens.OverallCompressionRatio.String(), Path: "tokens.overall_compression_ratio"},
		{Label: "run time", Value: r.Processing.DurationSeconds.String(), Unit: "s", Path: "processing.duration_seconds"},
		{Label: "tokenizer", Value: r.Run.Tokenizer, Path: "run.tokenizer"},
	}
	if target > 0 {
		p.Headline = append(p.Headline, intStat("target", "run.budget.target_max_tokens", target, "compression.target_max_tokens"))
	}
	for i, st := range p.Headline {
		if len(st.Value) > 10 { // 1,000,000,000 and up: a smaller font keeps it on one line
			p.Headline[i].Class = strings.TrimSpace(st.Class + " long")
		}
	}
	p.Run = runInfo(r)
	if r.Run.DryRun {
		p.Notes = append(p.Notes, "A dry run: nothing was written, LLM summaries (if any) were estimated.")
	}

	before, after := r.Distributions.TokensBefore, r.Distributions.TokensAfter
	if before.Histogram == nil || after.Histogram == nil {
		p.Notes = append(p.Notes, "These metrics carry no histograms (written by a trajcompress older than the HTML report): the length distribution is shown by its quantiles only.")
	}
	ser := []series{{Name: "before", Class: "s-before", Fill: "#8c9db5"}, {Name: "after", Class: "s-after", Fill: "#d97b29"}}
	p.Dist = distribution("lengths", "Token lengths of the records written, before and after compression, with the target", ser,
		[]metrics.Quantiles{before, after}, []mark{{At: target, Label: "target " + comma(target), Class: "target"}})

	p.RecordsIn = comma(o.RecordsIn)
	p.OutcomeRows = outcomeRows(o)
	p.Outcomes = barChart("outcomes", "Records per outcome and uncompressible reason, as shares of the records read", p.OutcomeRows, o.RecordsIn)

	if r.Groups != nil {
		p.Sources = sources(r)
	} else {
		p.Notes = append(p.Notes, "These metrics carry no per-source breakdown (written by a trajcompress older than the HTML report).")
	}
	if in.Worst != nil {
		if err := sameRecords(in.Worst, o); err != nil {
			return nil, err
		}
		p.Worst = worstView(in.Worst, target)
	}
	if in.Baseline != nil {
		if p.Gate, err = gate(in, r, target); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// sameRecords checks that w saw the records the metrics count, outcome by
// outcome: outcomes of another run would show someone else's worst cases.
func sameRecords(w *Worst, o metrics.OutcomesSection) error {
	for i, oc := range outcome.All() {
		if want := o.Count(oc); w.counts[i] != want {
			return fmt.Errorf("report: the outcomes hold %d %s records, the metrics count %d: they are not from the same run", w.counts[i], oc, want)
		}
	}
	return nil
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func intStat(label, path string, v int64, title string) stat {
	return stat{Label: label, Value: comma(v), Path: path, Title: title}
}

func runInfo(r *metrics.Report) []kv {
	run := r.Run
	var out []kv
	add := func(k, v string) {
		if v != "" {
			out = append(out, kv{k, v})
		}
	}
	add("tool version", run.ToolVersion)
	tok := run.Tokenizer
	if run.TokenizerKind != "" {
		tok += " (" + run.TokenizerKind + ", sha256 " + run.TokenizerSHA256 + ")"
	}
	add("tokenizer", tok)
	if run.ChatTemplate != "" {
		add("chat template", run.ChatTemplate+" (sha256 "+run.ChatTemplateSHA256+")")
	} else {
		add("turn overhead", strconv.Itoa(run.TurnOverhead))
	}
	if im := r.Images; im != nil {
		v := comma(im.Images) + " counted by " + run.ImageTokens
		if im.ImagesUnknownSize > 0 {
			v += " (" + comma(im.ImagesUnknownSize) + " of unknown size, counted at the rule's most)"
		}
		add("images", v)
	}
	if b := run.Budget; b != nil {
		add("target_max_tokens", comma(int64(b.TargetMaxTokens)))
		add("summary_target_tokens", comma(int64(b.SummaryTargetTokens)))
		add("last_n_turns", strconv.Itoa(b.LastNTurns))
	}
	sm := r.Summarization.Method
	if r.Summarization.Model != "" {
		sm += " (" + r.Summarization.Model + ")"
	}
	add("summarizer", sm)
	if r.Summarization.TotalAPICalls > 0 {
		add("summary calls", fmt.Sprintf("%s (%s errors)", comma(r.Summarization.TotalAPICalls), comma(r.Summarization.TotalErrors)))
	}
	add("dry run", map[bool]string{true: "yes"}[run.DryRun])
	add("start", r.Processing.StartTime)
	add("end", r.Processing.EndTime)
	add("config fingerprint", run.ConfigFingerprint)
	add("input fingerprint", run.InputFingerprint)
	return out
}

// distribution is the length chart of hists (one series each) and its
// tables; nil histograms leave only the quantiles.
func distribution(id, label string, ser []series, qs []metrics.Quantiles, marks []mark) *distView {
	d := &distView{Series: ser}
	var hists []*metrics.Hist
	complete := true
	for i, q := range qs {
		d.Quantiles = append(d.Quantiles, quantRow{Name: ser[i].Name, P50: comma(q.P50), P90: comma(q.P90), P99: comma(q.P99), Max: comma(q.Max)})
		hists = append(hists, q.Histogram)
		complete = complete && q.Histogram != nil
		if q.Histogram != nil {
			d.Counts = append(d.Counts, comma(q.Histogram.Count()))
		}
	}
	if !complete {
		return d
	}
	var at []int64
	for _, m := range marks {
		at = append(at, m.At)
	}
	bins := displayBins(hists, at...)
	if bins == nil {
		return d
	}
	d.Chart = histChart(id, label, bins, ser, marks)
	for _, b := range bins {
		row := histRow{Range: span(b.Low, b.High)}
		var any int64
		for _, n := range b.Counts {
			row.Counts = append(row.Counts, comma(n))
			any |= n
		}
		if any != 0 {
			d.Rows = append(d.Rows, row)
		}
	}
	return d
}

var outcomeFill = map[outcome.Outcome]string{
	outcome.SkippedUnderTarget:  "#4e9a6b",
	outcome.Compressed:          "#2f8fa3",
	outcome.CompressedOverLimit: "#d99a29",
	outcome.Uncompressible:      "#c75d4a",
	outcome.SummaryFailed:       "#8e5ba8",
	outcome.Invalid:             "#7d8592",
}

func outcomeRows(o metrics.OutcomesSection) []barRow {
	reasons := map[outcome.Reason]int64{
		outcome.NoMiddle: o.UncompressibleReasons.NoMiddle, outcome.Collapsed: o.UncompressibleReasons.Collapsed,
		outcome.RegionTooSmall: o.UncompressibleReasons.RegionTooSmall, outcome.Alternation: o.UncompressibleReasons.Alternation,
		outcome.ChatTemplate: o.UncompressibleReasons.ChatTemplate,
	}
	var rows []barRow
	for _, oc := range outcome.All() {
		n := o.Count(oc)
		rows = append(rows, barRow{Label: string(oc), Key: string(oc), Class: "o-" + string(oc), Fill: outcomeFill[oc], Count: n, N: comma(n), Share: pct(n, o.RecordsIn)})
		if oc != outcome.Uncompressible {
			continue
		}
		for _, rs := range outcome.AllReasons() {
			if n := reasons[rs]; n > 0 {
				rows = append(rows, barRow{Label: string(rs), Key: string(oc) + "." + string(rs), Class: "o-" + string(oc), Fill: outcomeFill[oc],
					Indent: true, Count: n, N: comma(n), Share: pct(n, o.RecordsIn)})
			}
		}
	}
	return rows
}

type sourcesView struct {
	Heading, Column, OtherNote string
	Rows                       []sourceRow
	Other                      *sourceRow
	Total                      sourceRow
}

type sourceRow struct {
	Name, Records, Rejected, FitBefore, FitAfter, FailedToFit string
	TokensBefore, TokensAfter, Ratio                          string
}

func sourceRowOf(name string, g metrics.GroupRow) sourceRow {
	out := g.RecordsIn - g.Invalid
	fitAfter := g.SkippedUnderTarget + g.Compressed
	return sourceRow{
		Name: name, Records: comma(g.RecordsIn), Rejected: comma(g.Invalid),
		FitBefore:   comma(g.SkippedUnderTarget) + " (" + pct(g.SkippedUnderTarget, out) + ")",
		FitAfter:    comma(fitAfter) + " (" + pct(fitAfter, out) + ")",
		FailedToFit: comma(g.FailedToFit), TokensBefore: comma(g.TokensBefore), TokensAfter: comma(g.TokensAfter),
		Ratio: g.OverallCompressionRatio.String(),
	}
}

func sources(r *metrics.Report) *sourcesView {
	g := r.Groups
	v := &sourcesView{Heading: "Per input file", Column: "file"}
	if g.By == "field" {
		v.Heading, v.Column = "Per "+g.Field, g.Field
	}
	for _, row := range g.Values {
		v.Rows = append(v.Rows, sourceRowOf(row.Name, row))
	}
	if g.Other != nil {
		o := sourceRowOf("other", *g.Other)
		v.Other = &o
		v.OtherNote = fmt.Sprintf("The first %d names in sort order are listed; other counts the records of every later name.", g.Limit)
	}
	o := r.Outcomes
	v.Total = sourceRowOf("all records", metrics.GroupRow{
		RecordsIn: o.RecordsIn, OutcomeCounts: o.OutcomeCounts, FailedToFit: o.FailedToFit, TokensBefore: r.Tokens.TotalBefore, TokensAfter: r.Tokens.TotalAfter,
		OverallCompressionRatio: r.Tokens.OverallCompressionRatio,
	})
	return v
}

type worstTables struct {
	Over, Saved []worstRow
	K           int
	Target      bool
}

type worstRow struct {
	Record, Outcome, Reason, Before, After, Delta, Ratio string
}

func worstView(w *Worst, target int64) *worstTables {
	v := &worstTables{K: w.k, Target: target > 0}
	row := func(c Case) worstRow {
		return worstRow{Record: c.Source + ":" + strconv.FormatInt(c.Line, 10), Outcome: string(c.Outcome), Reason: c.Reason,
			Before: comma(c.TokensBefore), After: comma(c.TokensAfter),
			Ratio: metrics.Round(float64(c.TokensAfter)/float64(max(c.TokensBefore, 1)), 4).String()}
	}
	for _, c := range w.over {
		r := row(c)
		if target > 0 {
			r.Delta = comma(c.TokensAfter - target)
		}
		v.Over = append(v.Over, r)
	}
	for _, c := range w.saved {
		r := row(c)
		r.Delta = comma(c.saved())
		v.Saved = append(v.Saved, r)
	}
	return v
}

type gateView struct {
	BaselineName, Verdict, Class string
	SetupDiffers                 []string
	Refused                      bool
	Rows                         []check.Row
	Dist                         *distView
}

func gate(in Input, r *metrics.Report, target int64) (*gateView, error) {
	name := nameOr(in.BaselineName, "the baseline")
	base, err := parseMetrics(in.Baseline, name)
	if err != nil {
		return nil, err
	}
	if len(in.Rules.Rules) == 0 {
		return nil, errors.New("report: a baseline needs the rules of the gate (check.DefaultRules for the defaults)")
	}
	g := &gateView{BaselineName: name}
	res, err := check.Compare(in.Baseline, in.Metrics, in.Rules)
	switch {
	case errors.Is(err, check.ErrSetupDiffers):
		g.Refused, g.Class = true, "refused"
		g.Verdict = "not compared: the runs differ in setup (check refuses this comparison, exit 2, unless --allow-different-setup)"
	case err != nil:
		return nil, fmt.Errorf("report: %w", err)
	case res.Regressed:
		g.Verdict, g.Class = res.Verdict(), "fail"
	default:
		g.Verdict, g.Class = res.Verdict(), "pass"
	}
	g.SetupDiffers, g.Rows = res.SetupDiffers, res.Rows
	btarget := int64(0)
	if b := base.Run.Budget; b != nil {
		btarget = int64(b.TargetMaxTokens)
	}
	marks := []mark{{At: target, Label: "target " + comma(target), Class: "target"}}
	if btarget != target && btarget > 0 {
		marks = append(marks, mark{At: btarget, Label: "baseline target " + comma(btarget), Class: "target-base"})
	}
	ser := []series{{Name: "baseline after", Class: "s-base", Fill: "#7c6fb0"}, {Name: "this run after", Class: "s-after", Fill: "#d97b29"}}
	g.Dist = distribution("overlay", "Token lengths after compression: the baseline and this run", ser,
		[]metrics.Quantiles{base.Distributions.TokensAfter, r.Distributions.TokensAfter}, marks)
	return g, nil
}

// comma formats an integer with thousands separators: 1,265,454.
func comma(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// pct is n as a percentage of total, one decimal ("–" when total is 0).
func pct(n, total int64) string {
	if total <= 0 {
		return "–"
	}
	return strconv.FormatFloat(100*float64(n)/float64(total), 'f', 1, 64) + "%"
}

// span is the token range [low, high) as text: "4,096–4,607", or one value.
func span(low, high int64) string {
	if high-low <= 1 {
		return comma(low)
	}
	return comma(low) + "–" + comma(high-1)
}
