package redact

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

type kwHit struct {
	w   int32
	end int
}

// scanHits lists what k's scan reports.
func scanHits(k *keywordIndex, s string) []kwHit {
	var out []kwHit
	k.scan(s, func(w int32, end int) { out = append(out, kwHit{w, end}) })
	return out
}

// checkFilter compares the scan of k (the AVX-512 kernel) with that of
// plain (the plain Go one).
func checkFilter(t *testing.T, k, plain *keywordIndex, s string) {
	t.Helper()
	if a, w := scanHits(k, s), scanHits(plain, s); !slices.Equal(a, w) {
		t.Fatalf("%q: filtered scan %v, scan %v", s, a, w)
	}
}

func TestFilterAVX512(t *testing.T) {
	k := onKernel(t, kernelNamed("avx512")).kw
	plain := onKernel(t, kernelNamed("purego")).kw
	if !k.filterOK {
		t.Fatal("the default keywords do not fit the filter")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := append([]string{"x", " ", "\n", "é", "\x00", "\xff", "tok", "TOKEN", "s.", "S.", "SK", "sk", "q~", "Q~", "ke", "y", "4b1d", "-----BEGIN"}, k.words...)
	for n := range 4000 {
		var b strings.Builder
		for range rng.IntN(60) {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(3) == 0 {
				p = strings.ToUpper(p)
			}
			b.WriteString(p)
		}
		s := b.String()
		checkFilter(t, k, plain, s)
		if n == 0 {
			// Every position a candidate, and long runs of them.
			for _, w := range []string{"key", "token", "conf", "s.", "SK", "Q~", "passw"} {
				checkFilter(t, k, plain, strings.Repeat(w, 900))
				checkFilter(t, k, plain, strings.Repeat(w+" ", 700))
			}
		}
		if n%50 == 0 {
			// Every keyword at every offset of a block, and at the end.
			for _, w := range k.words {
				for off := 0; off < 140; off += 7 {
					checkFilter(t, k, plain, strings.Repeat("a", off)+w+strings.Repeat(".", rng.IntN(3)))
				}
			}
		}
	}
}

func FuzzFilterAVX512(f *testing.F) {
	f.Add("the api key token is ghp_xxxxxxxxxxxxxxxxxxxxxx and AKIA s.abc SK12 q~x")
	f.Add(strings.Repeat("password", 19))
	f.Fuzz(func(t *testing.T, s string) {
		k := onKernel(t, kernelNamed("avx512")).kw
		checkFilter(t, k, onKernel(t, kernelNamed("purego")).kw, s)
	})
}

// checkUnescape compares unescapeBlocks with unescapeView on line.
func checkUnescape(t *testing.T, line string) {
	t.Helper()
	want := []byte(line)
	wantMixed := false
	if i := strings.IndexByte(line, '\\'); i >= 0 {
		wantMixed = unescapeView(want, i, false)
	}
	got := make([]byte, len(line))
	flags := 0
	if len(line) > 0 {
		flags = unescapeBlocks(&[]byte(line)[0], &got[0], len(line))
	}
	if flags&1 != 0 {
		if !strings.Contains(line, `\u`) {
			t.Fatalf("%q: an escaped u reported where there is none", line)
		}
		return // the caller makes the view with unescapeView
	}
	if string(got) != string(want) || (flags&2 != 0) != wantMixed {
		t.Fatalf("%q: unescapeBlocks %q %d, unescapeView %q %v", line, got, flags, want, wantMixed)
	}
}

func TestUnescapeAVX512(t *testing.T) {
	requireKernel(t, kernelNamed("avx512"))
	rng := rand.New(rand.NewPCG(7, 8))
	// "\xee", "\xf4", "\xe2": n, t, b with the high bit set, which must
	// not be taken for them after a backslash.
	pieces := []string{`\`, `\\`, `\\\`, `\n`, `\t`, `\r`, `\b`, `\f`, `\/`, `\"`, `\u00e9`, `\u0041`, "\\\xee", "\\\xf4", "\xe2", `n`, `t`, `u`, "x", "é", "\n", `"`}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(200) {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(4) == 0 {
				p = pieces[rng.IntN(12)] // mostly backslashes and escapes
			}
			b.WriteString(p)
		}
		checkUnescape(t, b.String())
	}
}

func FuzzUnescapeAVX512(f *testing.F) {
	f.Add(`{"a": "x\ny\\\n\\\\t\/\u00e9"}`)
	f.Fuzz(func(t *testing.T, s string) {
		requireKernel(t, kernelNamed("avx512"))
		checkUnescape(t, s)
	})
}
