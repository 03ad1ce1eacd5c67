// Package testenv finds what tests and benchmarks need from the
// environment: the module root, and the real trajectories that live beside
// the repository in ../shared/data/real (never copied into it: several
// sources have no licence). Callers skip cleanly when [RealDataDir]
// returns "". It only reads files.
package testenv

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// ModuleRoot returns the directory holding go.mod, found by walking up from
// the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// realPath is ../shared/data/real relative to the module root, present or
// not ("" when the module root is not found).
func realPath() string {
	root, err := ModuleRoot()
	if err != nil {
		return ""
	}
	return filepath.Join(root, "..", "shared", "data", "real")
}

// RequireRealDataEnv is the variable that, set to 1 (in CI, where the
// data is meant to be), makes [NeedRealData] fail a test instead of skipping it when the real
// data is absent, so that tests on it cannot silently stop running.
const RequireRealDataEnv = "TRAJCOMPRESS_REQUIRE_REALDATA"

// NeedRealData returns [RealDataDir] for a test that needs the real data;
// when it is absent, it skips t, or fails it when [RequireRealDataEnv] is
// 1.
func NeedRealData(t testing.TB) string {
	t.Helper()
	dir := RealDataDir()
	if dir == "" {
		if os.Getenv(RequireRealDataEnv) == "1" {
			t.Fatalf("%s=1 but the real data is absent (%s)", RequireRealDataEnv, realPath())
			return ""
		}
		t.Skipf("real data absent (%s)", realPath())
	}
	return dir
}

// RealDataDir returns ../shared/data/real relative to the module root, or
// "" when it is absent (a clone without the shared data).
func RealDataDir() string {
	real := realPath()
	if fi, err := os.Stat(real); real == "" || err != nil || !fi.IsDir() {
		return ""
	}
	return real
}

// RealJSONL returns the real data's JSONL files (dir/*/*.jsonl, sorted),
// none when the data is absent, and the directory it looked in, for a
// test's skip message.
func RealJSONL() (files []string, dir string) {
	dir = realPath()
	if dir == "" {
		return nil, dir
	}
	return jsonlFiles(dir), dir
}

func jsonlFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl")) // the pattern is well formed
	sort.Strings(files)
	return files
}

// turnKeys are the JSON keys whose string values are turn texts in the
// shared data's formats (messages[].content, conversations[].value, the
// hermes top-level system_prompt, tool-call arguments).
var turnKeys = map[string]bool{"content": true, "value": true, "system_prompt": true, "arguments": true}

// RealTurnTexts returns the turn texts of dir/*/*.jsonl in sorted file
// order, stopping once limit bytes are collected (limit <= 0: all). The
// order is deterministic.
func RealTurnTexts(dir string, limit int) ([]string, error) {
	files := jsonlFiles(dir)
	var texts []string
	total := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<28)
		for line := 1; sc.Scan() && (limit <= 0 || total < limit); line++ {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", file, line, err)
			}
			n := len(texts)
			texts = collect(texts, v, "")
			for _, t := range texts[n:] {
				total += len(t)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return texts, nil
}

func collect(dst []string, v any, key string) []string {
	switch v := v.(type) {
	case string:
		if turnKeys[key] && v != "" {
			dst = append(dst, v)
		}
	case []any:
		for _, x := range v {
			dst = collect(dst, x, key)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst = collect(dst, v[k], k)
		}
	}
	return dst
}

// RealLines returns, for seeding fuzz targets, up to perFile of the
// shortest lines of each dir/*/*.jsonl of the real data (sorted files; in
// each, shortest first, the earlier line first on a tie) that are at most
// maxLen bytes long and that keep accepts (nil: all): nil when the data
// is absent.
func RealLines(maxLen, perFile int, keep func(line []byte) bool) ([][]byte, error) {
	files, _ := RealJSONL()
	var out [][]byte
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		var lines [][]byte
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<28)
		for sc.Scan() {
			if b := sc.Bytes(); len(b) <= maxLen && len(b) > 0 && (keep == nil || keep(b)) {
				lines = append(lines, append([]byte(nil), b...))
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		sort.SliceStable(lines, func(i, j int) bool { return len(lines[i]) < len(lines[j]) })
		out = append(out, lines[:min(perFile, len(lines))]...)
	}
	return out, nil
}

// Recorder is a testing.TB that records a Fatalf or Skipf instead of
// stopping the test: for testing helpers that skip or fail, such as
// [NeedRealData]. Any other method goes to TB.
type Recorder struct {
	testing.TB
	FatalCalled, SkipCalled bool
}

// Helper does nothing: a Recorder reports no lines.
func (r *Recorder) Helper() {}

// Fatalf records that the helper failed, and goes on.
func (r *Recorder) Fatalf(string, ...any) { r.FatalCalled = true }

// Skipf records that the helper skipped, and goes on.
func (r *Recorder) Skipf(string, ...any) { r.SkipCalled = true }
