package jinja

// This file is not part of ardanlabs/jinja v1.8.0: it holds what
// trajcompress's patch adds so that arithmetic, a few methods and float
// printing behave as in Python's jinja2 and no template input can make the
// engine panic (a negative repeat count, a huge range). See PATCHES.md.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxRange is jinja2's sandbox MAX_RANGE: range() of more items raises.
const maxRange = 100000

// errRangeTooBig is the sandbox's OverflowError message.
var errRangeTooBig = fmt.Errorf("Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange) //nolint:staticcheck // jinja2's message, verbatim

// maxMacroDepth bounds the calls of one macro under way at once: endless
// recursion would overflow Go's stack, which kills the process where Python
// raises RecursionError (about 300 levels of a jinja2 macro; real
// templates recurse as deep as the JSON schema they print).
const maxMacroDepth = 1000

// errRecursion is Python's RecursionError message.
var errRecursion = fmt.Errorf("maximum recursion depth exceeded")

// errBigInt refuses an integer beyond int64 by name: Python's ints are
// unbounded, the engine's are not, and a wrapped or rounded number would
// be a silently different text.
func errBigInt(what string) error {
	return fmt.Errorf("unsupported construct: an integer beyond 64 bits (%s)", what)
}

// intArith is a + b, a - b or a * b of two ints, or errBigInt when the
// result does not fit in 64 bits.
func intArith(op string, a, b int64) (Value, error) {
	var r int64
	var over bool
	switch op {
	case "+":
		r = a + b
		over = (a >= 0) == (b >= 0) && (r >= 0) != (a >= 0)
	case "-":
		r = a - b
		over = (a >= 0) != (b >= 0) && (r >= 0) != (a >= 0)
	default:
		r = a * b
		over = a != 0 && (r/a != b || a == -1 && b == math.MinInt64 || b == -1 && a == math.MinInt64)
	}
	if over {
		return Undefined(), errBigInt(fmt.Sprintf("%d %s %d", a, op, b))
	}
	return NewInt(r), nil
}

// arithStrict evaluates the binary operators *, /, //, % and ** where
// Python's result differs from the upstream engine's: a string repeated
// by an int (either order, a count below 1 gives ""), division or modulo
// by zero (Python's ZeroDivisionError messages), floor division and
// modulo of ints rounding toward minus infinity, and int ** non-negative
// int staying an int. ok is false when the upstream code applies.
func arithStrict(op string, a, b Value) (v Value, ok bool, err error) {
	if v, ok, err := conformOp(op, a, b); ok {
		return v, ok, err
	}
	if isIntLike(a) && isIntLike(b) && (op == "+" || op == "-" || op == "*") {
		v, err := intArith(op, toInt64(a), toInt64(b))
		return v, true, err
	}
	switch op {
	case "*":
		s, n, isRepeat := repeatOperands(a, b)
		if !isRepeat {
			return Value{}, false, nil
		}
		if n <= 0 {
			return NewString(""), true, nil
		}
		if int64(len(s)) > 0 && n > math.MaxInt32/int64(len(s)) {
			return Undefined(), true, fmt.Errorf("string repeated %d times is too long", n)
		}
		return NewString(strings.Repeat(s, int(n))), true, nil
	case "/", "//", "%":
		if !isNumeric(a) || !isNumeric(b) {
			return Value{}, false, nil
		}
		float := a.IsFloat() || b.IsFloat()
		if toFloat64(b) == 0 {
			return Undefined(), true, zeroDivision(op, float)
		}
		if !float && op == "/" && max(toInt64(a), -toInt64(a), toInt64(b), -toInt64(b)) > 1<<53 {
			// int / int correctly rounded, as Python's (through two floats it was rounded twice)
			q, _ := new(big.Rat).SetFrac(big.NewInt(toInt64(a)), big.NewInt(toInt64(b))).Float64()
			return NewFloat(q), true, nil
		}
		if float || op == "/" {
			x, y := toFloat64(a), toFloat64(b)
			switch op {
			case "//":
				return NewFloat(pyFloorDiv(x, y)), true, nil
			case "%":
				m := math.Mod(x, y)
				if m != 0 && (m < 0) != (y < 0) {
					m += y
				}
				return NewFloat(m), true, nil
			}
			return Value{}, false, nil
		}
		x, y := toInt64(a), toInt64(b)
		if x == math.MinInt64 && y == -1 && op == "//" {
			return Undefined(), true, errBigInt("-9223372036854775808 // -1")
		}
		q, m := x/y, x%y
		if m != 0 && (m < 0) != (y < 0) {
			q--
			m += y
		}
		if op == "//" {
			return NewInt(q), true, nil
		}
		return NewInt(m), true, nil
	case "**":
		if !isIntLike(a) || !isIntLike(b) || toInt64(b) < 0 {
			return Value{}, false, nil
		}
		if x, n := toInt64(a), toInt64(b); x >= -1 && x <= 1 {
			// exact for any exponent (through a float (-1) ** (2**63-1) was 1)
			switch {
			case x == -1 && n%2 == 1:
				return NewInt(-1), true, nil
			case x == 0 && n > 0:
				return NewInt(0), true, nil
			}
			return NewInt(1), true, nil
		}
		p := math.Pow(float64(toInt64(a)), float64(toInt64(b)))
		if math.Abs(p) < 1<<53 {
			return NewInt(int64(p)), true, nil
		}
		// exact, by repeated multiplication, or refused beyond 64 bits
		x, n, r := toInt64(a), toInt64(b), NewInt(1)
		for ; n > 0; n-- {
			if r, err = intArith("*", r.AsInt(), x); err != nil {
				return Undefined(), true, errBigInt(fmt.Sprintf("%d ** %d", toInt64(a), toInt64(b)))
			}
		}
		return r, true, nil
	}
	return Value{}, false, nil
}

func isNumeric(v Value) bool { return v.IsInt() || v.IsFloat() || v.IsBool() }

// numCmp orders two numbers (int, float or bool) exactly, as Python
// compares an int with a float: 9007199254740993 > 9007199254740992.0
// (through float64 they were equal). ok is false when a NaN is involved.
func numCmp(a, b Value) (c int, ok bool) {
	switch {
	case isIntLike(a) && isIntLike(b):
		return cmp.Compare(toInt64(a), toInt64(b)), true
	case isIntLike(a):
		return intFloatCmp(toInt64(a), toFloat64(b))
	case isIntLike(b):
		c, ok := intFloatCmp(toInt64(b), toFloat64(a))
		return -c, ok
	}
	x, y := toFloat64(a), toFloat64(b)
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, false
	}
	return cmp.Compare(x, y), true
}

