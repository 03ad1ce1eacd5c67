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

// TestNumCmpExact checks that an int and a float compare exactly, as in
// Python (through float64, 2**53 + 1 equalled 2**53 and 2**63 - 1
// equalled 2.0**63), and that a NaN is unordered.
func TestNumCmpExact(t *testing.T) {
	for _, c := range []struct {
		a, b Value
		want int
		ok   bool
	}{
		{NewInt(1<<53 + 1), NewFloat(1 << 53), 1, true},
		{NewFloat(1 << 53), NewInt(1<<53 + 1), -1, true},
		{NewInt(math.MaxInt64), NewFloat(1 << 63), -1, true},
		{NewInt(math.MinInt64), NewFloat(-1 << 63), 0, true},
		{NewInt(math.MinInt64), NewFloat(math.Nextafter(-1<<63, math.Inf(-1))), 1, true},
		{NewInt(2), NewFloat(2.5), -1, true},
		{NewInt(-2), NewFloat(-2.5), 1, true},
		{NewInt(-2), NewFloat(-1.5), -1, true},
		{NewInt(3), NewFloat(math.Inf(1)), -1, true},
		{NewBool(true), NewFloat(1), 0, true},
		{NewInt(0), NewFloat(math.NaN()), 0, false},
		{NewFloat(math.NaN()), NewFloat(1), 0, false},
	} {
		if got, ok := numCmp(c.a, c.b); got != c.want || ok != c.ok {
			t.Errorf("numCmp(%v, %v) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

// TestPyParseInt checks int(s, base)'s syntax as Python's.
func TestPyParseInt(t *testing.T) {
	for _, c := range []struct {
		s       string
		base    int64
		want    int64
		ok, big bool
	}{
		{" -1_000\n", 10, -1000, true, false},
		{"1__0", 10, 0, false, false},
		{"_1", 10, 0, false, false},
		{"1_", 10, 0, false, false},
		{"0x_ff", 16, 255, true, false},
		{"0x_ff", 0, 255, true, false},
		{"0xff", 10, 0, false, false},
		{"0b101", 0, 5, true, false},
		{"010", 0, 0, false, false},
		{"000", 0, 0, true, false},
		{"Zz", 36, 36*35 + 35, true, false},
		{"٣٤", 10, 34, true, false},
		{"9223372036854775807", 10, math.MaxInt64, true, false},
		{"-9223372036854775808", 10, math.MinInt64, true, false},
		{"9223372036854775808", 10, 0, true, true},
		{"99999999999999999999999", 10, 0, true, true},
		{"+-1", 10, 0, false, false},
		{"", 10, 0, false, false},
		{"1", 1, 0, false, false},
	} {
		n, ok, big := pyParseInt(c.s, c.base)
		if n != c.want || ok != c.ok || big != c.big {
			t.Errorf("pyParseInt(%q, %d) = %d, %v, %v; want %d, %v, %v", c.s, c.base, n, ok, big, c.want, c.ok, c.big)
		}
	}
}
