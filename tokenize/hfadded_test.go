package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveFind is addedTrie.find by brute force: the token that starts
// first, and of those the longest.
func naiveFind(toks []string, s string, i int) (start, end int) {
	for ; i < len(s); i++ {
		best := -1
		for _, t := range toks {
			if strings.HasPrefix(s[i:], t) && len(t) > best {
				best = len(t)
			}
		}
		if best > 0 {
			return i, i + best
		}
	}
	return -1, -1
}

// TestAddedTrieFind checks find against brute force on random texts, for
// tokens that all start with `<` (the fast path over IndexByte) and for
// tokens with several first bytes, one of them a single byte.
func TestAddedTrieFind(t *testing.T) {
	sets := [][]string{
		{"<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "<|endoftext|>", "<|im"},
		{"<|eot_id|>", "<|start_header_id|>", "x", "[INST]", "[/INST]", "ab", "<s>"},
	}
	frags := []string{"<", "|", "im_start", "im", "_end", "|>", ">", "/", "think", "tool_call", "x", "ab", "a", "[", "INST]", "/INST]", "s", " ", "é", "<<", "<|eot_id|>"}
	r := rand.New(rand.NewPCG(5, 6))
	for _, toks := range sets {
		tr := newAddedTrie()
		for k, tok := range toks {
			tr.add(tok, k)
		}
		for range 5000 {
			var b strings.Builder
			for range r.IntN(30) {
				b.WriteString(frags[r.IntN(len(frags))])
			}
			s := b.String()
			for i := 0; i <= len(s); {
				start, end, id := tr.find(s, i)
				ws, we := naiveFind(toks, s, i)
				if start != ws || end != we || start >= 0 && s[start:end] != toks[id] {
					t.Fatalf("%q from %d: find %d %d (id %d), want %d %d", s, i, start, end, id, ws, we)
				}
				if start < 0 {
					break
				}
				i = end
			}
		}
	}
}
