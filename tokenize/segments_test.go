package tokenize

import (
	"strings"
	"testing"
)

// Count of a text is the sum of Count over its Segments plus one per
// added token, for texts with and without added tokens, adjacent ones,
// and at both ends.
func TestSegmentsSumToCount(t *testing.T) {
	tok := hfTokenizer(t, "qwen3")
	m := Memo(tok, 64)
	texts := []string{
		"",
		"plain text, no added token",
		"<|im_start|>",
		"<|im_start|><|im_start|>x",
		"a<|im_start|>b <|im_start|> c<|im_start|>",
		strings.Repeat("word <|im_start|>\n\n", 20),
		"<|im_start|>user\n" + strings.Repeat("a long stretch the memo takes, twice. ", 20) + "<|im_end|>",
		"<|im_start|>user\n" + strings.Repeat("a long stretch the memo takes, twice. ", 20) + "<|im_end|>",
	}
	for _, s := range texts {
		var sum, parts int
		added, ok := tok.Segments(s, func(p string) {
			if p == "" {
				t.Errorf("%q: empty stretch", s)
			}
			sum += tok.Count(p)
			if k, km := tok.CountStretch(p), m.CountStretch(p); k != tok.Count(p) || km != k {
				t.Errorf("%q: CountStretch %d, memo %d, Count %d", p, k, km, tok.Count(p))
			}
			parts++
		})
		if !ok {
			t.Fatalf("%q: not split", s)
		}
		if sum+added != tok.Count(s) {
			t.Errorf("%q: %d stretches count %d + %d added, Count %d", s, parts, sum, added, tok.Count(s))
		}
	}
	if n, _ := tok.Segments("x<|im_start|><|im_end|>", func(string) {}); n != 2 {
		t.Errorf("%d added tokens found, want 2", n)
	}
	if n, ok := m.Segments("a<|im_start|>b", func(string) {}); !ok || n != 1 {
		t.Errorf("memo: %d, %v", n, ok)
	}
	if _, ok := tok.Segments("\xff<|im_start|>", func(string) {}); ok {
		t.Errorf("invalid UTF-8 split")
	}
}
