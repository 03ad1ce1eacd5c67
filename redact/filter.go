package redact

import (
	"math/bits"
	"slices"
	"unsafe"
)

// filterTables are the keyword filter's tables for the AVX-512 kernel
// (filterBlocks, filter_amd64.s, which reads them at the offsets go_asm.h
// gives: filterTables_p1 and so on; each table of 128 bytes as two
// 64-byte halves). The filter marks every position where a keyword of 3 bytes or
// more may start, testing each position's four bytes at once, 64
// positions per step, with tables the kernel holds in registers (a bit
// table per byte pair over byte classes, and a 1024-bit table of hashed
// 4-grams) instead of probing a 32 KiB bit table in memory; and the
// positions of each 2-byte keyword spelling (shortSlots of them).
//
// A byte's class is that of b|0x20 (so a keyword's bytes and the bytes
// that match them ignoring ASCII case share it): 0 for a byte that none
// of the first four bytes of a keyword holds, else 1-31 (see buildFilter;
// bytes that share a class only make the filter less selective). A position may start a keyword of 4
// bytes or more when the class pairs (c0,c1), (c1,c2), (c2,c3) of its
// bytes are each those of such a keyword at the same place (p1, p2, p3)
// and its 4-gram's bits are set in both hash tables; one of 3 bytes when (c0,c1)
// and (c1,c2) are those of a 3-byte keyword (q1, q2). Each is a necessary
// condition of the keyword occurring there, so the filter drops no
// occurrence; the caller compares the keywords.
type filterTables struct {
	class [128]byte // class of (b|0x20)&0x7f
	// Pair tables: the pair (a, b) of classes is bit b&7 of byte a<<2|b>>3.
	p1, p2, p3, q1, q2 [128]byte
	// The 4-gram hash tables (a Bloom filter of two): bit h&31 of word
	// h>>5, h = hash10(gram, hashMul) and hash10(gram, hashMul2).
	hash, hash2 [32]uint32
	// short are the 2-byte keyword spellings: a position p is marked for
	// slot s when text[p]|or == c0 and text[p+1] == c1 (each a 64-byte
	// broadcast); unused slots never match.
	short [shortSlots]shortSlot
}

// shortSlot is one 2-byte spelling's broadcasts (filterTables.short).
type shortSlot struct{ or, c0, c1 [64]byte }

// shortSlots is how many 2-byte keyword spellings the kernel tests.
const shortSlots = 4

// filterBlock is the number of positions (bytes) the kernel tests per
// step, and blocksPerCall how many steps one call makes at most.
const (
	filterBlock   = 64
	blocksPerCall = 32
	// filterReach is how far past a block's start the kernel reads (a
	// block's 64 positions and the 3 bytes after them): a block is tested
	// only when that many bytes are there.
	filterReach = filterBlock + 3
)

// hashMul and hashMul2 are the multipliers of the two 4-gram hashes.
const (
	hashMul  = 0x9E3779B1
	hashMul2 = 0x85EBCA77
)

// hash10 is the top 10 bits of the folded 4-gram x times mul.
func hash10(x, mul uint32) uint32 { return (x | 0x20202020) * mul >> 22 }

// shortSpelling is one way a 2-byte keyword is searched for (as
// keywordIndex.shortHits searches): its first byte compared with fold
// (ASCII case ignored) or exactly, its second exactly.
type shortSpelling struct {
	word   int32
	c0, c1 byte
	fold   bool
}

