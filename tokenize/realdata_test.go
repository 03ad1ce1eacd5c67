package tokenize

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// realDataDir returns ../shared/data/real relative to the module root, or
// "" when that directory is absent (CI without the shared data).
func realDataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	real := filepath.Join(dir, "..", "shared", "data", "real")
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}

// turnKeys are the JSON keys whose string values are turn texts in the
// formats of the shared data (messages[].content, conversations[].value,
// the hermes top-level system_prompt, tool-call arguments).
var turnKeys = map[string]bool{"content": true, "value": true, "system_prompt": true, "arguments": true}

// realTurnTexts returns the turn texts of every *.jsonl file under dir, in
// a deterministic order.
func realTurnTexts(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var texts []string
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<28)
		for line := 1; sc.Scan(); line++ {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				f.Close()
				t.Fatalf("%s:%d: %v", file, line, err)
			}
			texts = collectTurns(texts, v, "")
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		f.Close()
	}
	return texts
}

func collectTurns(dst []string, v any, key string) []string {
	switch v := v.(type) {
	case string:
		if turnKeys[key] && v != "" {
			dst = append(dst, v)
		}
	case []any:
		for _, x := range v {
			dst = collectTurns(dst, x, key)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst = collectTurns(dst, v[k], k)
		}
	}
	return dst
}
