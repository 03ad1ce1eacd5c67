package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/check"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.html")

// exampleMetrics is the committed metrics of the example run
// (fixtures/example/baseline_metrics.json).
func exampleMetrics(t testing.TB) []byte {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "fixtures", "example", "baseline_metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func render(t testing.TB, in Input) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// summaryReport is the metrics JSON of s, as compress writes it.
func summaryReport(t testing.TB, s *metrics.Summary, groupBy string) []byte {
	t.Helper()
	b := snap.DefaultBudget()
	b.Target = 6000
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	rep := s.Report(metrics.RunInfo{Tokenizer: "o200k_base", Budget: &b, Start: start, End: start.Add(1500 * time.Millisecond),
		ToolVersion: "test", Summarizer: "deterministic", GroupBy: groupBy, InputFingerprint: "xxh3-128:00"})
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lookup returns the JSON text of a dotted path of doc.
func lookup(t *testing.T, doc []byte, path string) string {
	t.Helper()
	var m map[string]json.RawMessage
	cur := doc
	for _, k := range strings.Split(path, ".") {
		if err := json.Unmarshal(cur, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		v, ok := m[k]
		if !ok {
			t.Fatalf("metrics have no %s", path)
		}
		cur = v
	}
	return strings.Trim(string(cur), `"`)
}

var metricSpan = regexp.MustCompile(`data-metric="([^"]+)">([^<]*)<`)

// TestHeadlineIsTheMetrics: every figure marked with its metrics key shows
// that key's value as the file has it (thousands separators aside).
func TestHeadlineIsTheMetrics(t *testing.T) {
	m := exampleMetrics(t)
	html := render(t, Input{Name: "m.json", Metrics: m})
	found := map[string]bool{}
	for _, sm := range metricSpan.FindAllStringSubmatch(html, -1) {
		path, shown := sm[1], strings.ReplaceAll(sm[2], ",", "")
		if want := lookup(t, m, path); shown != want {
			t.Errorf("%s shows %q, the metrics have %q", path, shown, want)
		}
		found[path] = true
	}
	for _, p := range []string{"outcomes.records_in", "outcomes.records_out", "outcomes.records_rejected", "tokens.total_before",
		"tokens.total_after", "tokens.total_saved", "tokens.overall_compression_ratio", "processing.duration_seconds",
		"run.tokenizer", "run.budget.target_max_tokens", "summary.trajectories_still_over_limit", "outcomes.failed_to_fit"} {
		if !found[p] {
			t.Errorf("the headline does not show %s", p)
		}
	}
}

// TestPageLoadsNothing: no script, no URL, no external resource of any
// kind, and a policy that forbids them.
func TestPageLoadsNothing(t *testing.T) {
	m := exampleMetrics(t)
	html := render(t, Input{Name: "m.json", Metrics: m, Baseline: m, Rules: check.DefaultRules(0.01, 0), Worst: exampleWorst(t, m)})
	for _, bad := range []string{"<script", "http:", "https:", "//", "@import", "url(", "src=", "href=", "<link", "@font-face", "<iframe", "<img"} {
		if i := strings.Index(strings.ToLower(html), bad); i >= 0 {
			t.Errorf("the page holds %q: …%s…", bad, html[max(i-60, 0):min(i+60, len(html))])
		}
	}
	if !strings.Contains(html, `http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"`) {
		t.Error("no Content-Security-Policy forbidding requests")
	}
}

// exampleWorst is a Worst that saw as many records as m counts.
func exampleWorst(t testing.TB, m []byte) *Worst {
	var r metrics.Report
	if err := json.Unmarshal(m, &r); err != nil {
		t.Fatal(err)
	}
	o := r.Outcomes
	w := NewWorst(3)
	line := int64(0)
	for _, oc := range outcome.All() {
		for range o.Count(oc) {
			line++
			w.Add(Case{Source: "a.jsonl", Line: line, Outcome: oc, TokensBefore: 9000 + line%7, TokensAfter: 7000 + 3*(line%5)})
		}
	}
	return w
}

func TestRenderGolden(t *testing.T) {
	m := exampleMetrics(t)
	got := render(t, Input{Name: "agent_runs_compressed_metrics.json", Metrics: m, Baseline: m, BaselineName: "baseline_metrics.json",
		Rules: check.DefaultRules(0.01, 0), Worst: exampleWorst(t, m)})
	path := filepath.Join("testdata", "example.golden.html")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./report -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the page differs from %s (go test ./report -update, then review the diff)", path)
	}
	if again := render(t, Input{Name: "agent_runs_compressed_metrics.json", Metrics: m, Baseline: m, BaselineName: "baseline_metrics.json",
		Rules: check.DefaultRules(0.01, 0), Worst: exampleWorst(t, m)}); again != got {
		t.Error("two renderings of the same input differ")
	}
}

// TestDisplayBinsAreExactSums: the chart's bins are sums of whole
// histogram buckets: every bucket falls inside one bin, the counts add up
// to the histogram's, there are at most maxDisplayBins, and they cover
// every value and the target.
func TestDisplayBinsAreExactSums(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		var a, b metrics.Hist
		scale := math.Log(math.Exp(1 + r.Float64()*14))
		for range 1 + r.IntN(5000) {
			a.Add(int64(math.Exp(r.Float64() * scale)))
			if r.IntN(3) > 0 {
				b.Add(int64(math.Exp(r.Float64() * scale * 0.8)))
			}
		}
		target := int64(1 + r.IntN(300000))
		bins := displayBins([]*metrics.Hist{&a, &b}, target)
		if len(bins) == 0 || len(bins) > maxDisplayBins {
			t.Fatalf("seed %d: %d bins", seed, len(bins))
		}
		if bins[0].Low > min(a.Bins()[0].Low, target) || bins[len(bins)-1].High <= max(a.Max(), b.Max(), target) {
			t.Fatalf("seed %d: bins [%d, %d) do not cover the values and the target %d", seed, bins[0].Low, bins[len(bins)-1].High, target)
		}
		for s, h := range []*metrics.Hist{&a, &b} {
			var sum int64
			for i, d := range bins {
				if i > 0 && d.Low != bins[i-1].High {
					t.Fatalf("seed %d: bins not contiguous at %d", seed, i)
				}
				sum += d.Counts[s]
			}
			if sum != h.Count() {
				t.Fatalf("seed %d: series %d: bins hold %d, the histogram %d", seed, s, sum, h.Count())
			}
			for _, d := range bins {
				var in int64
				for _, hb := range h.Bins() {
					if hb.Low >= d.Low && hb.Low < d.High {
						if hb.Low+hb.Width > d.High {
							t.Fatalf("seed %d: bucket [%d, %d) straddles the display edge %d", seed, hb.Low, hb.Low+hb.Width, d.High)
						}
						in += hb.Count
					}
				}
				if in != d.Counts[s] {
					t.Fatalf("seed %d: series %d: bin [%d, %d) counts %d, its buckets hold %d", seed, s, d.Low, d.High, d.Counts[s], in)
				}
			}
		}
	}
}

func TestEmptyAndAllRejectedRuns(t *testing.T) {
	var empty, rejected metrics.Summary
	empty.Label("empty.jsonl")
	for i := range 5 {
		rejected.Observe(metrics.Observation{Source: "bad.jsonl", Line: int64(i + 1), Outcome: outcome.Invalid, RejectReason: "invalid_json"})
	}
	rejected.Label("bad.jsonl")
	for name, s := range map[string]*metrics.Summary{"empty": &empty, "rejected": &rejected} {
		m := summaryReport(t, s, "")
		html := render(t, Input{Name: name, Metrics: m, Worst: NewWorst(5).withRecords(s.RecordsIn())})
		if !strings.Contains(html, "No record was written") || strings.Contains(html, `<svg id="lengths"`) {
			t.Errorf("%s: the page draws a length chart of no record", name)
		}
		if !strings.Contains(html, `data-metric="outcomes.records_rejected">`+fmt.Sprint(s.RecordsRejected())+`<`) {
			t.Errorf("%s: rejected count not shown", name)
		}
	}
}

// withRecords is w having seen n records that fall in no table.
func (w *Worst) withRecords(n int64) *Worst {
	for range n {
		w.Add(Case{Outcome: outcome.Invalid})
	}
	return w
}

// TestOlderMetrics: metrics without histograms and groups render, say so,
// and still show the quantiles; as a baseline they still gate.
func TestOlderMetrics(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(exampleMetrics(t), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "groups")
	for _, k := range []string{"tokens_before", "tokens_after"} {
		delete(doc["distributions"].(map[string]any)[k].(map[string]any), "histogram")
	}
	old, _ := json.Marshal(doc)
	html := render(t, Input{Metrics: old})
	for _, want := range []string{"carry no histograms", "carry no per-source breakdown", "3,736"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page of older metrics does not say %q", want)
		}
	}
	if strings.Contains(html, `<svg id="lengths"`) {
		t.Error("a length chart without histograms")
	}
	html = render(t, Input{Metrics: exampleMetrics(t), Baseline: old, Rules: check.DefaultRules(0.01, 0)})
	if !strings.Contains(html, "ok: 6 checks within bounds") || strings.Contains(html, `<svg id="overlay"`) {
		t.Error("an older baseline: no verdict, or an overlay drawn without its histogram")
	}
}

