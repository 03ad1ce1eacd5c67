package check

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// metricsDoc builds a metrics document in the layout the pipeline writes,
// with overrides applied as dotted-path → raw JSON value.
func metricsDoc(t *testing.T, over map[string]string) []byte {
	t.Helper()
	vals := map[string]string{
		"ratio": "0.4123", "ftf": "2", "rejected": "0", "invalid": "1", "in": "300", "failed": "0",
		"tokenizer": `"o200k_base"`, "config": `"cfg-1"`, "input": `"in-1"`, "saved": "100000",
		"start": `"2026-11-22T10:00:00"`, "dur": "1.25",
	}
	for k, v := range over {
		if _, ok := vals[k]; !ok {
			t.Fatalf("unknown override %q", k)
		}
		vals[k] = v
	}
	s := `{
  "summary": {"total_trajectories": 300, "trajectories_compressed": 120, "trajectories_failed": {failed}, "compression_rate": 0.4},
  "tokens": {"total_before": 1000000, "total_after": 412300, "total_saved": {saved}, "overall_compression_ratio": {ratio}},
  "processing": {"start_time": {start}, "end_time": "2026-11-22T10:00:01", "duration_seconds": {dur}},
  "outcomes": {"failed_to_fit": {ftf}, "records_rejected": {rejected}, "invalid": {invalid}, "records_in": {in}},
  "run": {"tool_version": "dev", "tokenizer": {tokenizer}, "config_fingerprint": {config}, "input_fingerprint": {input}}
}`
	for k, v := range vals {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return []byte(s)
}

func f(v float64) *float64 { return &v }

func TestCompare(t *testing.T) {
	def := DefaultRules(0.01, 0)
	tests := []struct {
		name      string
		over      map[string]string
		base      map[string]string
		rules     Rules
		regressed bool
		status    map[string]Status // path → expected status (others: any)
		setupErr  bool
		differs   int
	}{
		{name: "identical", rules: def, status: map[string]Status{
			"tokens.overall_compression_ratio": StatusOK, "outcomes.records_in": StatusOK}},
		{name: "timestamps ignored", over: map[string]string{"start": `"2027-01-01T00:00:00"`, "dur": "99"}, rules: def},
		{name: "ratio within bound", over: map[string]string{"ratio": "0.4223"}, rules: def,
			status: map[string]Status{"tokens.overall_compression_ratio": StatusOK}},
		{name: "ratio regressed", over: map[string]string{"ratio": "0.4224"}, rules: def, regressed: true,
			status: map[string]Status{"tokens.overall_compression_ratio": StatusRegressed}},
		{name: "ratio improved", over: map[string]string{"ratio": "0.30"}, rules: def,
			status: map[string]Status{"tokens.overall_compression_ratio": StatusImproved}},
		{name: "failed_to_fit increased", over: map[string]string{"ftf": "3"}, rules: def, regressed: true,
			status: map[string]Status{"outcomes.failed_to_fit": StatusRegressed}},
		{name: "failed_to_fit allowed by flag", over: map[string]string{"ftf": "3"}, rules: DefaultRules(0.01, 1),
			status: map[string]Status{"outcomes.failed_to_fit": StatusOK}},
		{name: "failed_to_fit decreased", over: map[string]string{"ftf": "0"}, rules: def,
			status: map[string]Status{"outcomes.failed_to_fit": StatusImproved}},
		{name: "rejected increased", over: map[string]string{"rejected": "1"}, rules: def, regressed: true,
			status: map[string]Status{"outcomes.records_rejected": StatusRegressed}},
		{name: "invalid increased", over: map[string]string{"invalid": "2"}, rules: def, regressed: true,
			status: map[string]Status{"outcomes.invalid": StatusRegressed}},
		{name: "records_in differs", over: map[string]string{"in": "299"}, rules: def, regressed: true,
			status: map[string]Status{"outcomes.records_in": StatusRegressed}},
		{name: "missing key in run", base: map[string]string{"failed": `0, "extra": 5`},
			rules: Rules{Rules: []Rule{{Path: "summary.extra", MaxIncrease: f(0)}}}, regressed: true,
			status: map[string]Status{"summary.extra": StatusMissing}},
		{name: "null value", over: map[string]string{"ftf": `null`}, rules: def,
			regressed: true, status: map[string]Status{"outcomes.failed_to_fit": StatusInvalid}},
		{name: "missing section", rules: Rules{Rules: []Rule{{Path: "distributions.tokens_after.p99", MaxIncrease: f(0)}}},
			regressed: true, status: map[string]Status{"distributions.tokens_after.p99": StatusMissing}},
		{name: "non-numeric under limit", over: map[string]string{"ratio": `"high"`}, rules: def, regressed: true,
			status: map[string]Status{"tokens.overall_compression_ratio": StatusInvalid}},
		{name: "relative decrease within", over: map[string]string{"saved": "98000"},
			rules:  Rules{Rules: []Rule{{Path: "tokens.total_saved", MaxDecrease: f(0.02), Relative: true}}},
			status: map[string]Status{"tokens.total_saved": StatusOK}},
		{name: "relative decrease beyond", over: map[string]string{"saved": "97999"}, regressed: true,
			rules:  Rules{Rules: []Rule{{Path: "tokens.total_saved", MaxDecrease: f(0.02), Relative: true}}},
			status: map[string]Status{"tokens.total_saved": StatusRegressed}},
		{name: "exact string", over: map[string]string{"start": `"x"`},
			rules:  Rules{Rules: []Rule{{Path: "run.tool_version", Exact: true}}},
			status: map[string]Status{"run.tool_version": StatusOK}},
		{name: "tokenizer differs", over: map[string]string{"tokenizer": `"cl100k_base"`}, rules: def, setupErr: true, differs: 1},
		{name: "tokenizer file differs", base: map[string]string{"tokenizer": `"Qwen/Qwen3-8B", "tokenizer_kind": "hf-bpe", "tokenizer_sha256": "aa"`},
			over: map[string]string{"tokenizer": `"Qwen/Qwen3-8B", "tokenizer_kind": "hf-bpe", "tokenizer_sha256": "bb"`}, rules: def, setupErr: true, differs: 1},
		{name: "config and input differ", over: map[string]string{"config": `"cfg-2"`, "input": `"in-2"`}, rules: def, setupErr: true, differs: 2},
		{name: "fingerprint missing in run", over: map[string]string{"input": `null, "nothing": 0`}, rules: def, setupErr: true, differs: 1},
		{name: "setup differs allowed", over: map[string]string{"config": `"cfg-2"`, "ratio": "0.5"},
			rules: Rules{Rules: def.Rules, AllowDifferentSetup: true}, regressed: true, differs: 1,
			status: map[string]Status{"tokens.overall_compression_ratio": StatusRegressed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Compare(metricsDoc(t, tt.base), metricsDoc(t, tt.over), tt.rules)
			if tt.setupErr {
				if !errors.Is(err, ErrSetupDiffers) {
					t.Fatalf("err = %v, want ErrSetupDiffers", err)
				}
				if len(res.SetupDiffers) != tt.differs {
					t.Fatalf("SetupDiffers = %q, want %d entries", res.SetupDiffers, tt.differs)
				}
				for _, d := range res.SetupDiffers {
					if !strings.Contains(err.Error(), d) {
						t.Errorf("error %q does not list %q", err, d)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Regressed != tt.regressed {
				var buf bytes.Buffer
				res.WriteTable(&buf)
				t.Errorf("Regressed = %v, want %v\n%s", res.Regressed, tt.regressed, buf.String())
			}
			if len(res.SetupDiffers) != tt.differs {
				t.Errorf("SetupDiffers = %q, want %d entries", res.SetupDiffers, tt.differs)
			}
			if len(res.Rows) != len(tt.rules.Rules) {
				t.Fatalf("%d rows for %d rules", len(res.Rows), len(tt.rules.Rules))
			}
			got := map[string]Status{}
			for _, row := range res.Rows {
				got[row.Rule.Path] = row.Status
			}
			for p, want := range tt.status {
				if got[p] != want {
					t.Errorf("%s: status %q, want %q", p, got[p], want)
				}
			}
			if !tt.regressed {
				for _, row := range res.Rows {
					if row.Status.Failed() {
						t.Errorf("%s failed: %+v", row.Rule.Path, row)
					}
				}
			}
		})
	}
}

func TestCompareBadInput(t *testing.T) {
	good := metricsDoc(t, nil)
	tests := []struct {
		name      string
		base, run []byte
		rules     Rules
		want      string
	}{
		{name: "baseline not JSON", base: []byte("{"), run: good, rules: DefaultRules(0, 0), want: "baseline: invalid JSON"},
		{name: "run not an object", base: good, run: []byte("[1]"), rules: DefaultRules(0, 0), want: "run: not a JSON object"},
		{name: "trailing data", base: good, run: append(append([]byte{}, good...), "{}"...), rules: DefaultRules(0, 0), want: "trailing data"},
		{name: "processing rule", base: good, run: good,
			rules: Rules{Rules: []Rule{{Path: "processing.duration_seconds", MaxIncrease: f(1)}}}, want: "cannot be gated"},
		{name: "rule without limit", base: good, run: good, rules: Rules{Rules: []Rule{{Path: "tokens.total_after"}}}, want: "needs max_increase"},
		{name: "negative limit", base: good, run: good, rules: Rules{Rules: []Rule{{Path: "tokens.total_after", MaxIncrease: f(-1)}}}, want: "non-negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(tt.base, tt.run, tt.rules)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseRules(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
		check   func(t *testing.T, r Rules)
	}{
		{name: "good", yaml: `allow_different_setup: true
rules:
  - path: tokens.overall_compression_ratio
    max_increase: 0.01
  - path: tokens.total_saved
    max_decrease: 0.02
    relative: true
  - path: outcomes.records_in
    exact: true
`, check: func(t *testing.T, r Rules) {
			if !r.AllowDifferentSetup || len(r.Rules) != 3 {
				t.Fatalf("got %+v", r)
			}
			if r.Rules[0].MaxIncrease == nil || *r.Rules[0].MaxIncrease != 0.01 || r.Rules[0].MaxDecrease != nil {
				t.Errorf("rule 0 = %+v", r.Rules[0])
			}
			if !r.Rules[1].Relative || *r.Rules[1].MaxDecrease != 0.02 || !r.Rules[2].Exact {
				t.Errorf("rules 1-2 = %+v %+v", r.Rules[1], r.Rules[2])
			}
		}},
		{name: "unknown rule key", yaml: "rules:\n  - path: a.b\n    max_increse: 1\n", wantErr: "line 3: field max_increse not found"},
		{name: "unknown top key", yaml: "rule:\n  - path: a.b\n", wantErr: "field rule not found"},
		{name: "empty", yaml: "", wantErr: "empty document"},
		{name: "no rules", yaml: "allow_different_setup: false\n", wantErr: "no rules"},
		{name: "duplicate path", yaml: "rules:\n  - {path: a, exact: true}\n  - {path: a, max_increase: 1}\n", wantErr: "already used by rule 1"},
		{name: "exact with limit", yaml: "rules:\n  - {path: a, exact: true, max_increase: 1}\n", wantErr: "exact cannot be combined"},
		{name: "two documents", yaml: "rules:\n  - {path: a, exact: true}\n---\nrules: []\n", wantErr: "more than one"},
		{name: "wrong type", yaml: "rules:\n  - {path: a, max_increase: lots}\n", wantErr: "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRules([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

func TestWriteTableGolden(t *testing.T) {
	rules := DefaultRules(0.01, 0)
	rules.AllowDifferentSetup = true
	rules.Rules = append(rules.Rules,
		Rule{Path: "tokens.total_saved", MaxDecrease: f(0.02), Relative: true},
		Rule{Path: "distributions.tokens_after.p99", MaxIncrease: f(100)})
	res, err := Compare(metricsDoc(t, nil), metricsDoc(t, map[string]string{
		"ratio": "0.4301", "ftf": "5", "in": "300", "invalid": "0", "saved": "97000", "config": `"cfg-2"`,
	}), rules)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res.WriteTable(&buf)
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("table differs from %s (run with -update to accept):\n--- got\n%s--- want\n%s", golden, buf.String(), want)
	}
}
