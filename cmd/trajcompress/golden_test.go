package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the want_* files of fixtures/cases")

// repoRoot returns the module root (the directory holding go.mod).
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// withoutProcessing drops the timestamps section, the only part of the
// metrics that varies between runs of the same input.
func withoutProcessing(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("metrics not JSON: %v", err)
	}
	delete(m, "processing")
	// Re-marshal through an ordered list of the known keys so the file stays
	// in report order and readable.
	var buf bytes.Buffer
	buf.WriteString("{\n")
	keys := []string{"summary", "tokens", "turns", "averages", "summarization", "outcomes", "distributions", "groups", "prepass", "redaction", "images", "retention", "run"}
	first := true
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			continue
		}
		delete(m, k)
		if !first {
			buf.WriteString(",\n")
		}
		first = false
		var ind bytes.Buffer
		json.Indent(&ind, v, "  ", "  ")
		buf.WriteString("  \"" + k + "\": " + ind.String())
	}
	for k := range m {
		t.Errorf("metrics section %q is not known to the golden test", k)
	}
	buf.WriteString("\n}\n")
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	root := repoRoot(t)
	t.Chdir(root)
	cases, err := filepath.Glob("fixtures/cases/*/args")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases (%v)", err)
	}
	for _, argsPath := range cases {
		dir := filepath.Dir(argsPath)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			argsText, err := os.ReadFile(argsPath)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			args := []string{"compress", "--quiet",
				"--input", filepath.Join(dir, "input.jsonl"),
				"--output", filepath.Join(tmp, "out.jsonl"),
				"--metrics", filepath.Join(tmp, "metrics.json"),
				"--rejects", filepath.Join(tmp, "rejects.jsonl"),
				"--outcomes", filepath.Join(tmp, "outcomes.jsonl"),
			}
			args = append(args, strings.Fields(string(argsText))...)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, nil, &stdout, &stderr)
			if code != exitOK && code != exitPartial {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			files := map[string]string{
				"want.jsonl":          "out.jsonl",
				"want_metrics.json":   "metrics.json",
				"want_rejects.jsonl":  "rejects.jsonl",
				"want_outcomes.jsonl": "outcomes.jsonl",
			}
			for want, got := range files {
				gotBytes, err := os.ReadFile(filepath.Join(tmp, got))
				if err != nil {
					t.Fatal(err)
				}
				if want == "want_metrics.json" {
					gotBytes = withoutProcessing(t, withoutVersion(t, gotBytes))
				}
				wantPath := filepath.Join(dir, want)
				if *update {
					if err := os.WriteFile(wantPath, gotBytes, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				wantBytes, err := os.ReadFile(wantPath)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(gotBytes, wantBytes) {
					t.Errorf("%s differs from %s (run with -update and review the diff):\n%s", got, wantPath, firstDiff(wantBytes, gotBytes))
				}
			}
		})
	}
}

// firstDiff shows the first differing line.
func firstDiff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + clipStr(w) + "\n  got: " + clipStr(g)
		}
	}
	return "(no line differs)"
}

func clipStr(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
