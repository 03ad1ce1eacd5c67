package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport: trajcompress report writes the page of a run's metrics, and
// compress --report writes the same page at the end of the run.
func TestReport(t *testing.T) {
	t.Chdir(repoRoot(t))
	tmp := t.TempDir()
	metricsPath, outcomes := filepath.Join(tmp, "m.json"), filepath.Join(tmp, "outcomes.jsonl")
	fromRun := filepath.Join(tmp, "run.html")
	var stderr bytes.Buffer
	args := []string{"compress", "--quiet", "--input", exampleInput, "--config", exampleConfig, "--output", filepath.Join(tmp, "out.jsonl"),
		"--metrics", metricsPath, "--outcomes", outcomes, "--report", fromRun}
	if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("compress: exit %d: %s", code, stderr.String())
	}
	page := filepath.Join(tmp, "page.html")
	if code := run(context.Background(), []string{"report", metricsPath, "--outcomes", outcomes, "--output", page}, nil, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	a, _ := os.ReadFile(fromRun)
	b, _ := os.ReadFile(page)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("compress --report (%d bytes) and report --outcomes (%d bytes) differ", len(a), len(b))
	}
	if !strings.Contains(string(a), `id="worst-over"`) || !strings.Contains(string(a), `data-metric="outcomes.records_in">200<`) {
		t.Error("the page lacks the worst cases or the records in")
	}

	// With the baseline: the gate's verdict, exit 0 even when it fails
	// (the page is the result; check is the gate).
	var out bytes.Buffer
	if code := run(context.Background(), []string{"report", "--baseline", exampleBaseline, "--max-failed-to-fit-increase", "0", metricsPath, "--output", "-"}, nil, &out, &stderr); code != exitOK {
		t.Fatalf("report --baseline: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(out.String(), "ok: 8 checks within bounds") {
		t.Error("the page does not give check's verdict")
	}
	worse := doctor(t, mustRead(t, metricsPath), func(m map[string]any) {
		m["outcomes"].(map[string]any)["failed_to_fit"] = 40
	})
	worsePath := filepath.Join(tmp, "worse.json")
	os.WriteFile(worsePath, worse, 0o644)
	out.Reset()
	if code := run(context.Background(), []string{"report", "--baseline", exampleBaseline, worsePath, "--output", "-"}, nil, &out, &stderr); code != exitOK {
		t.Fatalf("report of a regressed run: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(out.String(), "FAIL: 1 of 8 checks regressed") {
		t.Error("the page of a regressed run does not say FAIL")
	}

	for name, args := range map[string][]string{
		"no output":        {"report", metricsPath},
		"no metrics":       {"report", "--output", page},
		"over its input":   {"report", metricsPath, "--output", metricsPath},
		"not metrics":      {"report", outcomes, "--output", page},
		"missing file":     {"report", filepath.Join(tmp, "nope.json"), "--output", page},
		"other outcomes":   {"report", exampleBaseline, "--outcomes", outcomes + "x", "--output", page},
		"compress over in": {"compress", "--input", exampleInput, "--dry-run", "--metrics", filepath.Join(tmp, "d.json"), "--report", exampleInput},
	} {
		stderr.Reset()
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitUsage {
			t.Errorf("%s: exit %d, want %d: %s", name, code, exitUsage, stderr.String())
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGroupsPerFile: a directory input's metrics break the run down per
// file, named by the path under the input directory.
func TestGroupsPerFile(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	in := filepath.Join(t.TempDir(), "runs")
	lines := mustRead(t, filepath.Join(root, "fixtures/cases/sharegpt_mixed/input.jsonl"))
	os.MkdirAll(filepath.Join(in, "sub"), 0o755)
	os.WriteFile(filepath.Join(in, "a.jsonl"), lines, 0o644)
	os.WriteFile(filepath.Join(in, "sub", "b.jsonl"), lines, 0o644)
	m := filepath.Join(t.TempDir(), "m.json")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--metrics", m}, nil, &bytes.Buffer{}, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var doc struct {
		Outcomes struct {
			RecordsIn int64 `json:"records_in"`
		} `json:"outcomes"`
		Groups struct {
			By     string `json:"by"`
			Values []struct {
				Name      string `json:"name"`
				RecordsIn int64  `json:"records_in"`
			} `json:"values"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(mustRead(t, m), &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Groups
	if g.By != "file" || len(g.Values) != 2 || g.Values[0].Name != "a.jsonl" || g.Values[1].Name != "sub/b.jsonl" ||
		g.Values[0].RecordsIn+g.Values[1].RecordsIn != doc.Outcomes.RecordsIn {
		t.Errorf("groups %+v, records in %d", g, doc.Outcomes.RecordsIn)
	}
}
