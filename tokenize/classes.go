package tokenize

import (
	"sync"
	"unicode/utf8"
)

// Character class bits. Every code point gets one byte of flags; the split
// patterns only ever ask for unions of these.
const (
	cLu uint8 = 1 << iota // uppercase letter
	cLl                   // lowercase letter
	cLt                   // titlecase letter
	cLm                   // modifier letter
	cLo                   // other letter
	cM                    // mark (Mn, Mc, Me); not a letter for \p{L}
	cN                    // number (Nd, Nl, No)
	cWS                   // White_Space (\s)

	mL     = cLu | cLl | cLt | cLm | cLo // \p{L}
	mUpper = cLu | cLt | cLm | cLo | cM  // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	mLower = cLl | cLm | cLo | cM        // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	mLNS   = mL | cN | cWS               // complement of [^\s\p{L}\p{N}]
)

//go:generate sh -c "npm ci --prefix internal/ucdgen --no-audit --no-fund && node internal/ucdgen/gen.mjs && gofmt -w unicode16_tables.go"

// Punctuation, symbol and Han flags, kept in a second table (psTable)
// built only for patterns that ask for \p{P}, \p{S} (DeepSeek's) or
// \p{Han} (Kimi-K2's).
const (
	cP   uint8 = 1 << iota // punctuation (Pc, Pd, Ps, Pe, Pi, Pf, Po)
	cS                     // symbol (Sm, Sc, Sk, So)
	cHan                   // Script=Han
)

// tableLimit bounds the flat class tables: planes 0-2 cover everything but
// rare historic scripts; code points above it are looked up in the range
// lists by binary search.
const tableLimit = 0x30000

var (
	classOnce  sync.Once
	classTable []uint8 // len tableLimit
	asciiClass [128]uint8

	psOnce  sync.Once
	psTable []uint8 // len tableLimit
)

// The character classes are Unicode 16.0's (unicode16_tables.go, generated
// from the Unicode Character Database): the reference regex engines
// (regex-syntax 0.8.5 in npm tiktoken 1.0.22, Hugging Face tokenizers) are
// at 16.0, Go 1.26's unicode package at 15.0.
// classSource gives a flag to the code points of a range list.
type classSource struct {
	ranges []uint32
	flag   uint8
}

var classSources = []classSource{
	{u16Lu, cLu},
	{u16Ll, cLl},
	{u16Lt, cLt},
	{u16Lm, cLm},
	{u16Lo, cLo},
	{u16M, cM},
	{u16N, cN},
	{u16WhiteSpace, cWS},
}

var psSources = []classSource{
	{u16P, cP},
	{u16S, cS},
	{u16Han, cHan},
}

// isHanAt reports whether the code point at s[i] (not ASCII) is Han.
// initPS must have run.
func isHanAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return psOf(r)&cHan != 0
}

// inRanges reports whether c is in a sorted [lo, hi] pair list.
func inRanges(ranges []uint32, c uint32) bool {
	lo, hi := 0, len(ranges)/2
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case c < ranges[2*m]:
			hi = m
		case c > ranges[2*m+1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

func initClasses() {
	classOnce.Do(func() {
		classTable = buildTable(classSources)
		copy(asciiClass[:], classTable[:128])
	})
}

func initPS() {
	psOnce.Do(func() { psTable = buildTable(psSources) })
}

func buildTable(sources []classSource) []uint8 {
	t := make([]uint8, tableLimit)
	for _, src := range sources {
		for k := 0; k < len(src.ranges); k += 2 {
			for c := src.ranges[k]; c <= src.ranges[k+1] && c < tableLimit; c++ {
				t[c] |= src.flag
			}
		}
	}
	return t
}

// classOf returns the class flags of r. initClasses must have run.
func classOf(r rune) uint8 { return flagsOf(r, classTable, classSources) }

// psOf returns the cP/cS flags of r. initPS must have run.
func psOf(r rune) uint8 { return flagsOf(r, psTable, psSources) }

func flagsOf(r rune, table []uint8, sources []classSource) uint8 {
	if uint32(r) < tableLimit {
		return table[r]
	}
	var f uint8
	for _, src := range sources {
		if inRanges(src.ranges, uint32(r)) {
			f |= src.flag
		}
	}
	return f
}
