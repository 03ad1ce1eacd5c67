package tokenize

import "sync"

// Runs of one symbol. A SentencePiece-style file hands the model whole
// turns, and nothing cuts a run of one symbol (every ▁▁ is in a token):
// 1 MiB of spaces is one chunk of a million ▁, which merging symbol by
// symbol costs about 100 ns each. mergeRuns computes the same merges as
// mergeQueued (lowest rank first, leftmost on ties, exactly as Hugging
// Face's word.rs merge_all pops its heap) on a list of segments, each a
// run of one token: count elements, the k-th starting at original symbol
// pos+k*width (the position merge_all orders ties by). A merge inside a
// run or across two runs is one ordinary step: the new token becomes a
// segment of one, the runs shrink. What makes runs cheap is repetition:
//
// When the lowest pair is the first pair (t, t) of a segment S, at rank
// r, every pair in the sequence has rank r or more, and those of rank r
// are pairs (t, t) (one rank, one pair) at this position or to the right.
// Merging it starts a cascade of merges of rank below r, all next to the
// new token (a merge creates pairs only with its neighbours), which ends
// when none is left; the next pop then has rank r or more. If it is
// again S's first pair, the cascade made S's first k elements into one
// token b and did not touch the element left of them, and that element
// is also b, then the next cascade starts from the same state: left
// neighbour b, then t repeated, every other pair of rank above r
// (positions shifted by k elements) — so it does the same, and so does
// every following one while S keeps more elements than the cascade
// looked at. mergeRuns then does j of them at once: b's segment grows by
// j, S loses j·k elements. Pairing (Llama-2 and Gemini: ▁▁ ▁▁ … first,
// then ▁▁▁▁ …) is k = 2; Gemma 3, whose longer runs of ▁ merge first,
// grows ▁ to ▁×31 one ▁ at a time, k = 31. The checks are on the state
// only, so any merge table gives the same result as merging symbol by
// symbol; one whose cascades never repeat is only not faster.

// runSeg is a segment of mergeRuns: count elements of token tok (0:
// removed).
type runSeg struct {
	tok        uint32
	count      int32
	pos, width int32
	prev, next int32
	ver        uint32 // bumped on every change, for the repetition check

	// The last time S's first pair was popped: its rank (noRank: none),
	// S's count then, and the segment left of S then, with its ver.
	mRank         uint32
	mCount, mLeft int32
	mLeftVer      uint32
}

// runEntry is a queued pair: key = rank<<32 | position of its left
// element, and the segment holding that element (its first element for
// a pair inside the segment, its last for the pair with the next one).
type runEntry struct {
	key uint64
	seg int32
}

type runScratch struct {
	seg  []runSeg
	heap []runEntry
}

var runPool = sync.Pool{New: func() any { return new(runScratch) }}

// runMinSymbols and the segment ratio decide when mergeRuns is used: on
// chunks of at least this many symbols that runs shorten to a quarter or
// fewer segments. A merge costs mergeRuns about 2.7 times what it costs
// mergeQueued when nothing repeats (BenchmarkSPRunMerge: Llama-2's
// symbols of 64 KiB of words, 21.1 against 7.8 ms of CPU), so below that
// ratio it could lose.
const runMinSymbols = 128

// worthRuns reports whether id has few enough segments for mergeRuns.
func worthRuns(id []uint32) bool {
	if len(id) < runMinSymbols {
		return false
	}
	segs := 1
	for i := 1; i < len(id); i++ {
		if id[i] != id[i-1] {
			segs++
		}
	}
	return 4*segs <= len(id)
}

// mergeRuns merges the symbols id (fewer than 2^31) as mergeQueued does
// and returns the token count, appending the tokens to out when emit.
func mergeRuns(mt *mergeTable, id []uint32, out []int, emit bool) ([]int, int) {
	sc := runPool.Get().(*runScratch)
	r := runMerger{mt: mt, seg: sc.seg[:0], heap: sc.heap[:0], head: -1}
	r.run(id)
	n := 0
	for s := r.head; s >= 0; s = r.seg[s].next {
		g := &r.seg[s]
		n += int(g.count)
		if emit {
			for range g.count {
				out = append(out, int(g.tok))
			}
		}
	}
	sc.seg, sc.heap = r.seg, r.heap
	runPool.Put(sc)
	return out, n
}

// run merges id into r's segments.
func (r *runMerger) run(id []uint32) {
	for i := 0; i < len(id); {
		j := i + 1
		for j < len(id) && id[j] == id[i] {
			j++
		}
		r.seg = append(r.seg, runSeg{tok: id[i], count: int32(j - i), pos: int32(i), width: 1, prev: int32(len(r.seg)) - 1, next: int32(len(r.seg)) + 1, mRank: noRank, mLeft: -1})
		i = j
	}
	if len(r.seg) > 0 {
		r.head = 0
		r.seg[len(r.seg)-1].next = -1
	}
	for s := range r.seg {
		r.pushInner(int32(s))
		r.pushNext(int32(s))
	}
	for len(r.heap) > 0 {
		e := r.pop()
		r.pops++
		rank, pos := uint32(e.key>>32), int32(uint32(e.key))
		s := &r.seg[e.seg]
		switch {
		case s.count == 0:
		case s.count >= 2 && pos == s.pos && r.mt.get(s.tok, s.tok) == rank:
			r.inner(e.seg, rank)
		case pos == s.pos+(s.count-1)*s.width && s.next >= 0 && r.mt.get(s.tok, r.seg[s.next].tok) == rank:
			r.across(e.seg, rank)
		}
	}
}

