package jinja

// This file is not part of ardanlabs/jinja v1.8.0: trajcompress's patch
// for what chat templates use and the upstream engine did differently from
// Python's jinja2 without an error (a different text, silently): iterating
// or taking the length of None or a number, `is iterable` of undefined,
// str.split's maxsplit, map('filter'), the format filter and printf-style
// %, and newlines of the template source. See PATCHES.md.

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalizeNewlines is jinja2's lexer: every \r\n and \r of the source
// (text, string literals) becomes \n, its newline_sequence.
func normalizeNewlines(src string) string {
	if !strings.Contains(src, "\r") {
		return src
	}
	return strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
}

// notIterable is Python's TypeError for iter(v).
func notIterable(v Value) error {
	return fmt.Errorf("'%s' object is not iterable", pyTypeName(v))
}

// iterItems is Python's iteration of v as jinja2 does it: a list's items,
// a dict's keys, a string's characters; an undefined value is empty
// (jinja2's Undefined iterates as empty); anything else is a TypeError.
func iterItems(v Value) ([]Value, error) {
	switch {
	case v.IsList():
		return v.AsList().Items, nil
	case v.IsDict():
		d := v.AsDict()
		items := make([]Value, len(d.Keys))
		for i, k := range d.Keys {
			items[i] = d.KeyValue(k)
		}
		return items, nil
	case v.IsString():
		s := v.AsString()
		items := make([]Value, 0, len(s))
		for _, r := range s {
			items = append(items, NewString(string(r)))
		}
		return items, nil
	case v.IsUndefined():
		return nil, nil
	}
	return nil, notIterable(v)
}

// pyLen is Python's len(v) (jinja2's length filter): an undefined value
// has length 0; None, numbers and bools raise Python's TypeError.
func pyLen(v Value) (int64, error) {
	switch {
	case v.IsList():
		if t := v.IterType(); lazyIter(t) {
			return 0, fmt.Errorf("object of type '%s' has no len()", t)
		}
		return int64(v.AsList().Len()), nil
	case v.IsDict():
		return int64(v.AsDict().Len()), nil
	case v.IsString():
		return int64(utf8.RuneCountInString(v.AsString())), nil
	case v.IsUndefined():
		return 0, nil
	}
	return 0, fmt.Errorf("object of type '%s' has no len()", pyTypeName(v))
}

// pyIsSpace is the white space of Python's str.split() and str.strip():
// Unicode's, and the separators \x1c-\x1f.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// splitArgs reads str.split's (sep=None, maxsplit=-1), positional or by
// keyword.
func splitArgs(args []Value, kwargs map[string]Value) (sep Value, maxsplit int64, err error) {
	sep, maxsplit = None(), -1
	if len(args) > 2 {
		return sep, 0, fmt.Errorf("split expected at most 2 arguments, got %d", len(args))
	}
	if len(args) > 0 {
		sep = args[0]
	}
	if v, ok := kwargs["sep"]; ok {
		sep = v
	}
	var m Value
	haveM := len(args) > 1
	if haveM {
		m = args[1]
	}
	if v, ok := kwargs["maxsplit"]; ok {
		m, haveM = v, true
	}
	if haveM {
		if !isIntLike(m) {
			return sep, 0, fmt.Errorf("'%s' object cannot be interpreted as an integer", pyTypeName(m))
		}
		maxsplit = toInt64(m)
	}
	if !sep.IsNone() && !sep.IsString() {
		return sep, 0, fmt.Errorf("must be str or None, not %s", pyTypeName(sep))
	}
	if sep.IsString() && sep.AsString() == "" {
		return sep, 0, fmt.Errorf("empty separator")
	}
	return sep, maxsplit, nil
}

// pySplit is Python's s.split(sep=None, maxsplit=-1), or s.rsplit when
// right is set.
func pySplit(s string, args []Value, kwargs map[string]Value, right bool) (Value, error) {
	sep, maxsplit, err := splitArgs(args, kwargs)
	if err != nil {
		return Undefined(), err
	}
	var parts []string
	switch {
	case sep.IsString() && !right:
		parts = strings.SplitN(s, sep.AsString(), int(min(maxsplit, math.MaxInt32-1)+1))
		if maxsplit < 0 {
			parts = strings.Split(s, sep.AsString())
		}
	case sep.IsString():
		d := sep.AsString()
		rest := s
		for maxsplit < 0 || int64(len(parts)) < maxsplit {
			i := strings.LastIndex(rest, d)
			if i < 0 {
				break
			}
			parts = append(parts, rest[i+len(d):])
			rest = rest[:i]
		}
		parts = append(parts, rest)
		reverse(parts)
	case !right:
		rest := strings.TrimLeftFunc(s, pyIsSpace)
		for rest != "" {
			if maxsplit >= 0 && int64(len(parts)) == maxsplit {
				parts = append(parts, rest)
				break
			}
			i := strings.IndexFunc(rest, pyIsSpace)
			if i < 0 {
				parts = append(parts, rest)
				break
			}
			parts = append(parts, rest[:i])
			rest = strings.TrimLeftFunc(rest[i:], pyIsSpace)
		}
	default:
		rest := strings.TrimRightFunc(s, pyIsSpace)
		for rest != "" {
			if maxsplit >= 0 && int64(len(parts)) == maxsplit {
				parts = append(parts, rest)
				break
			}
			i := strings.LastIndexFunc(rest, pyIsSpace)
			if i < 0 {
				parts = append(parts, rest)
				break
			}
			_, w := utf8.DecodeRuneInString(rest[i:])
			parts = append(parts, rest[i+w:])
			rest = strings.TrimRightFunc(rest[:i], pyIsSpace)
		}
		reverse(parts)
	}
	items := make([]Value, len(parts))
	for i, p := range parts {
		items[i] = NewString(p)
	}
	return NewList(items), nil
}

func reverse(s []string) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// evalMapFilter is jinja2's map filter: map(attribute=name[, default=v])
// takes an attribute (a key) of each item, map(name, *args, **kwargs)
// applies the filter name to each item. The input is iterated as Python
// does (None raises).
func (e *evaluator) evalMapFilter(args []Value, kwargs map[string]Value) (Value, error) {
	items, err := iterFalsyEmpty(args[0])
	if err != nil {
		return Undefined(), err
	}
	if _, ok := kwargs["attribute"]; ok || len(args) < 2 {
		if !ok {
			return Undefined(), fmt.Errorf("map requires a filter argument")
		}
		for _, it := range items {
			if it.IsUndefined() { // its attribute raises
				return Undefined(), undefinedError(it)
			}
		}
		return filterMap([]Value{NewList(items)}, kwargs)
	}
	if !args[1].IsString() {
		return Undefined(), fmt.Errorf("map: the filter name must be a string, not %s", pyTypeName(args[1]))
	}
	name := args[1].AsString()
	f, err := e.filterByName(name)
	if err != nil {
		return Undefined(), err
	}
	out := make([]Value, len(items))
	fargs := make([]Value, len(args)-1)
	copy(fargs[1:], args[2:])
	call := &Callable{Name: name, Fn: f}
	for i, it := range items {
		fargs[0] = it
		rest, kw, err := markupFilterArgs(name, it, fargs[1:], kwargs) // trajcompress patch
		if err != nil {
			return Undefined(), err
		}
		a := fargs
		if isMarkup(it) {
			a = append([]Value{it}, rest...)
		}
		if out[i], err = e.call(call, true, a, kw); err != nil { // within the render budget
			return Undefined(), err
		}
		out[i] = markupFilterResult(name, it, out[i])
	}
	return NewList(out), nil
}

