package tokenize

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
)

// The linear-time encoder for long pieces: the backtracking encoder of
// GitHub's bpe crate (github.com/github/rust-gems, crates/bpe), generalised
// from token-id ranks to any merge ranks (tiktoken's token ranks or a
// tokenizer.json's merges list), with tables built on first need.
//
// Terms. Merging a piece means, as both references do: start from single
// bytes, repeatedly merge the adjacent pair whose merge has the lowest
// rank, leftmost on ties, until no pair has a merge. A token t is
// reachable when merging its own bytes gives t; its canonical split (x, y)
// is the last merge of that run and rho(t) that merge's rank (for
// tiktoken ranks, t's own rank); single bytes have rho -1. A pair (a, b)
// is compatible when merging the bytes of a then b gives a, b.
//
// Exactness. The merges made inside a span of a piece before the span
// becomes one token (or before the run ends, for a span of whole tokens)
// are the ones merging the span alone would make: each was the leftmost
// lowest pair of the whole piece, so of the span. Hence every token of
// the result is reachable, every adjacent pair is compatible, and any
// token made in any run was made by its canonical split. Conversely, for
// a sequence of reachable tokens with compatible neighbours, the first
// merge of the piece's run that is not inside one of its tokens would
// join two neighbours' spans, and the run on those two tokens alone would
// make the same merges up to it and then it: they were not compatible.
// So, for any merge ranks, the result is the one sequence of reachable
// tokens whose neighbours are all compatible, and the crate's search finds
// it: take the longest reachable token at the current position that is
// compatible with the previous one and does not end at a position known
// to be dead, else the next shorter one; when none is left, mark the
// position dead (no result has a boundary there) and go back one token.
// Each position is entered at most once and left dead at most once, so
// the search takes at most (piece length × longest token) steps, and in
// practice one or two per token.
//
// Compatibility is decided by walking down the two tokens' split trees
// (compatible) instead of merging their bytes: the run on a's then b's
// bytes merges inside each span as that span alone would until a pair
// across the boundary merges, and the walk visits the boundary pairs in
// reverse order, each with the rank below which it would merge first. The
// walk assumes the spans' own merges come in (rank, position) order,
// which holds when rho grows from the split parts to the token all the
// way down a token's tree (the token is "monotone"); and only canonical
// splits are looked up, since no other pair is ever merged. Tiktoken
// ranks and most merges lists (written in training order) are monotone;
// for a pair with a token that is not (Llama-3 has 107: 81 whose merge is
// listed before a part's own, and tokens built on those), compatibleAt
// merges the two tokens' bytes as the reference does. newBacktrack finds
// the splits with the same walk where that is exact and by merging where
// it is not, and TestBacktrackTables checks every token of every
// vocabulary we test against the reference merge.
//
// Tokens have internal indexes in the order of the trie's breadth-first
// layout, so that the tokens a piece over a small alphabet uses are near
// one another in memory: the tables are megabytes, and a lookup that
// leaves the caches costs more than the rest of the search.
type backtrack struct {
	v  *vocab      // token bytes -> id (for tiktoken ranks, id = rank)
	mt *mergeTable // a tokenizer.json's merges; nil: a pair's rank is its bytes' rank
	hf *hfModel    // v and mt, for the reference merge (nil for tiktoken ranks)

	// A trie of the reachable tokens, breadth first: the children of
	// node u are the nodes node[u].first to node[u+1].first-1, in the
	// order of their last byte, label. Nodes 0-255 are the single bytes.
	node     []btTrieNode
	label    []byte  // 8 bytes of padding at the end
	pairNode []int32 // the node of each two-byte prefix b0<<8|b1, -1 if none

	tok []btTok  // by internal index, which for single bytes is the byte
	id  []uint32 // the token id of each internal index

	// The canonical splits by internal index, with the rank of their
	// merge: of two single bytes, in a direct table (rank+1, 0: none);
	// of others, grouped by left part (those of x are partners[start[x]:
	// start[x+1]], y<<32 | rank+1, in order of y), behind a Bloom filter
	// of the same pairs (two bits in one word), which answers most lookups
	// of a pair that is not one without leaving the nearest caches. While
	// the tables are built, pairs holds them in open addressing instead
	// (x<<20|y in bits 24-63, rank+1 in bits 0-23).
	bytePair  []uint32
	start     []int32
	partners  []uint64
	bloom     []uint64
	pairs     []uint64
	pairShift uint
}

