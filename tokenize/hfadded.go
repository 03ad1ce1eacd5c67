package tokenize

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
	opts map[int]uint8 // options by token id; nil: none has any
}

type trieNode struct {
	edges []trieEdge // by byte, ascending (most nodes have one)
	id    int32      // token id ending here, or -1
}

type trieEdge struct {
	b  byte
	to int32
}

// child returns the node that byte c leads to from node n.
func (t *addedTrie) child(n int32, c byte) (int32, bool) {
	for _, e := range t.nodes[n].edges {
		if e.b >= c {
			return e.to, e.b == c
		}
	}
	return 0, false
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
		c, ok := t.child(n, tok[i])
		if !ok {
			c = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{id: -1})
			es := t.nodes[n].edges
			k, _ := slices.BinarySearchFunc(es, tok[i], func(e trieEdge, b byte) int { return int(e.b) - int(b) })
			t.nodes[n].edges = slices.Insert(es, k, trieEdge{tok[i], c})
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
			c, ok := t.child(n, s[j])
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

// Options of an added token (tokenizer.json added_tokens[k]).
const (
	addedLStrip     = 1 << iota // takes the white space before it
	addedRStrip                 // takes the white space after it
	addedSingleWord             // only between non-word characters
)

// setOpts records token id's options.
func (t *addedTrie) setOpts(id int, opts uint8) {
	if opts == 0 {
		return
	}
	if t.opts == nil {
		t.opts = map[int]uint8{}
	}
	t.opts[id] = opts
}

// next returns the next added token of s at or after i as tokenizers'
// AddedVocabulary.find_matches takes it: a single_word token with a word
// character beside it is passed over; lstrip and rstrip widen the match
// over the white space before (not before prev, the end of the previous
// match) and after it. from is where the search goes on (the end of the
// match before rstrip, as the reference's match iterator does); start is
// -1 when there is none.
func (t *addedTrie) next(s string, i, prev int) (start, end, from, id int) {
	for {
		start, end, id = t.find(s, i)
		if start < 0 || t.opts == nil {
			return start, end, end, id
		}
		o := t.opts[id]
		if o&addedSingleWord != 0 && (start > 0 && endsWithWord(s[:start]) || end < len(s) && startsWithWord(s[end:])) {
			i = end
			continue
		}
		from = end
		if o&addedLStrip != 0 {
			start = max(len(strings.TrimRightFunc(s[:start], isSpaceRE)), prev)
		}
		if o&addedRStrip != 0 {
			end = len(s) - len(strings.TrimLeftFunc(s[end:], isSpaceRE))
		}
		return start, end, from, id
	}
}

// split counts the added tokens of s and passes each stretch of text
// between them, with its offset in s, to text.
func (t *addedTrie) split(s string, a *hfAcc, text func(seg string, at int, a *hfAcc)) {
	prev := 0
	for i := 0; i < len(s) && a.n <= a.max; {
		start, end, from, id := t.next(s, i, prev)
		if start < 0 {
			break
		}
		if start > prev {
			text(s[prev:start], prev, a)
		}
		a.token(id)
		prev, i = end, from
	}
	if prev < len(s) && a.n <= a.max {
		text(s[prev:], prev, a)
	}
}

// isSpaceRE is the Rust regex crate's \s: White_Space.
func isSpaceRE(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// isWordRE is the Rust regex crate's \w: Alphabetic, M, Nd, Pc,
// Join_Control.
func isWordRE(r rune) bool {
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordRE(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRE(r)
}

// addAdded adds the added tokens with their options, as tokenizers
// loads them (Tokenizer deserialization, then add_tokens): a token
// takes the model's id for its content when the model has one, else the
// next id after the model's vocabulary (the id written in the file is
// only checked against, by the reference, with a warning); a normalized
// token is matched by its normalized content; an empty one is skipped.
func (t *HFTokenizer) addAdded(added []hfAddedToken) error {
	t.added, t.addedNorm = newAddedTrie(), newAddedTrie()
	next := t.vocabSize()
	ids := map[string]int{}
	for k, a := range added {
		if a.Content == "" {
			continue
		}
		id, ok := ids[a.Content]
		if !ok {
			if id, ok = t.modelID(a.Content); !ok {
				id = next
				next++
			}
			ids[a.Content] = id
		}
		if id > 1<<31-1 {
			return fmt.Errorf("tokenize: tokenizer.json: added_tokens[%d]: id %d is too large", k, id)
		}
		var opts uint8
		if a.LStrip {
			opts |= addedLStrip
		}
		if a.RStrip {
			opts |= addedRStrip
		}
		if a.SingleWord {
			opts |= addedSingleWord
		}
		tr, content := t.added, a.Content
		if a.Normalized {
			tr, content = t.addedNorm, t.normalizeContent(a.Content)
			if content == "" {
				continue
			}
		}
		tr.add(content, id)
		tr.setOpts(id, opts)
	}
	return nil
}

// normalizeContent returns s normalized by the tokenizer's normalizers.
func (t *HFTokenizer) normalizeContent(s string) string {
	switch {
	case t.nfc:
		return nfc9(s)
	case len(t.norms) > 0:
		var b []byte
		return strings.Clone(t.normalize(s, &b))
	}
	return s
}

// vocabSize is the number of tokens of the model's vocabulary.
func (t *HFTokenizer) vocabSize() int {
	if t.sp != nil {
		return t.sp.tok.ntok
	}
	return t.model.tok.ntok + len(t.model.odd)
}

// modelID returns the model's id of the token spelled tok.
func (t *HFTokenizer) modelID(tok string) (int, bool) {
	if t.sp != nil {
		id := t.sp.tok.lookup(tok)
		return int(id), id != noRank
	}
	if id, ok := t.model.odd[tok]; ok {
		return int(id), true
	}
	b, ok := decodeByteLevel(nil, []byte(tok))
	if !ok || len(b) == 0 {
		return 0, false
	}
	id := t.model.tok.lookup(string(b))
	return int(id), id != noRank
}
