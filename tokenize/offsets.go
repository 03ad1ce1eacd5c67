package tokenize

import (
	"slices"
	"sync"
)

// TokenOffsets returns text's token ids (as Encode gives them) and the byte
// offset in text where each token begins, when c can say it: a byte-level
// BPE Hugging Face tokenizer (HFTokenizer, or a MemoCounter of one) whose
// tokens' bytes, in order, are text itself (no normalizer changed it, no
// added token among them). ok is false otherwise.
func TokenOffsets(c Counter, text string) (ids, starts []int, ok bool) {
	if m, is := c.(*MemoCounter); is {
		return TokenOffsets(m.c, text)
	}
	t, is := c.(*HFTokenizer)
	if !is || t.sp != nil || t.model == nil || t.model.sp != nil {
		return nil, nil, false
	}
	spell := tokenSpellings(t.model)
	ids = t.Encode(text)
	starts = make([]int, len(ids))
	pos := 0
	for i, id := range ids {
		if id < 0 || id >= len(spell) || spell[id] == "" {
			return nil, nil, false
		}
		s := spell[id]
		if len(text)-pos < len(s) || text[pos:pos+len(s)] != s {
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