// filterByName finds a filter as a {{ x | name }} would: the builtins,
// then the render data; a filter the caller passed under the name
// "__filter_override_"+name (chattemplate's tojson) wins over the builtin.
func (e *evaluator) filterByName(name string) (func([]Value, map[string]Value) (Value, error), error) {
	if v, ok := e.scope.get(filterOverridePrefix + name); ok && v.IsCallable() {
		return v.AsCallable().Fn, nil
	}
	if name == "map" {
		return e.evalMapFilter, nil
	}
	v, ok := lookupFilter(e.builtins, name)
	if !ok {
		v, ok = e.scope.get(name)
	}
	if !ok || !v.IsCallable() {
		return nil, fmt.Errorf("No filter named '%s'.", name) //nolint:staticcheck,revive // jinja2's message
	}
	return v.AsCallable().Fn, nil
}

// filterOverridePrefix: a callable passed in the render data under this
// prefix and a filter's name replaces that builtin filter, also where the
// filter is named by a string (map('tojson')).
const filterOverridePrefix = "__filter_override_"

// filterFormat is jinja2's format filter: value % args (or % kwargs).
func filterFormat(args []Value, kwargs map[string]Value) (Value, error) {
	if len(args) == 0 {
		return Undefined(), fmt.Errorf("format requires a value")
	}
	if len(args) > 1 && len(kwargs) > 0 {
		return Undefined(), fmt.Errorf("can't handle positional and keyword arguments at the same time")
	}
	var operand Value
	if len(kwargs) > 0 {
		d := NewDict()
		for k, v := range kwargs {
			d.AsDict().Set(k, v)
		}
		operand = d
	} else {
		operand = NewList(args[1:])
	}
	s, err := pyPercent(printValue(args[0]), operand, true)
	if err != nil {
		return Undefined(), err
	}
	return NewString(s), nil
}

// pyPercent is Python's printf-style format % operand: operand is a tuple
// of arguments when it is a list and tuple is set (the format filter, a
// (a, b) literal), a mapping for %(key)s, or a single argument.
func pyPercent(format string, operand Value, tuple bool) (string, error) {
	var args []Value
	var mapping *Dict
	// Python takes an operand with __getitem__ that is not a tuple (a
	// list, a dict) as a mapping: no "not all arguments converted".
	lenient := operand.IsDict() || operand.IsList() && !tuple || operand.IsUndefined()
	switch {
	case operand.IsList() && tuple:
		args = operand.AsList().Items
	case operand.IsDict():
		mapping = operand.AsDict()
		args = []Value{operand}
	default:
		args = []Value{operand}
	}
	next := 0
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		start := i
		i++
		if i >= len(format) {
			return "", fmt.Errorf("incomplete format")
		}
		var arg Value
		haveArg := false
		if format[i] == '(' {
			if mapping == nil {
				return "", fmt.Errorf("format requires a mapping")
			}
			j := strings.IndexByte(format[i:], ')')
			if j < 0 {
				return "", fmt.Errorf("incomplete format key")
			}
			key := format[i+1 : i+j]
			v, ok := mapping.Get(key)
			if !ok {
				return "", fmt.Errorf("KeyError: %s", pyStrRepr(key))
			}
			arg, haveArg = v, true
			i += j + 1
		}
		flags := ""
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			flags += string(format[i])
			i++
		}
		width := ""
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			width += string(format[i])
			i++
		}
		prec := ""
		if i < len(format) && format[i] == '.' {
			i++
			prec = "."
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				prec += string(format[i])
				i++
			}
		}
		if i < len(format) && (format[i] == '*' || format[i] == 'h' || format[i] == 'l' || format[i] == 'L') {
			return "", fmt.Errorf("unsupported printf-style format %q", format[start:i+1])
		}
		if i >= len(format) {
			return "", fmt.Errorf("incomplete format")
		}
		conv := format[i]
		if conv == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveArg {
			if next >= len(args) {
				return "", fmt.Errorf("not enough arguments for format string")
			}
			arg = args[next]
			next++
		}
		s, err := pyConvert(conv, flags, width, prec, arg, i)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	if !lenient && next < len(args) {
		return "", fmt.Errorf("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// pyConvert formats one argument of a %-format.
func pyConvert(conv byte, flags, width, prec string, arg Value, at int) (string, error) {
	pad := func(s string) string {
		w, _ := strconv.Atoi(width)
		n := utf8.RuneCountInString(s)
		if n >= w {
			return s
		}
		if strings.Contains(flags, "-") {
			return s + strings.Repeat(" ", w-n)
		}
		return strings.Repeat(" ", w-n) + s
	}
	switch conv {
	case 's', 'r', 'a':
		s := printValue(arg)
		if conv != 's' && arg.IsString() {
			s = pyStrRepr(arg.AsString())
		}
		if prec != "" {
			p, _ := strconv.Atoi(prec[1:])
			if r := []rune(s); len(r) > p {
				s = string(r[:p])
			}
		}
		return pad(s), nil
	case 'd', 'i', 'u', 'x', 'X', 'o', 'c':
		if conv == 'c' {
			if arg.IsString() && utf8.RuneCountInString(arg.AsString()) == 1 {
				return pad(arg.AsString()), nil
			}
			if !isIntLike(arg) {
				return "", fmt.Errorf("%%c requires int or char")
			}
			switch c := toInt64(arg); {
			case c < 0 || c > unicode.MaxRune:
				return "", fmt.Errorf("%%c arg not in range(0x110000)")
			case c >= 0xd800 && c <= 0xdfff: // Python's lone surrogate; Go writes U+FFFD
				return "", fmt.Errorf("unsupported construct: %%c of the surrogate %#x", c)
			}
			return pad(string(rune(toInt64(arg)))), nil
		}
		var n int64
		switch {
		case isIntLike(arg):
			n = toInt64(arg)
		case arg.IsFloat() && (conv == 'd' || conv == 'i' || conv == 'u'):
			f := arg.AsFloat()
			if math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) >= 1<<63 {
				return "", fmt.Errorf("unsupported printf-style %%d of %s", printValue(arg))
			}
			n = int64(f)
		case conv == 'd' || conv == 'i' || conv == 'u':
			return "", fmt.Errorf("%%%c format: a real number is required, not %s", conv, pyTypeName(arg))
		default:
			return "", fmt.Errorf("%%%c format: an integer is required, not %s", conv, pyTypeName(arg))
		}
		verb := string(conv)
		if conv == 'i' || conv == 'u' {
			verb = "d"
		}
		if conv == 'o' && strings.Contains(flags, "#") {
			flags = strings.ReplaceAll(flags, "#", "")
			s := fmt.Sprintf("%"+flags+width+prec+"O", n) // Go's %O is 0o…, Python's %#o too
			return s, nil
		}
		return fmt.Sprintf("%"+flags+width+prec+verb, n), nil
	case 'f', 'F', 'e', 'E', 'g', 'G':
		if !isNumeric(arg) {
			return "", fmt.Errorf("must be real number, not %s", pyTypeName(arg))
		}
		if strings.Contains(flags, "#") && (conv == 'g' || conv == 'G') {
			return "", fmt.Errorf("unsupported printf-style format %%#%c", conv)
		}
		f := toFloat64(arg)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			s := map[bool]string{true: "inf", false: "nan"}[math.IsInf(f, 0)]
			if math.IsInf(f, -1) {
				s = "-inf"
			} else if strings.Contains(flags, "+") {
				s = "+" + s
			}
			if conv >= 'A' && conv <= 'Z' {
				s = strings.ToUpper(s)
			}
			return pad(s), nil
		}
		if prec == "" {
			prec = ".6"
		} else if prec == "." {
			prec = ".0"
		}
		return fmt.Sprintf("%"+flags+width+prec+string(conv), f), nil
	}
	return "", fmt.Errorf("unsupported format character '%c' (0x%x) at index %d", conv, conv, at)
}

