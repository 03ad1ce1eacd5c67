package jinja

import (
	"math"
	"strings"
	"testing"
)

// TestIntArithBounds checks that +, - and * of ints give Python's result
// where it fits in 64 bits and refuse by name where it does not (they
// wrapped around).
func TestIntArithBounds(t *testing.T) {
	for _, c := range []struct {
		op   string
		a, b int64
		want int64 // when ok
		ok   bool
	}{
		{"+", math.MaxInt64 - 1, 1, math.MaxInt64, true},
		{"+", math.MaxInt64, 1, 0, false},
		{"+", math.MinInt64, -1, 0, false},
		{"+", math.MinInt64, math.MaxInt64, -1, true},
		{"-", math.MinInt64 + 1, 1, math.MinInt64, true},
		{"-", math.MinInt64, 1, 0, false},
		{"-", 0, math.MinInt64, 0, false},
		{"-", -1, math.MinInt64, math.MaxInt64, true},
		{"*", 3037000499, 3037000499, 9223372030926249001, true},
		{"*", 3037000500, 3037000500, 0, false},
		{"*", math.MinInt64, -1, 0, false},
		{"*", -1, math.MinInt64, 0, false},
		{"*", math.MinInt64, 1, math.MinInt64, true},
		{"*", 0, math.MinInt64, 0, true},
	} {
		v, err := intArith(c.op, c.a, c.b)
		switch {
		case c.ok && (err != nil || v.AsInt() != c.want):
			t.Errorf("%d %s %d = %v, %v; want %d", c.a, c.op, c.b, v, err, c.want)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "beyond 64 bits")):
			t.Errorf("%d %s %d = %v, %v; want the refusal", c.a, c.op, c.b, v, err)
		}
	}
}

// TestEqualSelfContaining checks that comparing two lists that contain
// themselves ends (Python raises RecursionError) instead of overflowing
// the stack, which would kill the process.
func TestEqualSelfContaining(t *testing.T) {
	a, b := &List{}, &List{}
	a.Items = []Value{{kind: KindList, v: a}}
	b.Items = []Value{{kind: KindList, v: b}}
	x, y := Value{kind: KindList, v: a}, Value{kind: KindList, v: b}
	if valuesEqual(x, y) {
		t.Error("two self-containing lists compared equal")
	}
	if !valuesEqual(x, x) {
		t.Error("a list is not equal to itself")
	}
}
