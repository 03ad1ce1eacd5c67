package check

import (
	"strings"
	"testing"
)

// retentionDoc is a metrics document with the given retention rates (raw
// JSON: a number or null; "" leaves the section out).
func retentionDoc(tools, paths string) []byte {
	s := `{"outcomes": {"records_in": 10}, "run": {"tokenizer": "o200k_base"}`
	if tools != "" {
		s += `, "retention": {"regions": 3, "tool_names": {"named": 10, "kept": 10, "rate": ` + tools + `}, "paths_commands": {"named": 10, "kept": 9, "rate": ` + paths + `}}`
	}
	return []byte(s + "}")
}

func TestRetentionRules(t *testing.T) {
	cases := []struct {
		name             string
		base, run        []byte
		minTools, minP   float64
		regressed        bool
		toolsSt, pathsSt Status
	}{
		{"same", retentionDoc("1.0", "0.98"), retentionDoc("1.0", "0.98"), 0, 0, false, StatusOK, StatusOK},
		{"within drop", retentionDoc("1.0", "0.98"), retentionDoc("0.995", "0.975"), 0, 0, false, StatusOK, StatusOK},
		{"paths fell", retentionDoc("1.0", "0.98"), retentionDoc("1.0", "0.90"), 0, 0, true, StatusOK, StatusRegressed},
		{"rose", retentionDoc("0.9", "0.8"), retentionDoc("1.0", "0.9"), 0, 0, false, StatusImproved, StatusImproved},
		{"old baseline", retentionDoc("", ""), retentionDoc("1.0", "0.5"), 0, 0, false, StatusSkipped, StatusSkipped},
		{"null in baseline", retentionDoc("null", "null"), retentionDoc("1.0", "0.5"), 0, 0, false, StatusSkipped, StatusSkipped},
		{"floor met", retentionDoc("", ""), retentionDoc("0.99", "0.91"), 0.98, 0.90, false, StatusOK, StatusOK},
		{"under the floor", retentionDoc("", ""), retentionDoc("0.99", "0.85"), 0.98, 0.90, true, StatusOK, StatusRegressed},
		{"under the floor, within the drop", retentionDoc("0.86", "0.86"), retentionDoc("0.99", "0.85"), 0.98, 0.90, true, StatusImproved, StatusRegressed},
		{"floor and null run", retentionDoc("1", "1"), retentionDoc("null", "null"), 0.98, 0.9, true, StatusInvalid, StatusInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Compare(c.base, c.run, Rules{Rules: RetentionRules(0.01, c.minTools, c.minP)})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Status{}
			for _, r := range res.Rows {
				got[r.Rule.Path] = r.Status
			}
			if res.Regressed != c.regressed || got["retention.tool_names.rate"] != c.toolsSt || got["retention.paths_commands.rate"] != c.pathsSt {
				t.Errorf("regressed %v, statuses %v; want %v, %s / %s", res.Regressed, got, c.regressed, c.toolsSt, c.pathsSt)
			}
		})
	}
}

func TestParseMinMaxRules(t *testing.T) {
	r, err := ParseRules([]byte("rules:\n  - {path: retention.paths_commands.rate, min: 0.9}\n  - {path: tokens.total_saved, max_decrease: 0.02, relative: true, optional: true}\n"))
	if err != nil || *r.Rules[0].Min != 0.9 || !r.Rules[1].Optional {
		t.Fatalf("%+v %v", r, err)
	}
	for _, bad := range []string{
		"rules:\n  - {path: a.b, min: 0.9, max: 0.5}\n",
		"rules:\n  - {path: a.b, exact: true, min: 1}\n",
	} {
		if _, err := ParseRules([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		} else if !strings.Contains(err.Error(), "a.b") {
			t.Errorf("error %v does not name the rule", err)
		}
	}
}