// pyEscape decodes the escape of a Python string literal whose letter is at
// s[i] (after the backslash) into b and returns the index after it: \r \a
// \b \f \v, a backslash-newline (nothing), octal \ooo, \xhh, \uhhhh,
// \Uhhhhhhhh. A malformed \x, \u or \U is kept as it stands.
func pyEscape(b *strings.Builder, s string, i int) int {
	switch c := s[i]; c {
	case 'r':
		b.WriteByte('\r')
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'v':
		b.WriteByte('\v')
	case '\n':
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if i+1+n <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil && v <= unicode.MaxRune {
				b.WriteRune(rune(v))
				return i + 1 + n
			}
		}
		b.WriteByte('\\')
		b.WriteByte(c)
	default: // octal
		j, v := i, 0
		for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
			v = v*8 + int(s[j]-'0')
			j++
		}
		b.WriteRune(rune(v))
		return j
	}
	return i + 1
}

// FilterOverride is the render-data key under which a callable replaces
// the builtin filter name, in {{ x | name }} and where a filter is named by
// a string (map('name')): chattemplate passes transformers' tojson so.
func FilterOverride(name string) string { return filterOverridePrefix + name }

// clearLoopScope drops from a for loop's scope what the body set, keeping
// loop and the loop variables: in jinja2 an assignment in the body does
// not carry over to the next iteration.
func clearLoopScope(s *scope, keyVar, valVar string) {
	for k := range s.vars {
		if k != "loop" && k != keyVar && k != valVar {
			delete(s.vars, k)
		}
	}
}

// conformOp is Python's result for the binary operators where the upstream
// engine gave another value silently: comparisons of values Python cannot
// order (TypeError) and of strings (code point order; upstream compared
// them as numbers, '10' < '9' was false) and lists (item by item), - of
// non-numbers, list * int, and str % args. ok is false where the
// upstream code applies.
func conformOp(op string, a, b Value) (Value, bool, error) {
	switch op {
	case "==", "!=":
		// Numbers equal across kinds (0 == False); a list never equals a
		// tuple.
		var eq bool
		switch {
		case isNumeric(a) && isNumeric(b):
			eq = valuesEqual(a, b) // exact across int and float
		case a.IsList() && b.IsList() && a.AsList().tuple != b.AsList().tuple:
			eq = false
		default:
			return Value{}, false, nil
		}
		return NewBool(eq == (op == "==")), true, nil
	case "<", ">", "<=", ">=":
		c, err := pyCompare(op, a, b)
		if err != nil {
			return Undefined(), true, err
		}
		switch op {
		case "<":
			return NewBool(c < 0), true, nil
		case ">":
			return NewBool(c > 0), true, nil
		case "<=":
			return NewBool(c <= 0), true, nil
		}
		return NewBool(c >= 0), true, nil
	case "-", "/", "//", "**":
		if isNumeric(a) && isNumeric(b) {
			return Value{}, false, nil
		}
		return Undefined(), true, binTypeError(op, a, b)
	case "*":
		if err := rangeOpError(op, a, b); err != nil {
			return Undefined(), true, err
		}
		if a.IsList() && isIntLike(b) || isIntLike(a) && b.IsList() {
			l, n := a, b
			if b.IsList() {
				l, n = b, a
			}
			k := toInt64(n)
			items := l.AsList().Items
			if k <= 0 || len(items) == 0 {
				if l.AsList().tuple {
					return newTuple(nil), true, nil
				}
				return NewList(nil), true, nil
			}
			if k > math.MaxInt32/int64(len(items)) {
				return Undefined(), true, fmt.Errorf("list repeated %d times is too long", k)
			}
			out := make([]Value, 0, int(k)*len(items))
			for range k {
				out = append(out, items...)
			}
			if l.AsList().tuple {
				return newTuple(out), true, nil
			}
			return NewList(out), true, nil
		}
		if isNumeric(a) && isNumeric(b) {
			return Value{}, false, nil
		}
		if _, _, rep := repeatOperands(a, b); rep {
			return Value{}, false, nil
		}
		if a.IsUndefined() {
			return Undefined(), true, undefinedError(a)
		}
		if b.IsUndefined() {
			return Undefined(), true, undefinedError(b)
		}
		return Undefined(), true, fmt.Errorf("can't multiply sequence by non-int of type '%s'", pyTypeName(b))
	case "%":
		if !a.IsString() {
			if isNumeric(a) && isNumeric(b) {
				return Value{}, false, nil
			}
			return Undefined(), true, binTypeError(op, a, b)
		}
		s, err := pyPercent(a.AsString(), b, b.IsList() && b.AsList().tuple)
		if err != nil {
			return Undefined(), true, err
		}
		return NewString(s), true, nil
	}
	return Value{}, false, nil
}

func binTypeError(op string, a, b Value) error {
	if a.IsUndefined() {
		return undefinedError(a)
	}
	if b.IsUndefined() {
		return undefinedError(b)
	}
	return fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
}

// pyCompare orders a and b as Python does, or is its TypeError.
func pyCompare(op string, a, b Value) (int, error) {
	switch {
	case isNumeric(a) && isNumeric(b):
		c, _ := numCmp(a, b) // exact across int and float; NaN orders as equal
		return c, nil
	case a.IsString() && b.IsString():
		return strings.Compare(a.AsString(), b.AsString()), nil
	case a.IsList() && b.IsList():
		if a.AsList().tuple != b.AsList().tuple || isRange(a) || isRange(b) { // a range has no order
			return 0, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", op, seqName(a), seqName(b))
		}
		x, y := a.AsList().Items, b.AsList().Items
		for i := 0; i < len(x) && i < len(y); i++ {
			if valuesEqual(x[i], y[i]) {
				continue
			}
			return pyCompare(op, x[i], y[i])
		}
		return len(x) - len(y), nil
	case a.IsUndefined():
		return 0, undefinedError(a)
	case b.IsUndefined():
		return 0, undefinedError(b)
	}
	return 0, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
}

// pyStrFormat is Python's str.format for the fields chat templates use:
// {}, {0}, {name}, with {{ and }} as braces; a field with a conversion, a
// format spec, an attribute or an index is refused by name.
func pyStrFormat(s string, args []Value, kwargs map[string]Value) (Value, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '}' {
			if i+1 < len(s) && s[i+1] == '}' {
				b.WriteByte('}')
				i++
				continue
			}
			return Undefined(), fmt.Errorf("Single '}' encountered in format string") //nolint:staticcheck,revive // Python's message
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return Undefined(), fmt.Errorf("Single '{' encountered in format string") //nolint:staticcheck,revive // Python's message
		}
		field := s[i+1 : i+j]
		i += j
		if strings.ContainsAny(field, "!:.[{") {
			return Undefined(), fmt.Errorf("unsupported str.format field {%s}", field)
		}
		var v Value
		switch n, err := strconv.Atoi(field); {
		case field == "":
			if auto >= len(args) {
				return Undefined(), fmt.Errorf("Replacement index %d out of range for positional args tuple", auto) //nolint:staticcheck,revive // Python's message
			}
			v = args[auto]
			auto++
		case err == nil:
			if n >= len(args) {
				return Undefined(), fmt.Errorf("Replacement index %d out of range for positional args tuple", n) //nolint:staticcheck,revive // Python's message
			}
			v = args[n]
		default:
			kv, ok := kwargs[field]
			if !ok {
				return Undefined(), fmt.Errorf("KeyError: %s", pyStrRepr(field))
			}
			v = kv
		}
		b.WriteString(printValue(v))
	}
	return NewString(b.String()), nil
}

