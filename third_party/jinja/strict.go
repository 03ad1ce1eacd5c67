package jinja

// This file is not part of ardanlabs/jinja v1.8.0: it holds what
// trajcompress's patch adds so that the engine fails where Python's jinja2
// (transformers' ImmutableSandboxedEnvironment, default Undefined) raises,
// and prints a string's repr as Python does. See PATCHES.md.

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// undefinedWith returns an undefined value that remembers why it is
// undefined (jinja2's undefined hint), for the error raised when it is used.
func undefinedWith(hint string) Value {
	return Value{kind: KindUndefined, v: hint}
}

// undefinedError is jinja2's UndefinedError for using u.
func undefinedError(u Value) error {
	if h, ok := u.v.(string); ok && h != "" {
		return errors.New(h)
	}
	return errors.New("'Undefined' is undefined")
}

// missingAttr is the undefined value of attribute (or key) name missing
// from obj, with jinja2's hint.
func missingAttr(obj Value, name string) Value {
	if obj.IsNone() {
		return undefinedWith(fmt.Sprintf("'None' has no attribute %s", pyStrRepr(name)))
	}
	return undefinedWith(fmt.Sprintf("'%s object' has no attribute %s", pyTypeName(obj), pyStrRepr(name)))
}

// pyTypeName is Python's type(v).__name__ for what a template sees.
func pyTypeName(v Value) string {
	switch v.kind {
	case KindUndefined:
		return "Undefined"
	case KindNone:
		return "NoneType"
	case KindBool:
		return "bool"
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindString:
		return "str"
	case KindList:
		if isRange(v) { // trajcompress patch
			return rangeIter
		}
		return "list"
	case KindDict:
		return "dict"
	case KindCallable:
		return "function"
	}
	return "object"
}

// addStrict is Python's a + b: str + str, list + list and numbers (bool
// counting as int) add; anything else is a TypeError, and an undefined
// operand jinja2's UndefinedError.
func addStrict(a, b Value) (Value, error) {
	if a.IsUndefined() {
		return Undefined(), undefinedError(a)
	}
	if b.IsUndefined() {
		return Undefined(), undefinedError(b)
	}
	num := func(v Value) bool { return v.IsNumber() || v.IsBool() }
	if err := rangeOpError("+", a, b); err != nil {
		return Undefined(), err
	}
	switch {
	case a.IsString() && b.IsString() && (isMarkup(a) || isMarkup(b)): // markupsafe's + (markup.go)
		return markupConcat(a, b), nil
	case a.IsList() && b.IsList() && a.AsList().tuple != b.AsList().tuple:
		return Undefined(), fmt.Errorf("can only concatenate %s (not %q) to %s", seqName(a), seqName(b), seqName(a))
	case a.IsList() && b.IsList() && a.AsList().tuple:
		return newTuple(addValues(a, b).AsList().Items), nil
	case a.IsString() && b.IsString(), a.IsList() && b.IsList():
		return addValues(a, b), nil
	case isIntLike(a) && isIntLike(b):
		return intArith("+", toInt64(a), toInt64(b))
	case num(a) && num(b):
		if a.IsBool() {
			a = NewInt(boolInt(a))
		}
		if b.IsBool() {
			b = NewInt(boolInt(b))
		}
		return addValues(a, b), nil
	case a.IsString():
		return Undefined(), fmt.Errorf("can only concatenate str (not %q) to str", pyTypeName(b))
	case a.IsList():
		return Undefined(), fmt.Errorf("can only concatenate %s (not %q) to %s", seqName(a), pyTypeName(b), seqName(a))
	}
	return Undefined(), fmt.Errorf("unsupported operand type(s) for +: '%s' and '%s'", pyTypeName(a), pyTypeName(b))
}

func boolInt(v Value) int64 {
	if v.AsBool() {
		return 1
	}
	return 0
}

// containsStrict is Python's item in container: a TypeError where
// container is not iterable (None, numbers) or a string is searched for a
// non-string; an undefined container is empty (jinja2's Undefined iterates
// as nothing).
func containsStrict(container, item Value) (bool, error) {
	switch container.kind {
	case KindUndefined:
		return false, nil
	case KindNone, KindBool, KindInt, KindFloat, KindCallable:
		return false, fmt.Errorf("argument of type '%s' is not iterable", pyTypeName(container))
	case KindString:
		if !item.IsString() {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", pyTypeName(item))
		}
	case KindDict:
		if item.IsList() && !item.AsList().tuple || item.IsDict() { // a dict's keys are hashed
			return false, fmt.Errorf("unhashable type: '%s'", pyTypeName(item))
		}
	case KindList:
		if lazyIter(container.IterType()) { // pulled up to the item found (genloop.go)
			return containsLazy(container, item), nil
		}
	}
	return containsValue(container, item), nil
}

// pyStrRepr is Python's repr of a str: single quotes unless the string
// holds a single quote and no double quote, backslash escapes for the
// quote, the backslash, \n, \r, \t and other non-printable characters.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8RuneError:
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && !pyPrintable(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

const utf8RuneError = '\uFFFD'

// pyPrintable approximates Python's str.isprintable for a non-ASCII rune:
// not a control, format, separator (other than the space), surrogate,
// private-use or unassigned character.
func pyPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}
