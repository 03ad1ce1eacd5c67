package tokenize

import "sync"

// smallPiece is the longest piece merged with the reference's linear scan;
// longer pieces go to mergeLarge.
const smallPiece = 96

// pieceTokens appends the token ids of one pre-tokenizer piece to out (when
// emit is set) and returns the number of tokens.
func (v *vocab) pieceTokens(p string, out []int, emit bool) ([]int, int) {
	if r := v.lookup(p); r != noRank {
		if emit {
			out = append(out, int(r))
		}
		return out, 1
	}
	if len(p) <= smallPiece {
		return v.mergeSmall(p, out, emit)
	}
	return v.mergeLarge(p, out, emit)
}

// mergeSmall runs mergeLinear on stack arrays sized for the piece, so the
// common short piece does not pay for zeroing the largest arrays.
// len(p) must be in [2, smallPiece].
func (v *vocab) mergeSmall(p string, out []int, emit bool) ([]int, int) {
	switch n := len(p) + 1; {
	case n <= 16:
		var start [16]int32
		var rank [16]uint32
		return v.mergeLinear(p, start[:n], rank[:n], out, emit)
	case n <= 32:
		var start [32]int32
		var rank [32]uint32
		return v.mergeLinear(p, start[:n], rank[:n], out, emit)
	default:
		var start [smallPiece + 1]int32
		var rank [smallPiece + 1]uint32
		return v.mergeLinear(p, start[:n], rank[:n], out, emit)
	}
}

// mergeLinear is tiktoken's _byte_pair_merge: parts k = (start[k], rank[k]
// of the pair starting there); repeatedly merge the lowest-ranked pair,
// leftmost on ties, rescanning linearly. len(start) == len(rank) == len(p)+1.
func (v *vocab) mergeLinear(p string, start []int32, rank []uint32, out []int, emit bool) ([]int, int) {
	n := len(p)
	minR, minI := noRank, 0
	for i := 0; i < n-1; i++ {
		r := v.pairRank[uint32(p[i])<<8|uint32(p[i+1])]
		if r < minR {
			minR, minI = r, i
		}
		start[i], rank[i] = int32(i), r
	}
	start[n-1], rank[n-1] = int32(n-1), noRank
	start[n], rank[n] = int32(n), noRank
	m := n + 1 // entries in use
	for minR != noRank {
		i := minI
		if i > 0 {
			rank[i-1] = noRank
			if i+2 < m {
				rank[i-1] = v.lookup(p[start[i-1]:start[i+2]])
			}
		}
		rank[i] = noRank
		if i+3 < m {
			rank[i] = v.lookup(p[start[i]:start[i+3]])
		}
		copy(start[i+1:m-1], start[i+2:m])
		copy(rank[i+1:m-1], rank[i+2:m])
		m--
		minR, minI = noRank, 0
		for k, r := range rank[:m-1] {
			if r < minR {
				minR, minI = r, k
			}
		}
	}
	if emit {
		for k := 0; k < m-1; k++ {
			out = append(out, int(v.lookup(p[start[k]:start[k+1]])))
		}
	}
	return out, m - 1
}

// mergeScratch holds the buffers of the long-piece merges; pooled so that
// steady-state counting does not allocate.
type mergeScratch struct {
	next, prev []int32
	rank       []uint32
	id         []uint32
	q          mergeQueue
}

var scratchPool = sync.Pool{New: func() any { return new(mergeScratch) }}

func grow32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

func growU32(b []uint32, n int) []uint32 {
	if cap(b) < n {
		return make([]uint32, n)
	}
	return b[:n]
}

// pairMerger is what mergeQueued needs of a vocabulary: for tiktoken
// ranks (mt nil), a pair's rank is the rank of its concatenated bytes; for
// a tokenizer.json (mt set), the rank of the merge of its two token ids,
// which id tracks by start position (a byte, or a symbol of a
// SentencePiece-style piece). A plain struct rather than an interface:
// the calls stay direct and inlinable on the hottest loop of long pieces.
type pairMerger struct {
	v  *vocab
	p  string
	mt *mergeTable
	id []uint32
}

