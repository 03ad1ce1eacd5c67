package redact

import (
	"math/bits"
	"strings"
	"sync"
	"unsafe"
)

// keywordIndex finds, case-insensitively, every occurrence of a set of
// lower-case keywords (each at least 2 bytes long) in a text. Keywords of
// 3 or more bytes are found through a bit table of the case-folded 4-byte
// grams that begin them (hashed; a 3-byte keyword enters with every
// possible fourth byte), probed at every position with no state carried
// from byte to byte; only where a probe hits are the keywords starting
// with that pair compared (on the real data, about 1.6% of positions).
// 2-byte keywords are found by searching for their second byte
// (strings.IndexByte, vectorised), in each case. (Entering them in the
// gram table with the bytes their rules need next was slower on the real
// data: "ey" and "s." followed by two letters are common.)
type keywordIndex struct {
	grams [1 << gramBits / 64]uint64 // hashed folded 4-grams of keywords ≥ 3 bytes
	short []int32                    // the 2-byte keywords
	// cases, for a 2-byte keyword whose rules all match it in one case
	// only, are those spellings (else both ASCII cases are searched).
	cases map[int32][]string
	// byPair maps a folded pair to 1 + its index in longWords, the
	// keywords of 3 bytes or more starting with it as verify compares them
	// (0: no keyword starts with it; the 2-byte ones, which shortHits
	// finds, are left out of longWords).
	byPair    [1 << 16]uint16
	longWords [][]classWord
	words     []string

	// kern is how keywords are found (kernels): the AVX-512 filter
	// (filter.go) when kern.avx512 and filterOK, else walk (with the
	// AVX2 probe when kern.avx2).
	kern *kernel
	// The AVX-512 filter's tables.
	filter   filterTables
	filterOK bool
	// byClass maps the filter's classes of a keyword's first two bytes
	// (c0<<5|c1) to 1 + its index in classLists, the keywords of 3 bytes
	// or more starting with them.
	byClass    [1 << 10]uint16
	classLists [][]classWord
	spellings  []shortSpelling // the 2-byte keywords' spellings, in shortHits' order
	runPool    sync.Pool       // of *[]shortRun, for texts with many 2-byte marks
}

const gramBits = 18

// fold maps ASCII upper-case letters to lower case; other bytes are
// unchanged.
func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// The tables are indexed by bytes ORed with 0x20, which folds ASCII case
// and also merges some punctuation with other bytes: that only adds
// probes, which the exact comparison rejects.
func pairKey(a, b byte) uint16 { return uint16(a|0x20)<<8 | uint16(b|0x20) }

func gramHash(x uint32) uint32 { return (x | 0x20202020) * 0x9E3779B1 >> (32 - gramBits) }

func newKeywordIndex(words []string) *keywordIndex {
	k := &keywordIndex{words: words, kern: bestKernel()}
	for i, w := range words {
		if len(w) < 2 {
			panic("redact: keyword shorter than 2 bytes: " + w)
		}
		p := pairKey(w[0], w[1])
		if k.byPair[p] == 0 {
			k.longWords = append(k.longWords, nil)
			k.byPair[p] = uint16(len(k.longWords))
		}
		if len(w) > 2 {
			l := k.byPair[p] - 1
			k.longWords[l] = append(k.longWords[l], newClassWord(w, int32(i)))
		}
		switch {
		case len(w) == 2:
			k.short = append(k.short, int32(i))
		case len(w) == 3:
			for c := range 256 {
				h := gramHash(uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(c)<<24)
				k.grams[h>>6] |= 1 << (h & 63)
			}
		default:
			h := gramHash(uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24)
			k.grams[h>>6] |= 1 << (h & 63)
		}
	}
	return k
}

// probe reports whether a keyword of 3 or more bytes may start at the 4
// bytes x (little endian: x's low byte is the text's byte at the
// position).
func (k *keywordIndex) probe(x uint32) bool {
	h := gramHash(x)
	return k.grams[h>>6]&(1<<(h&63)) != 0
}

// bit is probe as a bit (1: maybe), for branch-free combination.
func (k *keywordIndex) bit(x uint32) uint64 {
	h := gramHash(x)
	return k.grams[h>>6] >> (h & 63) & 1
}

// scan calls hit(word, end) for each occurrence of a keyword in text, end
// being the offset just past it: those of 3 or more bytes in increasing
// order, then those of 2 bytes, keyword by keyword.
func (k *keywordIndex) scan(text string, hit func(word int32, end int)) {
	if k.kern.avx512 && k.filterOK {
		k.scanFiltered(text, hit)
		return
	}
	k.walk(text, func(i int) bool {
		k.compare(text, i, k.longWords[k.byPair[pairKey(text[i], text[i+1])]-1], hit)
		return true
	})
	for _, w := range k.short {
		k.shortHits(text, w, func(end int) bool { hit(w, end); return true })
	}
}

