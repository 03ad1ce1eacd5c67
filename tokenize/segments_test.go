package tokenize

import (
	"math/rand/v2"
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
	checkSegments(t, tok, m, texts)
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

// checkSegments checks that Count of each text is the sum of Count over
// its Segments plus one per added token, and that CountStretch (also
// through m) is Count on each stretch.
func checkSegments(t *testing.T, tok *HFTokenizer, m *MemoCounter, texts []string) {
	t.Helper()
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
}

// DeepSeek-V3's turn markers are normalized added tokens and nothing
// normalizes its text: they split stretches too, and the counts still
// add up, with the markers beside white space, text, digits and each
// other, and among its special tokens.
func TestSegmentsNormalizedAdded(t *testing.T) {
	tok := hfTokenizer(t, "deepseek_v3")
	if !tok.rawNormSplit() {
		t.Fatal("deepseek_v3: normalized added tokens do not split stretches")
	}
	m := Memo(tok, 64)
	texts := []string{
		"<｜User｜>hello<｜Assistant｜>world<｜end▁of▁sentence｜>",
		"<｜begin▁of▁sentence｜>You are helpful.\n\n<｜User｜> 123 abc \n<｜Assistant｜></think>ok<｜end▁of▁sentence｜><｜User｜>",
		"<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{\"a\": 12345}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>",
		"x<｜User｜><｜User｜>  <｜Assistant｜>\n",
		strings.Repeat("中文 text 42<｜User｜>\n\n", 20),
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		x := randomText(rng, 1+rng.IntN(80))
		at := runeStarts(x)
		i := at[rng.IntN(len(at))]
		texts = append(texts, x[:i]+"<｜Assistant｜>"+x[i:]+"<｜User｜>")
	}
	checkSegments(t, tok, m, texts)
	if n, _ := tok.Segments("a<｜User｜>b<｜end▁of▁sentence｜>", func(p string) {
		if strings.Contains(p, "<｜") {
			t.Errorf("stretch %q holds a marker", p)
		}
	}); n != 2 {
		t.Errorf("%d added tokens found, want 2", n)
	}
}