type runMerger struct {
	mt    *mergeTable
	seg   []runSeg
	heap  []runEntry
	head  int32
	pops  int // queue entries popped (tests check that runs cost few)
	bulks int // repetitions done at once
}

func (r *runMerger) push(rank uint32, pos, seg int32) {
	h := append(r.heap, runEntry{})
	e := runEntry{uint64(rank)<<32 | uint64(uint32(pos)), seg}
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].key <= e.key {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	r.heap = h
}

func (r *runMerger) pop() runEntry {
	h := r.heap
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].key < h[c].key {
			c++
		}
		if x.key <= h[c].key {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = x
	}
	r.heap = h
	return top
}

// pushInner queues the first pair inside segment s, if it merges.
func (r *runMerger) pushInner(s int32) {
	g := &r.seg[s]
	if g.count >= 2 {
		if rank := r.mt.get(g.tok, g.tok); rank != noRank {
			r.push(rank, g.pos, s)
		}
	}
}

// pushNext queues the pair of s's last element and the next segment's
// first, if it merges.
func (r *runMerger) pushNext(s int32) {
	g := &r.seg[s]
	if g.next >= 0 {
		if rank := r.mt.get(g.tok, r.seg[g.next].tok); rank != noRank {
			r.push(rank, g.pos+(g.count-1)*g.width, s)
		}
	}
}

// insertBefore links a new segment of one element before s (or last,
// s < 0, after tail) and returns it.
func (r *runMerger) insertBefore(s, prev int32, tok uint32, pos, width int32) int32 {
	n := int32(len(r.seg))
	r.seg = append(r.seg, runSeg{tok: tok, count: 1, pos: pos, width: width, prev: prev, next: s, mRank: noRank, mLeft: -1})
	if prev >= 0 {
		r.seg[prev].next = n
	} else {
		r.head = n
	}
	if s >= 0 {
		r.seg[s].prev = n
	}
	return n
}

// unlink removes the emptied segment s.
func (r *runMerger) unlink(s int32) {
	g := &r.seg[s]
	if g.prev >= 0 {
		r.seg[g.prev].next = g.next
	} else {
		r.head = g.next
	}
	if g.next >= 0 {
		r.seg[g.next].prev = g.prev
	}
}

// inner merges the first two elements of s by merge rank, or first does
// the repeating cascades at once (see the comment at the top).
func (r *runMerger) inner(s int32, rank uint32) {
	g := &r.seg[s]
	if g.mRank == rank && g.mLeft >= 0 && g.prev >= 0 {
		p, q := g.prev, g.mLeft
		gp, gq := &r.seg[g.prev], &r.seg[g.mLeft]
		k := g.mCount - g.count
		if gp.count == 1 && gp.prev == q && gq.count > 0 && gq.ver == g.mLeftVer && gq.tok == gp.tok &&
			k >= 2 && g.pos-gp.pos == k*g.width {
			if j := (g.count-2)/k - 1; j >= 1 {
				gp.count += j
				gp.width = k * g.width
				gp.ver++
				g.pos += j * k * g.width
				g.count -= j * k
				g.ver++
				g.mRank = noRank
				r.bulks++
				r.pushInner(p)
				r.pushNext(p)
				r.pushInner(s)
				return
			}
		}
	}
	g.mRank, g.mCount, g.mLeft = rank, g.count, g.prev
	if g.prev >= 0 {
		g.mLeftVer = r.seg[g.prev].ver
	}
	n := r.insertBefore(s, g.prev, r.mt.newID[rank], g.pos, 2*g.width)
	r.dropFirst(s, 2)
	r.pushAround(n)
}

// dropFirst removes the first k elements of s (merged into the segment
// before it).
func (r *runMerger) dropFirst(s, k int32) {
	g := &r.seg[s]
	g.pos += k * g.width
	g.count -= k
	g.ver++
	if g.count == 0 {
		r.unlink(s)
	} else {
		r.pushInner(s)
	}
}

// pushAround queues the pairs of the new segment n with its neighbours.
func (r *runMerger) pushAround(n int32) {
	if p := r.seg[n].prev; p >= 0 {
		r.pushNext(p)
	}
	r.pushNext(n)
}

// across merges the last element of s with the first of the next
// segment by merge rank.
func (r *runMerger) across(s int32, rank uint32) {
	g := &r.seg[s]
	t := g.next
	n := r.insertBefore(t, s, r.mt.newID[rank], g.pos+(g.count-1)*g.width, g.width+r.seg[t].width)
	g = &r.seg[s]
	g.count--
	g.ver++
	if g.count == 0 {
		r.unlink(s)
	}
	r.dropFirst(t, 1)
	r.pushAround(n)
}
