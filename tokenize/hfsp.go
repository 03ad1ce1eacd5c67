package tokenize

import (
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// spModel is a SentencePiece-style BPE model of a tokenizer.json (Gemma,
// Llama-2, Mistral, Phi-3): the vocabulary is spelled in the text's own
// characters (spaces as ▁ after normalization), not in GPT-2's byte-level
// alphabet. Hugging Face's BPE (models/bpe/model.rs, merge_word) starts a
// piece as one symbol per character: the character's token, else, with
// byte_fallback, one <0xNN> token per byte of it, else unk_token (runs of
// unknown characters fused into one when fuse_unk; dropped without an
// unk_token), and then merges exactly as the byte-level model does (lowest
// merge rank first, leftmost on ties).
type spModel struct {
	tok          *vocab // token string -> id
	merges       *mergeTable
	ignoreMerges bool // a piece that is a token is that token
	byteFallback bool
	byteTok      [256]uint32 // id of <0xNN>, noRank if absent
	unk          uint32      // id of unk_token, noRank if none
	fuseUnk      bool

	// Pieces are cut into chunks merged on their own where no merge can
	// cross: between two symbols such that no token's spelling holds the
	// last character of the first followed by the first character of the
	// second (pairs holds every two characters adjacent in some token). No
	// symbol can then ever span the cut, so the merges on either side are
	// those the whole piece makes (each side's lowest pair is the lowest
	// of the whole piece that is on that side). Every ▁ (the normalized
	// space) is checked; the other characters only in chunks longer than
	// pieceMaxLen, where the merging costs more than the check.
	pairs charPairs
	// fullBytes: every byte has its <0xNN> token, so no character both
	// falls back to bytes and leaves an unk pending (the reference then
	// emits the unk after the bytes: no cut may fall between them).
	fullBytes bool
	hasSpace  bool // ▁ is a token

	// char3 holds the token of each three-byte character (U+0800 to
	// U+FFFF, ▁ and CJK among them), noRank if none: looked up per
	// character, they would each cost a hash.
	char3 []uint32

	// selfMerge learns whether a chunk that is a token merges into it;
	// pieces caches the counts of other chunks of up to pieceMaxLen bytes.
	selfMerge selfMergeBits
	pieces    *pieceCache
}

const spSpace = "▁"

// buildSPModel parses the vocab and merges of a SentencePiece-style BPE
// model (the model fields other than vocab and merges already checked).
func buildSPModel(rawVocab, rawMerges []byte, ignoreMerges, byteFallback, fuseUnk bool, unk *string) (*spModel, error) {
	v, arena := newVocab(len(rawVocab)/12, len(rawVocab))
	var ids []string // token of each id, "" if none yet
	err := eachVocab(rawVocab, func(tok []byte, id int) error {
		switch {
		case len(tok) == 0:
			return fmt.Errorf("tokenize: tokenizer.json: model.vocab[%q]: empty token", tok)
		case id > maxRank:
			return fmt.Errorf("tokenize: tokenizer.json: model.vocab[%q]: token id %d above %d, too large for this table", tok, id, maxRank)
		case len(tok) > maxTokenLen || len(arena)+len(tok) > cap(arena) || len(arena)+len(tok) > maxArena:
			return fmt.Errorf("tokenize: tokenizer.json: model.vocab[%q]: token or vocabulary too large for this table", tok)
		}
		for len(ids) <= id {
			ids = append(ids, "")
		}
		if ids[id] != "" {
			return fmt.Errorf("tokenize: tokenizer.json: model.vocab[%q]: id %d already given to %q", tok, id, ids[id])
		}
		start := len(arena)
		arena = append(arena, tok...)
		b := arena[start:]
		s := unsafe.String(unsafe.SliceData(b), len(b))
		if !v.insert(s, uint32(start), uint32(id)) {
			return fmt.Errorf("tokenize: tokenizer.json: model.vocab[%q]: token listed twice", tok)
		}
		ids[id] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.arena = v.arena[:len(arena)]
	if v.ntok == 0 {
		return nil, fmt.Errorf("tokenize: tokenizer.json: model.vocab: no tokens")
	}
	m := &spModel{tok: v, ignoreMerges: ignoreMerges, byteFallback: byteFallback, fuseUnk: fuseUnk, unk: noRank, selfMerge: newSelfMergeBits(), pieces: newPieceCache(pieceSlots)}
	for b := range m.byteTok {
		m.byteTok[b] = noRank
		if byteFallback {
			m.byteTok[b] = v.lookup(fmt.Sprintf("<0x%02X>", b))
		}
	}
	if unk != nil {
		// The reference fails the encode that meets an unknown character
		// when unk_token is not a token; a count cannot fail, so refuse.
		if m.unk = v.lookup(*unk); m.unk == noRank {
			return nil, fmt.Errorf("tokenize: tokenizer.json: model.unk_token %q is not in the vocabulary", *unk)
		}
	}
	mt := newMergeTable(len(rawMerges) / 10)
	var joined []byte
	err = eachMerge(rawMerges, func(k int, a, b []byte) error {
		joined = append(append(joined[:0], a...), b...)
		ia, ib := v.lookup(unsafe.String(unsafe.SliceData(a), len(a))), v.lookup(unsafe.String(unsafe.SliceData(b), len(b)))
		in := v.lookup(unsafe.String(unsafe.SliceData(joined), len(joined)))
		switch {
		case ia == noRank:
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %q is not in the vocabulary", k, a)
		case ib == noRank:
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %q is not in the vocabulary", k, b)
		case in == noRank:
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %q is not in the vocabulary", k, joined)
		}
		if err := mt.add(ia, ib, in); err != nil {
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %w", k, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.merges = mt
	m.hasSpace = v.lookup(spSpace) != noRank
	m.fullBytes = byteFallback
	for _, t := range m.byteTok {
		m.fullBytes = m.fullBytes && t != noRank
	}
	m.char3 = make([]uint32, 0x10000-0x800)
	for i := range m.char3 {
		m.char3[i] = noRank
	}
	for id, s := range ids {
		if r, w := utf8.DecodeRuneInString(s); len(s) == 3 && w == 3 {
			m.char3[r-0x800] = uint32(id)
		}
	}
	m.pairs = newCharPairs(ids)
	return m, nil
}

// pieceTokens appends the ids of one pre-tokenized piece to out when emit
// is set, and returns the number of tokens.
func (m *spModel) pieceTokens(p string, out []int, emit bool) ([]int, int) {
	if p == "" {
		return out, 0
	}
	if m.ignoreMerges {
		if id := m.tok.lookup(p); id != noRank {
			if emit {
				out = append(out, int(id))
			}
			return out, 1
		}
	}
	total, start := 0, 0
	if m.hasSpace {
		// Before a ▁ that follows a ▁ (runs of spaces) the answer is
		// the same each time: asked once.
		spaceCut, spaceAsked := false, false
		for i := 1; i < len(p); {
			j := i
			if !strings.HasPrefix(p[i:], spSpace) {
				k := strings.Index(p[i:], spSpace)
				if k < 0 {
					break
				}
				j = i + k
			}
			var cut bool
			switch {
			case j < len(spSpace) || p[j-len(spSpace):j] != spSpace:
				cut = m.cutBefore(p, j)
			case !spaceAsked:
				spaceCut, spaceAsked = m.cutBefore(p, j), true
				cut = spaceCut
			default:
				cut = spaceCut
			}
			if cut {
				var n int
				out, n = m.chunk(p[start:j], out, emit)
				total += n
				start = j
			}
			i = j + len(spSpace)
		}
	}
	out, n := m.chunk(p[start:], out, emit)
	return out, total + n
}

// charPairs is the set of characters a, b such that some token's
// spelling holds a followed by b: a bitmap for two ASCII characters, an
// open-addressed table of uint64(a)<<32|b (bit 63 set: occupied) for
// the others.
type charPairs struct {
	ascii [128 * 128 / 64]uint64
	slots []uint64
	shift uint
}

func newCharPairs(tokens []string) charPairs {
	var p charPairs
	var other []uint64
	for _, s := range tokens {
		var prev rune = -1
		for _, r := range s {
			switch {
			case prev < 0:
			case prev < 128 && r < 128:
				k := prev<<7 | r
				p.ascii[k>>6] |= 1 << (k & 63)
			default:
				other = append(other, uint64(prev)<<32|uint64(r))
			}
			prev = r
		}
	}
	size := 1 << bits.Len(uint(len(other)*2+16))
	p.slots, p.shift = make([]uint64, size), uint(64-bits.Len(uint(size-1)))
	for _, key := range other {
		i := p.home(key)
		for p.slots[i] != 0 && p.slots[i] != key|1<<63 {
			i = (i + 1) & uint64(len(p.slots)-1)
		}
		p.slots[i] = key | 1<<63
	}
	return p
}

func (p *charPairs) home(key uint64) uint64 { return key * 0x9E3779B97F4A7C15 >> p.shift }

// has reports whether a followed by b is in some token.
func (p *charPairs) has(a, b rune) bool {
	if a < 128 && b < 128 && a >= 0 && b >= 0 {
		k := a<<7 | b
		return p.ascii[k>>6]&(1<<(k&63)) != 0
	}
	key := uint64(uint32(a))<<32 | uint64(uint32(b)) | 1<<63
	for i := p.home(key &^ (1 << 63)); ; i = (i + 1) & uint64(len(p.slots)-1) {
		switch p.slots[i] {
		case key:
			return true
		case 0:
			return false
		}
	}
}

// cutBefore reports whether no merge can join the symbols before the ▁
// at j with it (▁ is a token).
func (m *spModel) cutBefore(p string, j int) bool {
	x, w := utf8.DecodeLastRuneInString(p[:j])
	_, last, ok := m.edge(p[j-w:j], x)
	if !ok {
		return false
	}
	return !m.pairs.has(last, '▁')
}

// edge returns the first and last characters of the spelling of the
// symbols that character r (c, its bytes) starts as: r itself when it is
// a token, '<' and '>' when it falls back to <0xNN> tokens (and every
// byte has one); ok is false otherwise (an unk, which may fuse with its
// neighbours, or a dropped character).
func (m *spModel) edge(c string, r rune) (first, last rune, ok bool) {
	switch {
	case m.charTok(c, r) != noRank:
		return r, r, true
	case m.fullBytes:
		return '<', '>', true
	}
	return 0, 0, false
}

// chunk merges a chunk, cut first at the other characters where no
// merge can cross when it is long.
func (m *spModel) chunk(c string, out []int, emit bool) ([]int, int) {
	if len(c) <= pieceMaxLen {
		return m.chunk1(c, out, emit)
	}
	total, start := 0, 0
	r, w := utf8.DecodeRuneInString(c)
	_, last, ok := m.edge(c[:w], r)
	// A character repeating the one before it makes the same pair with
	// it each time: selfJoin is that pair's answer, asked once per run.
	selfJoin, selfAsked := false, false
	for i := w; i < len(c); i += w {
		if prev := c[i-w : i]; len(c)-i >= w && c[i:i+w] == prev && (r != utf8.RuneError || w > 1) {
			if !ok {
				continue
			}
			if !selfAsked {
				first, _, _ := m.edge(prev, r)
				selfJoin, selfAsked = m.pairs.has(last, first), true
			}
			if !selfJoin {
				var n int
				out, n = m.chunk1(c[start:i], out, emit)
				total += n
				start = i
			}
			continue
		}
		selfAsked = false
		r, w = utf8.DecodeRuneInString(c[i:])
		first, l, ok2 := m.edge(c[i:i+w], r)
		if ok && ok2 {
			if !m.pairs.has(last, first) {
				var n int
				out, n = m.chunk1(c[start:i], out, emit)
				total += n
				start = i
			}
		}
		last, ok = l, ok2
	}
	out, n := m.chunk1(c[start:], out, emit)
	return out, total + n
}

// chunk1 merges one chunk (no merge crosses its ends).
func (m *spModel) chunk1(c string, out []int, emit bool) ([]int, int) {
	if c == "" {
		return out, 0
	}
	if len(c) <= utf8.UTFMax {
		// One character that is a token (most chunks of random bytes):
		// one symbol, nothing to merge or cache.
		t := noRank
		if c[0] < utf8.RuneSelf {
			if len(c) == 1 {
				t = m.tok.byteRank[c[0]]
			}
		} else if r, w := utf8.DecodeRuneInString(c); w == len(c) {
			t = m.charTok(c, r)
		}
		if t != noRank {
			if emit {
				out = append(out, int(t))
			}
			return out, 1
		}
	}
	if !emit && len(c) <= pieceMaxLen {
		// Counting a short chunk: its count is most often in the cache,
		// which then costs one hash and one compare.
		h := m.tok.hash(c)
		if n, ok := m.pieces.get(h, c); ok {
			return out, n
		}
		id := noRank
		if len(c) > 2 {
			id = m.tok.lookupHashed(c, h)
		} else {
			id = m.tok.lookup(c)
		}
		n, yes, known := 1, false, false
		if id != noRank {
			yes, known = m.selfMerge.get(id)
		}
		if !yes {
			out, n = m.merge(c, out, emit)
			if id != noRank && !known {
				m.selfMerge.learn(id, n == 1)
			}
		}
		m.pieces.put(h, c, n)
		return out, n
	}
	id := m.tok.lookup(c)
	if id != noRank {
		if yes, known := m.selfMerge.get(id); yes {
			if emit {
				out = append(out, int(id))
			}
			return out, 1
		} else if !known {
			out, n := m.merge(c, out, emit)
			m.selfMerge.learn(id, n == 1)
			return out, n
		}
	}
	return m.merge(c, out, emit)
}

// merge runs the reference's merge_word on c: its symbols, then the
// merges.
func (m *spModel) merge(c string, out []int, emit bool) ([]int, int) {
	if len(c) <= smallPiece {
		var id, rank [smallPiece]uint32
		n := m.symbols(c, id[:])
		n = mergeIDs(m.merges, id[:n], rank[:n])
		if emit {
			for _, t := range id[:n] {
				out = append(out, int(t))
			}
		}
		return out, n
	}
	sc := scratchPool.Get().(*mergeScratch)
	id := growU32(sc.id, len(c))
	sc.id = id
	n := m.symbols(c, id)
	var count int
	switch {
	case n <= smallPiece:
		var rank [smallPiece]uint32
		count = mergeIDs(m.merges, id[:n], rank[:n])
		if emit {
			for _, t := range id[:count] {
				out = append(out, int(t))
			}
		}
	case worthRuns(id[:n]):
		out, count = mergeRuns(m.merges, id[:n], out, emit)
	case n > 1:
		count = mergeQueued(&pairMerger{mt: m.merges, id: id[:n]}, n, len(m.merges.newID), sc)
		if emit {
			for i := int32(0); int(i) < n; i = sc.next[i] {
				out = append(out, int(id[i]))
			}
		}
	}
	scratchPool.Put(sc)
	return out, count
}

// symbols writes the initial symbols of c to id (room for len(c)) and
// returns how many there are: per character its token, else its bytes'
// <0xNN> tokens (byte_fallback), else unk_token, fused over a run when
// fuse_unk; a character with none of these is dropped, as the reference
// drops it.
func (m *spModel) symbols(c string, id []uint32) int {
	n := 0
	pendingUnk := false
	same, sameTok := "", noRank // the last character that is a token, if several bytes
	for i := 0; i < len(c); {
		if same != "" && strings.HasPrefix(c[i:], same) {
			// It again (runs of ▁): same token, no unk pending.
			id[n] = sameTok
			n++
			i += len(same)
			continue
		}
		same = ""
		w := 1
		var t uint32
		if c[i] < utf8.RuneSelf {
			t = m.tok.byteRank[c[i]]
		} else {
			var r rune
			r, w = utf8.DecodeRuneInString(c[i:])
			t = m.charTok(c[i:i+w], r)
			if t != noRank && r != utf8.RuneError {
				same, sameTok = c[i:i+w], t
			}
		}
		if t != noRank {
			if pendingUnk {
				id[n] = m.unk
				n++
				pendingUnk = false
			}
			id[n] = t
			n++
			i += w
			continue
		}
		if m.byteFallback && m.allBytes(c[i:i+w]) {
			// As the reference: a pending unk stays pending, after these.
			for k := i; k < i+w; k++ {
				id[n] = m.byteTok[c[k]]
				n++
			}
			i += w
			continue
		}
		if m.unk != noRank {
			if pendingUnk && !m.fuseUnk {
				id[n] = m.unk
				n++
			}
			pendingUnk = true
		}
		i += w
	}
	if pendingUnk {
		id[n] = m.unk
		n++
	}
	return n
}

// charTok returns the token of the one character r (c, its bytes).
func (m *spModel) charTok(c string, r rune) uint32 {
	if r >= 0x800 && r < 0x10000 {
		return m.char3[r-0x800]
	}
	return m.tok.lookup(c)
}

func (m *spModel) allBytes(s string) bool {
	for k := range len(s) {
		if m.byteTok[s[k]] == noRank {
			return false
		}
	}
	return true
}
