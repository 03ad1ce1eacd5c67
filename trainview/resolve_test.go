package trainview

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/tokenize"
)

// Resolve: unset is the tokenizer's template when it has one, else none;
// auto insists; none is none; a .jinja takes the tokenizer's special
// tokens when none are beside it.
func TestResolve(t *testing.T) {
	o200k, err := tokenize.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl, err := Resolve("", o200k); tmpl != nil || err != nil {
		t.Errorf("unset with o200k_base: %v, %v", tmpl, err)
	}
	if _, err := Resolve("auto", o200k); err == nil || !strings.Contains(err.Error(), "has no chat template") {
		t.Errorf("auto with o200k_base: %v", err)
	}
	dir, why := modelDir("tokenizer-qwen3")
	if why != "" {
		t.Skip(why)
	}
	qwen, err := tokenize.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"", "auto"} {
		tmpl, err := Resolve(spec, qwen)
		if err != nil || tmpl == nil || tmpl.Path != filepath.Join(dir, "tokenizer_config.json") || len(tmpl.Hash) != 64 {
			t.Errorf("%q with Qwen3: %+v, %v", spec, tmpl, err)
		}
	}
	if tmpl, err := Resolve("none", qwen); tmpl != nil || err != nil {
		t.Errorf("none: %v, %v", tmpl, err)
	}
	j := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(j, []byte(`{{ eos_token }}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := Resolve(j, qwen)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := tmpl.Render([]byte(`[]`), nil); err != nil || text != "<|im_end|>" {
		t.Errorf("a .jinja with the tokenizer's special tokens: %q, %v", text, err)
	}
	if _, err := Resolve(filepath.Join(t.TempDir(), "missing.jinja"), qwen); err == nil || !strings.Contains(err.Error(), "missing.jinja") {
		t.Errorf("a missing path: %v", err)
	}
}