// buildFilter fills k.filter for words, or leaves k.filterOK false when
// the keywords do not fit the kernel (more 2-byte spellings than slots).
func (k *keywordIndex) buildFilter() {
	f := &k.filter
	f.setClasses(k.words)
	cl := func(b byte) byte { return f.class[(b|0x20)&0x7f] }
	set := func(t *[128]byte, a, b byte) { t[a<<2|b>>3] |= 1 << (b & 7) }
	for _, w := range k.words {
		switch {
		case len(w) == 3:
			set(&f.q1, cl(w[0]), cl(w[1]))
			set(&f.q2, cl(w[1]), cl(w[2]))
		case len(w) > 3:
			set(&f.p1, cl(w[0]), cl(w[1]))
			set(&f.p2, cl(w[1]), cl(w[2]))
			set(&f.p3, cl(w[2]), cl(w[3]))
			x := uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24
			h := hash10(x, hashMul)
			f.hash[h>>5] |= 1 << (h & 31)
			h = hash10(x, hashMul2)
			f.hash2[h>>5] |= 1 << (h & 31)
		}
	}
	// Keywords by the classes of their first two bytes.
	for i, w := range k.words {
		if len(w) < 3 {
			continue
		}
		p := uint16(cl(w[0]))<<5 | uint16(cl(w[1]))
		if k.byClass[p] == 0 {
			k.classLists = append(k.classLists, nil)
			k.byClass[p] = uint16(len(k.classLists))
		}
		k.classLists[k.byClass[p]-1] = append(k.classLists[k.byClass[p]-1], newClassWord(w, int32(i)))
	}
	// The 2-byte spellings, in the order shortHits searches them.
	k.spellings = k.spellings[:0]
	for _, w := range k.short {
		word := k.words[w]
		if sp, ok := k.cases[w]; ok {
			for _, s := range sp {
				k.spellings = append(k.spellings, shortSpelling{word: w, c0: s[0], c1: s[1]})
			}
			continue
		}
		k.spellings = append(k.spellings, shortSpelling{word: w, c0: word[0], c1: word[1], fold: true})
		if 'a' <= word[1] && word[1] <= 'z' {
			k.spellings = append(k.spellings, shortSpelling{word: w, c0: word[0], c1: word[1] - ('a' - 'A'), fold: true})
		}
	}
	if len(k.spellings) > shortSlots {
		return
	}
	for s := range shortSlots {
		sl := &f.short[s]
		var or, c0, c1 byte = 0x20, 0, 0 // (b|0x20) == 0 never holds: an unused slot
		if s < len(k.spellings) {
			sp := k.spellings[s]
			or, c0, c1 = 0, sp.c0, sp.c1
			if sp.fold && 'a' <= sp.c0 && sp.c0 <= 'z' {
				// b|0x20 == c0 is fold(b) == c0 for a letter c0; for any
				// other byte, fold(b) == c0 is b == c0.
				or = 0x20
			}
		}
		for j := range 64 {
			sl.or[j], sl.c0[j], sl.c1[j] = or, c0, c1
		}
	}
	k.filterOK = true
}

// shortRun records the 2-byte spelling marks of one block: the block's
// first position and slot (base<<3 | slot), then the mask.
type shortRun [2]uint64

// classWord is a keyword of 3 bytes or more as verify compares it: its
// first 8 bytes (fewer: zero-padded), the bits of them to keep (mask)
// and the bits to set first (or: 0x20 in each letter's byte, so that a
// letter of either case compares equal).
type classWord struct {
	w8, or8, mask8 uint64
	word           int32
	n              int32
}

func newClassWord(w string, word int32) classWord {
	c := classWord{word: word, n: int32(len(w))}
	for j := 0; j < len(w) && j < 8; j++ {
		c.w8 |= uint64(w[j]) << (8 * j)
		c.mask8 |= 0xff << (8 * j)
		if 'a' <= w[j] && w[j] <= 'z' {
			c.or8 |= 0x20 << (8 * j)
		}
	}
	return c
}

