package jsonx

import (
	"encoding/binary"
	"math/bits"
)

// Valid reports whether b is one well-formed JSON value, exactly as
// encoding/json.Valid does (FuzzValid checks them against each other). It
// exists because encoding/json.Valid's byte-at-a-time state machine was ~10% of a run's
// CPU time; this one walks strings in a tight loop and recurses per value.
func Valid(b []byte) bool {
	i, ok := validValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; c {
	case '{':
		return validObject(b, i, depth, nil, nil)
	case '[':
		i, _, ok := validElems(b, i, depth, false)
		return i, ok
	case '"':
		return validString(b, i)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	}
	return validNumber(b, i)
}

// validObject validates the object at b[i] and returns the index just past
// it. When ms is not nil, the object's members are appended to it, with
// offsets into b, and each member named in list (see [KeyIs]) whose value
// is an array gets its elements listed (see validElems): validating a
// record, listing its top-level members and listing its turns' members is
// then one pass instead of two.
func validObject(b []byte, i, depth int, ms *[]Member, list []string) (int, bool) {
	if depth >= maxDepth {
		return i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		ks := i
		var ok bool
		if i, ok = validString(b, i); !ok {
			return i, false
		}
		ke := i
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		vs := skipSpace(b, i+1)
		var els []Elem
		if ms != nil && vs < len(b) && b[vs] == '[' && keyIn(b[ks:ke], list) {
			i, els, ok = validElems(b, vs, depth+1, true)
		} else {
			i, ok = validValue(b, vs, depth+1)
		}
		if !ok {
			return i, false
		}
		if ms != nil {
			*ms = append(*ms, Member{Key: b[ks:ke], KeyStart: ks, Start: vs, End: i, Elems: els})
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		return i, false
	}
}

// keyIn reports whether the raw quoted key is one of names.
func keyIn(key []byte, names []string) bool {
	for _, n := range names {
		if KeyIs(key, n) {
			return true
		}
	}
	return false
}

// validElems validates the array at b[i] and returns the index just past
// it. With list it also lists the array's elements, with the members of
// those that are objects (their own arrays are not listed). Listing stops
// after the first element that is not an object, which is all a reader of
// turns needs to report it; validation goes on to the end.
func validElems(b []byte, i, depth int, list bool) (int, []Elem, bool) {
	if depth >= maxDepth {
		return i, nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil, true
	}
	var els []Elem
	listing := list
	for {
		e := Elem{Start: i}
		var ok bool
		if listing && i < len(b) && b[i] == '{' {
			e.Object = true
			i, ok = validObject(b, i, depth+1, &e.Members, nil)
		} else {
			i, ok = validValue(b, i, depth+1)
		}
		if !ok {
			return i, nil, false
		}
		if listing {
			e.End = i
			els = append(els, e)
			listing = e.Object
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, els, true
		}
		return i, nil, false
	}
}

// ValidMembers is [Valid](b) && b holds an object, and that object's
// members and the index of its closing brace, as [Members] returns them;
// the array values of the members named in list also get their elements
// ([Member.Elems]; the members of those elements that are objects are
// listed too, their own arrays are not).
func ValidMembers(b []byte, list []string) ([]Member, int, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, 0, false
	}
	var ms []Member
	end, ok := validObject(b, i, 0, &ms, list)
	if !ok || skipSpace(b, end) != len(b) {
		return nil, 0, false
	}
	return ms, end - 1, true
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

func validString(b []byte, i int) (int, bool) {
	i++
	for {
		// Skip plain bytes 8 at a time, landing on the first special one.
		for i+8 <= len(b) {
			if m := specialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
}

const (
	ones8 = 0x0101010101010101
	high8 = 0x8080808080808080
)

// specialMask marks, with its high bit, each of the 8 bytes packed in x
// (little-endian) that ends or escapes a JSON string or may not appear in
// one: '"', '\\' or a byte below 0x20. These are the classic "has a zero
// byte" and "has a byte less than n" word tests; a byte above a marked one
// may be marked wrongly (a borrow), but the lowest mark is always right,
// and that is the only one used.
func specialMask(x uint64) uint64 {
	q := x ^ ('"' * ones8)
	bs := x ^ ('\\' * ones8)
	return ((x-0x20*ones8)&^x | (q-ones8)&^q | (bs-ones8)&^bs) & high8
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func validNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}
