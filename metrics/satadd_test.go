package metrics

import (
	"math"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
)

// Token totals saturate instead of wrapping: records whose counts add up
// past 2^63 leave the total at MaxInt64, never negative, whether observed
// in one Summary or merged from several.
func TestTokenTotalsSaturate(t *testing.T) {
	big := Observation{Outcome: outcome.SkippedUnderTarget, TokensBefore: math.MaxInt64 / 2, TokensAfter: math.MaxInt64 / 2, Group: "g"}
	var one Summary
	for range 3 {
		one.Observe(big)
	}
	var a, b Summary
	a.Observe(big)
	b.Observe(big)
	b.Observe(big)
	a.Merge(&b)
	for _, s := range []*Summary{&one, &a} {
		if s.c.tokensBefore != math.MaxInt64 || s.c.tokensAfter != math.MaxInt64 {
			t.Errorf("totals %d, %d: want saturated at MaxInt64", s.c.tokensBefore, s.c.tokensAfter)
		}
		g := s.Groups().named["g"]
		if g == nil || g.TokensBefore != math.MaxInt64 {
			t.Errorf("group totals %+v", g)
		}
	}
	if !one.Equal(&a) {
		t.Error("one Summary and a merge of two differ once saturated")
	}
}

func TestAddSat(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{-5, 3, -2},
		{math.MaxInt64, math.MinInt64, -1},
	} {
		got := c.a
		addSat(&got, c.b)
		if got != c.want {
			t.Errorf("%d + %d = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