// scanFiltered is scan with the AVX-512 filter: the keywords of 3 bytes
// or more in increasing order of position, then the 2-byte ones, spelling
// by spelling, as scan reports them.
func (k *keywordIndex) scanFiltered(text string, hit func(word int32, end int)) {
	var masks [blocksPerCall * (1 + shortSlots)]uint64
	// The positions marked in one call, and room for the last block's
	// four unconditional writes.
	var cands [blocksPerCall*filterBlock + 4]int32
	var runBuf [64]shortRun
	runs := runBuf[:0]
	var spill *[]shortRun
	n := len(text)
	i := 0
	var pad [filterBlock + filterReach]byte
	for i < n {
		base, p, pn := i, unsafe.StringData(text), n
		if i+filterReach > n {
			// The last bytes, zero-padded: a zero byte is of class 0 and
			// starts no spelling, so no position past n is marked, and
			// none needs a byte past n.
			copy(pad[:], text[i:])
			p, base, pn = &pad[0], 0, len(pad)
		}
		nb, next := filterBlocks(p, base, pn, &k.filter, &masks)
		// The marked positions of the blocks into one list first, four
		// at a time without a branch per bit (a block holds less than
		// one on average: a loop over its bits would mispredict its exit
		// about once per block), then compared.
		nc := 0
		for b := range nb {
			long := masks[b*(1+shortSlots)]
			pos := int32(i + b*filterBlock)
			c := bits.OnesCount64(long)
			cands[nc] = pos + int32(bits.TrailingZeros64(long))
			long &= long - 1
			cands[nc+1] = pos + int32(bits.TrailingZeros64(long))
			long &= long - 1
			cands[nc+2] = pos + int32(bits.TrailingZeros64(long))
			long &= long - 1
			cands[nc+3] = pos + int32(bits.TrailingZeros64(long))
			long &= long - 1
			for j := nc + 4; long != 0; j++ {
				cands[j] = pos + int32(bits.TrailingZeros64(long))
				long &= long - 1
			}
			nc += c
		}
		for _, c := range cands[:nc] {
			k.verify(text, int(c), hit)
		}
		for b := range nb {
			m := masks[b*(1+shortSlots) : (b+1)*(1+shortSlots)]
			if m[1]|m[2]|m[3]|m[4] == 0 {
				continue
			}
			pos := i + b*filterBlock
			for s := range len(k.spellings) {
				if m[1+s] == 0 {
					continue
				}
				r := shortRun{uint64(pos)<<3 | uint64(s), m[1+s]}
				if len(runs) < cap(runs) {
					runs = append(runs, r)
					continue
				}
				// Many 2-byte marks: the rest in a pooled buffer.
				if spill == nil {
					spill, _ = k.runPool.Get().(*[]shortRun)
					if spill == nil {
						spill = new([]shortRun)
					}
					*spill = (*spill)[:0]
				}
				*spill = append(*spill, r)
			}
		}
		i += next - base
	}
	for s, sp := range k.spellings {
		markHits(runs, s, sp.word, hit)
		if spill != nil {
			markHits(*spill, s, sp.word, hit)
		}
	}
	if spill != nil {
		k.runPool.Put(spill)
	}
}

// markHits reports the marks of spelling s, of word, in runs.
func markHits(runs []shortRun, s int, word int32, hit func(word int32, end int)) {
	for _, r := range runs {
		if int(r[0]&7) != s {
			continue
		}
		pos := int(r[0] >> 3)
		for m := r[1]; m != 0; m &= m - 1 {
			hit(word, pos+bits.TrailingZeros64(m)+2)
		}
	}
}

// verify reports the keywords of 3 bytes or more that start at text[i:]
// (i+1 < len(text)).
func (k *keywordIndex) verify(text string, i int, hit func(word int32, end int)) {
	cl := &k.filter.class
	l := k.byClass[uint16(cl[(text[i]|0x20)&0x7f])<<5|uint16(cl[(text[i+1]|0x20)&0x7f])]
	if l == 0 {
		return
	}
	k.compare(text, i, k.classLists[l-1], hit)
}

// compare reports the keywords of ws that start at text[i:], in ws's
// order: eight bytes compared at once when there are eight.
func (k *keywordIndex) compare(text string, i int, ws []classWord, hit func(word int32, end int)) {
	if i+8 <= len(text) {
		x := *(*uint64)(unsafe.Pointer(unsafe.StringData(text[i:]))) // little-endian targets only
		for j := range ws {
			c := &ws[j]
			if (x|c.or8)&c.mask8 != c.w8 {
				continue
			}
			if c.n > 8 && !hasFoldedPrefix(text[i+8:], k.words[c.word][8:]) {
				continue
			}
			hit(c.word, i+int(c.n))
		}
		return
	}
	for j := range ws {
		if word := k.words[ws[j].word]; hasFoldedPrefix(text[i:], word) {
			hit(ws[j].word, i+len(word))
		}
	}
}

// setClasses gives the bytes at the first four places of words their
// classes: one per letter, one for all digits, then one per other byte,
// the bytes most keywords hold first, the rest sharing the last class.
func (f *filterTables) setClasses(words []string) {
	var count [128]int
	for _, w := range words {
		for j := 0; j < len(w) && j < 4; j++ {
			count[(w[j]|0x20)&0x7f]++
		}
	}
	next := byte(1)
	for c := byte('a'); c <= 'z'; c++ {
		if count[c] > 0 {
			f.class[c], next = next, next+1
		}
	}
	digits := byte(0)
	for c := byte('0'); c <= '9'; c++ {
		if count[c] > 0 {
			if digits == 0 {
				digits, next = next, next+1
			}
			f.class[c] = digits
		}
	}
	var others []byte
	for v := range byte(128) {
		if count[v] > 0 && f.class[v] == 0 {
			others = append(others, v)
		}
	}
	slices.SortStableFunc(others, func(a, b byte) int { return count[b] - count[a] })
	for _, v := range others {
		f.class[v] = min(next, 31)
		next++
	}
}