// intFloatCmp orders int i and float f exactly.
func intFloatCmp(i int64, f float64) (int, bool) {
	switch {
	case math.IsNaN(f):
		return 0, false
	case f >= 1<<63:
		return -1, true
	case f < -1<<63:
		return 1, true
	}
	t := math.Trunc(f)
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c, true
	}
	return cmp.Compare(t, f), true // i == t: i < f when f has a positive fraction
}

func isIntLike(v Value) bool { return v.IsInt() || v.IsBool() }

// repeatOperands reports whether a * b is a string repetition, with the
// string and the count.
func repeatOperands(a, b Value) (string, int64, bool) {
	switch {
	case a.IsString() && isIntLike(b):
		return a.AsString(), toInt64(b), true
	case isIntLike(a) && b.IsString():
		return b.AsString(), toInt64(a), true
	}
	return "", 0, false
}

// zeroDivision is Python 3.11's ZeroDivisionError message for op.
func zeroDivision(op string, float bool) error {
	switch {
	case op == "/" && float:
		return fmt.Errorf("float division by zero")
	case op == "/":
		return fmt.Errorf("division by zero")
	case op == "//" && float:
		return fmt.Errorf("float floor division by zero")
	case op == "//":
		return fmt.Errorf("integer division or modulo by zero")
	case float:
		return fmt.Errorf("float modulo")
	}
	return fmt.Errorf("integer modulo by zero")
}