// lexNumber is the length and kind of the number literal at the start of
// s as jinja2's lexer reads it: digits with single _ between them, then
// optionally .digits, then optionally e[+-]digits (a float); 0 when the
// upstream lexer's reading is the same (no _ and no exponent).
func lexNumber(s string) (int, tokKind) {
	if len(s) > 2 && s[0] == '0' && prefixBase(s[1]) != 0 {
		// 0x1f, 0o17, 0b101, with single _ before a digit (a parse error before)
		base := prefixBase(s[1])
		ok := func(c byte) bool { return digitValue(c) < base }
		i := 2
		for i < len(s) && (ok(s[i]) || s[i] == '_' && i+1 < len(s) && ok(s[i+1])) {
			i++
		}
		if i > 2 {
			return i, tokInt
		}
	}
	digits := func(i int) int {
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_' && j > i && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
			j++
		}
		return j
	}
	i := digits(0)
	kind := tokInt
	if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
		i = digits(i + 1)
		kind = tokFloat
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			i = digits(j)
			kind = tokFloat
		}
	}
	if kind == tokInt && s[0] == '0' {
		// jinja2's 0(_?0)*: an int does not start with 0 (012 is 0 then 12)
		if n := len(s[:i]) - len(strings.TrimLeft(s[:i], "0_")); n < i {
			return strings.LastIndexByte(s[:n], '0') + 1, kind
		}
	}
	if kind == tokInt && !strings.Contains(s[:i], "_") {
		return 0, kind
	}
	if kind == tokFloat && !strings.ContainsAny(s[:i], "_eE") {
		return 0, kind
	}
	return i, kind
}

// pySplitlines is Python's str.splitlines(): lines end at \n, \r\n, \r,
// \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029, and the ends are dropped.
func pySplitlines(s string) []string {
	var lines []string
	start := 0
	for i, r := range s {
		if i < start {
			continue
		}
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			start = i + utf8.RuneLen(r)
			if r == '\r' && start < len(s) && s[start] == '\n' {
				start++
			}
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// pyIndent is jinja2's indent filter (width a number of spaces or a
// string, first, blank).
func pyIndent(s string, args []Value, kwargs map[string]Value, pad string, first bool) (Value, error) {
	switch v := args[0]; {
	case v.IsUndefined():
		return Undefined(), undefinedError(v)
	case v.IsList():
		return Undefined(), fmt.Errorf("'list' object has no attribute 'splitlines'")
	case !v.IsString():
		return Undefined(), fmt.Errorf("unsupported operand type(s) for +=: '%s' and 'str'", pyTypeName(v))
	}
	w := Undefined()
	if len(args) > 1 {
		w = args[1]
	}
	if v, ok := kwargs["width"]; ok {
		w = v
	}
	if w.IsString() {
		pad = w.AsString()
	}
	blank := false
	if len(args) > 3 {
		blank = args[3].IsTruthy()
	}
	if v, ok := kwargs["blank"]; ok {
		blank = v.IsTruthy()
	}
	lines := pySplitlines(s + "\n")
	var rv string
	if blank {
		rv = strings.Join(lines, "\n"+pad)
	} else {
		var b strings.Builder
		b.WriteString(lines[0])
		for _, l := range lines[1:] {
			b.WriteByte('\n')
			if l != "" {
				b.WriteString(pad)
			}
			b.WriteString(l)
		}
		rv = b.String()
	}
	if first {
		rv = pad + rv
	}
	return NewString(rv), nil
}

// pyRound is jinja2's round filter: round(x, precision) as Python's
// (correctly rounded from the float's exact value, ties to even),
// method 'floor' or 'ceil' as math.floor/ceil(x * 10**p) / 10**p; the
// result is a float, an int only for an int with the common method.
func pyRound(args []Value, kwargs map[string]Value, precision int64) (Value, error) {
	method := "common"
	if len(args) > 2 {
		method = printValue(args[2])
	}
	if m, ok := kwargs["method"]; ok {
		method = printValue(m)
	}
	if method != "common" && method != "floor" && method != "ceil" {
		return Undefined(), fmt.Errorf("method must be common, ceil or floor")
	}
	v := args[0]
	if !isNumeric(v) {
		return Undefined(), fmt.Errorf("type %s doesn't define __round__ method", pyTypeName(v))
	}
	if method == "common" {
		switch p := argOr(args, kwargs, 1, "precision", NewInt(0)); {
		case p.IsNone(): // round(x, None) is round(x): an int
			return roundToInt(v)
		case !isIntLike(p):
			return Undefined(), fmt.Errorf("'%s' object cannot be interpreted as an integer", pyTypeName(p))
		}
		if isIntLike(v) && precision >= 0 {
			return NewInt(toInt64(v)), nil
		}
		if isIntLike(v) {
			return roundInt(toInt64(v), precision)
		}
		f := toFloat64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) || precision > 300 || precision < -300 {
			return NewFloat(f), nil
		}
		if precision >= 0 {
			r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', int(precision), 64), 64)
			return NewFloat(r), err
		}
		p := math.Pow(10, float64(-precision))
		return NewFloat(math.RoundToEven(f/p) * p), nil
	}
	if isIntLike(v) && precision >= 0 { // floor(n * 10**p) / 10**p: int / int, float(n)
		return NewFloat(float64(toInt64(v))), nil
	}
	p := math.Pow(10, float64(precision))
	f := toFloat64(v) * p
	if method == "floor" {
		return NewFloat(math.Floor(f) / p), nil
	}
	return NewFloat(math.Ceil(f) / p), nil
}

// newTuple is a Python tuple: a list that prints as (a, b).
func newTuple(items []Value) Value {
	return Value{kind: KindList, v: &List{Items: items, tuple: true}}
}

// parseCondition parses the test of {% if %} and {% elif %}: jinja2 parses
// it without a top-level inline if (a if b else c is a syntax error there).
func parseCondition(s string) (expr, error) {
	s = strings.TrimSpace(s)
	p := newExprParser(tokenizeExpr(s))
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("expected token 'end of statement block', got %q", t.val)
	}
	return e, nil
}

// chainCompare is left op right, or, when left is itself a comparison
// whose right operand is prevRight, left and (prevRight op right).
func chainCompare(left, prevRight expr, op string, right expr) expr {
	if prevRight == nil {
		return &binExpr{op: op, left: left, right: right}
	}
	return &binExpr{op: "and", left: left, right: &binExpr{op: op, left: prevRight, right: right}}
}

// unaryStrict is Python's -x and +x: numbers only (bool as int), an
// undefined operand raises its hint; ok is false for the upstream code.
func unaryStrict(op string, v Value) (Value, bool, error) {
	if op == "-" && v.IsInt() && v.AsInt() == math.MinInt64 {
		return Undefined(), true, errBigInt("-(-9223372036854775808)")
	}
	if op != "-" && op != "+" || v.IsInt() || v.IsFloat() {
		return Value{}, false, nil
	}
	if v.IsBool() {
		n := boolInt(v)
		if op == "-" {
			n = -n
		}
		return NewInt(n), true, nil
	}
	if v.IsUndefined() {
		return Undefined(), true, undefinedError(v)
	}
	return Undefined(), true, fmt.Errorf("bad operand type for unary %s: '%s'", op, pyTypeName(v))
}