type btTrieNode struct {
	first int32 // the first child
	tok   int32 // the token (internal index) the node spells, -1 if none
}

// btTok is what the search reads of a token, in one 16-byte record.
type btTok struct {
	meta        uint32 // rho+1 (bits 0-22), not monotone (23), length in bytes (24-31)
	left, right int32  // the canonical split, -1 for single bytes
	nextPrefix  int32  // the longest reachable proper prefix, -1 if none
}

const (
	btLenShift = 24
	btNotMono  = 1 << 23
	btRhoMask  = btNotMono - 1
	btIdxBits  = 20 // internal indexes are below 2^20 (ids below 2^18)
	bloomBits  = 21
)

func (t *btTok) len() int { return int(t.meta >> btLenShift) }

// rho returns the rank of the token's canonical merge, -1 for a single
// byte.
func (t *btTok) rho() int32 { return int32(t.meta&btRhoMask) - 1 }

func (t *btTok) mono() bool { return t.meta&btNotMono == 0 }

// backtrackMin is the shortest piece given to the backtracking encoder.
// Shorter pieces are merged by the queue, which needs no tables, so a
// process that never sees a long piece never builds them (no turn text of
// the real data has a piece over 256 bytes).
const backtrackMin = 1024

// btLazy holds a vocabulary's backtracking tables, built on first use.
type btLazy struct {
	once sync.Once
	bt   *backtrack
}

func (l *btLazy) get(v *vocab, mt *mergeTable) *backtrack {
	l.once.Do(func() { l.bt = newBacktrack(v, mt) })
	return l.bt
}

// merge appends the tokens of p to out (when emit is set) and returns
// their number, with the backtracking encoder of v's tokens and mt's
// merges (nil for tiktoken ranks); ok is false when p is shorter than
// backtrackMin or the encoder does not apply to this vocabulary.
func (l *btLazy) merge(v *vocab, mt *mergeTable, p string, out []int, emit bool) ([]int, int, bool) {
	if len(p) < backtrackMin {
		return out, 0, false
	}
	if b := l.get(v, mt); b != nil {
		return b.run(p, out, emit)
	}
	return out, 0, false
}

func pairKey(x, y int32) uint64 { return uint64(x)<<btIdxBits | uint64(y) }

// bloomMask is the two bits of hash h in its word of the Bloom filter
// (one word per pair: a single memory access).
func bloomMask(h uint64) uint64 { return 1<<(h&63) | 1<<(h>>6&63) }

func (b *backtrack) addPair(x, y int32, r uint32) {
	if x|y < 256 {
		b.bytePair[x<<8|y] = r + 1
		return
	}
	key := pairKey(x, y)
	h := key * 0x9E3779B97F4A7C15
	b.bloom[h>>(64-bloomBits+6)] |= bloomMask(h)
	mask := len(b.pairs) - 1
	i := int(h>>b.pairShift) & mask
	for b.pairs[i] != 0 && b.pairs[i]>>btLenShift != key {
		i = (i + 1) & mask
	}
	b.pairs[i] = key<<btLenShift | uint64(r+1)&(1<<btLenShift-1)
}

