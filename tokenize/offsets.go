package tokenize

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// TokenOffsets returns text's token ids (as Encode gives them) and the byte
// offset in text where each token begins, when c can say it: a byte-level
// BPE Hugging Face tokenizer (HFTokenizer, or a MemoCounter of one) whose
// tokens' bytes, in order, are text itself (no normalizer changed it; an
// added token in it counts as its content when it is matched in the raw
// text and has no lstrip, rstrip or single_word option). ok is false
// otherwise: a SentencePiece-style BPE tokenizer (Metaspace: its offsets
// point into the text before its spaces became "▁"), a tiktoken
// encoding, a text the normalizer changes, a text holding an added token
// matched after normalization or with options.
func TokenOffsets(c Counter, text string) (ids, starts []int, ok bool) {
	if m, is := c.(*MemoCounter); is {
		return TokenOffsets(m.c, text)
	}
	t, is := c.(*HFTokenizer)
	if !is || t.sp != nil || t.model == nil || t.model.sp != nil {
		return nil, nil, false
	}
	spell := tokenSpellings(t.model)
	added := addedSpellings(t)
	ids = t.Encode(text)
	starts = make([]int, len(ids))
	pos := 0
	for i, id := range ids {
		s := ""
		if id >= 0 && id < len(spell) {
			s = spell[id]
		}
		if a, is := added[id]; is && (s == "" || !strings.HasPrefix(text[pos:], s)) {
			s = a
		}
		if s == "" || !strings.HasPrefix(text[pos:], s) {
			return nil, nil, false
		}
		starts[i] = pos
		pos += len(s)
	}
	if pos != len(text) {
		return nil, nil, false
	}
	return ids, starts, true
}

// added holds each tokenizer's added tokens that are matched in the raw
// text and have no options, content by id, built on first need.
var added sync.Map // *HFTokenizer → func() map[int]string

// addedSpellings returns t's added tokens matched in the raw text without
// lstrip, rstrip or single_word, their content by id.
func addedSpellings(t *HFTokenizer) map[int]string {
	f, _ := added.LoadOrStore(t, sync.OnceValue(func() map[int]string {
		out := map[int]string{}
		tr := t.added
		if tr == nil {
			return out
		}
		var walk func(n int32, prefix []byte)
		walk = func(n int32, prefix []byte) {
			if id := int(tr.nodes[n].id); id >= 0 && tr.opts[id] == 0 {
				out[id] = string(prefix)
			}
			for _, e := range tr.nodes[n].edges {
				walk(e.to, append(prefix, e.b))
			}
		}
		walk(0, nil)
		return out
	}))
	return f.(func() map[int]string)()
}

// spellings holds each byte-level model's token bytes by id, built on
// first need.
var spellings sync.Map // *hfModel → func() []string

// tokenSpellings returns m's tokens' bytes indexed by id ("" for an id
// with none: a token not spelled in the byte-level alphabet).
func tokenSpellings(m *hfModel) []string {
	f, _ := spellings.LoadOrStore(m, sync.OnceValue(func() []string {
		v := m.tok
		var out []string
		for _, e := range v.table {
			if e == 0 {
				continue
			}
			n := int(e>>(rankBits+offBits)) & maxTokenLen
			off := int(e>>rankBits) & (maxArena - 1)
			id := int(e & maxRank)
			if id >= len(out) {
				out = slices.Grow(out, id+1-len(out))[:id+1]
			}
			out[id] = v.arena[off : off+n]
		}
		return out
	}))
	return f.(func() []string)()
}

// CodePointStarts converts TokenOffsets' byte starts in text to code
// points, as Hugging Face tokenizers' offset mapping gives a token's start
// (Python's tokenizer(text, return_offsets_mapping=True)): a token that
// begins inside a character (a byte-level token holding only part of it)
// begins at that character.
func CodePointStarts(text string, starts []int) []int {
	out := make([]int, len(starts))
	n, b := -1, 0 // n: the index of the character holding byte b-1
	for i, s := range starts {
		for ; b <= s && b < len(text); b++ {
			if utf8.RuneStart(text[b]) {
				n++
			}
		}
		if s >= len(text) {
			n = utf8.RuneCountInString(text)
		}
		out[i] = n
	}
	return out
}