// pyFloatRepr is Python's repr of a float, which jinja2 prints: the
// shortest digits that read back, in fixed notation when the exponent is in
// [-4, 16), else in exponent notation; integral values keep a ".0".
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// stringMethodMore is the str methods upstream lacks: isdigit.
func stringMethodMore(s, method string) (Value, error) {
	if f, ok := pyStrMethods[method]; ok {
		return NewCallable("str."+method, func(args []Value, kwargs map[string]Value) (Value, error) {
			return f(s, args)
		}), nil
	}
	switch method {
	case "rsplit":
		return NewCallable("str.rsplit", func(args []Value, kwargs map[string]Value) (Value, error) {
			return pySplit(s, args, kwargs, true)
		}), nil
	case "isdigit":
		return NewCallable("str.isdigit", func(args []Value, kwargs map[string]Value) (Value, error) {
			if s == "" {
				return NewBool(false), nil
			}
			for _, r := range s {
				if !pyIsDigit(r) {
					return NewBool(false), nil
				}
			}
			return NewBool(true), nil
		}), nil
	}
	return Undefined(), nil
}

// listMethodMore is the list methods upstream lacks: index (the first
// equal item's position, Python's ValueError when there is none).
func listMethodMore(list *List, method string) (Value, error) {
	switch method {
	case "index":
		return NewCallable("list.index", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) == 0 {
				return Undefined(), fmt.Errorf("index expected at least 1 argument, got 0")
			}
			for i, it := range list.Items {
				if valuesEqual(it, args[0]) {
					return NewInt(int64(i)), nil
				}
			}
			return Undefined(), fmt.Errorf("%s is not in list", args[0].String())
		}), nil
	case "count":
		return NewCallable("list.count", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) != 1 {
				return Undefined(), fmt.Errorf("count() takes exactly one argument (%d given)", len(args))
			}
			n := 0
			for _, it := range list.Items {
				if valuesEqual(it, args[0]) {
					n++
				}
			}
			return NewInt(int64(n)), nil
		}), nil
	}
	return Undefined(), nil
}

// tail is args[i:], empty when there are fewer than i arguments (filters
// such as selectattr called without their optional test).
func tail(args []Value, i int) []Value {
	if len(args) < i {
		return nil
	}
	return args[i:]
}

// clampSlice is Python's slice.indices for start and stop already shifted
// by length when negative: bounds the loops of a slice to the sequence.
func clampSlice(start, stop, step, length int) (int, int) {
	lo, hi := 0, length
	if step < 0 {
		lo, hi = -1, length-1
	}
	return min(max(start, lo), hi), min(max(stop, lo), hi)
}

// pyFloorDiv is Python's float // (float_floor_div): from fmod, so that
// 5 // 0.1 is 49.0 (0.1 is a little over a tenth), not floor(5 / 0.1),
// which rounds to 50.0.
func pyFloorDiv(x, y float64) float64 {
	mod := math.Mod(x, y)
	div := (x - mod) / y
	if mod != 0 && (y < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, x/y)
	}
	fl := math.Floor(div)
	if div-fl > 0.5 {
		fl++
	}
	return fl
}

// pyIntFilter is jinja2's int filter: int(value, base) of a string,
// int(value) of a number, else int(float(value)), else default. Python's
// int() syntax (white space, sign, underscores between digits, Unicode
// decimal digits, a 0x/0o/0b prefix of its base or of base 0); an integer
// beyond 64 bits is refused by name (it wrapped, or a string gave 0).
func pyIntFilter(v, def Value, base int64) (Value, error) {
	f := toFloat64(v)
	switch {
	case v.IsString():
		n, ok, big := pyParseInt(v.AsString(), base)
		if big {
			return Undefined(), errBigInt("int of " + pyStrRepr(v.AsString()))
		}
		if ok {
			return NewInt(n), nil
		}
		// jinja2 3.1.2 lets int(float('inf'))'s OverflowError through
		if f, ok = pyParseFloat(v.AsString()); !ok || math.IsNaN(f) {
			return def, nil
		}
	case isIntLike(v):
		return NewInt(toInt64(v)), nil
	case !v.IsFloat() || math.IsNaN(f):
		return def, nil
	}
	switch {
	case math.IsInf(f, 0):
		return Undefined(), fmt.Errorf("cannot convert float infinity to integer")
	case f >= 1<<63 || f < -1<<63:
		return Undefined(), errBigInt(fmt.Sprintf("int(%s)", strconv.FormatFloat(f, 'g', -1, 64)))
	}
	return NewInt(int64(f)), nil
}

