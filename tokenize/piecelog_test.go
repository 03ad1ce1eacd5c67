package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPieceLogExact logs the count of a long text made of every golden
// text between added tokens (as a chat template renders turns), then
// counts parts of it from the log: each golden text where it lies, and
// random spans (cut anywhere: inside pieces, inside added tokens, inside
// UTF-8 sequences). Every count must equal Count of a copy of the part.
// (Golden texts with ill-formed UTF-8 are left out: a text holding one is
// counted from a repaired copy, so nothing of it would be logged.)
func TestPieceLogExact(t *testing.T) {
	var cases []hfGoldenCase
	for _, g := range loadHFGolden(t) {
		if utf8.ValidString(g.raw) {
			cases = append(cases, g)
		}
	}
	for _, key := range hfModelOrder {
		t.Run(key, func(t *testing.T) {
			tk := hfTokenizer(t, key)
			var b strings.Builder
			at := make([]int, len(cases))
			for i, g := range cases {
				b.WriteString("<|im_start|>user\n")
				at[i] = b.Len()
				b.WriteString(g.raw)
				b.WriteString("<|im_end|>\n")
			}
			text := b.String()
			var log PieceLog
			log.Reset(text)
			if n, want := tk.CountLogged(text, &log), tk.Count(strings.Clone(text)); n != want {
				t.Fatalf("CountLogged %d, Count %d", n, want)
			}
			if log.Len() == 0 {
				t.Fatal("nothing logged")
			}
			for i, g := range cases {
				part := text[at[i] : at[i]+len(g.raw)]
				if n := tk.CountReusing(part, &log); n != len(g.ids[key]) {
					t.Errorf("golden.jsonl:%d: from the log %d, want %d", g.line, n, len(g.ids[key]))
				}
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 2000 {
				i := r.IntN(len(text))
				j := min(len(text), i+r.IntN(4000))
				if n, want := tk.CountReusing(text[i:j], &log), tk.Count(strings.Clone(text[i:j])); n != want {
					t.Errorf("text[%d:%d]: from the log %d, want %d", i, j, n, want)
				}
			}
			// A text outside the log's memory, and one logged out of order.
			if n, want := tk.CountReusing(strings.Clone(text[:5000]), &log), tk.Count(text[:5000]); n != want {
				t.Errorf("a copy: %d, want %d", n, want)
			}
			if n, want := tk.CountLogged(text[100:9000], &log), tk.Count(strings.Clone(text[100:9000])); n != want {
				t.Errorf("logged again out of order: %d, want %d", n, want)
			}
		})
	}
}

// TestPieceLogMemo: MemoCounter passes logging and reuse through, and
// answers a text it holds from the memo.
func TestPieceLogMemo(t *testing.T) {
	tk := hfTokenizer(t, "qwen3")
	m := Memo(tk, 1024)
	text := strings.Repeat("The memo answers texts it has seen twice. ", 40) + "\xff tail"
	var log PieceLog
	log.Reset(text)
	want := tk.Count(strings.Clone(text))
	for range 3 {
		if n := m.CountLogged(text, &log); n != want {
			t.Errorf("CountLogged %d, want %d", n, want)
		}
		if n := m.CountReusing(text[:len(text)-7], &log); n != tk.Count(strings.Clone(text[:len(text)-7])) {
			t.Errorf("CountReusing %d", n)
		}
	}
	if h, _ := m.Stats(); h == 0 {
		t.Error("the memo answered nothing")
	}
}
