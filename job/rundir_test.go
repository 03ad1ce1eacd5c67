package job

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/tokenize"
)

// TestRunDirRefusesOtherSettings: an unfinished run goes on only under the
// settings it was started with — config, inputs, task size, tokenizer
// file, --group-by, whether outcomes and the report are kept — and a
// shard never discards a run: it joins one with its own settings, even
// with --overwrite (its siblings' run), and refuses one with others.
func TestRunDirRefusesOtherSettings(t *testing.T) {
	t.Parallel()
	// The same tokenizer file found elsewhere (another machine's cache)
	// is the same tokenizer.
	a, b := tokenize.Info{Name: "/m1/hub/x/tokenizer.json", Kind: "hf", Hash: "aaa"}, tokenize.Info{Name: "/m2/hub/x/tokenizer.json", Kind: "hf", Hash: "aaa"}
	if !sameTokenizer(a, b) {
		t.Error("one tokenizer file under two paths: not the same")
	}
	if sameTokenizer(tokenize.Info{Name: "o200k_base"}, tokenize.Info{Name: "cl100k_base"}) {
		t.Error("two encodings: the same")
	}
	base := manifest{Version: 1, Tool: "t", Build: "b1", Config: "c", Listing: "l", TaskSize: 8, Tasks: 2,
		Tokenizer: tokenize.Info{Name: "tok", Hash: "aaa"}, ImageTokens: "openai"}
	nop := func(string, ...any) {}
	for _, c := range []struct {
		name string
		edit func(*manifest)
		want string
	}{
		{"build", func(m *manifest) { m.Build = "b2" }, "another trajcompress build started it (b1), this is b2"},
		{"config", func(m *manifest) { m.Config = "c2" }, "the config differs"},
		{"inputs", func(m *manifest) { m.Listing = "l2" }, "the input files differ"},
		{"task size", func(m *manifest) { m.TaskSize, m.Tasks = 16, 1 }, "--target-task-size"},
		{"tokenizer file", func(m *manifest) { m.Tokenizer.Hash = "bbb" }, "the tokenizer differs (tok sha256 aaa, now tok sha256 bbb)"},
		{"encoding", func(m *manifest) { m.Tokenizer = tokenize.Info{Name: "cl100k_base"} }, "the tokenizer differs"},
		// auto's rule comes from a preprocessor_config.json that may change
		// under the same config.
		{"image rule", func(m *manifest) { m.ImageTokens = "qwen(patch=14,merge=2,min_pixels=3136,max_pixels=12845056)" }, "the image token rule differs (openai, now qwen(patch=14"},
		// A template file (or a model's tokenizer_config.json) may change
		// under the same --chat-template setting.
		{"chat template", func(m *manifest) { m.ChatTemplate = "ccc" }, "the chat template differs (sha256 none, now ccc)"},
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

// TestRunDirOfUnrecordedBuild: a run.json written before
// builds were recorded was written by another build: refused, saying so,
// unless --overwrite.
func TestRunDirOfUnrecordedBuild(t *testing.T) {
	t.Parallel()
	anchor := filepath.Join(t.TempDir(), "out.jsonl")
	nop := func(string, ...any) {}
	old := manifest{Version: 1, Tool: "t", Config: "c", Listing: "l", TaskSize: 8, Tasks: 2}
	if _, err := openRunDir(anchor, old, false, false, false, nop); err != nil {
		t.Fatal(err)
	}
	now := old
	now.Build = Build()
	_, err := openRunDir(anchor, now, false, false, false, nop)
	if err == nil || !strings.Contains(err.Error(), "another trajcompress build started it (a build that did not record itself), this is "+Build()) || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("a run.json without a build: %v", err)
	}
	if _, err := openRunDir(anchor, now, false, true, false, nop); err != nil {
		t.Fatalf("--overwrite: %v", err)
	}
}

// TestBuildOf: a build is named by its module version and VCS revision
// when it recorded them, else by the executable's hash (a dev build, a
// checkout with changes not committed).
func TestBuildOf(t *testing.T) {
	t.Parallel()
	exe := func() string { return "executable sha256:abc" }
	bi := func(version string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Path: "m/cmd/x", Main: debug.Module{Path: "m", Version: version}}
		for i := 0; i < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{nil, "executable sha256:abc"},
		{bi("(devel)"), "executable sha256:abc"},
		{bi("v1.2.3"), "m v1.2.3"},
		{bi("v1.2.4-0.20260101-abcdef", "vcs.revision", "abcdef", "vcs.modified", "false"), "m v1.2.4-0.20260101-abcdef vcs abcdef"},
		{bi("(devel)", "vcs.revision", "abcdef", "vcs.modified", "true"), "m (devel) vcs abcdef+modified executable sha256:abc"},
	} {
		if got := buildOf(c.bi, exe); got != c.want {
			t.Errorf("%+v: %q, want %q", c.bi, got, c.want)
		}
	}
	if b := Build(); b == "" || b != Build() {
		t.Fatalf("Build() = %q", b)
	}
}

