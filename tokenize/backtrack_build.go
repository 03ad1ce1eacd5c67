package tokenize

import (
	"math/bits"
	"slices"
	"strings"
)

// newBacktrack builds the tables of v's tokens, with mt's merges for a
// tokenizer.json (nil for tiktoken ranks). It returns nil when ids do not
// name tokens (two tokens share a tiktoken rank).
func newBacktrack(v *vocab, mt *mergeTable) *backtrack {
	n, off, length, ok := tokenSpans(v)
	if !ok {
		return nil
	}
	b := &backtrack{v: v, mt: mt}
	if mt != nil {
		b.hf = &hfModel{tok: v, merges: mt}
	}
	bb := &btBuild{b: b, v: v, n: n}
	bb.tokBytes = func(id int32) string { return v.arena[off[id] : int(off[id])+int(length[id])] }
	var anc, tokNode []int32
	bb.toIdx, tokNode, anc = b.buildTrie(n, length, bb.tokBytes)

	// Canonical splits, lowest rank first, found without merging: a token
	// whose parts are assigned and compatible up to its rank has them as
	// its canonical split, when every token of a lower rank that is
	// reachable at all has been assigned (then the walk in compatible is
	// exact). Whether that held is checked below.
	bb.assigned = make([]bool, len(b.tok))
	for i := range 256 {
		bb.assigned[i] = true
	}
	size := 1 << bits.Len(uint(len(b.tok)+len(b.tok)/2+16))
	b.pairs, b.pairShift = make([]uint64, size), uint(64-bits.Len(uint(size-1)))
	b.bloom = make([]uint64, 1<<bloomBits/64)
	b.bytePair = make([]uint32, 1<<16)
	if mt == nil {
		bb.assignByLookup(anc)
	} else {
		bb.assignByMerges(mt)
	}
	unreachable, lowest := bb.splitUnassigned()
	for _, t := range unreachable {
		b.tok[t] = btTok{left: -1, right: -1} // length 0: never proposed
		b.node[tokNode[t]].tok = -1
	}
	if lowest != noRank {
		clear(b.pairs)
		clear(b.bloom)
		clear(b.bytePair)
		for t := int32(256); t < int32(len(b.tok)); t++ {
			if nd := &b.tok[t]; nd.len() > 0 {
				b.addPair(nd.left, nd.right, uint32(nd.rho()))
			}
		}
		b.markNotMono()
	}
	b.freezePairs()
	// nextPrefix: the nearest reachable ancestor.
	for t := range int32(len(b.tok)) {
		x := anc[t]
		for x >= 0 && b.tok[x].len() == 0 {
			x = anc[x]
		}
		b.tok[t].nextPrefix = x
	}
	return b
}

// tokenSpans returns, for each token id below n, where its bytes are in
// the vocabulary's arena; ok is false when an id has two entries.
func tokenSpans(v *vocab) (n int32, off []int32, length []uint8, ok bool) {
	for _, e := range v.table {
		if e != 0 {
			n = max(n, int32(e&maxRank)+1)
		}
	}
	off, length = make([]int32, n), make([]uint8, n)
	for _, e := range v.table {
		if e == 0 {
			continue
		}
		id := e & maxRank
		if length[id] != 0 {
			return 0, nil, nil, false
		}
		off[id] = int32(e>>rankBits) & (maxArena - 1)
		length[id] = uint8(e >> (rankBits + offBits))
	}
	return n, off, length, true
}

// btBuild is the state of newBacktrack while it finds each token's
// canonical split.
type btBuild struct {
	b        *backtrack
	v        *vocab
	n        int32                 // token ids are below n
	tokBytes func(id int32) string // a token's bytes
	toIdx    []int32               // token id → index in b.tok (-1: none)
	assigned []bool                // per index: its split is known
	sc       refScratch
}

// assign sets the split of token t to x, y at rank r.
func (bb *btBuild) assign(t, x, y int32, r uint32) {
	b := bb.b
	b.tok[t].meta |= r + 1
	b.tok[t].left, b.tok[t].right = x, y
	bb.assigned[t] = true
	b.addPair(x, y, r)
}