// oddEven is jinja2's odd and even tests: value % 2 == 1 (or 0), with
// Python's % (a string is formatted, other types raise).
func oddEven(name string, v Value) (bool, error) {
	want := int64(0)
	if name == "odd" {
		want = 1
	}
	switch {
	case isIntLike(v):
		m := toInt64(v) % 2
		if m < 0 {
			m += 2
		}
		return m == want, nil
	case v.IsFloat():
		m := math.Mod(v.AsFloat(), 2)
		if m < 0 {
			m += 2
		}
		return m == float64(want), nil
	case v.IsString():
		_, err := pyPercent(v.AsString(), NewInt(2), false)
		if err != nil {
			return false, err
		}
		return false, nil // a str is never equal to an int
	case v.IsUndefined():
		return false, undefinedError(v)
	}
	return false, fmt.Errorf("unsupported operand type(s) for %%: '%s' and 'int'", pyTypeName(v))
}

// iterFalsyEmpty is the input of jinja2's map, select, reject, selectattr
// and rejectattr: a false value (None, 0, "") gives nothing (they test
// "if value" first), anything else iterates as Python does.
func iterFalsyEmpty(v Value) ([]Value, error) {
	if !v.IsTruthy() && !v.IsUndefined() {
		return nil, nil
	}
	return iterItems(v)
}

// needDict is Python's AttributeError of dictsort (value.items()) on a
// value that is not a dict.
func needDict(v Value) error {
	if v.IsDict() {
		return nil
	}
	if v.IsUndefined() {
		return undefinedError(v)
	}
	return fmt.Errorf("'%s' object has no attribute 'items'", pyTypeName(v))
}

// iterFilters take an iterable as jinja2's do: their input is iterated
// as Python iterates it (iterInput).
var iterFilters = map[string]bool{"first": true, "last": true, "reverse": true, "sort": true, "unique": true,
	"max": true, "min": true, "sum": true, "batch": true}

// iterInput wraps a filter of iterFilters: a dict becomes its keys, None,
// a number or a bool raises Python's TypeError, an undefined value is
// empty; lists and strings go to the filter as they are.
func iterInput(name string, fn func([]Value, map[string]Value) (Value, error)) func([]Value, map[string]Value) (Value, error) {
	return func(args []Value, kwargs map[string]Value) (Value, error) {
		if len(args) > 0 && !args[0].IsList() && (!args[0].IsString() || !keepsString[name]) {
			items, err := iterItems(args[0])
			if err != nil {
				return Undefined(), err
			}
			args = append([]Value{NewList(items)}, args[1:]...)
		}
		if _, attr := kwargs["attribute"]; orders[name] && !attr && len(args) > 0 && args[0].IsList() {
			items := args[0].AsList().Items
			for _, it := range items[min(1, len(items)):] {
				if _, err := pyCompare("<", it, items[0]); err != nil {
					return Undefined(), err
				}
			}
		}
		return fn(args, kwargs)
	}
}

// keepsString: the filters of iterFilters that take a string as it is
// (reverse gives a string).
var keepsString = map[string]bool{"reverse": true}

// orders: the filters that compare the items (Python raises on items it
// cannot order: a str and an int, undefined); sort compares its keys
// itself (pySorted).
var orders = map[string]bool{"min": true, "max": true}

// pySum is Python's sum(iterable, start=0) (jinja2's sum filter without
// attribute=): start + each item in order with Python's +.
func pySum(args []Value, kwargs map[string]Value) (Value, error) {
	if _, ok := kwargs["attribute"]; ok || len(args) > 1 && !args[1].IsNone() {
		return Undefined(), fmt.Errorf("unsupported construct: sum(attribute=…)")
	}
	acc := NewInt(0)
	if len(args) > 2 {
		acc = args[2]
	}
	if v, ok := kwargs["start"]; ok {
		acc = v
	}
	var err error
	for _, it := range args[0].AsList().Items {
		if acc, err = addStrict(acc, it); err != nil {
			return Undefined(), err
		}
	}
	return acc, nil
}

func seqName(v Value) string {
	if isRange(v) { // a range
		return rangeIter
	}
	if v.AsList().tuple {
		return "tuple"
	}
	return "list"
}

// pyWordRe is Python's \w+ (jinja2's wordcount).
var pyWordRe = regexp.MustCompile(`[\p{L}\p{N}_]+`)

// checkSliceIndices is Python's TypeError for a slice bound that is not an
// int or None.
func (e *evaluator) checkSliceIndices(n *sliceExpr) error {
	for _, x := range []expr{n.start, n.stop, n.step} {
		if x == nil {
			continue
		}
		v, err := e.evalExpr(x)
		if err != nil {
			return err
		}
		// A float with an integral value stands for an int beyond int64
		// (the engine has no big integers: 10**18 is a float).
		if !isIntLike(v) && !v.IsNone() && !(v.IsFloat() && v.AsFloat() == math.Trunc(v.AsFloat())) {
			return fmt.Errorf("slice indices must be integers or None or have an __index__ method")
		}
		if x == n.step && isIntLike(v) && toInt64(v) == 0 {
			return fmt.Errorf("slice step cannot be zero")
		}
	}
	return nil
}

// sortKey is jinja2's sort key: a string lowercased unless case_sensitive.
func sortKey(v Value, caseSensitive bool) Value {
	if v.IsString() && !caseSensitive {
		return NewString(pyLower(v.AsString())) // Python's str.lower
	}
	return v
}

// pySort is jinja2's sort filter: sorted(value, key=lower-cased strings
// unless case_sensitive, reverse=); attribute= is refused by name.
func pySort(args []Value, kwargs map[string]Value) (Value, error) {
	reverse, caseSensitive := false, false
	if len(args) > 1 {
		reverse = args[1].IsTruthy()
	}
	if len(args) > 2 {
		caseSensitive = args[2].IsTruthy()
	}
	if v, ok := kwargs["reverse"]; ok {
		reverse = v.IsTruthy()
	}
	if v, ok := kwargs["case_sensitive"]; ok {
		caseSensitive = v.IsTruthy()
	}
	src := args[0].AsList().Items
	keys := make([]Value, len(src))
	for i, it := range src {
		// jinja2's key is a list even without attribute= ([item]), so
		// equal items compare equal first: [None, None]|sort is fine.
		keys[i] = NewList([]Value{sortKey(it, caseSensitive)})
	}
	attr, ok := kwargs["attribute"]
	if !ok && len(args) > 3 {
		attr, ok = args[3], true
	}
	if ok && !attr.IsNone() {
		for i, it := range src {
			k, err := multiAttr(it, attr, caseSensitive)
			if err != nil {
				return Undefined(), err
			}
			keys[i] = k
		}
	}
	return pySorted(src, keys, reverse)
}

// pySorted is Python's sorted(items, key=, reverse=) given each item's key:
// stable, reverse keeping equal items in order, Python's TypeError for
// keys it cannot order. (trajcompress patch)
func pySorted(items, keys []Value, reverse bool) (Value, error) {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	var err error
	sort.SliceStable(order, func(i, j int) bool {
		c, cerr := pyCompare("<", keys[order[i]], keys[order[j]])
		if cerr != nil && err == nil {
			err = cerr
		}
		if reverse {
			return c > 0
		}
		return c < 0
	})
	if err != nil {
		return Undefined(), err
	}
	out := make([]Value, len(items))
	for i, k := range order {
		out[i] = items[k]
	}
	return NewList(out), nil
}

