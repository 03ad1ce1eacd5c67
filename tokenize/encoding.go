package tokenize

import (
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Encoding is a byte-pair encoding with tiktoken's ranks and split pattern.
// It is immutable once loaded and safe for concurrent use.
type Encoding struct {
	name  string
	v     *vocab
	split func(s string, i int) int
}

type encodingSlot struct {
	once sync.Once
	enc  *Encoding
	err  error
}

var encodings = map[string]*encodingSlot{
	O200kBase:  {},
	CL100kBase: {},
}

// loadEncoding parses the rank file of name on first use only.
func loadEncoding(name string) (*Encoding, error) {
	slot := encodings[name]
	slot.once.Do(func() {
		initClasses()
		split := splitO200k
		if name == CL100kBase {
			split = splitCL100k
		}
		v, err := loadVocab(name + ".tiktoken")
		if err != nil {
			slot.err = err
			return
		}
		slot.enc = &Encoding{name: name, v: v, split: split}
	})
	return slot.enc, slot.err
}

// Name returns the encoding name, e.g. "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Count returns len(e.Encode(text)) without building the ids. It does not
// allocate for valid UTF-8 (pieces longer than a few hundred bytes borrow
// pooled scratch space).
func (e *Encoding) Count(text string) int {
	if !utf8.ValidString(text) {
		b := bufPool.Get().(*[]byte)
		*b = appendReplaced((*b)[:0], text)
		_, n := e.encode(unsafe.String(unsafe.SliceData(*b), len(*b)), nil, false)
		bufPool.Put(b)
		return n
	}
	_, n := e.encode(text, nil, false)
	return n
}

// CountAtMost is [Encoding.Count] that stops once the count passes max:
// it returns the count when that is at most max, and otherwise some
// number greater than max (see the function [CountAtMost]).
func (e *Encoding) CountAtMost(text string, max int) int {
	if !utf8.ValidString(text) {
		return e.Count(text)
	}
	// Pieces are split left to right and each adds its own tokens, so the
	// count of a prefix of them never exceeds the whole text's.
	total := 0
	for i := 0; i < len(text) && total <= max; {
		j := e.split(text, i)
		_, n := e.v.pieceTokens(text[i:j], nil, false)
		total += n
		i = j
	}
	return total
}

// Encode returns the token ids of text, id for id what tiktoken's
// encode_ordinary returns: special-token strings such as "<|endoftext|>"
// are ordinary text, and each maximal ill-formed UTF-8 subpart is first
// replaced by U+FFFD.
func (e *Encoding) Encode(text string) []int {
	text = ReplaceInvalid(text)
	out, _ := e.encode(text, make([]int, 0, len(text)/3+1), true)
	return out
}

var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// encode splits s (valid UTF-8) into pieces and byte-pair encodes each.
func (e *Encoding) encode(s string, out []int, emit bool) ([]int, int) {
	total := 0
	for i := 0; i < len(s); {
		j := e.split(s, i)
		var n int
		out, n = e.v.pieceTokens(s[i:j], out, emit)
		total += n
		i = j
	}
	return out, total
}

// Info describes the encoding for the metrics' run block.
func (e *Encoding) Info() Info {
	split := "o200k"
	if e.name == CL100kBase {
		split = "cl100k"
	}
	return Info{Name: e.name, Kind: KindTiktoken, Split: split}
}
