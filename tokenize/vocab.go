package tokenize

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"unsafe"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// noRank marks a byte string that is not a token.
const noRank = ^uint32(0)

// A table slot packs a whole entry into one uint64, so a lookup touches
// one slot and then the token bytes in the arena:
//
//	tag (13 bits of the hash) | length (11) | arena offset (22) | rank (18)
//
// A zero slot is empty (no token has length 0). Both shipped files fit
// (ranks < 2^18, tokens < 2048 bytes, arena < 4 MB); parseVocab rejects a
// file that does not. (Claude's tokenizer.json has tokens of up to 1,024
// spaces.)
const (
	rankBits = 18
	offBits  = 22
	lenBits  = 11
	tagBits  = 64 - rankBits - offBits - lenBits

	maxRank     = 1<<rankBits - 1
	maxArena    = 1 << offBits
	maxTokenLen = 1<<lenBits - 1
)

// vocab maps token byte strings to ranks. All token bytes live in one arena
// string and the table is linear probing over packed uint64 slots, so
// loading makes a handful of large allocations instead of one per token,
// and lookups never allocate.
type vocab struct {
	arena  string // concatenated token bytes, in file order
	table  []uint64
	mask   uint64
	seed   maphash.Seed
	maxLen int
	ntok   int

	byteRank [256]uint32 // rank of each single byte
	pairRank []uint32    // rank of each two-byte string, index b0<<8|b1

	bt btLazy // the backtracking encoder's tables (tiktoken ranks), built on first need
}

// b64 maps a standard base64 character to its 6-bit value, 0xFF if invalid.
var b64 = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// decodeB64 appends the standard (padded) base64 decoding of src to dst; ok
// is false on a malformed token. Written out because encoding/base64's
// per-call overhead dominated start-up on 200k short tokens.
func decodeB64(dst, src []byte) ([]byte, bool) {
	if len(src) == 0 || len(src)%4 != 0 {
		return dst, false
	}
	for i := 0; i < len(src); i += 4 {
		a, b, c, d := b64[src[i]], b64[src[i+1]], b64[src[i+2]], b64[src[i+3]]
		if a|b == 0xFF {
			return dst, false
		}
		last := i+4 == len(src)
		switch {
		case c|d != 0xFF:
			dst = append(dst, a<<2|b>>4, b<<4|c>>2, c<<6|d)
		case last && c != 0xFF && src[i+3] == '=':
			dst = append(dst, a<<2|b>>4, b<<4|c>>2)
		case last && src[i+2] == '=' && src[i+3] == '=':
			dst = append(dst, a<<2|b>>4)
		default:
			return dst, false
		}
	}
	return dst, true
}

// loadVocab parses an embedded .tiktoken file ("base64 rank" per line).
func loadVocab(file string) (*vocab, error) {
	f, err := assets.Assets.Open(file)
	if err != nil {
		return nil, fmt.Errorf("tokenize: opening embedded %s: %w", file, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tokenize: %s: %w", file, err)
	}
	return parseVocab(file, f, int(fi.Size()))
}

// eachLine calls fn for each line of r (without its "\n" or "\r\n"), with
// its 1-based number, streaming through a small buffer rather than reading
// the file whole. Lines must fit in the buffer (64 KB).
func eachLine(file string, r io.Reader, fn func(line int, row []byte) error) error {
	buf := make([]byte, 64<<10)
	have, line, eof := 0, 0, false
	for {
		if !eof {
			n, err := io.ReadFull(r, buf[have:])
			have += n
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				eof = true
			} else if err != nil {
				return fmt.Errorf("tokenize: reading %s: %w", file, err)
			}
		}
		chunk := buf[:have]
		for len(chunk) > 0 {
			end := bytes.IndexByte(chunk, '\n')
			if end < 0 && !eof {
				break
			}
			row := chunk
			if end >= 0 {
				row, chunk = chunk[:end], chunk[end+1:]
			} else {
				chunk = chunk[len(chunk):]
			}
			line++
			if len(row) > 0 && row[len(row)-1] == '\r' {
				row = row[:len(row)-1]
			}
			if err := fn(line, row); err != nil {
				return err
			}
		}
		if eof {
			return nil
		}
		if len(chunk) == len(buf) {
			return fmt.Errorf("tokenize: %s:%d: line longer than %d bytes", file, line+1, len(buf))
		}
		have = copy(buf, chunk)
	}
}