// pyFloatFilter is jinja2's float filter: float(value), else default.
func pyFloatFilter(v, def Value) Value {
	switch {
	case v.IsString():
		if f, ok := pyParseFloat(v.AsString()); ok {
			return NewFloat(f)
		}
	case isNumeric(v):
		return NewFloat(toFloat64(v))
	}
	return def
}

// pyNumText is s as Python's int() and float() read it: without the
// white space around it, Unicode decimal digits as ASCII ones; ok is
// false when a character is neither.
func pyNumText(s string) (string, bool) {
	s = strings.TrimFunc(s, pyIsSpace)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.IsDigit(r):
			b.WriteByte('0' + byte(decimalValue(r)))
		default:
			return "", false
		}
	}
	return b.String(), true
}

// decimalValue is the value of a Unicode decimal digit (they come in
// runs of ten from a zero).
func decimalValue(r rune) rune {
	for _, g := range unicode.Nd.R16 {
		if rune(g.Lo) <= r && r <= rune(g.Hi) {
			return (r - rune(g.Lo)) % 10
		}
	}
	for _, g := range unicode.Nd.R32 {
		if rune(g.Lo) <= r && r <= rune(g.Hi) {
			return (r - rune(g.Lo)) % 10
		}
	}
	return 0
}

// pyDigits drops the underscores of s that Python allows (one between
// two digits; lead says whether s may start with one, as after a base
// prefix); ok is false when another underscore is there or s is empty.
func pyDigits(s string, lead bool) (string, bool) {
	if s == "" || s[len(s)-1] == '_' || s[0] == '_' && !lead || strings.Contains(s, "__") {
		return "", false
	}
	return strings.ReplaceAll(s, "_", ""), true
}

// pyParseInt is Python's int(s, base): ok is false where it raises
// ValueError, big is true where the value is beyond int64.
func pyParseInt(s string, base int64) (n int64, ok, big bool) {
	s, ok = pyNumText(s)
	if !ok || base != 0 && (base < 2 || base > 36) {
		return 0, false, false
	}
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	lead := false
	if len(s) > 1 && s[0] == '0' {
		if b := prefixBase(s[1]); b != 0 && (base == 0 || base == b) {
			s, base, lead = s[2:], b, true
		}
	}
	if base == 0 {
		base = 10
		if strings.Trim(s, "0_") != "" && s[0] == '0' {
			return 0, false, false // 012 is not an int literal
		}
	}
	digits, ok := pyDigits(s, lead)
	if !ok {
		return 0, false, false
	}
	var u uint64
	for _, c := range []byte(digits) {
		d := uint64(digitValue(c))
		if d >= uint64(base) {
			return 0, false, false
		}
		if u > (math.MaxUint64-d)/uint64(base) {
			big = true
		}
		u = u*uint64(base) + d
	}
	switch {
	case big || u > 1<<63 || u == 1<<63 && !neg:
		return 0, true, true
	case neg:
		return -int64(u), true, false
	}
	return int64(u), true, false
}

// prefixBase is the base that the letter c of a 0x, 0o or 0b prefix
// names (either case), or 0.
func prefixBase(c byte) int64 {
	switch c | 0x20 {
	case 'x':
		return 16
	case 'o':
		return 8
	case 'b':
		return 2
	}
	return 0
}

