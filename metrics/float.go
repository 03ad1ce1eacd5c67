package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Float is a float64 that marshals to JSON the way Python's json module
// prints a float: the shortest repr that round-trips, in fixed notation with
// ".0" appended when integral (1.0, 10000.0), and in exponent notation
// (1e-05, 1.5e+16) when the decimal exponent is below -4 or at least 16.
// NaN and ±Inf are marshalling errors (Python would write non-JSON).
type Float float64

// MarshalJSON implements [json.Marshaler].
func (f Float) MarshalJSON() ([]byte, error) { return appendPyFloat(nil, float64(f)) }

// String returns the Python repr of f ("NaN", "+Inf", "-Inf" for the
// non-finite values).
func (f Float) String() string {
	b, err := appendPyFloat(nil, float64(f))
	if err != nil {
		return strconv.FormatFloat(float64(f), 'g', -1, 64)
	}
	return string(b)
}

// Round returns x rounded to digits decimals exactly as Python's round(x,
// digits) does for a float: the exact binary value of x is rounded
// half-to-even (ties happen only for exactly representable halves such as
// 0.125), then read back as the nearest float64. digits must be >= 0.
func Round(x float64, digits int) Float {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Float(x)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	if err != nil { // unreachable: FormatFloat output always parses
		panic(err)
	}
	if r == 0 && math.Signbit(x) {
		r = math.Copysign(0, -1) // Python keeps the sign: round(-0.00001, 4) == -0.0
	}
	return Float(r)
}

// Number is a JSON number that is either an integer or a [Float]. The peer
// prints the empty defaults of some averages as the int 0 but the averages
// themselves as floats; Number reproduces both.
type Number struct {
	Value float64
	Int   bool // marshal Value as an integer (it must be integral)
}

// IntNumber returns the integer Number i.
func IntNumber(i int64) Number { return Number{Value: float64(i), Int: true} }

// FloatNumber returns the float Number f.
func FloatNumber(f Float) Number { return Number{Value: float64(f)} }

// MarshalJSON implements [json.Marshaler].
func (n Number) MarshalJSON() ([]byte, error) {
	if n.Int {
		return strconv.AppendInt(nil, int64(n.Value), 10), nil
	}
	return appendPyFloat(nil, n.Value)
}

// UnmarshalJSON implements [json.Unmarshaler]: a number without a
// fraction or exponent reads as an integer Number, any other as a float.
func (n *Number) UnmarshalJSON(b []byte) error {
	s := string(b)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, `"tfn{[`) {
		return fmt.Errorf("metrics: %s is not a number", s)
	}
	*n = Number{Value: f, Int: !strings.ContainsAny(s, ".eE")}
	return nil
}

// appendPyFloat appends Python's repr of x (float_repr_style "short").
func appendPyFloat(dst []byte, x float64) ([]byte, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return dst, fmt.Errorf("metrics: cannot marshal %v as JSON", x)
	}
	if x == 0 {
		if math.Signbit(x) {
			return append(dst, "-0.0"...), nil
		}
		return append(dst, "0.0"...), nil
	}
	// Shortest round-trip digits and the decimal exponent of d.ddd×10^exp.
	e := strconv.FormatFloat(x, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(e, "e")
	exp, err := strconv.Atoi(expStr)
	if err != nil {
		return dst, fmt.Errorf("metrics: formatting %v: %w", x, err)
	}
	if exp < -4 || exp >= 16 {
		dst = append(dst, mant...)
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10), nil
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, x, 'f', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' {
			return dst, nil
		}
	}
	return append(dst, ".0"...), nil
}
