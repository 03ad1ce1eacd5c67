//go:build !amd64 || purego

package redact

var useAVX512 = false

func filterBlocks(text *byte, i, n int, t *filterTables, masks *[blocksPerCall * (1 + shortSlots)]uint64) (nb, next int) {
	panic("redact: filterBlocks without AVX-512")
}

func unescapeBlocks(src, dst *byte, n int) (flags int) {
	panic("redact: unescapeBlocks without AVX-512")
}