func TestGateVerdicts(t *testing.T) {
	m := exampleMetrics(t)
	worse := bytes.Replace(m, []byte(`"failed_to_fit": 29`), []byte(`"failed_to_fit": 31`), 1)
	html := render(t, Input{Metrics: worse, Baseline: m, Rules: check.DefaultRules(0.01, 0)})
	if !strings.Contains(html, `class="verdict fail" id="verdict">FAIL: 1 of 6 checks regressed`) || !strings.Contains(html, `data-status="REGRESSED"`) {
		t.Error("a regressed run is not shown as failing")
	}
	other := bytes.Replace(m, []byte(`"tokenizer": "o200k_base"`), []byte(`"tokenizer": "cl100k_base"`), 1)
	html = render(t, Input{Metrics: other, Baseline: m, Rules: check.DefaultRules(0.01, 0)})
	if !strings.Contains(html, "not compared: the runs differ in setup") || !strings.Contains(html, "run.tokenizer: &#34;o200k_base&#34; != &#34;cl100k_base&#34;") {
		t.Error("a different setup is not shown as refused, with the difference")
	}
	if err := Render(&bytes.Buffer{}, Input{Metrics: m, Baseline: m}); err == nil {
		t.Error("a baseline without rules was accepted")
	}
}

func TestRenderRefuses(t *testing.T) {
	m := exampleMetrics(t)
	for name, in := range map[string]Input{
		"not JSON":       {Metrics: []byte("{")},
		"not metrics":    {Metrics: []byte(`{"source":"a","line":1}`)},
		"bad histogram":  {Metrics: bytes.Replace(m, []byte(`"bins": [[21,1]`), []byte(`"bins": [[21,2]`), 1)},
		"worst mismatch": {Metrics: m, Worst: NewWorst(3).withRecords(3)},
		"bad baseline":   {Metrics: m, Baseline: []byte(`[]`), Rules: check.DefaultRules(0.01, 0)},
	} {
		if err := Render(&bytes.Buffer{}, in); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

// TestSizeDoesNotGrowWithRecords: the page of a million records is about
// as large as the page of a thousand (the bins are bounded).
func TestSizeDoesNotGrowWithRecords(t *testing.T) {
	size := func(n int) int {
		var s metrics.Summary
		r := rand.New(rand.NewPCG(1, 2))
		for i := range n {
			before := int(math.Exp(6 + r.NormFloat64()*1.2))
			o := metrics.Observation{Line: int64(i + 1), Outcome: outcome.SkippedUnderTarget, TokensBefore: before, TokensAfter: before,
				Group: fmt.Sprintf("model-%02d", r.IntN(80))}
			if before > 6000 {
				o.Outcome, o.TokensAfter, o.Region = outcome.Compressed, 5000+r.IntN(1000), &[2]int{2, 5}
			}
			s.Observe(o)
		}
		return len(render(t, Input{Metrics: summaryReport(t, &s, "model")}))
	}
	small, large := size(1000), size(1_000_000)
	t.Logf("page of 1,000 records: %d bytes; of 1,000,000: %d bytes", small, large)
	if large > 2*small || large > 256<<10 {
		t.Errorf("the page grows with the records: %d bytes for 1,000, %d for 1,000,000", small, large)
	}
}

// A run with images names their count and rule among the run's facts; a
// run without (every golden) shows no images row.
func TestRunInfoImages(t *testing.T) {
	r := &metrics.Report{Images: &metrics.ImagesSection{Images: 1234, ImagesUnknownSize: 2}}
	r.Run.ImageTokens = "openai"
	var got string
	for _, e := range runInfo(r) {
		if e.Key == "images" {
			got = e.Value
		}
	}
	if got != "1,234 counted by openai (2 of unknown size, counted at the rule's most)" {
		t.Errorf("images row %q", got)
	}
	for _, e := range runInfo(&metrics.Report{}) {
		if e.Key == "images" {
			t.Errorf("a run without images has an images row: %q", e.Value)
		}
	}
}
