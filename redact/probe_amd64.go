//go:build amd64 && !purego

package redact

// probe8 probes the 4-grams at positions i, i+1, … of text[:n] eight at a
// time, as keywordIndex.probe does, while i+16 <= n. It returns the first
// block with a hit, pos being its first position and bit b of mask set
// when position pos+b hits; or, when none hits, the position where it
// stopped and a zero mask.
//
//go:noescape
func probe8(text *byte, i, n int, grams *[1 << gramBits / 64]uint64) (pos int, mask uint32)

// positions records, 32 bytes at a time, the positions p >= from of text
// with text[p] == c1 and, unless c0 is 0, text[p-1] == c0 (ASCII case
// folded with fold): see probe_amd64.s.
//
//go:noescape
func positions(text *byte, from, n int, c0, c1 byte, fold bool, pos *[64]int32) (count, next int)
