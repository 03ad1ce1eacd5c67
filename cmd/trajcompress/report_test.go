package main

import (
	"bytes"
	"context"
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
	if !strings.Contains(out.String(), "ok: 6 checks within bounds") {
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
	if !strings.Contains(out.String(), "FAIL: 1 of 6 checks regressed") {
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
