package tokenize

// mergeQueue yields (rank, position) entries lowest rank first, lowest
// position on ties: the order in which byte-pair merging picks pairs.
//
// A plain heap of all pairs of a long piece is larger than the CPU caches
// and every pop sifts through all its levels (bench/README.md, "Slow
// inputs"). But merging pushes pairs in nearly ascending position order
// within each rank: the initial pairs left to right, and the pairs a merge
// creates next to merges that themselves go left to right. So each rank
// gets a FIFO bucket, sorted by construction: a push that is beyond the
// bucket's last position is appended, and only the rare out-of-order push
// goes to a small overflow heap. A second small heap orders the non-empty
// buckets by their head. Both heaps stay small, and pushes are appends.
type mergeQueue struct {
	bucketOf []int32 // by rank: 1 + bucket index, 0 = none
	touched  []uint32

	// Buckets: FIFO lists threaded through the entry arena.
	bHead, bTail, bLast []int32
	ent                 []qEntry

	heads    []uint64 // rank<<32 | head position, one per non-empty bucket
	overflow []uint64 // rank<<32 | position, out-of-order pushes
}

type qEntry struct{ pos, next int32 }

// reset prepares the queue for ranks below nranks and a piece of n bytes
// (about n initial pairs and up to two more per merge).
func (q *mergeQueue) reset(nranks, n int) {
	if len(q.bucketOf) < nranks {
		q.bucketOf = make([]int32, nranks)
	}
	if cap(q.ent) < 2*n {
		q.ent = make([]qEntry, 0, 2*n)
	}
	q.touched = q.touched[:0]
	q.bHead, q.bTail, q.bLast = q.bHead[:0], q.bTail[:0], q.bLast[:0]
	q.ent = q.ent[:0]
	q.heads, q.overflow = q.heads[:0], q.overflow[:0]
}

// release clears the bucket index for the next use.
func (q *mergeQueue) release() {
	for _, r := range q.touched {
		q.bucketOf[r] = 0
	}
}

func (q *mergeQueue) push(rank uint32, pos int32) {
	b := q.bucketOf[rank] - 1
	if b < 0 {
		b = int32(len(q.bHead))
		q.bucketOf[rank] = b + 1
		q.touched = append(q.touched, rank)
		q.bHead, q.bTail, q.bLast = append(q.bHead, -1), append(q.bTail, -1), append(q.bLast, -1)
	}
	switch {
	case q.bHead[b] < 0: // empty: start the list
		e := q.newEntry(pos)
		q.bHead[b], q.bTail[b], q.bLast[b] = e, e, pos
		q.heads = heapPush(q.heads, uint64(rank)<<32|uint64(pos))
	case pos > q.bLast[b]:
		e := q.newEntry(pos)
		q.ent[q.bTail[b]].next = e
		q.bTail[b], q.bLast[b] = e, pos
	default:
		q.overflow = heapPush(q.overflow, uint64(rank)<<32|uint64(pos))
	}
}

func (q *mergeQueue) newEntry(pos int32) int32 {
	q.ent = append(q.ent, qEntry{pos, -1})
	return int32(len(q.ent) - 1)
}

// popLive removes entries until it finds one whose node is alive
// (prev[pos] != -2) with that rank still (cur[pos] == rank), and returns
// it; ok is false when the queue runs empty.
func (q *mergeQueue) popLive(cur []uint32, prev []int32) (rank uint32, pos int32, ok bool) {
	for {
		if rank, pos, ok = q.pop(); !ok || prev[pos] != -2 && cur[pos] == rank {
			return rank, pos, ok
		}
	}
}

// pop removes and returns the least entry; ok is false when empty.
func (q *mergeQueue) pop() (rank uint32, pos int32, ok bool) {
	const none = ^uint64(0)
	a, o := none, none
	if len(q.heads) > 0 {
		a = q.heads[0]
	}
	if len(q.overflow) > 0 {
		o = q.overflow[0]
	}
	switch {
	case a == none && o == none:
		return 0, 0, false
	case o < a:
		q.overflow = heapPop(q.overflow)
		return uint32(o >> 32), int32(uint32(o)), true
	}
	rank, pos = uint32(a>>32), int32(uint32(a))
	b := q.bucketOf[rank] - 1
	e := q.ent[q.bHead[b]].next
	q.bHead[b] = e
	if e < 0 {
		q.bTail[b] = -1
		q.heads = heapPop(q.heads)
	} else {
		q.heads[0] = uint64(rank)<<32 | uint64(q.ent[e].pos)
		siftDown(q.heads, 0)
	}
	return rank, pos, true
}

// The heap is 4-ary: half the depth of a binary heap and children on one
// cache line, which matters for million-entry pieces.

func siftDown(h []uint64, i int) {
	n := len(h)
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k] < h[m] {
				m = k
			}
		}
		if x <= h[m] {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

func heapPush(h []uint64, x uint64) []uint64 {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p] <= x {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	return h
}

func heapPop(h []uint64) []uint64 {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	if n > 0 {
		siftDown(h, 0)
	}
	return h
}
