package redact

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// walkPositions lists the positions k's walk visits.
func walkPositions(k *keywordIndex, s string) []int {
	var out []int
	k.walk(s, func(i int) bool { out = append(out, i); return true })
	return out
}

func TestProbeAVX2(t *testing.T) {
	k := onKernel(t, kernelNamed("avx2")).kw
	plain := onKernel(t, kernelNamed("purego")).kw
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"token", "KEY", "api", "ghp_", "password", "x", "the ", "\n", "é", ".ey", "AKIA", "secret", "://", "Auth"}
	for n := range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(words[rng.IntN(len(words))])
		}
		s := b.String()
		if a, w := walkPositions(k, s), walkPositions(plain, s); !slices.Equal(a, w) {
			t.Fatalf("case %d %q: AVX2 walk %v, scalar %v", n, s, a, w)
		}
	}
}

func FuzzProbeAVX2(f *testing.F) {
	f.Add("the api key token is ghp_xxxxxxxxxxxxxxxxxxxxxx and AKIA")
	f.Add(strings.Repeat("password", 9))
	f.Fuzz(func(t *testing.T, s string) {
		k := onKernel(t, kernelNamed("avx2")).kw
		plain := onKernel(t, kernelNamed("purego")).kw
		if a, w := walkPositions(k, s), walkPositions(plain, s); !slices.Equal(a, w) {
			t.Fatalf("%q: AVX2 walk %v, scalar %v", s, a, w)
		}
	})
}

// allPositions lists what eachPosition finds, with or without AVX2.
func allPositions(s string, from int, c0, c1 byte, folded, avx2 bool) []int {
	var out []int
	eachPosition(avx2, s, from, c0, c1, folded, func(p int) bool { out = append(out, p); return true })
	return out
}

func checkPositions(t *testing.T, s string) {
	t.Helper()
	for _, c := range []struct {
		c0, c1 byte
		folded bool
	}{{0, '\\', false}, {'s', '.', false}, {'q', '~', true}, {'e', 'y', true}} {
		from := 0
		if c.c0 != 0 {
			from = 1
		}
		if a, w := allPositions(s, from, c.c0, c.c1, c.folded, true), allPositions(s, from, c.c0, c.c1, c.folded, false); !slices.Equal(a, w) {
			t.Fatalf("%q %+v: AVX2 %v, scalar %v", s, c, a, w)
		}
	}
}

func TestPositionsAVX2(t *testing.T) {
	requireKernel(t, kernelNamed("avx2"))
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{`\`, `\\`, "s.", "S.", "Q~", "q~", "ey", "EY", "x", "long text here ", "\n"}
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(120) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		checkPositions(t, b.String())
	}
}

func FuzzPositionsAVX2(f *testing.F) {
	f.Add(strings.Repeat(`a\nb\\c s.d Q~e`, 9))
	f.Fuzz(func(t *testing.T, s string) {
		requireKernel(t, kernelNamed("avx2"))
		checkPositions(t, s)
	})
}