// shortHits calls at(end) for each occurrence of the 2-byte keyword w
// (end just past it), while at returns true; false if stopped.
func (k *keywordIndex) shortHits(text string, w int32, at func(end int) bool) bool {
	if spellings, ok := k.cases[w]; ok {
		for _, sp := range spellings {
			if !searchPair(k.kern.avx2, text, sp[0], sp[1], false, at) {
				return false
			}
		}
		return true
	}
	word := k.words[w]
	if !searchPair(k.kern.avx2, text, word[0], word[1], true, at) {
		return false
	}
	if up := word[1] - ('a' - 'A'); 'a' <= word[1] && word[1] <= 'z' {
		return searchPair(k.kern.avx2, text, word[0], up, true, at)
	}
	return true
}

// searchPair calls at(end) after each occurrence of the bytes a, b in
// text (a compared case-folded when foldA).
func searchPair(avx2 bool, text string, a, b byte, foldA bool, at func(end int) bool) bool {
	return eachPosition(avx2, text, 1, a, b, foldA, func(p int) bool { return at(p + 1) })
}

// eachPosition calls f(p) for each p >= from, in order, with text[p] == c1
// and, unless c0 is 0, text[p-1] == c0 (ASCII case folded with folded,
// c0 being a lower-case letter then), while f returns true; false if stopped. from
// must be >= 1 when c0 is not 0. With AVX2 it records positions 32 bytes
// at a time (positions, probe_amd64.s); the bytes it matches come often
// (a backslash, '.'), too often for a bytes.IndexByte call each; avx2
// says whether to use it (kernel.avx2).
func eachPosition(avx2 bool, text string, from int, c0, c1 byte, folded bool, f func(p int) bool) bool {
	n := len(text)
	i := from
	if avx2 {
		var pos [64]int32
		p := unsafe.StringData(text)
		for i+32 <= n {
			cnt, next := positions(p, i, n, c0, c1, folded, &pos)
			for _, q := range pos[:cnt] {
				if !f(int(q)) {
					return false
				}
			}
			i = next
		}
	}
	for i < n {
		j := strings.IndexByte(text[i:], c1)
		if j < 0 {
			return true
		}
		i += j
		if c0 == 0 || text[i-1] == c0 || folded && fold(text[i-1]) == c0 {
			if !f(i) {
				return false
			}
		}
		i++
	}
	return true
}

// walk calls at(i) for each position i where a keyword may start (a
// probe hit with a known first pair), while at returns true.
func (k *keywordIndex) walk(text string, at func(i int) bool) {
	n := len(text)
	if n < 2 {
		return
	}
	p := unsafe.StringData(text)
	i := 0
	if k.kern.avx2 {
		// Eight positions per step (probe_amd64.s); the hits are checked
		// here, position by position.
		for i+16 <= n {
			pos, mask := probe8(p, i, n, &k.grams)
			if mask == 0 {
				i = pos
				break
			}
			for ; mask != 0; mask &= mask - 1 {
				j := pos + bits.TrailingZeros32(mask)
				if k.byPair[pairKey(text[j], text[j+1])] == 0 {
					continue
				}
				if !at(j) {
					return
				}
			}
			i = pos + 8
		}
	}
	// Four positions per step from one 8-byte load: a step that probes
	// nothing costs 8 table loads and no branch taken.
	for ; i+8 <= n; i += 4 {
		y := *(*uint64)(unsafe.Add(unsafe.Pointer(p), i)) // little-endian targets only
		if k.bit(uint32(y))|k.bit(uint32(y>>8))|k.bit(uint32(y>>16))|k.bit(uint32(y>>24)) == 0 {
			continue
		}
		for j := i; j < i+4; j++ {
			x := uint32(y >> (8 * (j - i)))
			if !k.probe(x) || k.byPair[pairKey(text[j], text[j+1])] == 0 {
				continue
			}
			if !at(j) {
				return
			}
		}
	}
	for ; i+4 <= n; i++ {
		x := *(*uint32)(unsafe.Add(unsafe.Pointer(p), i))
		if !k.probe(x) || k.byPair[pairKey(text[i], text[i+1])] == 0 {
			continue
		}
		if !at(i) {
			return
		}
	}
	// The last 1-3 positions, padded with spaces.
	for ; i+1 < n; i++ {
		var x uint32 = 0x20202020
		for j := 0; j < 4 && i+j < n; j++ {
			x = x&^(0xff<<(8*j)) | uint32(text[i+j])<<(8*j)
		}
		if !k.probe(x) || k.byPair[pairKey(text[i], text[i+1])] == 0 {
			continue
		}
		if !at(i) {
			return
		}
	}
}

// hasFoldedPrefix reports whether s starts with the lower-case word,
// ignoring ASCII case in s.
func hasFoldedPrefix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for j := 0; j < len(word); j++ {
		if fold(s[j]) != word[j] {
			return false
		}
	}
	return true
}
