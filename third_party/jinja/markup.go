package jinja

// trajcompress patch: markupsafe's Markup, which jinja2's safe and escape
// filters return (transformers renders without autoescape). A Markup is a
// string (KindString) whose Go value is a markupStr, so it stays one when
// kept in a variable, a list or a macro argument. As markupsafe 2.1's:
// Markup + str and str + Markup escape the str and are Markup; Markup % x,
// the format filter of a Markup and its format() escape their arguments;
// Markup * n, an item or a slice of one, its string methods (capitalize,
// lower, upper, replace, strip, zfill, …, whose str arguments it escapes;
// split, partition give Markups) and the filters that go through
// soft_str (upper, trim, string, indent, …) are Markup. `~` and join are
// plain str (jinja2's str_join without autoescape). A %r or %a of a
// Markup's % whose argument's repr has something to escape is refused by
// name.

import (
	"fmt"
	"strings"
)

// markupStr is the Go value of a Markup string.
type markupStr string

// newMarkup is Markup(s).
func newMarkup(s string) Value { return Value{kind: KindString, v: markupStr(s)} }

// isMarkup reports whether v is a Markup.
func isMarkup(v Value) bool {
	if v.kind != KindString {
		return false
	}
	_, ok := v.v.(markupStr)
	return ok
}

// plainOf is v with a Markup made a str.
func plainOf(v Value) Value {
	if isMarkup(v) {
		return NewString(v.AsString())
	}
	return v
}

// hasEscapable reports whether markupsafe's escape changes s.
func hasEscapable(s string) bool { return strings.ContainsAny(s, "&<>\"'") }

// markupEscaped is markupsafe's escape(v) as a string: a Markup as it is.
func markupEscaped(v Value) string {
	if isMarkup(v) {
		return v.AsString()
	}
	return markupEscape(v.AsString())
}

// markupConcat is a + b of two strings, one of them a Markup.
func markupConcat(a, b Value) Value {
	return newMarkup(markupEscaped(a) + markupEscaped(b))
}

// escapedArg is an argument of a Markup's method, % or format as
// markupsafe passes it: a str (or anything printed as one) escaped, a
// Markup, a number, None as they are.
func escapedArg(a Value) Value {
	switch {
	case isMarkup(a) || isNumeric(a) || a.IsNone() || a.IsUndefined() || a.IsCallable():
		return a
	case a.IsString():
		return newMarkup(markupEscape(a.AsString()))
	}
	return newMarkup(markupEscape(printValue(a)))
}

// escapedArgs is escapedArg of each of args.
func escapedArgs(args []Value) []Value {
	out := make([]Value, len(args))
	for i, a := range args {
		out[i] = escapedArg(a)
	}
	return out
}

// escapedKwargs is escapedArg of each of kwargs.
func escapedKwargs(kwargs map[string]Value) map[string]Value {
	if kwargs == nil {
		return nil
	}
	out := make(map[string]Value, len(kwargs))
	for k, v := range kwargs {
		out[k] = escapedArg(v)
	}
	return out
}

// percentOperand is b of a Markup's % b as markupsafe formats it: a
// tuple's items and a dict's values escaped, else b escaped. A %r or %a
// conversion (an escaped repr) of an argument whose repr has something to
// escape is refused by name.
func percentOperand(format string, b Value) (Value, error) {
	items := []Value{b}
	switch {
	case b.IsList() && b.AsList().tuple:
		items = b.AsList().Items
	case b.IsDict():
		d := b.AsDict()
		items = make([]Value, 0, d.Len())
		for _, k := range d.Keys {
			items = append(items, d.Data[k])
		}
	}
	if percentRepr(format) {
		for _, a := range items {
			if !isNumeric(a) && hasEscapable(a.String()) {
				return Undefined(), fmt.Errorf("unsupported construct: %%r or %%a of a Markup's %% with an argument markupsafe escapes")
			}
		}
	}
	switch {
	case b.IsList() && b.AsList().tuple:
		return newTuple(escapedArgs(items)), nil
	case b.IsDict():
		d := b.AsDict()
		out := NewDict()
		od := out.AsDict()
		for _, k := range d.Keys {
			od.Set(k, escapedArg(d.Data[k]))
		}
		od.keyVals = d.keyVals
		return out, nil
	}
	return escapedArg(b), nil
}

// percentRepr reports whether a printf-style format has a %r or %a.
func percentRepr(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		if j < len(f) && f[j] == '(' {
			for j < len(f) && f[j] != ')' {
				j++
			}
			j++
		}
		for j < len(f) && strings.IndexByte("-+ #0123456789.*", f[j]) >= 0 {
			j++
		}
		if j < len(f) && (f[j] == 'r' || f[j] == 'a') {
			return true
		}
		i = j
	}
	return false
}

