package checkfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/check"
	"github.com/trajcompress/trajcompress/metrics"
)

// doc is a metrics document with every value the default rules read.
func doc(ratio string) []byte {
	return []byte(`{"summary": {"trajectories_failed": 0},
  "tokens": {"overall_compression_ratio": ` + ratio + `},
  "outcomes": {"failed_to_fit": 2, "records_rejected": 0, "invalid": 1, "records_in": 300},
  "run": {"tokenizer": "o200k_base", "config_fingerprint": "cfg-1", "input_fingerprint": "in-1"}}`)
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRulesNamesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rules.yaml")
	write(t, p, []byte("rules:\n  - path: a\n    bogus: 1\n"))
	_, err := LoadRules(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("err = %v, want file name and key", err)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	bp, rp := filepath.Join(dir, "base.json"), filepath.Join(dir, "run.json")
	write(t, bp, doc("0.4123"))
	write(t, rp, []byte("{oops"))
	if _, err := Compare(bp, rp, check.DefaultRules(0.01, 0), false); err == nil || !strings.Contains(err.Error(), rp) {
		t.Fatalf("err = %v, want it to name %s", err, rp)
	}
	write(t, rp, doc("0.4123"))
	res, err := Compare(bp, rp, check.DefaultRules(0.01, 0), false)
	if err != nil || res.Regressed {
		t.Fatalf("res = %+v, err = %v; want no regression", res, err)
	}
	write(t, rp, doc("0.5"))
	res, err = Compare(bp, rp, check.DefaultRules(0.01, 0), false)
	if err != nil || !res.Regressed {
		t.Fatalf("res = %+v, err = %v; want a regression", res, err)
	}
}

// TestVerifyOutputs: the files a metrics document vouches for pass as
// hashed, and a changed or missing one is named.
func TestVerifyOutputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	write(t, out, []byte("{\"a\":1}\n"))
	n, sum, err := Hash(out)
	if err != nil || n != 8 || len(sum) != 32 {
		t.Fatalf("Hash = %d, %q, %v", n, sum, err)
	}
	mp := filepath.Join(dir, "m.json")
	vouched := []metrics.OutputFile{{Path: "out.jsonl", Bytes: n, XXH3: sum}}
	if err := VerifyOutputs(mp, vouched); err != nil {
		t.Fatal(err)
	}
	write(t, out, []byte("{\"a\":2}\n"))
	if err := VerifyOutputs(mp, vouched); err == nil || !strings.Contains(err.Error(), "not the outputs of that run") {
		t.Fatalf("changed output: err = %v", err)
	}
	if err := VerifyOutputs(mp, []metrics.OutputFile{{Path: "gone.jsonl"}}); err == nil || !strings.Contains(err.Error(), "gone.jsonl") {
		t.Fatalf("missing output: err = %v", err)
	}
	write(t, mp, []byte(`{"run": {"outputs": [{"path": "out.jsonl", "bytes": 8, "xxh3_128": "`+sum+`"}]}}`))
	if err := VerifyRunOutputs(mp); err == nil || !strings.Contains(err.Error(), "--no-verify-outputs") {
		t.Fatalf("VerifyRunOutputs: err = %v", err)
	}
}

// TestVerifyOutputsSameLength: one byte of an output changed, its length
// kept (as a resumed run reusing a changed segment wrote), is caught: the
// size alone would pass it.
func TestVerifyOutputsSameLength(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	rec := []byte("{\"id\":\"r-1\",\"tokens\":1234}\n")
	write(t, out, rec)
	n, sum, err := Hash(out)
	if err != nil {
		t.Fatal(err)
	}
	vouched := []metrics.OutputFile{{Path: "out.jsonl", Bytes: n, XXH3: sum}}
	mp := filepath.Join(dir, "m.json")
	for i := range rec {
		changed := append([]byte(nil), rec...)
		changed[i] ^= 0x01
		write(t, out, changed)
		if err := VerifyOutputs(mp, vouched); err == nil || !strings.Contains(err.Error(), "not the outputs of that run") {
			t.Fatalf("byte %d changed: err = %v", i, err)
		}
	}
}