// digitValue is c's value as a digit of a base up to 36 (0-9, then a-z
// in either case), or 36 when c is none.
func digitValue(c byte) int64 {
	switch {
	case c >= '0' && c <= '9':
		return int64(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'z':
		return int64(c|0x20-'a') + 10
	}
	return 36
}

// pyParseFloat is Python's float(s): ok is false where it raises
// ValueError; beyond the float range it is ±inf (1e400), as Python.
func pyParseFloat(s string) (float64, bool) {
	s, ok := pyNumText(s)
	if !ok {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity", "nan":
		f, _ := strconv.ParseFloat(s, 64)
		return f, true
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(body), "e")
	ip, fp, _ := strings.Cut(mant, ".")
	if ip == "" && fp == "" {
		return 0, false
	}
	for _, part := range []string{ip, fp} {
		if _, ok := pyDigits(part, false); !ok && part != "" || strings.Trim(part, "0123456789_") != "" {
			return 0, false
		}
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || strings.Trim(e, "0123456789_") != "" {
			return 0, false
		}
		if _, ok := pyDigits(e, false); !ok {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// argOr is a filter's argument given at position i (after the value) or
// by name, else def.
func argOr(args []Value, kwargs map[string]Value, i int, name string, def Value) Value {
	if v, ok := kwargs[name]; ok {
		return v
	}
	if i < len(args) {
		return args[i]
	}
	return def
}

// roundInt is Python's round(n, ndigits) of an int with ndigits < 0:
// exact, half to even, an int (it went through a float).
func roundInt(n, ndigits int64) (Value, error) {
	if ndigits < -19 {
		return NewInt(0), nil
	}
	m := new(big.Int).Exp(big.NewInt(10), big.NewInt(-ndigits), nil)
	q, r := new(big.Int).QuoRem(big.NewInt(n), m, new(big.Int))
	switch c := new(big.Int).Abs(r).Cmp(new(big.Int).Rsh(m, 1)); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(int64(r.Sign())))
	}
	q.Mul(q, m)
	if !q.IsInt64() {
		return Undefined(), errBigInt(fmt.Sprintf("round(%d, %d)", n, ndigits))
	}
	return NewInt(q.Int64()), nil
}

// pyRange is range(start, stop, step) as Python's: every argument an int
// (a float or a string raises, they were truncated or parsed), more
// than maxRange items raises the sandbox's error, and the items are
// counted without overflow (a step of 2**62 wrapped past stop and was
// taken for a range too big).
func pyRange(args []Value, start, stop, step int64) (Value, error) {
	for _, a := range args {
		if !isIntLike(a) {
			return Undefined(), fmt.Errorf("'%s' object cannot be interpreted as an integer", pyTypeName(a))
		}
	}
	if step == 0 {
		return Undefined(), fmt.Errorf("range() arg 3 must not be zero")
	}
	var n uint64 // the distance and the step as uint64 are exact, two's complement
	switch {
	case step > 0 && start < stop:
		n = (uint64(stop)-uint64(start)-1)/uint64(step) + 1
	case step < 0 && start > stop:
		n = (uint64(start)-uint64(stop)-1)/(-uint64(step)) + 1
	}
	if n > maxRange {
		return Undefined(), errRangeTooBig
	}
	items := make([]Value, n)
	for i := range items {
		items[i] = NewInt(start + int64(i)*step)
	}
	return newRange(items, start, stop, step), nil
}

// roundToInt is Python's round(x) with no ndigits: an int, half to even.
func roundToInt(v Value) (Value, error) {
	f := toFloat64(v)
	switch {
	case isIntLike(v):
		return NewInt(toInt64(v)), nil
	case math.IsInf(f, 0):
		return Undefined(), fmt.Errorf("cannot convert float infinity to integer")
	case math.IsNaN(f):
		return Undefined(), fmt.Errorf("cannot convert float NaN to integer")
	}
	f = math.RoundToEven(f)
	if f >= 1<<63 || f < -1<<63 {
		return Undefined(), errBigInt(fmt.Sprintf("round(%s)", strconv.FormatFloat(f, 'g', -1, 64)))
	}
	return NewInt(int64(f)), nil
}
