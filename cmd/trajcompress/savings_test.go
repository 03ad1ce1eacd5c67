package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/fixtures/gen"
)

// The committed example set: fixtures/example/agent_runs.jsonl.gz is
// exactly what this generator call produces (README: "Gating token savings
// in CI").
var exampleOptions = gen.Options{Count: 200, Seed: 1, MedianTokens: 4000, P99Tokens: 16000}

const (
	exampleInput    = "fixtures/example/agent_runs.jsonl.gz"
	exampleConfig   = "fixtures/example/trajectory_compression.yaml"
	exampleBaseline = "fixtures/example/baseline_metrics.json"
)

// TestExampleFixtureIsGenerated: the committed example set is the
// generator's output for exampleOptions, byte for byte, so anyone can
// regenerate it and a generator change that moves it is caught here.
func TestExampleFixtureIsGenerated(t *testing.T) {
	t.Chdir(repoRoot(t))
	var want bytes.Buffer
	if _, err := gen.WriteJSONL(&want, exampleOptions); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(exampleInput)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if *update && !bytes.Equal(got, want.Bytes()) {
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(want.Bytes())
		zw.Close()
		if err := os.WriteFile(exampleInput, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s is not the generator's output for %+v (-update regenerates it)", exampleInput, exampleOptions)
	}
}

// TestSavings is the savings gate the repository applies to itself: a
// change that moves any count or token total of the example run fails
// here; -update rewrites the baseline deliberately.
func TestSavings(t *testing.T) {
	t.Chdir(repoRoot(t))
	tmp := t.TempDir()
	run1 := filepath.Join(tmp, "run.json")
	args := []string{"compress", "--quiet", "--input", exampleInput, "--config", exampleConfig,
		"--output", filepath.Join(tmp, "out.jsonl"), "--metrics", run1}
	var stderr bytes.Buffer
	if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("compress: exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(run1)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(exampleBaseline, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, err := os.ReadFile(exampleBaseline)
	if err != nil {
		t.Fatalf("%v (-update writes it)", err)
	}
	if g, w := withoutProcessing(t, withoutVersion(t, got)), withoutProcessing(t, withoutVersion(t, base)); !bytes.Equal(g, w) {
		t.Fatalf("the example run's metrics moved (-update and review the diff):\n%s", firstDiff(w, g))
	}

	// The CLI gate agrees: within bounds → 0.
	var out bytes.Buffer
	if code := run(context.Background(), []string{"check", "--baseline", exampleBaseline, run1}, nil, &out, &stderr); code != exitOK {
		t.Fatalf("check: exit %d\n%s%s", code, out.String(), stderr.String())
	}

	// A baseline from before the metrics carried histograms and groups
	// still gates a run that has them.
	old := doctor(t, base, func(m map[string]any) {
		delete(m, "groups")
		for _, k := range []string{"tokens_before", "tokens_after"} {
			delete(m["distributions"].(map[string]any)[k].(map[string]any), "histogram")
		}
	})
	oldBase := filepath.Join(tmp, "old_baseline.json")
	os.WriteFile(oldBase, old, 0o644)
	if code := run(context.Background(), []string{"check", "--baseline", oldBase, run1}, nil, &out, &stderr); code != exitOK {
		t.Fatalf("check against a baseline without histograms: exit %d\n%s%s", code, out.String(), stderr.String())
	}

	// A worse ratio → 1, with the regressed row in the table.
	worse := doctor(t, got, func(m map[string]any) {
		tok := m["tokens"].(map[string]any)
		tok["overall_compression_ratio"] = tok["overall_compression_ratio"].(float64) + 0.05
	})
	runWorse := filepath.Join(tmp, "worse.json")
	os.WriteFile(runWorse, worse, 0o644)
	out.Reset()
	if code := run(context.Background(), []string{"check", "--baseline", exampleBaseline, runWorse}, nil, &out, &bytes.Buffer{}); code != exitError {
		t.Fatalf("check on a regressed run: exit %d, want %d\n%s", code, exitError, out.String())
	}
	if !strings.Contains(out.String(), "REGRESSED") || !strings.Contains(out.String(), "tokens.overall_compression_ratio") {
		t.Errorf("table does not name the regression:\n%s", out.String())
	}

	// A summary that names fewer paths and commands → 1; a floor the run
	// does not reach → 1.
	lessKept := doctor(t, got, func(m map[string]any) {
		pc := m["retention"].(map[string]any)["paths_commands"].(map[string]any)
		pc["rate"] = pc["rate"].(float64) - 0.05
	})
	runLess := filepath.Join(tmp, "less.json")
	os.WriteFile(runLess, lessKept, 0o644)
	out.Reset()
	if code := run(context.Background(), []string{"check", "--no-verify-outputs", "--baseline", exampleBaseline, runLess}, nil, &out, &bytes.Buffer{}); code != exitError || !strings.Contains(out.String(), "retention.paths_commands.rate") {
		t.Fatalf("check on a run that kept less: exit %d\n%s", code, out.String())
	}
	if code := run(context.Background(), []string{"check", "--no-verify-outputs", "--min-path-retention", "0.999", "--baseline", exampleBaseline, runLess}, nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitError {
		t.Fatalf("check under --min-path-retention: exit %d", code)
	}

	// Another input → 2 (a changed setup is not a regression)…
	other := doctor(t, got, func(m map[string]any) { m["run"].(map[string]any)["input_fingerprint"] = "sha256:other" })
	runOther := filepath.Join(tmp, "other.json")
	os.WriteFile(runOther, other, 0o644)
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "--baseline", exampleBaseline, runOther}, nil, &bytes.Buffer{}, &errOut); code != exitUsage {
		t.Fatalf("check across inputs: exit %d, want %d: %s", code, exitUsage, errOut.String())
	}
	// …unless told.
	if code := run(context.Background(), []string{"check", "--allow-different-setup", "--baseline", exampleBaseline, runOther}, nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK {
		t.Fatalf("check --allow-different-setup: exit %d", code)
	}
}

// TestRunsReproducible: two runs of the same input differ only in
// timestamps and durations.
func TestRunsReproducible(t *testing.T) {
	t.Chdir(repoRoot(t))
	var docs [][]byte
	for range 2 {
		m := filepath.Join(t.TempDir(), "m.json")
		args := []string{"compress", "--quiet", "--input", exampleInput, "--config", exampleConfig, "--dry-run", "--metrics", m}
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK && code != exitPartial {
			t.Fatalf("exit %d", code)
		}
		b, _ := os.ReadFile(m)
		docs = append(docs, withoutProcessing(t, b))
	}
	if !bytes.Equal(docs[0], docs[1]) {
		t.Fatalf("two runs of the same input differ beyond timestamps:\n%s", firstDiff(docs[0], docs[1]))
	}
}

func doctor(t *testing.T, b []byte, f func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, _ := json.Marshal(m)
	return out
}

// withoutVersion blanks run.tool_version: a release bump is not a change
// in savings.
func withoutVersion(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var r map[string]json.RawMessage
	json.Unmarshal(m["run"], &r)
	delete(r, "tool_version")
	m["run"], _ = json.Marshal(r)
	out, _ := json.Marshal(m)
	return out
}
