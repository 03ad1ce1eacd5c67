//go:build amd64 && !purego

package redact

// useAVX2 is set when the CPU and the OS support AVX2: walk then probes
// eight positions at a time (probe8, probe_amd64.s).
var useAVX2 = func() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // the OS saves XMM and YMM state
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0
}()

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

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
