package job

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/tokenize"
)

// TestRunDirRefusesOtherSettings: an unfinished run goes on only under the
// settings it was started with — config, inputs, task size, tokenizer
// file, --group-by, whether outcomes and the report are kept — and a
// shard never discards a run: it joins one with its own settings, even
// with --overwrite (its siblings' run), and refuses one with others.
func TestRunDirRefusesOtherSettings(t *testing.T) {
	// The same tokenizer file found elsewhere (another machine's cache)
	// is the same tokenizer.
	a, b := tokenize.Info{Name: "/m1/hub/x/tokenizer.json", Kind: "hf", Hash: "aaa"}, tokenize.Info{Name: "/m2/hub/x/tokenizer.json", Kind: "hf", Hash: "aaa"}
	if !sameTokenizer(a, b) {
		t.Error("one tokenizer file under two paths: not the same")
	}
	if sameTokenizer(tokenize.Info{Name: "o200k_base"}, tokenize.Info{Name: "cl100k_base"}) {
		t.Error("two encodings: the same")
	}
	base := manifest{Version: 1, Tool: "t", Config: "c", Listing: "l", TaskSize: 8, Tasks: 2,
		Tokenizer: tokenize.Info{Name: "tok", Hash: "aaa"}}
	nop := func(string, ...any) {}
	for _, c := range []struct {
		name string
		edit func(*manifest)
		want string
	}{
		{"config", func(m *manifest) { m.Config = "c2" }, "the config differs"},
		{"inputs", func(m *manifest) { m.Listing = "l2" }, "the input files differ"},
		{"task size", func(m *manifest) { m.TaskSize, m.Tasks = 16, 1 }, "--target-task-size"},
		{"tokenizer file", func(m *manifest) { m.Tokenizer.Hash = "bbb" }, "the tokenizer differs (tok sha256 aaa, now tok sha256 bbb)"},
		{"encoding", func(m *manifest) { m.Tokenizer = tokenize.Info{Name: "cl100k_base"} }, "the tokenizer differs"},
		{"group-by", func(m *manifest) { m.Spec.GroupBy = "model" }, `--group-by "", now "model"`},
		{"outcomes", func(m *manifest) { m.Spec.Outcomes = "o.jsonl" }, "--outcomes or --report differ"},
		{"report", func(m *manifest) { m.Spec.Report = "r.html" }, "--outcomes or --report differ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			anchor := filepath.Join(t.TempDir(), "out.jsonl")
			first, err := openRunDir(anchor, base, false, false, false, nop)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(first.markerPath(0), []byte("{}\n"), 0o644)
			other := base
			c.edit(&other)
			if _, err := openRunDir(anchor, other, false, false, false, nop); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("other settings: %v; want a refusal naming %q", err, c.want)
			}
			if _, err := openRunDir(anchor, other, false, true, true, nop); err == nil || !strings.Contains(err.Error(), "a shard does not discard it") {
				t.Fatalf("a shard with --overwrite: %v; want a refusal", err)
			}
			if _, err := os.Stat(first.markerPath(0)); err != nil {
				t.Fatal("a refused run removed the marker:", err)
			}
			// A shard of the same run joins it, --overwrite or not.
			if _, err := openRunDir(anchor, base, false, true, true, nop); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(first.markerPath(0)); err != nil {
				t.Fatal("a shard with --overwrite discarded its siblings' run:", err)
			}
			// Without shards, --overwrite discards it.
			d, err := openRunDir(anchor, other, false, true, false, nop)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(d.markerPath(0)); !os.IsNotExist(err) {
				t.Fatalf("--overwrite kept the old run's marker: %v", err)
			}
		})
	}
}

// TestRunDirLinkRefused: a symbolic link planted at the run directory's
// name (a name the run chose) is refused, naming it: the run writes
// nothing through it.
func TestRunDirLinkRefused(t *testing.T) {
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl", rec)
	elsewhere := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	if err := os.Symlink(elsewhere, runDirOf(out)); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Spec{Config: config.Default(), Input: in, Output: out})
	if err == nil || !strings.Contains(err.Error(), runDirOf(out)) {
		t.Fatalf("got %v, want an error naming %s", err, runDirOf(out))
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("written through the link: %d entries", len(ents))
	}
}
