//go:build amd64 && !purego

package redact

// useAVX512 is set when the CPU and the OS support AVX-512 F, BW and
// VBMI: keywords are then found with the filter kernel (filterBlocks)
// and the escape view made by unescapeBlocks (filter_amd64.s).
var useAVX512 = func() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const osxsave = 1 << 27
	if ecx1&osxsave == 0 {
		return false
	}
	// The OS saves XMM, YMM, the opmask registers and both halves of the
	// ZMM registers.
	if xcr0, _ := xgetbv(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, ecx7, _ := cpuid(7, 0)
	const avx512f, avx512bw, avx512vbmi = 1 << 16, 1 << 30, 1 << 1
	return ebx7&avx512f != 0 && ebx7&avx512bw != 0 && ecx7&avx512vbmi != 0
}()

// filterBlocks tests blocks of 64 positions of text[:n] from i on, as
// filterTables says, while a block and the 3 bytes after it are in
// text[:n], at most blocksPerCall blocks: masks[5b] marks the positions
// of block b where a keyword of 3 bytes or more may start, masks[5b+1+s]
// those where 2-byte spelling s starts. It returns the blocks tested and
// where the next would start.
//
//go:noescape
func filterBlocks(text *byte, i, n int, t *filterTables, masks *[blocksPerCall * (1 + shortSlots)]uint64) (nb, next int)

// unescapeBlocks copies src[:n] to dst rewriting the escapes \n, \t, \r,
// \b and \f as unescapeView does; flags has bit 0 set when an escaped 'u'
// occurs (the copy is then not the view: the caller makes it with
// unescapeView), bit 1 when an escaped '/' does.
//
//go:noescape
func unescapeBlocks(src, dst *byte, n int) (flags int)