// assignByLookup assigns the splits of a vocabulary without merges
// (tiktoken: a token's rank is its id), trying each prefix that is a
// token (anc: the next shorter one) in turn.
func (bb *btBuild) assignByLookup(anc []int32) {
	b, v := bb.b, bb.v
	for id := range bb.n {
		t := bb.toIdx[id]
		if t < 256 || t < 0 {
			continue
		}
		s := bb.tokBytes(id)
		for x := anc[t]; x >= 0; x = anc[x] {
			y := int32(-1)
			if r := v.lookup(s[b.tok[x].len():]); r != noRank {
				y = bb.toIdx[r]
			}
			if bb.assigned[x] && y >= 0 && bb.assigned[y] && b.tok[x].rho() < id && b.tok[y].rho() < id && b.compatible(x, y, uint32(id)) {
				bb.assign(t, x, y, uint32(id))
				break
			}
		}
	}
}

// assignByMerges assigns the splits of a vocabulary with a merge table,
// in merge rank order.
func (bb *btBuild) assignByMerges(mt *mergeTable) {
	byRank := make([]uint64, len(mt.newID)) // key+1 of each rank's pair, 0 if overridden
	for _, e := range mt.slots {
		if e != 0 {
			byRank[uint32(e&(1<<mergeRankBits-1))-1] = e>>mergeRankBits + 1
		}
	}
	for r, k := range byRank {
		if k == 0 {
			continue
		}
		key := k - 1
		xa, ya, ta := uint32(key>>mergeIDBits), uint32(key&maxMergeID), mt.newID[r]
		if int32(xa) >= bb.n || int32(ya) >= bb.n || int32(ta) >= bb.n {
			continue
		}
		x, y, t := bb.toIdx[xa], bb.toIdx[ya], bb.toIdx[ta]
		if x >= 0 && y >= 0 && t >= 0 && !bb.assigned[t] && bb.assigned[x] && bb.assigned[y] && bb.b.compatible(x, y, uint32(r)) {
			bb.assign(t, x, y, uint32(r))
		}
	}
}

// splitUnassigned handles the tokens not assigned: they are unreachable,
// or reachable with a tree that is not monotone; the reference merge
// tells which. In the second case the walks from the least such rank
// (lowest) on may have missed their pairs, so the splits of all tokens
// from that rank on are computed by the reference merge instead.
func (bb *btBuild) splitUnassigned() (unreachable []int32, lowest uint32) {
	b := bb.b
	lowest = noRank // the least rank of a reachable token not assigned
	for t := int32(256); t < int32(len(b.tok)); t++ {
		if bb.assigned[t] {
			continue
		}
		if ok, r := bb.resplit(t); ok {
			lowest = min(lowest, r)
		} else {
			unreachable = append(unreachable, t)
		}
	}
	if lowest == noRank {
		return unreachable, lowest
	}
	for t := int32(256); t < int32(len(b.tok)); t++ {
		if !bb.assigned[t] || b.tok[t].rho() < int32(lowest) {
			continue
		}
		if ok, _ := bb.resplit(t); !ok {
			unreachable = append(unreachable, t)
		}
	}
	return unreachable, lowest
}

// resplit sets the split of token t (an index) to the reference merge's
// last merge, at its rank r; ok is false when the merge does not end in
// the token.
func (bb *btBuild) resplit(t int32) (ok bool, r uint32) {
	b, sc := bb.b, &bb.sc
	s := bb.tokBytes(int32(b.id[t]))
	start, rank, ids := sc.slices(len(s))
	m := b.refMerger(s, ids)
	k, r := refMerge(&m, len(s), 2, start, rank)
	if k != 2 || r == noRank {
		return false, 0
	}
	mid := start[1]
	x, y := bb.toIdx[bb.v.lookup(s[:mid])], bb.toIdx[bb.v.lookup(s[mid:])]
	b.tok[t].meta = b.tok[t].meta&^btRhoMask | (r + 1)
	b.tok[t].left, b.tok[t].right = x, y
	return true, r
}

// markNotMono flags the tokens whose rho does not grow from the parts to
// the token all the way down (in order of rho, so parts come first or are
// themselves the violation).
func (b *backtrack) markNotMono() {
	order := make([]int32, 0, len(b.tok))
	for t := range int32(len(b.tok)) {
		if b.tok[t].len() >= 2 && b.tok[t].left >= 0 {
			order = append(order, t)
		}
	}
	sortByRho(order, b.tok)
	for _, t := range order {
		nd := &b.tok[t]
		l, r := &b.tok[nd.left], &b.tok[nd.right]
		if l.rho() >= nd.rho() || r.rho() >= nd.rho() || !l.mono() || !r.mono() {
			nd.meta |= btNotMono
		}
	}
}

