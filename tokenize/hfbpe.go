package tokenize

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// byteLevelChar is GPT-2's bytes_to_unicode: the printable bytes map to
// themselves, the others to U+0100 onwards in byte order. Byte-level BPE
// vocabularies spell every token in these characters.
var byteLevelChar, byteLevelByte = func() (fwd [256]rune, inv [324]int16) {
	for i := range inv {
		inv[i] = -1
	}
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			fwd[b] = rune(b)
		} else {
			fwd[b] = rune(256 + n)
			n++
		}
		inv[fwd[b]] = int16(b)
	}
	return
}()

// decodeByteLevel appends the bytes that the byte-level spelling tok
// stands for to dst; ok is false when tok holds a character outside the
// byte-level alphabet (such a token cannot arise from text).
func decodeByteLevel(dst, tok []byte) ([]byte, bool) {
	for i := 0; i < len(tok); {
		r, w := utf8.DecodeRune(tok[i:])
		if r >= rune(len(byteLevelByte)) || byteLevelByte[r] < 0 {
			return dst, false
		}
		dst = append(dst, byte(byteLevelByte[r]))
		i += w
	}
	return dst, true
}

// Merge table limits: a slot packs (left id, right id, rank+1) into one
// uint64, and the merged id is newID[rank].
const (
	mergeIDBits   = 18
	mergeRankBits = 20
	maxMergeID    = 1<<mergeIDBits - 1
	maxMerges     = 1<<mergeRankBits - 2
)

// mergeTable maps a pair of token ids to the rank of its merge (its index
// in the merges list) and the merged token's id, like the merges map of
// Hugging Face's BPE: a pair listed twice keeps its last rank.
type mergeTable struct {
	slots []uint64
	mask  uint64
	shift uint
	newID []uint32 // by rank
}

func newMergeTable(n int) *mergeTable {
	size := 1 << bits.Len(uint(n+n/2+16))
	return &mergeTable{slots: make([]uint64, size), mask: uint64(size - 1), shift: uint(64 - bits.Len(uint(size-1))), newID: make([]uint32, 0, n)}
}

func (t *mergeTable) home(key uint64) uint64 {
	return (key * 0x9E3779B97F4A7C15) >> t.shift & t.mask
}

// add appends the next merge (a, b) -> id.
func (t *mergeTable) add(a, b, id uint32) error {
	if a > maxMergeID || b > maxMergeID || id > maxMergeID {
		return fmt.Errorf("token id above %d, too large for this table", maxMergeID)
	}
	rank := uint64(len(t.newID))
	if rank > maxMerges {
		return fmt.Errorf("more than %d merges", maxMerges)
	}
	t.newID = append(t.newID, id)
	key := uint64(a)<<mergeIDBits | uint64(b)
	for i := t.home(key); ; i = (i + 1) & t.mask {
		e := t.slots[i]
		if e == 0 || e>>mergeRankBits == key {
			t.slots[i] = key<<mergeRankBits | (rank + 1)
			return nil
		}
	}
}

// get returns the rank of merging a and b, or noRank.
func (t *mergeTable) get(a, b uint32) uint32 {
	key := uint64(a)<<mergeIDBits | uint64(b)
	for i := t.home(key); ; i = (i + 1) & t.mask {
		e := t.slots[i]
		if e == 0 {
			return noRank
		}
		if e>>mergeRankBits == key {
			return uint32(e&(1<<mergeRankBits-1)) - 1
		}
	}
}

// hfModel is a byte-level BPE model as Hugging Face's tokenizers runs it:
// a piece starts as one token per byte, then the adjacent pair whose merge
// has the lowest rank is merged (leftmost on ties) until no pair has a
// merge. Unlike tiktoken, a pair merges only if its merge is listed, with
// that merge's rank, whatever the ids of the tokens.
type hfModel struct {
	tok          *vocab            // token bytes -> id
	odd          map[string]uint32 // tokens not spelled in the byte-level alphabet
	merges       *mergeTable
	ignoreMerges bool // a piece that is a token is that token

	// Without ignore_merges a piece that is a token may still merge into
	// several tokens, so the merges must run; selfMerge learns whether
	// they give back the token itself.
	selfMerge selfMergeBits

	// pieces caches the counts of short pieces that merge into several
	// tokens (piececache.go); nil: none.
	pieces *pieceCache

	bt btLazy // the backtracking encoder's tables, built on first need

	// sp, when set, is the SentencePiece-style model that counts instead
	// (the other fields are then unset).
	sp *spModel
}