// multiAttr is jinja2's make_multi_attrgetter (sort's attribute=): for
// each comma-separated path, the item's value at the path's dot-separated
// parts (a part of digits is an index), lower-cased unless case_sensitive;
// the list of them is the sort key. (trajcompress patch)
func multiAttr(item, attr Value, caseSensitive bool) (Value, error) {
	paths := []string{printValue(attr)}
	if attr.IsString() {
		paths = strings.Split(attr.AsString(), ",")
	}
	out := make([]Value, len(paths))
	for i, path := range paths {
		v := item
		for _, part := range strings.Split(path, ".") {
			var err error
			if v, err = getItemPart(v, part); err != nil {
				return Undefined(), err
			}
		}
		out[i] = sortKey(v, caseSensitive)
	}
	return NewList(out), nil
}

// getItemPart is jinja2's environment.getitem of one part of an attribute
// path: a dict's key (an int key for a part of digits), a list's or
// string's index; what it does not find is undefined; a part of an
// undefined value raises it; other types are refused by name.
func getItemPart(v Value, part string) (Value, error) {
	idx, isIdx := int64(0), false
	if part != "" && strings.Trim(part, "0123456789") == "" {
		if n, err := strconv.ParseInt(part, 10, 64); err == nil {
			idx, isIdx = n, true
		}
	}
	switch {
	case v.IsUndefined():
		return Undefined(), undefinedError(v)
	case v.IsDict():
		key := NewString(part)
		if isIdx {
			key = NewInt(idx)
		}
		if got, ok := dictGet(v.AsDict(), key); ok {
			return got, nil
		}
		return Undefined(), nil
	case v.IsList() && isIdx:
		if items := v.AsList().Items; idx < int64(len(items)) {
			return items[idx], nil
		}
		return Undefined(), nil
	case v.IsString() && isIdx:
		if r := []rune(v.AsString()); idx < int64(len(r)) {
			return NewString(string(r[idx])), nil
		}
		return Undefined(), nil
	case v.IsList() || v.IsString() || v.IsNone():
		return Undefined(), nil
	}
	return Undefined(), fmt.Errorf("unsupported construct: sort(attribute=%q) on a %s", part, pyTypeName(v))
}

