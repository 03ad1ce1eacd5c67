package tokenize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dlclark/regexp2"
)

// psDiffers reports whether s holds a code point whose \p{P}/\p{S}
// membership differs between Go's Unicode 15.0 tables (regexp2's) and the
// Unicode 16.0 tables of the hand-written splitters.
func psDiffers(s string) bool {
	initPS()
	return go15Differs(s, []goClass{{unicode.P, cP}, {unicode.S, cS}, {unicode.Han, cHan}}, psOf)
}

func splitPieces(next func(string, int) int, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := next(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// TestSplittersMatchRegexp2 checks each hand-written splitter against
// regexp2 running the pattern it stands for (the slow path for unknown
// patterns), on random text. Text where the two legitimately differ is
// skipped: code points whose class changed after Unicode 15.0 (regexp2
// uses Go's tables), and U+017F, which .NET's case-insensitive matching
// does not fold to 's'.
func TestSplittersMatchRegexp2(t *testing.T) {
	initClasses()
	initPS()
	extra := []string{"。", "，", "漢字", "\u3007", "々", "\U00020001", "中a", "A中b", "「」", "$", "€", "^", "`", "中文", "ひらがな", "カタカナ", "龥", "123", "1234", "٣٤", "①", " .NET",
		"_x", "#tag", "a.b", "'s", " \n", "\u200b", "\u00ad", "~~", "é", "\u0301", "Ǆ", "ℌ", "\U0001F600", "\t\t"}
	rng := rand.New(rand.NewPCG(21, 22))
	texts := []string{}
	for range 4000 {
		s := randomText(rng, 1+rng.IntN(100))
		var b strings.Builder
		for _, part := range strings.SplitAfter(s, " ") {
			b.WriteString(part)
			if rng.IntN(3) == 0 {
				b.WriteString(extra[rng.IntN(len(extra))])
			}
		}
		s = b.String()
		if strings.ContainsRune(s, 'ſ') || inUnicode16(s) || psDiffers(s) {
			continue
		}
		texts = append(texts, s)
	}
	if len(texts) < 3000 {
		t.Fatalf("only %d usable random texts", len(texts))
	}
	patterns := map[string]preStage{kimiPattern(): {name: "kimi", next: splitKimi}}
	for pat, st := range knownPatterns {
		patterns[pat] = st
	}
	for pat, st := range patterns {
		re := regexp2.MustCompile(pat, regexp2.None)
		t.Run(st.name, func(t *testing.T) {
			for _, s := range texts {
				var want, wantM []string
				regexSpans(re, s, func(a, b int, match bool) {
					if b > a {
						want = append(want, s[a:b])
						wantM = append(wantM, fmt.Sprint(match))
					}
				})
				got := splitPieces(st.next, s)
				if !slices.Equal(got, want) {
					t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
				}
				// Whether each piece is a match or a gap (for the
				// behaviors other than Isolated, and invert).
				var gotM []string
				for i := 0; i < len(s); {
					gotM = append(gotM, fmt.Sprint(st.covering || st.isMatch != nil && st.isMatch(s, i)))
					i = st.next(s, i)
				}
				if st.name != "kimi" && !slices.Equal(gotM, wantM) {
					t.Fatalf("%q: pieces %q:\n got matches %v\nwant %v", s, got, gotM, wantM)
				}
			}
		})
	}
}
