package llamafactory

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// kind is a Python value's type after json.loads.
type kind uint8

const (
	kNone kind = iota
	kBool
	kInt   // S holds the digits
	kFloat // F
	kStr   // S
	kList  // A
	kDict  // O
)

// value is a JSON value as Python's json.loads returns it: dicts keep
// their keys' first position and last value, ints their digits, floats a
// float64.
type value struct {
	K kind
	B bool
	S string
	F float64
	A []value
	O []member
}

type member struct {
	Key string
	Val value
}

func pyStr(s string) value { return value{K: kStr, S: s} }

// get returns d[key] and whether it is present (d a dict).
func (v value) get(key string) (value, bool) {
	if v.K != kDict {
		return value{}, false
	}
	for _, m := range v.O {
		if m.Key == key {
			return m.Val, true
		}
	}
	return value{}, false
}

// set assigns d[key] = x keeping key's position when present.
func (v *value) set(key string, x value) {
	for i := range v.O {
		if v.O[i].Key == key {
			v.O[i].Val = x
			return
		}
	}
	v.O = append(v.O, member{key, x})
}

// truthy is Python's bool(v).
func (v value) truthy() bool {
	switch v.K {
	case kNone:
		return false
	case kBool:
		return v.B
	case kInt:
		return strings.TrimLeft(strings.TrimPrefix(v.S, "-"), "0") != ""
	case kFloat:
		return v.F != 0
	case kStr:
		return v.S != ""
	case kList:
		return len(v.A) > 0
	case kDict:
		return len(v.O) > 0
	}
	return false
}

// typeName is Python's type(v).__name__.
func (v value) typeName() string {
	return [...]string{"NoneType", "bool", "int", "float", "str", "list", "dict"}[v.K]
}

var errJSON = errors.New("json.decoder.JSONDecodeError")

// loads is Python's json.loads(s) for JSON (NaN and Infinity literals are
// not read).
func loads(s string) (value, error) {
	b := []byte(s)
	if !jsonx.Valid(b) {
		return value{}, errJSON
	}
	return rawValue(b, jsonx.SkipSpace(b, 0))
}

// fromRaw decodes valid JSON bytes (a turn's Raw, a record's field).
func fromRaw(raw []byte) (value, error) {
	return rawValue(raw, jsonx.SkipSpace(raw, 0))
}

// rawValue decodes the valid JSON value starting at b[i].
func rawValue(b []byte, i int) (value, error) {
	if i >= len(b) {
		return value{}, errJSON
	}
	switch b[i] {
	case '{':
		ms, _, err := jsonx.Members(b, i)
		if err != nil {
			return value{}, err
		}
		v := value{K: kDict, O: make([]member, 0, len(ms))}
		for _, m := range ms {
			k, _ := jsonx.Unquote(m.Key)
			x, err := rawValue(b, m.Start)
			if err != nil {
				return value{}, err
			}
			v.set(k, x)
		}
		return v, nil
	case '[':
		els := jsonx.Elements(b, i)
		v := value{K: kList, A: make([]value, 0, len(els))}
		for _, el := range els {
			x, err := rawValue(b, el[0])
			if err != nil {
				return value{}, err
			}
			v.A = append(v.A, x)
		}
		return v, nil
	case '"':
		s, ok := jsonx.Unquote(b[i:jsonx.SkipString(b, i)])
		if !ok {
			return value{}, errJSON
		}
		return pyStr(s), nil
	case 't':
		return value{K: kBool, B: true}, nil
	case 'f':
		return value{K: kBool}, nil
	case 'n':
		return value{}, nil
	}
	return number(string(b[i:jsonx.SkipValue(b, i)])), nil
}

// number reads a JSON number literal as Python does: an int when it has
// no fraction and no exponent, else a float.
func number(s string) value {
	if !strings.ContainsAny(s, ".eE") {
		n, ok := new(big.Int).SetString(s, 10)
		if ok {
			return value{K: kInt, S: n.String()}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return value{K: kStr, S: s}
	}
	return value{K: kFloat, F: f}
}

// floatRepr is Python's repr(float).
func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return jsonx.PyFloat(f)
}

// dumps is Python's json.dumps(v, ensure_ascii=False), with indent when
// indent > 0.
func dumps(v value, indent int) string {
	var b strings.Builder
	writeJSON(&b, v, indent, 0)
	return b.String()
}

func writeJSON(b *strings.Builder, v value, indent, depth int) {
	switch v.K {
	case kNone:
		b.WriteString("null")
	case kBool:
		if v.B {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case kInt:
		b.WriteString(v.S)
	case kFloat:
		switch {
		case math.IsNaN(v.F):
			b.WriteString("NaN")
		case math.IsInf(v.F, 1):
			b.WriteString("Infinity")
		case math.IsInf(v.F, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(floatRepr(v.F))
		}
	case kStr:
		writeString(b, v.S)
	case kList:
		if len(v.A) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, x := range v.A {
			sep(b, i, indent, depth+1)
			writeJSON(b, x, indent, depth+1)
		}
		closeSep(b, indent, depth)
		b.WriteByte(']')
	case kDict:
		if len(v.O) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range v.O {
			sep(b, i, indent, depth+1)
			writeString(b, m.Key)
			b.WriteString(": ")
			writeJSON(b, m.Val, indent, depth+1)
		}
		closeSep(b, indent, depth)
		b.WriteByte('}')
	}
}

func sep(b *strings.Builder, i, indent, depth int) {
	if indent > 0 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", indent*depth))
		return
	}
	if i > 0 {
		b.WriteString(", ")
	}
}

func closeSep(b *strings.Builder, indent, depth int) {
	if indent > 0 {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", indent*depth))
	}
}

// writeString writes s quoted as json.dumps(ensure_ascii=False) does.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' || r < 0x20 {
			jsonx.PyEscape(b, r)
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// pyRepr is Python's repr(v) for str, and str(v) for other values when
// asStr (what str.format writes).
func pyFormat(v value) string {
	if v.K == kStr {
		return v.S
	}
	return pyRepr(v)
}

func pyRepr(v value) string {
	switch v.K {
	case kNone:
		return "None"
	case kBool:
		if v.B {
			return "True"
		}
		return "False"
	case kInt:
		return v.S
	case kFloat:
		return floatRepr(v.F)
	case kStr:
		return strRepr(v.S)
	case kList:
		parts := make([]string, len(v.A))
		for i, x := range v.A {
			parts[i] = pyRepr(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case kDict:
		parts := make([]string, len(v.O))
		for i, m := range v.O {
			parts[i] = strRepr(m.Key) + ": " + pyRepr(m.Val)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}

// strRepr is Python's repr(str) for printable text: single quotes unless
// the text holds a single quote and no double quote.
func strRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
