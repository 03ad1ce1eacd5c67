//go:build !amd64 || purego

package redact

// No assembly kernels: the plain Go path only (kernels).
const (
	cpuAVX512 = false
	cpuAVX2   = false
)

func filterBlocks(text *byte, i, n int, t *filterTables, masks *[blocksPerCall * (1 + shortSlots)]uint64) (nb, next int) {
	panic("redact: filterBlocks without AVX-512")
}

func unescapeBlocks(src, dst *byte, n int) (flags int) {
	panic("redact: unescapeBlocks without AVX-512")
}

func probe8(text *byte, i, n int, grams *[1 << gramBits / 64]uint64) (pos int, mask uint32) {
	panic("redact: probe8 without AVX2")
}

func positions(text *byte, from, n int, c0, c1 byte, fold bool, pos *[64]int32) (count, next int) {
	panic("redact: positions without AVX2")
}

// assemblyBuilt: this build has the assembly kernels.
const assemblyBuilt = false