// rankOf returns the rank of merging the tokens [i,j) and [j,k), or noRank.
func (m *pairMerger) rankOf(i, j, k int32) uint32 {
	if m.mt != nil {
		return m.mt.get(m.id[i], m.id[j])
	}
	return m.v.lookup(m.p[i:k])
}

// merged records that the token at i absorbed its successor by merge r.
func (m *pairMerger) merged(i int32, r uint32) {
	if m.mt != nil {
		m.id[i] = m.mt.newID[r]
	}
}

// mergeQueued merges a piece of n bytes, n > 1: the pairs wait in a
// mergeQueue, which yields them lowest rank first and leftmost on ties,
// exactly as the reference's linear scan picks them. Tokens are indexed by
// their start byte in a linked list (next, prev; prev -2 = merged away);
// stale queue entries are skipped by checking that the token is alive and
// its pair's rank unchanged. It returns the number of tokens; the caller
// walks next (left in sc) from 0 for the tokens themselves and returns sc
// to scratchPool.
func mergeQueued(m *pairMerger, n, nranks int, sc *mergeScratch) int {
	next := grow32(sc.next, n+1)
	prev := grow32(sc.prev, n+1)
	rank := growU32(sc.rank, n+1)
	sc.next, sc.prev, sc.rank = next, prev, rank
	q := &sc.q
	q.reset(nranks, n)
	for i := 0; i <= n; i++ {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	for i := int32(0); int(i) < n-1; i++ {
		r := m.rankOf(i, i+1, i+2)
		rank[i] = r
		if r != noRank {
			q.push(r, i)
		}
	}
	rank[n-1], rank[n] = noRank, noRank
	// pr is the rank of merging token i with its successor.
	pr := func(i int32) uint32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		return m.rankOf(i, j, next[j])
	}
	count := n
	for {
		r, i, ok := q.popLive(rank, prev)
		if !ok {
			break
		}
		j := next[i]
		m.merged(i, r)
		next[i] = next[j]
		if int(next[j]) <= n {
			prev[next[j]] = i
		}
		prev[j] = -2
		count--
		// The new pair at i need not be queued when the pair to its right
		// has rank r: that pair is the next to merge (no pair has a rank
		// below r, none left of it has rank r, and a merge never creates a
		// pair of its own rank, since the merged token is longer than
		// either part), and merging it re-ranks and queues i as its left
		// neighbour. This halves the queue traffic on runs.
		if rank[i] = pr(i); rank[i] != noRank && (rank[next[i]] != r || rank[i] < r) {
			q.push(rank[i], i)
		}
		if k := prev[i]; k >= 0 {
			if rank[k] = pr(k); rank[k] != noRank {
				q.push(rank[k], k)
			}
		}
	}
	q.release()
	return count
}

// mergeLarge computes the same merges as mergeSmall for long pieces: with
// the backtracking encoder from backtrackMin bytes on, where it applies
// (backtrack.go), else with queueMerge.
func (v *vocab) mergeLarge(p string, out []int, emit bool) ([]int, int) {
	if out, n, ok := v.bt.merge(v, nil, p, out, emit); ok {
		return out, n
	}
	return v.queueMerge(p, out, emit)
}

// queueMerge computes the same merges as mergeSmall with mergeQueued.
func (v *vocab) queueMerge(p string, out []int, emit bool) ([]int, int) {
	sc := scratchPool.Get().(*mergeScratch)
	count := mergeQueued(&pairMerger{v: v, p: p}, len(p), maxRank+1, sc)
	if emit {
		for i := int32(0); int(i) < len(p); i = sc.next[i] {
			out = append(out, int(v.lookup(p[i:sc.next[i]])))
		}
	}
	scratchPool.Put(sc)
	return out, count
}