// selfMergeBits records, per token id, whether byte-pair merging the
// token's own spelling gives the token back: learnt on the first sighting
// of each token and kept (bit 2*id set = known, bit 2*id+1 set = merges
// give the token). Safe for concurrent use (atomics).
type selfMergeBits []atomic.Uint32

func newSelfMergeBits() selfMergeBits { return make([]atomic.Uint32, maxMergeID/16+1) }

// get reports, for a piece that is token id, whether merging it gives id
// itself: known is false until it has been seen.
func (s selfMergeBits) get(id uint32) (yes, known bool) {
	w := s[id/16].Load() >> (2 * (id % 16))
	return w&2 != 0, w&1 != 0
}

func (s selfMergeBits) learn(id uint32, yes bool) {
	bits := uint32(1)
	if yes {
		bits = 3
	}
	s[id/16].Or(bits << (2 * (id % 16)))
}

// buildHFModel parses the vocab and merges of a byte-level BPE model.
func buildHFModel(rawVocab, rawMerges []byte, ignoreMerges bool) (*hfModel, error) {
	// Tokens are found by their bytes in v; the few whose spelling is not
	// byte-level (unreachable from text, but merges may name them) by
	// their spelling in odd.
	odd := map[string]uint32{}
	v, arena := newVocab(len(rawVocab)/16, len(rawVocab))
	var tmp []byte
	err := eachVocab(rawVocab, func(tok []byte, id int) error {
		if id > maxMergeID {
			return fmt.Errorf("tokenize: tokenizer.json: token id %d above %d, too large for this table", id, maxMergeID)
		}
		var ok bool
		if tmp, ok = decodeByteLevel(tmp[:0], tok); !ok || len(tmp) == 0 {
			odd[string(tok)] = uint32(id)
			return nil
		}
		start := len(arena)
		if start+len(tmp) > cap(arena) || len(tmp) > maxTokenLen || start+len(tmp) > maxArena {
			return fmt.Errorf("tokenize: tokenizer.json: token %q or vocabulary too large for this table", tok)
		}
		arena = append(arena, tmp...)
		b := arena[start:]
		if !v.insert(unsafe.String(unsafe.SliceData(b), len(b)), uint32(start), uint32(id)) {
			return fmt.Errorf("tokenize: tokenizer.json: two tokens spell %q", b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.arena = v.arena[:len(arena)]
	for b, r := range v.byteRank {
		if r == noRank {
			// Every byte has a token in a byte-level vocabulary, so
			// byte_fallback and unk_token never apply; refuse otherwise.
			return nil, fmt.Errorf("tokenize: tokenizer.json: byte 0x%02x has no token (not a complete byte-level BPE vocabulary)", b)
		}
	}
	idOf := func(tok, buf []byte) (uint32, []byte, bool) {
		buf, ok := decodeByteLevel(buf[:0], tok)
		if ok && len(buf) > 0 {
			id := v.lookup(unsafe.String(unsafe.SliceData(buf), len(buf)))
			return id, buf, id != noRank
		}
		id, ok := odd[string(tok)]
		return id, buf, ok
	}
	mt := newMergeTable(len(rawMerges) / 12)
	var ba, bb, bj, joined []byte
	err = eachMerge(rawMerges, func(k int, a, b []byte) error {
		var ia, ib, in uint32
		var oka, okb, okn bool
		ia, ba, oka = idOf(a, ba)
		ib, bb, okb = idOf(b, bb)
		joined = append(append(joined[:0], a...), b...)
		in, bj, okn = idOf(joined, bj)
		if !oka || !okb || !okn {
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %q %q: token not in the vocabulary", k, a, b)
		}
		if err := mt.add(ia, ib, in); err != nil {
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %w", k, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &hfModel{tok: v, odd: odd, merges: mt, ignoreMerges: ignoreMerges, selfMerge: newSelfMergeBits(), pieces: newPieceCache(pieceSlots)}, nil
}

// pieceTokens appends the ids of one pre-tokenized piece (raw bytes) to
// out when emit is set, and returns the number of tokens.
func (m *hfModel) pieceTokens(p string, out []int, emit bool) ([]int, int) {
	if m.sp != nil {
		return m.sp.pieceTokens(p, out, emit)
	}
	id := m.tok.lookup(p)
	if id != noRank {
		yes, known := true, true
		if len(p) > 1 && !m.ignoreMerges {
			yes, known = m.selfMerge.get(id)
		}
		if yes {
			if emit {
				out = append(out, int(id))
			}
			return out, 1
		}
		if !known {
			out, n := m.merge(p, out, emit)
			m.selfMerge.learn(id, n == 1)
			return out, n
		}
	}
	return m.merge(p, out, emit)
}

func (m *hfModel) merge(p string, out []int, emit bool) ([]int, int) {
	if !emit && m.pieces != nil && len(p) <= pieceMaxLen {
		h := m.tok.hash(p)
		if n, ok := m.pieces.get(h, p); ok {
			return out, n
		}
		var id, rank [pieceMaxLen]uint32
		out, n := m.mergeLinear(p, id[:len(p)], rank[:len(p)], out, emit)
		m.pieces.put(h, p, n)
		return out, n
	}
	if len(p) <= smallPiece {
		var id, rank [smallPiece]uint32
		return m.mergeLinear(p, id[:len(p)], rank[:len(p)], out, emit)
	}
	return m.mergeHeap(p, out, emit)
}

// mergeLinear merges with a linear scan for the lowest-ranked pair:
// id[k] is the k-th token, rank[k] the rank of merging it with the next.
func (m *hfModel) mergeLinear(p string, id, rank []uint32, out []int, emit bool) ([]int, int) {
	for i := range len(p) {
		id[i] = m.tok.byteRank[p[i]]
	}
	n := mergeIDs(m.merges, id, rank)
	if emit {
		for _, t := range id[:n] {
			out = append(out, int(t))
		}
	}
	return out, n
}

// mergeIDs merges the tokens id (n = len(id) of them) as Hugging
// Face's BPE does: the adjacent pair whose merge has the lowest rank,
// leftmost on ties, until no pair has a merge, scanning linearly for it
// (rank is scratch of n entries). The result is id[:k]; it returns k.
func mergeIDs(mt *mergeTable, id, rank []uint32) int {
	n := len(id)
	if n < 2 {
		return n
	}
	for i := 0; i < n-1; i++ {
		rank[i] = mt.get(id[i], id[i+1])
	}
	rank[n-1] = noRank
	for {
		minR, i := noRank, 0
		for k, r := range rank[:n-1] {
			if r < minR {
				minR, i = r, k
			}
		}
		if minR == noRank {
			break
		}
		id[i] = mt.newID[minR]
		copy(id[i+1:n-1], id[i+2:n])
		copy(rank[i+1:n-1], rank[i+2:n])
		n--
		rank[n-1] = noRank
		if i > 0 {
			rank[i-1] = mt.get(id[i-1], id[i])
		}
		if i+1 < n {
			rank[i] = mt.get(id[i], id[i+1])
		} else {
			rank[i] = noRank
		}
	}
	return n
}

// mergeHeap computes the same merges as mergeLinear for long pieces: with
// the backtracking encoder from backtrackMin bytes on, where it applies
// (backtrack.go), else with queueMerge.
func (m *hfModel) mergeHeap(p string, out []int, emit bool) ([]int, int) {
	if out, n, ok := m.bt.merge(m.tok, m.merges, p, out, emit); ok {
		return out, n
	}
	return m.queueMerge(p, out, emit)
}

// queueMerge computes the same merges as mergeLinear with mergeQueued.
func (m *hfModel) queueMerge(p string, out []int, emit bool) ([]int, int) {
	n := len(p)
	sc := scratchPool.Get().(*mergeScratch)
	id := growU32(sc.id, n)
	sc.id = id
	for i := range n {
		id[i] = m.tok.byteRank[p[i]]
	}
	count := mergeQueued(&pairMerger{mt: m.merges, id: id}, n, len(m.merges.newID), sc)
	if emit {
		for i := int32(0); int(i) < n; i = sc.next[i] {
			out = append(out, int(id[i]))
		}
	}
	scratchPool.Put(sc)
	return out, count
}