// freezePairs moves the pairs from the open addressing of the build to
// the tables the search reads.
func (b *backtrack) freezePairs() {
	b.start = make([]int32, len(b.tok)+1)
	n := 0
	for _, e := range b.pairs {
		if e != 0 {
			b.start[e>>(btLenShift+btIdxBits)+1]++
			n++
		}
	}
	for i := 1; i < len(b.start); i++ {
		b.start[i] += b.start[i-1]
	}
	b.partners = make([]uint64, n)
	fill := make([]int32, len(b.tok))
	for _, e := range b.pairs {
		if e == 0 {
			continue
		}
		x, y := int32(e>>(btLenShift+btIdxBits)), int32(e>>btLenShift&(1<<btIdxBits-1))
		b.partners[b.start[x]+fill[x]] = uint64(y)<<32 | e&(1<<btLenShift-1)
		fill[x]++
	}
	for x := range len(b.tok) {
		slices.Sort(b.partners[b.start[x]:b.start[x+1]])
	}
	b.pairs = nil
}

// pairRank returns the rank at which tokens x and y merge if (x, y) is
// the canonical split of a token, else noRank: a pair that is not never
// merges (see backtrack), even where the merges list has it or its bytes
// are a token.
func (b *backtrack) pairRank(x, y int32) uint32 {
	if x|y < 256 {
		return b.bytePair[x<<8|y] - 1
	}
	key := pairKey(x, y)
	h := key * 0x9E3779B97F4A7C15
	if m := bloomMask(h); b.bloom[h>>(64-bloomBits+6)]&m != m {
		return noRank
	}
	if b.pairs == nil {
		p := b.partners[b.start[x]:b.start[x+1]]
		lo, hi := 0, len(p)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if int32(p[m]>>32) < y {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(p) && int32(p[lo]>>32) == y {
			return uint32(p[lo]) - 1
		}
		return noRank
	}
	mask := len(b.pairs) - 1
	for i := int(h>>b.pairShift) & mask; ; i = (i + 1) & mask {
		e := b.pairs[i]
		if e == 0 {
			return noRank
		}
		if e>>btLenShift == key {
			return uint32(e&(1<<btLenShift-1)) - 1
		}
	}
}

// child returns the trie node under node u for byte c, or -1.
func (b *backtrack) child(u int32, c byte) int32 {
	lo, hi := b.node[u].first, b.node[u+1].first
	if hi-lo <= 8 {
		// Up to eight labels: find c in one word (the labels array is
		// padded), the lowest byte where label ^ c is zero.
		w := binary.LittleEndian.Uint64(b.label[lo:]) ^ uint64(c)*0x0101010101010101
		z := (w - 0x0101010101010101) &^ w & 0x8080808080808080
		if i := int32(bits.TrailingZeros64(z) / 8); i < hi-lo {
			return lo + i
		}
		return -1
	}
	if i := bytes.IndexByte(b.label[lo:hi], c); i >= 0 {
		return lo + int32(i)
	}
	return -1
}

// longest returns the longest reachable token that p[pos:] starts with.
func (b *backtrack) longest(p string, pos int) int32 {
	best := int32(p[pos])
	if pos+1 == len(p) {
		return best
	}
	u := b.pairNode[uint32(p[pos])<<8|uint32(p[pos+1])]
	for i := pos + 2; u >= 0; i++ {
		if t := b.node[u].tok; t >= 0 {
			best = t
		}
		if i == len(p) {
			break
		}
		u = b.child(u, p[i])
	}
	return best
}

// compatible reports whether merging the bytes of tokens x then y gives
// x, y without a merge across the boundary below rank limit (noRank: at
// all). It walks back through the run's merges from the last, keeping the
// tokens x and y on either side of the boundary: a pair across it merges
// if its rank is below limit, where the merge that ended that state
// would have come first.
// Both tokens must be monotone.
func (b *backtrack) compatible(x, y int32, limit uint32) bool {
	nx, ny := &b.tok[x], &b.tok[y]
	for {
		var r uint32
		if x|y < 256 {
			r = b.bytePair[x<<8|y] - 1
		} else {
			r = b.pairRank(x, y)
		}
		if r < limit {
			return false
		}
		rx, ry := nx.rho(), ny.rho()
		switch {
		case rx > ry: // x was made last: before, its right part met y
			limit = uint32(rx) // at rank rx, x's own merge is further left
			x = nx.right
			nx = &b.tok[x]
		case ry >= 0: // y was made last (or both at one rank, y to the right)
			limit = uint32(ry) + 1 // at rank ry, the boundary pair is further left
			y = ny.left
			ny = &b.tok[y]
		default:
			return true
		}
	}
}

// compatibleAt reports whether tokens x and y, which meet at byte at of
// p, are compatible: by the walk if both are monotone, else by merging
// their bytes as the reference does.
func (b *backtrack) compatibleAt(p string, at int, x, y int32) bool {
	nx, ny := &b.tok[x], &b.tok[y]
	if nx.mono() && ny.mono() {
		return b.compatible(x, y, noRank)
	}
	return b.compatibleRef(p[at-nx.len():at+ny.len()], nx.len())
}

// compatibleRef reports whether merging q, two tokens' bytes of which the
// first has k, as the reference does gives the two tokens back.
func (b *backtrack) compatibleRef(q string, k int) bool {
	var sc refScratch
	start, rank, ids := sc.slices(len(q))
	m := b.refMerger(q, ids)
	parts, _ := refMerge(&m, len(q), 1, start, rank)
	return parts == 2 && int(start[1]) == k
}

// btScratch holds the buffers of one backtracking run; pooled.
type btScratch struct {
	toks []int32
	dead []uint64 // a set bit: no result has a token boundary at that position
}

var btPool = sync.Pool{New: func() any { return new(btScratch) }}

// encode returns the tokens (internal indexes) of piece p, len(p) > 0, in
// sc.toks, or nil if the search fails, which the exactness argument rules
// out.
func (b *backtrack) encode(p string, sc *btScratch) []int32 {
	n := len(p)
	words := n/64 + 1
	if cap(sc.dead) < words {
		sc.dead = make([]uint64, words)
	}
	dead := sc.dead[:words]
	clear(dead)
	// A token holds at least one byte: n int32s are enough, allocated once
	// (growing by append would copy a 50 MB piece's stack several times
	// over, and hold two copies at the peak).
	if cap(sc.toks) < n {
		sc.toks = make([]int32, 0, n)
	}
	toks := sc.toks[:0]
	pos := 0
	tok := b.longest(p, 0)
	for pos < n {
		last := int32(-1)
		if len(toks) > 0 {
			last = toks[len(toks)-1]
		}
		for {
			end := uint(pos + b.tok[tok].len())
			if dead[end/64]&(1<<(end%64)) == 0 && (last < 0 || b.compatibleAt(p, pos, last, tok)) {
				toks = append(toks, tok)
				pos = int(end)
				if pos < n {
					tok = b.longest(p, pos)
				}
				break
			}
			if tok = b.tok[tok].nextPrefix; tok >= 0 {
				continue
			}
			// No token can follow here: drop the last one and try shorter
			// ones in its place. (At position 0 some token always fits.)
			if len(toks) == 0 {
				sc.toks = toks
				return nil
			}
			dead[uint(pos)/64] |= 1 << (uint(pos) % 64)
			toks = toks[:len(toks)-1]
			pos -= b.tok[last].len()
			tok = last
			break
		}
	}
	sc.toks = toks
	return toks
}

// run appends the tokens of p to out when emit is set and returns their
// number; ok is false if the search failed.
func (b *backtrack) run(p string, out []int, emit bool) ([]int, int, bool) {
	sc := btPool.Get().(*btScratch)
	toks := b.encode(p, sc)
	n := len(toks)
	if emit {
		for _, t := range toks {
			out = append(out, int(b.id[t]))
		}
	}
	btPool.Put(sc)
	return out, n, toks != nil
}