// sortByRho sorts ids by their tokens' rho: a radix sort of rho+1 (23
// bits) in three passes, which leave the result in the other buffer.
func sortByRho(ids []int32, tok []btTok) {
	out, tmp := ids, make([]int32, len(ids))
	for shift := 0; shift < btLenShift; shift += 8 {
		var count [257]int
		for _, id := range ids {
			count[(tok[id].meta&btRhoMask>>shift)&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, id := range ids {
			d := (tok[id].meta & btRhoMask >> shift) & 0xff
			tmp[count[d]] = id
			count[d]++
		}
		ids, tmp = tmp, ids
	}
	copy(out, ids)
}

// buildTrie lays out the trie of all n tokens breadth first (level by
// level, each level's nodes in byte order) and numbers the tokens in that
// order. It returns the internal index of each id (-1 if no token), the
// node of each internal index, and the nearest ancestor of each that is
// a token (-1 if none).
func (b *backtrack) buildTrie(n int32, length []uint8, tokBytes func(int32) string) (toIdx, tokNode, anc []int32) {
	// The tokens in byte order, and the length of the prefix each shares
	// with the one before.
	ord := sortTokens(n, length, tokBytes)
	m := len(ord)
	// Their bytes in that order, read once, so that the levels below walk
	// memory in order.
	at := make([]int32, m+1)
	all := make([]byte, 0, len(b.v.arena))
	for j, id := range ord {
		at[j] = int32(len(all))
		all = append(all, tokBytes(id)...)
	}
	at[m] = int32(len(all))
	sorted := func(j int32) []byte { return all[at[j]:at[j+1]] }
	lcp := make([]uint8, m)
	for j := int32(1); j < int32(m); j++ {
		a, c := sorted(j-1), sorted(j)
		k := 0
		for k < len(a) && k < len(c) && a[k] == c[k] {
			k++
		}
		lcp[j] = uint8(k)
	}

	toIdx = make([]int32, n)
	for i := range toIdx {
		toIdx[i] = -1
	}
	b.tok = make([]btTok, 0, m)
	b.id = make([]uint32, 0, m)
	tokNode = make([]int32, 0, m)
	anc = make([]int32, 0, m)
	b.pairNode = make([]int32, 1<<16)
	for i := range b.pairNode {
		b.pairNode[i] = -1
	}
	b.node = make([]btTrieNode, 256, 3*m)
	b.label = make([]byte, 256, 3*m)
	for c := range 256 {
		b.label[c] = byte(c)
		b.node[c] = btTrieNode{-1, -1}
	}
	// One level at a time, the tokens at least that long (positions in
	// ord, with the shortest prefix shared with the previous such token),
	// each with its node at the level above and the nearest token on its
	// path.
	type walker struct {
		pos, node, above int32
		gap              uint8
	}
	cur := make([]walker, 0, m)
	for j := range m {
		cur = append(cur, walker{pos: int32(j), node: -1, above: -1, gap: lcp[j]})
	}
	nodes := int32(256)
	var next []walker
	for d := 1; len(cur) > 0; d++ {
		next = next[:0]
		u, curTok := int32(-1), int32(-1)
		run := uint8(255) // the least gap since the last token kept
		for k, w := range cur {
			run = min(run, w.gap)
			id := ord[w.pos]
			s := sorted(w.pos)
			if d == 1 {
				if k == 0 || w.gap < 1 {
					u, curTok = int32(s[0]), -1
				}
			} else if k == 0 || w.gap < uint8(d) {
				u, curTok = nodes, -1
				nodes++
				b.label = append(b.label, s[d-1])
				b.node = append(b.node, btTrieNode{-1, -1})
				if b.node[w.node].first < 0 {
					b.node[w.node].first = u
				}
				if d == 2 {
					b.pairNode[uint32(s[0])<<8|uint32(s[1])] = u
				}
			}
			if len(s) == d { // sorts first among those through u
				t := int32(len(b.tok))
				toIdx[id] = t
				b.node[u].tok = t
				b.tok = append(b.tok, btTok{meta: uint32(len(s)) << btLenShift, left: -1, right: -1})
				b.id = append(b.id, uint32(id))
				tokNode = append(tokNode, u)
				anc = append(anc, w.above)
				curTok = t
				continue
			}
			w.node = u
			if curTok >= 0 {
				w.above = curTok
			}
			w.gap, run = run, 255
			next = append(next, w)
		}
		cur, next = next, cur
	}
	// A node without children gets an empty range at the next's start.
	b.node = append(b.node, btTrieNode{nodes, -1})
	b.label = append(b.label, make([]byte, 8)...)
	for u := nodes - 1; u >= 0; u-- {
		if b.node[u].first < 0 {
			b.node[u].first = b.node[u+1].first
		}
	}
	return toIdx, tokNode, anc
}

// sortTokens returns the ids of the tokens (length > 0) in byte order: a
// radix sort of their first eight bytes, then a comparison sort of the
// runs that share them.
func sortTokens(n int32, length []uint8, tokBytes func(int32) string) []int32 {
	type kv struct {
		key uint64
		id  int32
	}
	a := make([]kv, 0, n)
	for id := range n {
		if length[id] == 0 {
			continue
		}
		var k uint64
		s := tokBytes(id)
		for i := range 8 {
			k <<= 8
			if i < len(s) {
				k |= uint64(s[i])
			}
		}
		a = append(a, kv{k, id})
	}
	tmp := make([]kv, len(a))
	for shift := 0; shift < 64; shift += 16 {
		var count [1<<16 + 1]int32
		for _, e := range a {
			count[e.key>>shift&0xffff+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, e := range a {
			d := e.key >> shift & 0xffff
			tmp[count[d]] = e
			count[d]++
		}
		a, tmp = tmp, a
	}
	ord := make([]int32, len(a))
	for i := 0; i < len(a); {
		j := i + 1
		for j < len(a) && a[j].key == a[i].key {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(a[i:j], func(x, y kv) int { return strings.Compare(tokBytes(x.id), tokBytes(y.id)) })
		}
		for k := i; k < j; k++ {
			ord[k] = a[k].id
		}
		i = j
	}
	return ord
}

// refTokenLen bounds the tokens whose reference merges use refScratch's
// arrays; longer ones (a vocabulary's long runs of spaces, up to
// maxTokenLen) take heap slices.
const refTokenLen = 255

// refScratch is the stack space of a reference merge of up to two tokens.
type refScratch struct {
	start, rank [2*refTokenLen + 1]uint32
	ids         [2 * refTokenLen]uint32
}

// slices returns the scratch of a reference merge of n bytes: n+1 starts,
// n ranks and n ids.
func (sc *refScratch) slices(n int) (start, rank, ids []uint32) {
	if n <= 2*refTokenLen {
		return sc.start[:n+1], sc.rank[:n], sc.ids[:n]
	}
	return make([]uint32, n+1), make([]uint32, n), make([]uint32, n)
}

// refMerger returns the pairMerger of the reference merge of p; ids
// (len(p) entries) is its scratch.
func (b *backtrack) refMerger(p string, ids []uint32) pairMerger {
	if b.mt == nil {
		return pairMerger{v: b.v, p: p}
	}
	for i := range len(p) {
		ids[i] = b.v.byteRank[p[i]]
	}
	return pairMerger{mt: b.mt, id: ids}
}

// refMerge merges L bytes as the reference does (m gives the pair ranks;
// start and rank are scratch of L+1 and L entries) until stop parts are
// left or no pair merges. It returns the number of parts, whose starts
// are then in start, and the rank of the next merge (noRank if none).
func refMerge(m *pairMerger, L, stop int, start, rank []uint32) (int, uint32) {
	for i := range L + 1 {
		start[i] = uint32(i)
	}
	for i := 0; i < L-1; i++ {
		rank[i] = m.rankOf(int32(i), int32(i+1), int32(i+2))
	}
	k := L // parts
	for {
		minR, i := noRank, 0
		for j, r := range rank[:k-1] {
			if r < minR {
				minR, i = r, j
			}
		}
		if k <= stop || minR == noRank {
			return k, minR
		}
		m.merged(int32(start[i]), minR)
		copy(start[i+1:k], start[i+2:k+1])
		copy(rank[i+1:k-1], rank[i+2:k])
		k--
		if i > 0 {
			rank[i-1] = m.rankOf(int32(start[i-1]), int32(start[i]), int32(start[i+1]))
		}
		if i < k-1 {
			rank[i] = m.rankOf(int32(start[i]), int32(start[i+1]), int32(start[i+2]))
		}
	}
}