// parseVocab reads a .tiktoken rank file of size bytes from f in one
// streaming pass; file names it in errors, which carry the line number.
func parseVocab(file string, f io.Reader, size int) (*vocab, error) {
	// Rows average 16.8 (cl100k) and 18.1 (o200k) bytes in the shipped
	// files; the table is sized for a load factor of at most 0.8 at the
	// estimate and doubles past 0.8. At 0.4 to 0.8, linear probing stays
	// within one or two cache lines, and the table (2 MB for o200k_base)
	// costs few page faults at start-up; a 4 MB table measured about 25 ms
	// more start-up CPU.
	// Decoded tokens are shorter than their rows, so the arena never
	// outgrows this reservation.
	v, arena := newVocab(size/18, size)
	err := eachLine(file, f, func(line int, row []byte) error {
		if len(row) == 0 {
			return nil
		}
		sp := bytes.IndexByte(row, ' ')
		if sp <= 0 || sp == len(row)-1 {
			return fmt.Errorf("tokenize: %s:%d: want \"base64 rank\"", file, line)
		}
		var r uint64
		for _, c := range row[sp+1:] {
			if c < '0' || c > '9' || r > 1<<31 {
				return fmt.Errorf("tokenize: %s:%d: bad rank %q", file, line, row[sp+1:])
			}
			r = r*10 + uint64(c-'0')
		}
		start := len(arena)
		if start+sp > cap(arena) {
			return fmt.Errorf("tokenize: %s:%d: file changed while loading", file, line)
		}
		var ok bool
		if arena, ok = decodeB64(arena, row[:sp]); !ok {
			return fmt.Errorf("tokenize: %s:%d: bad base64 token %q", file, line, row[:sp])
		}
		tok := arena[start:]
		switch {
		case len(tok) == 0:
			return fmt.Errorf("tokenize: %s:%d: empty token", file, line)
		case len(tok) > maxTokenLen || len(arena) > maxArena || r > maxRank:
			return fmt.Errorf("tokenize: %s:%d: token, rank or file too large for this table", file, line)
		}
		// tok aliases the arena, which only grows in place (cap reserved).
		if !v.insert(unsafe.String(unsafe.SliceData(tok), len(tok)), uint32(start), uint32(r)) {
			return fmt.Errorf("tokenize: %s:%d: token %q listed twice", file, line, tok)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if v.ntok == 0 {
		return nil, fmt.Errorf("tokenize: %s: no tokens", file)
	}
	v.arena = v.arena[:len(arena)]
	for b, r := range v.byteRank {
		if r == noRank {
			return nil, fmt.Errorf("tokenize: %s: byte 0x%02x has no rank", file, b)
		}
	}
	return v, nil
}

// newVocab returns an empty vocab sized for about est tokens, and its
// arena with room for arenaCap bytes of tokens. The arena must never
// outgrow that reservation, so that it never moves: v.arena views all of
// it while tokens are appended, for insert's duplicate checks.
func newVocab(est, arenaCap int) (*vocab, []byte) {
	slots := 1 << bits.Len(uint(est+est/4))
	v := &vocab{
		table:    make([]uint64, slots),
		mask:     uint64(slots - 1),
		seed:     maphash.MakeSeed(),
		pairRank: make([]uint32, 1<<16),
	}
	for i := range v.byteRank {
		v.byteRank[i] = noRank
	}
	for i := range v.pairRank {
		v.pairRank[i] = noRank
	}
	arena := make([]byte, 0, arenaCap)
	v.arena = unsafe.String(unsafe.SliceData(arena), cap(arena))
	return v, arena
}

// insert adds tok (stored at arena offset off) with rank r; false if tok
// is already present.
func (v *vocab) insert(tok string, off, r uint32) bool {
	if (v.ntok+1)*5 > len(v.table)*4 {
		v.grow()
	}
	h := v.hash(tok)
	tag := h >> (64 - tagBits)
	probe := tag<<lenBits | uint64(len(tok))
	i := h & v.mask
	for e := v.table[i]; e != 0; e = v.table[i] {
		if e>>(rankBits+offBits) == probe {
			o := int(e>>rankBits) & (maxArena - 1)
			if v.arena[o:o+len(tok)] == tok {
				return false
			}
		}
		i = (i + 1) & v.mask
	}
	v.table[i] = probe<<(rankBits+offBits) | uint64(off)<<rankBits | uint64(r)
	v.maxLen = max(v.maxLen, len(tok))
	v.ntok++
	switch len(tok) {
	case 1:
		v.byteRank[tok[0]] = r
	case 2:
		v.pairRank[uint32(tok[0])<<8|uint32(tok[1])] = r
	}
	return true
}

// grow doubles the table and reinserts every entry (tokens are read back
// from the arena).
func (v *vocab) grow() {
	old := v.table
	v.table = make([]uint64, 2*len(old))
	v.mask = uint64(len(v.table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		o, n := int(e>>rankBits)&(maxArena-1), int(e>>(rankBits+offBits))&maxTokenLen
		i := v.hash(v.arena[o:o+n]) & v.mask
		for v.table[i] != 0 {
			i = (i + 1) & v.mask
		}
		v.table[i] = e
	}
}

// lookup returns the rank of the token s, or noRank.
func (v *vocab) lookup(s string) uint32 {
	n := len(s)
	switch n {
	case 1:
		return v.byteRank[s[0]]
	case 2:
		return v.pairRank[uint32(s[0])<<8|uint32(s[1])]
	}
	if n > v.maxLen || n == 0 {
		return noRank
	}
	return v.lookupHashed(s, v.hash(s))
}

// lookupHashed is lookup for a string of 3 bytes or more (under
// 1<<lenBits; longer than every token: noRank) whose hash h is known. Small enough to be inlined into lookup (a second call per
// lookup cost the byte-level models about 4% more instructions per
// count).
func (v *vocab) lookupHashed(s string, h uint64) uint32 {
	n := len(s)
	probe := h>>(64-tagBits)<<lenBits | uint64(n)
	i := h & v.mask
	for {
		e := v.table[i]
		if e == 0 {
			return noRank
		}
		if e>>(rankBits+offBits) == probe {
			o := int(e>>rankBits) & (maxArena - 1)
			if v.arena[o:o+n] == s {
				return uint32(e) & maxRank
			}
		}
		i = (i + 1) & v.mask
	}
}

// hash hashes a token candidate. Keys up to 16 bytes (nearly all lookups)
// use murmur3's finaliser over at most two overlapping 8-byte (or 4-byte)
// loads, cheaper than a call into the runtime's hasher; longer keys use
// hash/maphash. The table is fixed, so input cannot lengthen probe chains;
// the tag and slot come from different bits of the result.
func (v *vocab) hash(s string) uint64 {
	n := len(s)
	var x, y uint64
	switch {
	case n > 16:
		return maphash.String(v.seed, s)
	case n >= 8:
		x, y = load64(s), load64(s[n-8:])
	case n >= 4:
		x, y = uint64(load32(s)), uint64(load32(s[n-4:]))
	default:
		for i := range n {
			x = x<<8 | uint64(s[i])
		}
	}
	h := x*0x9E3779B97F4A7C15 ^ (y^uint64(n))*0xC2B2AE3D27D4EB4F
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
