package tokenize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSnapshot lays out a Hugging Face cache entry for id in cache as
// huggingface_hub does (blobs, refs/<ref>, snapshots/<commit>/file as a
// symlink to the blob) and returns the snapshot directory.
func fakeSnapshot(t *testing.T, cache, id, ref, commit, file, src string) string {
	t.Helper()
	repo := filepath.Join(cache, "models--"+strings.ReplaceAll(id, "/", "--"))
	snap := filepath.Join(repo, "snapshots", commit)
	for _, d := range []string{filepath.Join(repo, "blobs"), filepath.Join(repo, "refs"), snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(repo, "blobs", "blob-"+commit)
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "blobs", "blob-"+commit), filepath.Join(snap, file)); err != nil {
		t.Fatal(err)
	}
	if ref != "" {
		if err := os.WriteFile(filepath.Join(repo, "refs", ref), []byte(commit), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return snap
}

func TestHubCacheDir(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HF_HUB_CACHE": "/a", "HF_HOME": "/b"}, "/a"},
		{map[string]string{"HUGGINGFACE_HUB_CACHE": "/c", "HF_HOME": "/b"}, "/c"},
		{map[string]string{"HF_HOME": "/b", "XDG_CACHE_HOME": "/x"}, "/b/hub"},
		{map[string]string{"XDG_CACHE_HOME": "/x"}, "/x/huggingface/hub"},
		{map[string]string{}, filepath.Join(home, ".cache", "huggingface", "hub")},
	} {
		for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"} {
			t.Setenv(v, tt.env[v])
		}
		if got := HubCacheDir(); got != tt.want {
			t.Errorf("HubCacheDir() with %v = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestResolveNames(t *testing.T) {
	src := hfModelPath(t, "qwen3")
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	const c1, c2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	snapMain := fakeSnapshot(t, cache, "Org/Model-A", "main", c1, "tokenizer.json", src)
	fakeSnapshot(t, cache, "Org/Model-A", "v2", c2, "tokenizer.json", src)

	want := hfTokenizer(t, "qwen3").Encode("Hello, 世界 123")
	for _, tt := range []struct{ name, rev, wantPath string }{
		{"Org/Model-A", "", filepath.Join(cache, "models--Org--Model-A", "snapshots", c1, "tokenizer.json")},
		{"Org/Model-A", "v2", filepath.Join(cache, "models--Org--Model-A", "snapshots", c2, "tokenizer.json")},
		{"Org/Model-A", c2, filepath.Join(cache, "models--Org--Model-A", "snapshots", c2, "tokenizer.json")},
		{snapMain, "", filepath.Join(snapMain, "tokenizer.json")},
		{src, "", src},
	} {
		c, err := NewRevision(tt.name, tt.rev)
		if err != nil {
			t.Fatalf("NewRevision(%q, %q): %v", tt.name, tt.rev, err)
		}
		hf := c.(*HFTokenizer)
		if hf.Name() != tt.wantPath {
			t.Errorf("NewRevision(%q, %q) loaded %s, want %s", tt.name, tt.rev, hf.Name(), tt.wantPath)
		}
		if got := hf.Encode("Hello, 世界 123"); !equalInts(got, want) {
			t.Errorf("%q: ids %v, want %v", tt.name, got, want)
		}
		if Describe(c).Hash == "" || Describe(c).Kind != KindHFBPE {
			t.Errorf("%q: Describe = %+v", tt.name, Describe(c))
		}
	}
	// The same file through two names is loaded once.
	a, _ := New("Org/Model-A")
	b, _ := New(snapMain)
	if a != b {
		t.Error("the same snapshot loaded twice")
	}

	for _, tt := range []struct{ name, rev, want string }{
		{"Org/Missing", "", "huggingface-cli download Org/Missing tokenizer.json"},
		{"Org/Model-A", "nope", "refs/nope does not exist"},
		{"Org/Model-A", "3333333333333333333333333333333333333333", "holds neither tokenizer.json"},
		{"./no/such/file.json", "", "not an encoding"},
		{t.TempDir(), "", "holds neither tokenizer.json nor tiktoken.model"},
	} {
		_, err := NewRevision(tt.name, tt.rev)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewRevision(%q, %q) error %v, want it to contain %q", tt.name, tt.rev, err, tt.want)
		}
		if err != nil && isModelID(tt.name) && !strings.Contains(err.Error(), cache) {
			t.Errorf("error %v does not say where it looked (%s)", err, cache)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHFRefused checks that tokenizer kinds that cannot be counted
// exactly are refused, naming the kind.
func TestHFRefused(t *testing.T) {
	for _, tt := range []struct{ json, want string }{
		{`{"model": {"type": "Unigram", "vocab": []}}`, "model type Unigram"},
		{`{"model": {"type": "WordPiece", "vocab": {}}}`, "model type WordPiece"},
		// Model fields that would change the ids are refused naming the
		// field; so is any field tokenizers does not read.
		{`{"model": {"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []}}`, "model.dropout: BPE dropout 0.1 is not supported"},
		{`{"model": {"type": "BPE", "dropout": 2, "vocab": {"a": 0}, "merges": []}}`, "model.dropout: 2 is not between 0 and 1"},
		{`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "cache": 3}}`, "model.cache: unknown BPE model field"},
		{`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "a c"]}}`, `model.merges[1]: "c" is not in the vocabulary`},
		{`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b c"]}}`, `model.merges[0]: "a b c" is not two tokens separated by one space`},
		{`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}}`, `model.vocab["b"]: id 0 already given to "a"`},
		{`{"model": {"type": "BPE", "unk_token": "<unk>", "vocab": {"a": 0}, "merges": []}}`, `model.unk_token "<unk>" is not in the vocabulary`},
		{`{"model": {"type": "BPE", "vocab": {}, "merges": []}}`, "model.vocab: no tokens"},
		{`{"model": {"type": "BPE", "vocab": {"a": 0}}}`, "model.merges: missing"},
		{`{"model": {"type": "Mystery", "vocab": {}}}`, `model.type: unknown model type "Mystery"`},
		// A byte-level BPE with a part we do not have, or a malformed
		// one, is refused naming it and its JSON path.
		{`{"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "normalizer.type: normalizer Precompiled is not supported"},
		{`{"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Replace"}]}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "normalizer.normalizers[1].content: Replace without a content"},
		{`{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "UnicodeScripts"}, {"type": "ByteLevel"}]}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "pre_tokenizer.pretokenizers[0].type: pre-tokenizer UnicodeScripts is not supported"},
		{`{"normalizer": {"type": "Replace", "pattern": {"Regex": "x*"}, "content": "-"}, "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "normalizer.pattern.Regex: a Replace pattern that matches the empty string is not supported"},
		{`{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"}, {"type": "ByteLevel"}]}, "normalizer": {"type": "Strip", "strip_left": true}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "pre_tokenizer.pretokenizers[0].prepend_scheme: Metaspace with prepend_scheme first behind the normalizer Strip"},
		{`{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Metaspace", "replacement": "▁"}]}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "pre_tokenizer.pretokenizers[1].type: pre-tokenizer Metaspace after ByteLevel is not supported"},
		{`{"normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "normalizer.type: normalizer BertNormalizer is not supported"},
		{`{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"String": "x"}, "behavior": "Merged"}, {"type": "ByteLevel"}]}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`, "pre_tokenizer.pretokenizers[0].behavior: unknown split behavior \"Merged\""},
	} {
		p := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(p, []byte(tt.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := New(p)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.json, err, tt.want)
		}
	}
}

// TestResolveNamesWhatItLookedFor: a revision with a name that is not a
// model id is an error, not ignored; a missing local tokenizer file is
// said to be missing (not sent to the Hugging Face cache); "~/" names
// the home directory, as in a YAML config.
func TestResolveNamesWhatItLookedFor(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(p, []byte(`{"model": {"type": "Unigram", "vocab": []}}`), 0o644)
	for _, name := range []string{O200kBase, Chars4, p, dir} {
		if _, err := NewRevision(name, "dev"); err == nil || !strings.Contains(err.Error(), "a revision (dev) is for a Hugging Face model id") {
			t.Errorf("%s with a revision: %v", name, err)
		}
	}
	t.Chdir(t.TempDir())
	for _, name := range []string{"tokenizer.json", "models/tiktoken.model"} {
		if _, err := New(name); err == nil || !strings.Contains(err.Error(), "no "+name+" from the working directory") {
			t.Errorf("%s missing: %v", name, err)
		}
	}
	t.Setenv("HOME", dir)
	if _, err := New("~/tokenizer.json"); err == nil || !strings.Contains(err.Error(), "model type Unigram") {
		t.Errorf("~/tokenizer.json: %v (want the file read, and refused for its kind)", err)
	}
}
