package jinja

// This file is not part of ardanlabs/jinja v1.8.0: it holds what
// trajcompress's patch adds so that arithmetic, a few methods and float
// printing behave as in Python's jinja2 and no template input can make the
// engine panic (a negative repeat count, a huge range). See PATCHES.md.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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