// pyUnique is jinja2's unique filter: the first of the items equal as
// Python hashes them (1, 1.0 and True are one; strings lower-cased unless
// case_sensitive); a list or dict item is unhashable.
func pyUnique(args []Value, kwargs map[string]Value) (Value, error) {
	caseSensitive := len(args) > 1 && args[1].IsTruthy()
	if v, ok := kwargs["case_sensitive"]; ok {
		caseSensitive = v.IsTruthy()
	}
	if _, ok := kwargs["attribute"]; ok || len(args) > 2 {
		return Undefined(), fmt.Errorf("unsupported construct: unique(attribute=…)")
	}
	seen := map[string]bool{}
	var out []Value
	for _, it := range args[0].AsList().Items {
		var k string
		switch {
		case it.IsList() && !it.AsList().tuple, it.IsDict():
			return Undefined(), fmt.Errorf("unhashable type: '%s'", pyTypeName(it))
		case isNumeric(it):
			k, _ = DictKey(it) // 1, 1.0 and True are one key, as Python hashes them
		case it.IsString():
			k = "s" + sortKey(it, caseSensitive).AsString()
		case it.IsList(): // a tuple: as Python hashes it ((1, 2) and (1.0, 2) are one)
			dk, ok := DictKey(it)
			if !ok {
				return Undefined(), fmt.Errorf("unhashable type: '%s'", unhashableIn(it))
			}
			k = "t" + dk
		default:
			k = pyTypeName(it) + it.String()
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
	}
	return NewList(out), nil
}

// unhashableIn is the type name of the first value in tuple t that
// Python cannot hash (a list or a dict).
func unhashableIn(t Value) string {
	for _, it := range t.AsList().Items {
		switch {
		case it.IsDict(), it.IsList() && !it.AsList().tuple:
			return pyTypeName(it)
		case it.IsList():
			if n := unhashableIn(it); n != "" {
				return n
			}
		}
	}
	return ""
}

// needComma is jinja2's error where items of a list, dict or call are not
// separated by commas (the upstream parser took [a b] as [a, b]).
func needComma(t tok, end tokKind) error {
	if t.kind == end || t.kind == tokEOF {
		return nil
	}
	return fmt.Errorf("expected token ',', got %q", t.val)
}

// jinjaWordStart is jinja2's _word_beginning_split_re.
var jinjaWordStart = regexp.MustCompile(`[-\s({\[<]+`)

// jinjaTitle is jinja2's title filter: each piece between runs of
// -, white space, (, {, [ and < gets its first character upper-cased and
// the rest lower-cased.
func jinjaTitle(s string) string {
	var b strings.Builder
	last := 0
	piece := func(p string) {
		if p == "" {
			return
		}
		r, n := utf8.DecodeRuneInString(p)
		b.WriteString(pyUpper(string(r)))
		b.WriteString(pyLower(p[n:]))
	}
	for _, loc := range jinjaWordStart.FindAllStringIndex(s, -1) {
		piece(s[last:loc[0]])
		b.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	piece(s[last:])
	return b.String()
}

// undefinedItem is the error of taking an attribute of an undefined item
// (selectattr, rejectattr), or nil.
func undefinedItem(args []Value) error {
	if len(args) > 0 && args[0].IsList() {
		for _, it := range args[0].AsList().Items {
			if it.IsUndefined() {
				return undefinedError(it)
			}
		}
	}
	return nil
}

// pyMinMax is jinja2's min and max filters: the first smallest (largest)
// item, strings compared lower-cased unless case_sensitive; an empty
// input gives undefined; attribute= is refused by name.
func pyMinMax(max bool) func([]Value, map[string]Value) (Value, error) {
	return func(args []Value, kwargs map[string]Value) (Value, error) {
		caseSensitive := len(args) > 1 && args[1].IsTruthy()
		if v, ok := kwargs["case_sensitive"]; ok {
			caseSensitive = v.IsTruthy()
		}
		if _, ok := kwargs["attribute"]; ok || len(args) > 2 {
			return Undefined(), fmt.Errorf("unsupported construct: min/max(attribute=…)")
		}
		items := args[0].AsList().Items
		if len(items) == 0 {
			return undefinedWith("No aggregated item, sequence was empty."), nil
		}
		best := items[0]
		for _, it := range items[1:] {
			c, err := pyCompare("<", sortKey(it, caseSensitive), sortKey(best, caseSensitive))
			if err != nil {
				return Undefined(), err
			}
			if max && c > 0 || !max && c < 0 {
				best = it
			}
		}
		return best, nil
	}
}

// starExpr is *xs among a call's arguments.
type starExpr struct{ expr expr }

func (n *starExpr) nodeType() string { return "star" }
func (n *starExpr) exprNode()        {}

// starArgs evaluates *s and the arguments after it: the items of s (as
// Python iterates them) in place, then the rest (a later *ys too).
func (e *evaluator) starArgs(s *starExpr, rest []expr) ([]Value, error) {
	v, err := e.evalExpr(s.expr)
	if err != nil {
		return nil, err
	}
	out, err := iterItems(v)
	if err != nil {
		return nil, fmt.Errorf("argument after * must be an iterable, not %s", pyTypeName(v))
	}
	out = append([]Value(nil), out...)
	for i, a := range rest {
		if t, ok := a.(*starExpr); ok {
			more, err := e.starArgs(t, rest[i+1:])
			return append(out, more...), err
		}
		w, err := e.evalExpr(a)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// pyStrMethods are Python's str methods the upstream engine lacks.
var pyStrMethods = map[string]func(s string, args []Value) (Value, error){
	"isalpha": strIs(func(r rune) bool { return unicode.IsLetter(r) }),
	"isalnum": strIs(func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }),
	"isspace": strIs(pyIsSpace),
	"islower": func(s string, _ []Value) (Value, error) { return NewBool(pyIsLower(s)), nil },
	"isupper": func(s string, _ []Value) (Value, error) { return NewBool(pyIsUpper(s)), nil },
	"index": func(s string, args []Value) (Value, error) {
		i, err := strFind(s, args, false)
		if err == nil && i < 0 {
			err = fmt.Errorf("substring not found")
		}
		return NewInt(int64(i)), err
	},
	"rfind": func(s string, args []Value) (Value, error) {
		i, err := strFind(s, args, true)
		return NewInt(int64(i)), err
	},
	"rindex": func(s string, args []Value) (Value, error) {
		i, err := strFind(s, args, true)
		if err == nil && i < 0 {
			err = fmt.Errorf("substring not found")
		}
		return NewInt(int64(i)), err
	},
	"zfill": func(s string, args []Value) (Value, error) {
		w, err := strWidth(args)
		n := utf8.RuneCountInString(s)
		if err != nil || w <= n {
			return NewString(s), err
		}
		sign := ""
		if s != "" && (s[0] == '+' || s[0] == '-') {
			sign, s = s[:1], s[1:]
		}
		return NewString(sign + strings.Repeat("0", w-n) + s), nil
	},
	"center": strPad(func(m, w int) int { return m/2 + (m & w & 1) }),
	"ljust":  strPad(func(int, int) int { return 0 }),
	"rjust":  strPad(func(m, _ int) int { return m }),
	"partition": func(s string, args []Value) (Value, error) {
		return strPartition(s, args, false)
	},
	"rpartition": func(s string, args []Value) (Value, error) {
		return strPartition(s, args, true)
	},
	"isascii": func(s string, _ []Value) (Value, error) {
		return NewBool(strings.IndexFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) < 0), nil
	},
	"isdecimal": strIs(unicode.IsDigit),
	"swapcase": func(s string, _ []Value) (Value, error) {
		var b strings.Builder
		for i, r := range s {
			switch {
			case pyIsUppercase(r):
				pyLowerRune(&b, s, i, r)
			case pyIsLowercase(r):
				b.WriteString(pyUpper(string(r)))
			default:
				b.WriteRune(r)
			}
		}
		return NewString(b.String()), nil
	},
	"removeprefix": func(s string, args []Value) (Value, error) { return strRemove("removeprefix", s, args) },
	"removesuffix": func(s string, args []Value) (Value, error) { return strRemove("removesuffix", s, args) },
}

// The str methods the engine lacks: defined (as in Python), refused by
// name when called, never a different text.
func init() {
	for _, name := range []string{"join", "splitlines", "casefold", "encode", "expandtabs", "format_map",
		"isidentifier", "isnumeric", "isprintable", "istitle", "maketrans", "translate"} {
		pyStrMethods[name] = func(string, []Value) (Value, error) {
			return Undefined(), fmt.Errorf("unsupported construct: str.%s", name)
		}
	}
}

// strRemove is str.removeprefix / str.removesuffix (name).
func strRemove(name, s string, args []Value) (Value, error) {
	if len(args) != 1 {
		return Undefined(), fmt.Errorf("%s() takes exactly one argument (%d given)", name, len(args))
	}
	if !args[0].IsString() {
		return Undefined(), fmt.Errorf("%s() argument must be str, not %s", name, pyTypeName(args[0]))
	}
	if name == "removeprefix" {
		return NewString(strings.TrimPrefix(s, args[0].AsString())), nil
	}
	return NewString(strings.TrimSuffix(s, args[0].AsString())), nil
}

func strIs(f func(rune) bool) func(string, []Value) (Value, error) {
	return func(s string, _ []Value) (Value, error) {
		if s == "" {
			return NewBool(false), nil
		}
		for _, r := range s {
			if !f(r) {
				return NewBool(false), nil
			}
		}
		return NewBool(true), nil
	}
}

// strFind is str.find / str.rfind of one string argument, in characters.
func strFind(s string, args []Value, last bool) (int, error) {
	if len(args) != 1 || !args[0].IsString() {
		return -1, fmt.Errorf("unsupported construct: str.find/index with start or end, or a non-str argument")
	}
	var i int
	if last {
		i = strings.LastIndex(s, args[0].AsString())
	} else {
		i = strings.Index(s, args[0].AsString())
	}
	if i > 0 {
		i = utf8.RuneCountInString(s[:i])
	}
	return i, nil
}

func strWidth(args []Value) (int, error) {
	if len(args) < 1 || !isIntLike(args[0]) {
		return 0, fmt.Errorf("width must be an int")
	}
	// trajcompress patch: a width past maxStrWidth is refused as over the
	// render budget (it was cut to that width silently: a text other
	// than jinja2's, whose string would be that wide).
	if w := toInt64(args[0]); w > maxStrWidth {
		return 0, fmt.Errorf("%w: a padded string of width %d is over the %d this engine makes", ErrBudget, w, maxStrWidth)
	}
	return int(toInt64(args[0])), nil
}

// maxStrWidth bounds the width of zfill, center, ljust and rjust.
const maxStrWidth = 1 << 20

// strPad is center, ljust and rjust: left is the padding on the left for
// a margin m and width w (Python's formulas).
func strPad(left func(m, w int) int) func(string, []Value) (Value, error) {
	return func(s string, args []Value) (Value, error) {
		w, err := strWidth(args)
		if err != nil {
			return Undefined(), err
		}
		fill := " "
		if len(args) > 1 {
			if !args[1].IsString() || utf8.RuneCountInString(args[1].AsString()) != 1 {
				return Undefined(), fmt.Errorf("The fill character must be exactly one character long") //nolint:staticcheck,revive // Python's message
			}
			fill = args[1].AsString()
		}
		m := w - utf8.RuneCountInString(s)
		if m <= 0 {
			return NewString(s), nil
		}
		l := left(m, w)
		return NewString(strings.Repeat(fill, l) + s + strings.Repeat(fill, m-l)), nil
	}
}

func strPartition(s string, args []Value, last bool) (Value, error) {
	if len(args) != 1 || !args[0].IsString() {
		return Undefined(), fmt.Errorf("partition takes one str argument")
	}
	sep := args[0].AsString()
	if sep == "" {
		return Undefined(), fmt.Errorf("empty separator")
	}
	i := strings.Index(s, sep)
	if last {
		i = strings.LastIndex(s, sep)
	}
	if i < 0 {
		if last {
			return newTuple([]Value{NewString(""), NewString(""), NewString(s)}), nil
		}
		return newTuple([]Value{NewString(s), NewString(""), NewString("")}), nil
	}
	return newTuple([]Value{NewString(s[:i]), NewString(sep), NewString(s[i+len(sep):])}), nil
}

// mutatingMethods are the methods of dict and list that jinja2's
// ImmutableSandboxedEnvironment (transformers') blocks.
var mutatingMethods = map[Kind]map[string]bool{
	KindDict: {"update": true, "pop": true, "popitem": true, "clear": true, "setdefault": true},
	KindList: {"append": true, "extend": true, "insert": true, "remove": true, "reverse": true, "sort": true},
}

// unsafeAttr is the sandbox's unsafe_undefined for a mutating method of a
// dict or list (d.update, l.append): an undefined value whose use raises
// "access to attribute 'update' of 'dict' object is unsafe.". The upstream
// engine let templates mutate their input.
func unsafeAttr(obj Value, name string) (Value, bool) {
	if !mutatingMethods[obj.kind][name] {
		return Value{}, false
	}
	if obj.IsList() && obj.AsList().tuple {
		return Value{}, false
	}
	return undefinedWith(fmt.Sprintf("access to attribute %s of '%s' object is unsafe.", pyStrRepr(name), pyTypeName(obj))), true
}

// evalOpt evaluates an optional expression: nil when it is absent or None.
func (e *evaluator) evalOpt(x expr) (*Value, error) {
	if x == nil {
		return nil, nil
	}
	v, err := e.evalExpr(x)
	if err != nil || v.IsNone() {
		return nil, err
	}
	return &v, nil
}

// pyDictsort is jinja2's dictsort: the (key, value) pairs sorted by the
// key (by='value': the value), strings lower-cased unless case_sensitive,
// compared as Python compares them (a str and an int raise).
func pyDictsort(args []Value, kwargs map[string]Value) (Value, error) {
	opt := func(i int, name string) Value {
		if v, ok := kwargs[name]; ok {
			return v
		}
		if len(args) > i {
			return args[i]
		}
		return Undefined()
	}
	caseSensitive := opt(1, "case_sensitive").IsTruthy()
	pos := 0
	if by := opt(2, "by"); !by.IsUndefined() {
		switch {
		case by.IsString() && by.AsString() == "key":
		case by.IsString() && by.AsString() == "value":
			pos = 1
		default:
			return Undefined(), fmt.Errorf(`You can only sort by either "key" or "value"`) //nolint:staticcheck // jinja2's message
		}
	}
	reverse := opt(3, "reverse").IsTruthy()
	d := args[0].AsDict()
	items := make([]Value, len(d.Keys))
	keys := make([]Value, len(d.Keys))
	for i, k := range d.Keys {
		items[i] = newTuple([]Value{d.KeyValue(k), d.Data[k]})
		keys[i] = sortKey(items[i].AsList().Items[pos], caseSensitive)
	}
	return pySorted(items, keys, reverse)
}

// generatorFilters are the filters jinja2 writes as generators.
var generatorFilters = map[string]bool{"map": true, "select": true, "reject": true, "selectattr": true,
	"rejectattr": true, "unique": true, "batch": true, "items": true}

// lazyResult marks the list a filter made from input as the lazy iterable
// jinja2's filter returns (List.iter): a generator, or reversed()'s
// iterator of a list, a tuple or a dict; list makes a list of one.
func lazyResult(name string, input, out Value) Value {
	in := input.IterType()
	switch {
	case generatorFilters[name]:
		return newIter(out, "generator")
	case name == "list" && out.IterType() != "":
		return NewList(out.AsList().Items)
	case name == "reverse" && in == rangeIter:
		return newIter(out, "range_iterator")
	case name != "reverse" || lazyIter(in):
		return out // reverse of a generator: jinja2 makes a list
	case isDictView(in):
		return newIter(out, "dict_reverse"+strings.TrimSuffix(strings.TrimPrefix(in, "dict_"), "s")+"iterator")
	case input.IsList() && input.AsList().tuple:
		return newIter(out, "reversed")
	case input.IsList():
		return newIter(out, "list_reverseiterator")
	case input.IsDict():
		return newIter(out, "dict_reversekeyiterator")
	}
	return out
}

// lazyInput is Python's TypeError of a filter given a lazy iterable it
// cannot take: last reverses its input, which a generator or an iterator
// cannot be.
func lazyInput(name string, input Value) error {
	if t := input.IterType(); name == "last" && lazyIter(t) {
		return fmt.Errorf("'%s' object is not reversible", t)
	}
	return nil
}

// markupEscaper is markupsafe's escape (jinja2's escape filter): &#34; and
// &#39; for the quotes.
var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

func markupEscape(s string) string { return markupEscaper.Replace(s) }

// markupAdd names the filter markupOperands puts on the plain operand of a
// + whose other operand is Markup; a template cannot name it (not an
// identifier).
const markupAdd = "+markup"

// markupOperands is jinja2's + of a Markup (what safe and escape return)
// and a str: Markup.__add__ and __radd__ escape the str, and the sum is
// Markup, so 'a'|safe + s + 'b'|safe + x|tojson escapes s and the JSON
// (Functionary v3.1 prints its tools so). The engine has no Markup value:
// an operand is Markup when it is written as a safe or escape filter or a
// + holding one; a Markup kept in a variable is a plain string here.
func markupOperands(left, right expr) (expr, expr) {
	switch l, r := isMarkupExpr(left), isMarkupExpr(right); {
	case l && !r:
		right = &filterExpr{expr: right, name: markupAdd}
	case r && !l:
		left = &filterExpr{expr: left, name: markupAdd}
	}
	return left, right
}

// isMarkupExpr reports whether x is written to give a Markup (see
// markupOperands).
func isMarkupExpr(x expr) bool {
	switch n := x.(type) {
	case *filterExpr:
		return n.name == "safe" || n.name == "e" || n.name == "escape" || n.name == markupAdd
	case *binExpr:
		return n.op == "+" && (isMarkupExpr(n.left) || isMarkupExpr(n.right))
	}
	return false
}

// filterMarkupAdd is the str operand of a Markup's +, escaped; Markup adds
// nothing else (Python's TypeError).
func filterMarkupAdd(args []Value, _ map[string]Value) (Value, error) {
	switch v := args[0]; {
	case v.IsString():
		return newMarkup(markupEscaped(v)), nil // a Markup as it is
	case v.IsUndefined():
		return Undefined(), undefinedError(v)
	default:
		return Undefined(), fmt.Errorf("unsupported operand type(s) for +: 'Markup' and '%s'", pyTypeName(v))
	}
}

// consumeIter uses up the first n items of a generator or iterator v, as
// iterating it does in Python: a second loop over the same map(...) sees
// what the first left (trajcompress patch). A list, a view: unchanged.
func consumeIter(v Value, n int) {
	if !lazyIter(v.IterType()) {
		return
	}
	l := v.AsList()
	l.Items = l.Items[min(n, len(l.Items)):]
}

// iterOrNil is the items of a list value, nil for anything else.
func iterOrNil(v Value) []Value {
	if v.IsList() {
		return v.AsList().Items
	}
	return nil
}

// pyAffix is Python's str.startswith / str.endswith (name) of s: the
// affix is a str or a tuple of strs (it was printed, so a tuple never
// matched and None matched 'None…'); start and end are refused by name.
func pyAffix(name, s string, args []Value) (Value, error) {
	switch {
	case len(args) == 0:
		return Undefined(), fmt.Errorf("%s() takes at least 1 argument (0 given)", name)
	case len(args) > 1:
		return Undefined(), fmt.Errorf("unsupported construct: str.%s with start or end", name)
	}
	affixes := []Value{args[0]}
	if args[0].IsList() && args[0].AsList().tuple {
		affixes = args[0].AsList().Items
	} else if !args[0].IsString() {
		return Undefined(), fmt.Errorf("%s first arg must be str or a tuple of str, not %s", name, pyTypeName(args[0]))
	}
	found := false
	for _, a := range affixes {
		if !a.IsString() {
			return Undefined(), fmt.Errorf("tuple for %s must only contain str, not %s", name, pyTypeName(a))
		}
		if name == "startswith" && strings.HasPrefix(s, a.AsString()) || name == "endswith" && strings.HasSuffix(s, a.AsString()) {
			found = true
		}
	}
	return NewBool(found), nil
}