// TestRunDirLinkRefused: a symbolic link planted at the run directory's
// name (a name the run chose) is refused, naming it: the run writes
// nothing through it.
func TestRunDirLinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl", rec)
	elsewhere := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	if err := os.Symlink(elsewhere, runDirOf(out)); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in, Paths: Paths{Output: out}}})
	if err == nil || !strings.Contains(err.Error(), runDirOf(out)) {
		t.Fatalf("got %v, want an error naming %s", err, runDirOf(out))
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("written through the link: %d entries", len(ents))
	}
}

// TestDamagedManifest: a run manifest that is not one (1 byte, as the
// NaN price once wrote, or values no run writes) is a usage error naming
// the file and how to go on, and --overwrite starts over; it used to fail
// every later run on the output, --overwrite too. A NaN price is refused
// before any run directory is made.
func TestDamagedManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl", rec)
	spec := Spec{Config: config.Default(), Settings: Settings{Input: in}}
	if _, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in, PriceIn: math.NaN()}}); !asUsage(err, new(UsageError)) || !strings.Contains(err.Error(), "price in") {
		t.Fatalf("NaN price: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("a NaN price wrote %d entries", len(ents))
	}
	runDir := runDirOf(filepath.Join(dir, "a_compressed.jsonl"))
	for name, body := range map[string]string{
		"one byte":       "\n",
		"cut short":      `{"version": 1, "config_fingerprint": "sha`,
		"negative tasks": `{"version": 1, "config_fingerprint": "c", "listing_fingerprint": "l", "tasks": -1}`,
		"no fingerprint": `{"version": 1, "tasks": 1}`,
	} {
		t.Run(name, func(t *testing.T) {
			os.MkdirAll(filepath.Join(runDir, "tasks"), 0o755)
			mp := filepath.Join(runDir, manifestName)
			os.WriteFile(mp, []byte(body), 0o644)
			_, err := Run(context.Background(), spec)
			if !asUsage(err, new(UsageError)) || !strings.Contains(err.Error(), mp) || !strings.Contains(err.Error(), "--overwrite") {
				t.Fatalf("damaged manifest: %v", err)
			}
			over := spec
			over.Overwrite = true
			if _, err := Run(context.Background(), over); err != nil {
				t.Fatalf("--overwrite: %v", err)
			}
			if _, err := os.Stat(runDir); !os.IsNotExist(err) {
				t.Fatalf("run directory left: %v", err)
			}
		})
	}
}

// TestConfigDiffNamesSettings: a run refused for another config names each
// setting that differs, with its old and new value, and not the settings
// that cannot change the output (workers).
func TestConfigDiffNamesSettings(t *testing.T) {
	t.Parallel()
	a, b := config.Default(), config.Default()
	b.Compression.TargetMaxTokens = 9000
	b.Output.SummaryRole = "assistant"
	b.Processing.NumWorkers = 7
	ja, fa := jobcore.SampledConfigFingerprint(a, nil)
	jb, fb := jobcore.SampledConfigFingerprint(b, nil)
	ma := manifest{Version: 1, Config: fa, Listing: "l", Spec: specJSON{Config: ja}}
	mb := manifest{Version: 1, Config: fb, Listing: "l", Spec: specJSON{Config: jb}}
	why := ma.mismatch(mb)
	want := `the config differs (compression.target_max_tokens 15250 → 9000, output.summary_role "user" → "assistant")`
	if why != want {
		t.Fatalf("mismatch: %s\nwant %s", why, want)
	}
	mb.Spec.Sample = &Sample{Percent: 10, Seed: 1}
	_, mb.Config = jobcore.SampledConfigFingerprint(a, mb.Spec.Sample)
	mb.Spec.Config = ja
	if why := ma.mismatch(mb); !strings.Contains(why, "--sample-percent unset → 10") {
		t.Fatalf("sample: %s", why)
	}
}