// markupBinary is a binary operator with a Markup operand: + escapes the
// str operand, % refuses an argument it would escape; the others are the
// str's, and * and % of a Markup are Markup.
func (e *evaluator) markupBinary(n *binExpr, left, right Value) (Value, error) {
	switch n.op {
	case "+":
		if left.IsString() && right.IsString() {
			s := markupConcat(left, right)
			return s, e.m.alloc(int64(len(s.AsString())))
		}
	case "%":
		if isMarkup(left) {
			var err error
			if right, err = percentOperand(left.AsString(), right); err != nil {
				return Undefined(), err
			}
		}
	}
	v, err := e.evalBinary(&binExpr{op: n.op, left: &litExpr{val: plainOf(left)}, right: &litExpr{val: plainOf(right)}})
	if err == nil && v.IsString() && (n.op == "*" || n.op == "%" && isMarkup(left)) {
		v = newMarkup(v.AsString())
	}
	return v, err
}

// plainFilters are the builtin filters that give a str even of a Markup
// (jinja2 3.1.2 without autoescape, or they take items of it).
var plainFilters = map[string]bool{"replace": true, "title": true, "first": true, "last": true, "min": true,
	"max": true, "join": true, "tojson": true, "list": true, "wordcount": true}

// markupFilterArgs is the arguments (after the value) of a builtin filter
// of a Markup as markupsafe passes them: format's (Markup %) and trim's
// chars (Markup.strip) escaped.
func markupFilterArgs(name string, input Value, args []Value, kwargs map[string]Value) ([]Value, map[string]Value, error) {
	if !isMarkup(input) {
		return args, kwargs, nil
	}
	switch name {
	case "format":
		if percentRepr(input.AsString()) {
			all := append([]Value(nil), args...)
			for _, v := range kwargs {
				all = append(all, v)
			}
			if _, err := percentOperand("%r", newTuple(all)); err != nil {
				return nil, nil, err
			}
		}
		fallthrough
	case "trim":
		return escapedArgs(args), escapedKwargs(kwargs), nil
	}
	return args, kwargs, nil
}

// markupFilterResult is the result of a builtin filter of a Markup input:
// a Markup where markupsafe's soft_str keeps it one.
func markupFilterResult(name string, input, out Value) Value {
	if isMarkup(input) && out.IsString() && !plainFilters[name] {
		return newMarkup(out.AsString())
	}
	return out
}

// markupMethods are the str methods Markup overrides: they escape their
// str arguments and give a Markup (true), or give Markups without
// escaping (false: split, rsplit, splitlines).
var markupMethods = map[string]bool{"capitalize": true, "title": true, "lower": true, "upper": true,
	"replace": true, "ljust": true, "rjust": true, "lstrip": true, "rstrip": true, "center": true,
	"strip": true, "translate": true, "expandtabs": true, "swapcase": true, "zfill": true,
	"partition": true, "rpartition": true, "format": true,
	"split": false, "rsplit": false, "splitlines": false}

// markupMethod is the method name of Markup obj: the str's, with its
// arguments refused where markupsafe escapes them and its results Markup
// where markupsafe's are.
func (e *evaluator) markupMethod(obj Value, name string) (Value, error) {
	m, err := e.seqAttr(plainOf(obj), name)
	esc, own := markupMethods[name]
	if err != nil || !m.IsCallable() || !own {
		return m, err
	}
	fn := m.AsCallable()
	return NewCallable(fn.Name, func(args []Value, kwargs map[string]Value) (Value, error) {
		if esc {
			args, kwargs = escapedArgs(args), escapedKwargs(kwargs)
		}
		v, err := fn.Fn(args, kwargs) // the budget counted the call
		if err != nil {
			return v, err
		}
		if v.IsString() {
			return newMarkup(v.AsString()), nil
		}
		if v.IsList() {
			items := make([]Value, len(v.AsList().Items))
			for i, it := range v.AsList().Items {
				items[i] = it
				if it.IsString() {
					items[i] = newMarkup(it.AsString())
				}
			}
			if v.AsList().tuple {
				return newTuple(items), nil
			}
			return NewList(items), nil
		}
		return v, nil
	}), nil
}

// markupItem is obj[key] of a Markup: an item is a Markup, a method named
// by the key the Markup's (jinja2's getitem falls back to getattr).
func (e *evaluator) markupItem(obj, key Value) (Value, error) {
	v, err := e.evalItem(&itemExpr{obj: &litExpr{val: plainOf(obj)}, key: &litExpr{val: key}})
	if err == nil && v.IsCallable() && key.IsString() {
		return e.markupMethod(obj, key.AsString())
	}
	return markupFilterResult("", obj, v), err
}
