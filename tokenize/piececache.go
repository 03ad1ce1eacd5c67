package tokenize

import (
	"encoding/binary"
	"sync/atomic"
)

// pieceCache remembers how many tokens byte-pair merging makes of the
// pre-tokenized pieces that are not one token: the merging is most of a
// count's time, and such pieces (identifiers, words split in two) repeat
// within a text and across texts. It is a direct-mapped table of
// pieceSlots slots, shared by every goroutine counting with the tokenizer:
// a piece of up to pieceMaxLen bytes is stored, bytes and count, in the
// slot its hash picks, replacing what was there; a lookup compares the
// whole piece, so a hit is always exact. Slots are read and written with
// atomics only (a sequence number per slot: odd while a writer fills it;
// a reader that sees it change does not retry: it merges the piece
// itself), so counting neither locks nor allocates. It holds at most
// pieceSlots × (8 + pieceMaxLen) bytes (1.1 MiB; a larger table kept
// few more pieces on the real data and, with the GC target of 400%
// trajcompress runs with, cost five times its size in RSS).
type pieceCache struct {
	slots []pieceSlot
	mask  uint64
}

const (
	pieceMaxLen = 64
	pieceWords  = pieceMaxLen / 8
	pieceSlots  = 1 << 14
)

// pieceSlot holds one piece: head packs seq (bits 16-63; odd while being
// written), the piece's length (bits 8-15) and its token count (bits
// 0-7); words hold its bytes, little-endian, zero-padded.
type pieceSlot struct {
	head  atomic.Uint64
	words [pieceWords]atomic.Uint64
}

// newPieceCache returns a cache of n slots, a power of two.
func newPieceCache(n int) *pieceCache {
	return &pieceCache{slots: make([]pieceSlot, n), mask: uint64(n - 1)}
}

// pack returns p's bytes as words, zero-padded; len(p) <= pieceMaxLen.
func pack(p string) (w [pieceWords]uint64) {
	var b [pieceMaxLen]byte
	copy(b[:], p)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return w
}

// get returns the count stored for p (hashed to h), if it is there.
func (c *pieceCache) get(h uint64, p string) (int, bool) {
	s := &c.slots[h&c.mask]
	h1 := s.head.Load()
	if h1&(1<<16) != 0 || int(h1>>8&0xff) != len(p) {
		return 0, false // being written, empty or another piece
	}
	w := pack(p)
	for i := range (len(p) + 7) / 8 {
		if s.words[i].Load() != w[i] {
			return 0, false
		}
	}
	if s.head.Load() != h1 {
		return 0, false // rewritten while read
	}
	return int(h1 & 0xff), true
}

// put stores p (hashed to h) and its count n, unless another goroutine is
// writing the slot.
func (c *pieceCache) put(h uint64, p string, n int) {
	if len(p) > pieceMaxLen || n > 0xff {
		return
	}
	s := &c.slots[h&c.mask]
	h1 := s.head.Load()
	seq := h1 >> 16
	if seq&1 != 0 || !s.head.CompareAndSwap(h1, (seq+1)<<16) {
		return
	}
	w := pack(p)
	for i := range w {
		s.words[i].Store(w[i])
	}
	s.head.Store((seq+2)<<16 | uint64(len(p))<<8 | uint64(n))
}
