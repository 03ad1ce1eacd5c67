package tokenize

import "strings"

// addedTrie finds added tokens in text the way Hugging Face's
// AddedVocabulary does (Aho-Corasick, leftmost-longest): the match that
// starts first, and of those the longest.
type addedTrie struct {
	nodes []trieNode
	first [256]bool // bytes that start some token
	// only is the one byte that starts every token, when they share it
	// (as the `<` of every added token of Qwen3 and Llama-3 does); -1 if
	// they do not, or the trie is empty.
	only int
	// pair has bit b1 of word b0<<2|b1>>6 set when some token starts with
	// the bytes b0 b1, or is the one byte b0 (then every b1): a `<` in
	// code or markup is mostly followed by a byte no token has there, and
	// is then passed over without walking the trie.
	pair [256 * 4]uint64
}

type trieNode struct {
	edges map[byte]int32
	id    int32 // token id ending here, or -1
}

func newAddedTrie() *addedTrie {
	return &addedTrie{nodes: []trieNode{{id: -1}}, only: -1}
}

func (t *addedTrie) add(tok string, id int) {
	if tok == "" {
		return
	}
	switch {
	case t.empty():
		t.only = int(tok[0])
	case t.only != int(tok[0]):
		t.only = -1
	}
	t.first[tok[0]] = true
	if len(tok) == 1 {
		for b1 := range 256 {
			t.pair[int(tok[0])<<2|b1>>6] |= 1 << (b1 & 63)
		}
	} else {
		t.pair[int(tok[0])<<2|int(tok[1])>>6] |= 1 << (tok[1] & 63)
	}
	n := int32(0)
	for i := 0; i < len(tok); i++ {
		if t.nodes[n].edges == nil {
			t.nodes[n].edges = map[byte]int32{}
		}
		c, ok := t.nodes[n].edges[tok[i]]
		if !ok {
			c = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{id: -1})
			t.nodes[n].edges[tok[i]] = c
		}
		n = c
	}
	t.nodes[n].id = int32(id)
}

func (t *addedTrie) empty() bool { return len(t.nodes) == 1 }

// find returns the first added token in s at or after i: its start, end
// and id; start is -1 when there is none.
func (t *addedTrie) find(s string, i int) (start, end, id int) {
	for ; i < len(s); i++ {
		if t.only >= 0 {
			// Jump to the next candidate start (vectorised).
			k := strings.IndexByte(s[i:], byte(t.only))
			if k < 0 {
				break
			}
			i += k
		} else if !t.first[s[i]] {
			continue
		}
		if i+1 < len(s) && t.pair[int(s[i])<<2|int(s[i+1])>>6]&(1<<(s[i+1]&63)) == 0 {
			continue // no token starts with these two bytes
		}
		n, best, bestID := int32(0), -1, -1
		for j := i; j < len(s); j++ {
			c, ok := t.nodes[n].edges[s[j]]
			if !ok {
				break
			}
			n = c
			if t.nodes[n].id >= 0 {
				best, bestID = j+1, int(t.nodes[n].id)
			}
		}
		if best > 0 {
			return i, best, bestID
		}
	}
	return -1, -1, -1
}
