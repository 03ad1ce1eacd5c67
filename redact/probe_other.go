//go:build !amd64 || purego

package redact

var useAVX2 = false

func probe8(text *byte, i, n int, grams *[1 << gramBits / 64]uint64) (pos int, mask uint32) {
	panic("redact: probe8 without AVX2")
}

func positions(text *byte, from, n int, c0, c1 byte, fold bool, pos *[64]int32) (count, next int) {
	panic("redact: positions without AVX2")
}
