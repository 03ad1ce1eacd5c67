package jinja

// This file is not part of ardanlabs/jinja v1.8.0: it holds the render
// budget trajcompress adds (see PATCHES.md), so that no template, however
// hostile, can make a render run without end, ignore its caller's
// cancellation, or allocate the process out of memory.
//
// A render counts steps and bytes in one meter shared by every evaluator
// of the render (the template's, each macro call's, each {% set %} and
// {% call %} body's):
//
//   - a step is one node executed, one loop iteration, one call of a
//     filter, function, method or macro, plus one per KiB of string (or 64
//     items of a list or dict) a call, a comparison or `in` scans;
//   - bytes are the bytes of every string and list the render makes (a
//     list item or dict entry counting as its in-memory size), and of the
//     output, counted cumulatively, and CHECKED BEFORE the allocation: an
//     operation whose result could exceed what is left is refused without
//     being carried out ('x' * 2000000000, a string doubled in a loop,
//     a.replace('x', a), printing a list that holds itself).
//
// Every pollEvery steps the render looks at its context, so a cancelled
// caller gets the render back within a few milliseconds of work.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Limits bounds one render. A zero field is no bound.
type Limits struct {
	// Steps is the most evaluation steps the render may take.
	Steps int64
	// Bytes is the most bytes of strings, lists and output it may make.
	Bytes int64
	// Ctx, when not nil, is polled every pollEvery steps: once it is done
	// the render stops with its error (context.Canceled or
	// context.DeadlineExceeded).
	Ctx context.Context
	// Used, when not nil, is set to what the render used.
	Used *Usage
}

// Usage is what a render used of its Limits.
type Usage struct {
	Steps, Bytes int64
}

// ErrBudget is wrapped by the error of a render that went over one of its
// Limits.
var ErrBudget = errors.New("template budget")

type budgetError struct {
	steps bool
	limit int64
}

func (e *budgetError) Error() string {
	if e.steps {
		return fmt.Sprintf("template exceeded %d steps", e.limit)
	}
	return fmt.Sprintf("template output over %d bytes", e.limit)
}

func (e *budgetError) Unwrap() error { return ErrBudget }

// pollEvery is how many steps go by between two looks at the context.
const pollEvery = 1024

// Sizes in bytes of what a list item and a dict entry hold in memory.
const (
	itemBytes  = 24 // a Value: its kind and an interface
	entryBytes = 64 // a key, its Value, the map's share and the key list's
	runeBytes  = 40 // a one-rune string Value made from a string (list('…'), for c in s)
)

type meter struct {
	steps, maxSteps int64
	bytes, maxBytes int64
	nextPoll        int64
	ctx             context.Context
	done            <-chan struct{}
}

func newMeter(l Limits) *meter {
	m := &meter{maxSteps: l.Steps, maxBytes: l.Bytes}
	if m.maxSteps <= 0 {
		m.maxSteps = math.MaxInt64 - 1
	}
	m.nextPoll = min(pollEvery, m.maxSteps+1)
	if m.maxBytes <= 0 {
		m.maxBytes = math.MaxInt64
	}
	if l.Ctx != nil {
		m.ctx, m.done = l.Ctx, l.Ctx.Done()
	}
	return m
}

// step counts one step.
func (m *meter) step() error {
	m.steps++
	if m.steps < m.nextPoll {
		return nil
	}
	return m.overSteps()
}

// stepN counts n steps (n >= 0).
func (m *meter) stepN(n int64) error {
	m.steps = addSat(m.steps, n)
	if m.steps < m.nextPoll {
		return nil
	}
	return m.overSteps()
}

// overSteps is step's slow path: the context polled, the budget checked.
func (m *meter) overSteps() error {
	m.nextPoll = addSat(m.steps, pollEvery)
	if m.steps > m.maxSteps {
		return &budgetError{steps: true, limit: m.maxSteps}
	}
	if m.nextPoll > m.maxSteps {
		m.nextPoll = m.maxSteps + 1
	}
	if m.done != nil {
		select {
		case <-m.done:
			return m.ctx.Err()
		default:
		}
	}
	return nil
}

// room reports whether n more bytes fit, without counting them.
func (m *meter) room(n int64) error {
	if n < 0 || n > m.maxBytes-m.bytes {
		return &budgetError{limit: m.maxBytes}
	}
	return nil
}

// alloc counts n bytes about to be made; over the budget, nothing is
// counted and the error says so.
func (m *meter) alloc(n int64) error {
	if err := m.room(n); err != nil {
		return err
	}
	m.bytes += n
	return nil
}

// left is how many bytes may still be made.
func (m *meter) left() int64 { return m.maxBytes - m.bytes }

// addSat and mulSat are + and * of non-negative int64s, saturating at
// math.MaxInt64.
func addSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// shallow is the size of what making v took, its items not counted: a
// string's bytes, a list's items, a dict's entries.
func shallow(v Value) int64 {
	switch v.kind {
	case KindString:
		return int64(len(v.AsString()))
	case KindList:
		return int64(len(v.v.(*List).Items)) * itemBytes
	case KindDict:
		return int64(len(v.v.(*Dict).Keys)) * entryBytes
	}
	return 0
}

// scanSteps is the steps of scanning v once: one per KiB of a string, one
// per 64 items of a list or dict.
func scanSteps(v Value) int64 {
	switch v.kind {
	case KindString:
		return int64(len(v.AsString()) >> 10)
	case KindList:
		return int64(len(v.v.(*List).Items) >> 6)
	case KindDict:
		return int64(len(v.v.(*Dict).Keys) >> 6)
	}
	return 0
}

// printedSize bounds the length of v printed (printValue) or written as
// JSON with indent (a string or a width; none for 0) at depth: a string
// counts six bytes a byte (\u0001 in JSON), every nested value its
// separators and indentation. It stops as soon as the bound passes limit
// (so a list that holds itself ends), returning a number over it.
func printedSize(v Value, indent, depth, limit int64) int64 {
	if limit < 0 || depth > maxPrintDepth {
		return max(limit, 0) + 1
	}
	var n int64
	pad := mulSat(indent, depth+1) + 1 // newline and indentation before an item
	switch v.kind {
	case KindString:
		return mulSat(int64(len(v.AsString())), 6) + 2
	case KindList:
		n = 2
		for _, it := range v.v.(*List).Items {
			n = addSat(n, pad+2)
			n = addSat(n, printedSize(it, indent, depth+1, limit-n))
			if n > limit {
				return n
			}
		}
		return n
	case KindDict:
		d := v.v.(*Dict)
		n = 2
		for _, k := range d.Keys {
			n = addSat(n, addSat(pad+6, mulSat(int64(len(k)), 6)))
			n = addSat(n, printedSize(d.Data[k], indent, depth+1, limit-n))
			if n > limit {
				return n
			}
		}
		return n
	}
	return 32 // a number, a bool, None, a callable's repr
}

// maxPrintDepth is how deep printedSize follows nested lists and dicts:
// deeper is taken as over any budget (Python's json.dumps and repr raise
// RecursionError near 1000 levels too).
const maxPrintDepth = 1000

// printSize is printedSize for printValue: no indentation.
func (m *meter) printSize(v Value) int64 {
	if v.kind == KindString {
		return int64(len(v.AsString()))
	}
	return printedSize(v, 0, 0, m.left())
}

// intArg is v as a non-negative count: an int (or a float) clamped at 0,
// a string's length (Python's indent and width may be strings); 0 for
// anything else.
func intArg(v Value) int64 {
	switch v.kind {
	case KindInt:
		return max(v.v.(int64), 0)
	case KindFloat:
		f := v.v.(float64)
		if f >= math.MaxInt64 {
			return math.MaxInt64
		}
		return max(int64(f), 0)
	case KindString:
		return int64(len(v.AsString()))
	}
	return 0
}

// numArg is v when it is a number (a width, a count), else 0: the
// multiplier of an unknown filter's bound. A string argument is counted
// in the size, not as a number (counted as its length, `x|string` of a
// 20 KB message was bounded by 20 KB times its printed size: a real
// template refused).
func numArg(v Value) int64 {
	if v.kind == KindInt || v.kind == KindFloat {
		return intArg(v)
	}
	return 0
}

// stringArg is v's text when it is a string, else "".
func stringArg(v Value) string {
	if v.kind == KindString {
		return v.AsString()
	}
	return ""
}

// What budget.go knows of a callable, by its name (callClasses).
const (
	// constCall: takes about the same time whatever the size of its
	// arguments (no steps are counted for scanning them).
	constCall = 1 << iota
	// cheapCall: makes nothing bigger than a shallow copy of its input
	// (or a scalar), or at most three times its bytes (Python's full case
	// mappings: 'ΐ'.upper() is three characters): no size is checked
	// before it (its result is counted after).
	cheapCall
	// refCall: returns (a part of) a value that exists already: its
	// result is not counted as made.
	refCall
)

// callClasses classes the builtin filters, functions and methods; a name
// it does not hold (a macro, a filter budget.go has no rule for) is 0.
var callClasses = map[string]uint8{
	"length": constCall | cheapCall, "count": constCall | cheapCall,
	"first": constCall | cheapCall | refCall, "last": constCall | cheapCall | refCall,
	"default": constCall | cheapCall | refCall, "d": constCall | cheapCall | refCall,
	"safe": constCall | cheapCall | refCall, "int": constCall | cheapCall, "float": constCall | cheapCall,
	"abs": constCall | cheapCall, "round": constCall | cheapCall,
	"namespace": constCall | cheapCall, "raise_exception": constCall | cheapCall,
	"strftime_now": constCall | cheapCall, "joiner": constCall | cheapCall, "cycler": constCall | cheapCall,
	"dict": constCall | cheapCall, "loop.cycle": constCall | cheapCall | refCall, "caller": constCall | cheapCall,
	"list.append": constCall, "list.insert": constCall,
	"dict.get": constCall | cheapCall | refCall,
	"trim":     cheapCall | refCall, "select": cheapCall, "reject": cheapCall, "selectattr": cheapCall,
	"rejectattr": cheapCall, "items": cheapCall, "dictsort": cheapCall, "max": cheapCall | refCall,
	"min": cheapCall | refCall, "wordcount": cheapCall, "reverse": cheapCall,
	"sort": cheapCall, "unique": cheapCall, "lower": cheapCall, "upper": cheapCall, "title": cheapCall,
	"capitalize": cheapCall, "escape": cheapCall, "e": cheapCall, "range": cheapCall,
	"from_json": cheapCall, "fromjson": cheapCall,
	"str.strip": cheapCall | refCall, "str.lstrip": cheapCall | refCall, "str.rstrip": cheapCall | refCall,
	"str.startswith": cheapCall, "str.endswith": cheapCall, "str.upper": cheapCall, "str.lower": cheapCall,
	"str.title": cheapCall, "str.capitalize": cheapCall, "str.count": cheapCall, "str.find": cheapCall,
	"str.isdigit": cheapCall, "dict.items": cheapCall, "dict.keys": cheapCall, "dict.values": cheapCall,
	"dict.pop": cheapCall | refCall, "list.pop": cheapCall | refCall, "list.index": cheapCall,
}

// guard checks, before a filter or callable named name runs on args and
// kwargs, that what it may make fits the bytes left, and counts the steps
// of the data it scans. A macro (a call, not a filter: filter false) and
// a name this file does not know, called as a function, are not checked
// (what a macro makes is counted as its body makes it); a filter this
// file does not know is bounded by its arguments' printed size times
// (1 + its numbers).
func (m *meter) guard(name string, class uint8, filter bool, args []Value, kwargs map[string]Value) error {
	var work int64
	if filter && class&constCall == 0 {
		for _, a := range args {
			work = addSat(work, scanSteps(a))
		}
	}
	if err := m.stepN(1 + work); err != nil {
		return err
	}
	if class&cheapCall != 0 {
		return nil
	}
	left := m.left()
	var need int64
	switch name {
	case "join":
		if len(args) == 0 {
			return nil
		}
		need = printedSize(args[0], 0, 0, left)
		sep := int64(0)
		if len(args) > 1 {
			sep = m.printSize(args[1])
		}
		if s, ok := kwargs["d"]; ok {
			sep = m.printSize(s)
		}
		// A separator between every two items: a list's items, a string's
		// characters, a dict's keys.
		var items int64
		switch args[0].kind {
		case KindList:
			items = int64(len(args[0].v.(*List).Items))
		case KindString:
			items = int64(utf8.RuneCountInString(args[0].AsString()))
		case KindDict:
			items = int64(len(args[0].v.(*Dict).Keys))
		}
		need = addSat(need, mulSat(sep, items))
	case "sum":
		// Python's sum adds one item at a time, so summing lists (or
		// strings, which jinja2's sum refuses) copies the running total
		// each time: n items make about n/2 times their total size.
		if len(args) == 0 || args[0].kind != KindList {
			return nil
		}
		items := args[0].v.(*List).Items
		var total int64
		for _, it := range items {
			total = addSat(total, shallow(it))
		}
		need = mulSat(total, int64(len(items)+1)/2+1)
	case "tojson":
		if len(args) == 0 {
			return nil
		}
		var indent int64
		for _, a := range args[1:] {
			indent = max(indent, intArg(a))
		}
		for _, a := range kwargs {
			indent = max(indent, intArg(a))
		}
		need = printedSize(args[0], indent, 0, left)
	case "indent":
		if len(args) == 0 {
			return nil
		}
		s := stringArg(args[0])
		width := int64(4)
		if len(args) > 1 {
			width = intArg(args[1])
		}
		if w, ok := kwargs["width"]; ok {
			width = intArg(w)
		}
		need = addSat(m.printSize(args[0]), mulSat(width, int64(strings.Count(s, "\n"))+1))
	case "replace":
		if len(args) < 3 {
			return nil
		}
		count := int64(-1)
		if len(args) > 3 && args[3].kind == KindInt {
			count = args[3].AsInt()
		}
		need = m.replaceNeed(stringArg(args[0]), stringArg(args[1]), args[2], count)
	case "list":
		if len(args) > 0 {
			need = addSat(mulSat(int64(len(stringArg(args[0]))), runeBytes), shallow(args[0]))
		}
	case "format":
		if len(args) > 0 {
			need = m.formatNeed(stringArg(args[0]), args[1:], kwargs)
		}
	case "string":
		// trajcompress patch: the value printed (the rule for a filter this
		// file does not know took a number's value as a size: 1700000000000|string
		// was over any budget)
		if len(args) > 0 {
			need = printedSize(args[0], 0, 0, left)
		}
	case "list.append", "list.insert":
		need = itemBytes
	case "dict.update":
		if len(args) > 0 {
			need = shallow(args[0])
		}
	default:
		if !filter {
			return nil
		}
		var size, nums int64
		for _, a := range args {
			size = addSat(size, printedSize(a, 0, 0, left))
			nums = addSat(nums, numArg(a))
		}
		for _, a := range kwargs {
			size = addSat(size, printedSize(a, 0, 0, left))
			nums = addSat(nums, numArg(a))
		}
		need = addSat(mulSat(size, addSat(nums, 1)), nums)
	}
	if err := m.room(need); err != nil {
		return err
	}
	return m.stepN(need >> 10)
}

// replaceNeed bounds the length of s.replace(old, repl, count) (count < 0:
// all).
func (m *meter) replaceNeed(s, old string, repl Value, count int64) int64 {
	n := int64(len(s)) + 1 // '' is found between every two characters
	if old != "" {
		n = int64(strings.Count(s, old))
	}
	if count >= 0 {
		n = min(n, count)
	}
	return addSat(int64(len(s)), mulSat(n, m.printSize(repl)))
}

// formatNeed bounds the length of f formatted with args and kwargs
// (Python's '%s' % x, format filter, str.format): every number in f may be
// a width ('%-10000000000s', '{:>10000000000}'), and each placeholder may
// print the largest argument ('{0}{0}{0}…').
func (m *meter) formatNeed(f string, args []Value, kwargs map[string]Value) int64 {
	need := addSat(int64(len(f)), numbersIn(f))
	var most int64
	add := func(a Value) {
		sz := m.printSize(a)
		most = max(most, sz)
		need = addSat(need, sz)
	}
	for _, a := range args {
		add(a)
	}
	for _, a := range kwargs {
		add(a)
	}
	return addSat(need, mulSat(int64(strings.Count(f, "{")+strings.Count(f, "%")), most))
}

// numbersIn is the sum of the decimal numbers written in s (saturating).
func numbersIn(s string) int64 {
	var sum, n int64
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			n = addSat(mulSat(n, 10), int64(s[i]-'0'))
			continue
		}
		sum, n = addSat(sum, n), 0
	}
	return sum
}

// write writes s to the output, counted first.
func (e *evaluator) write(s string) error {
	if err := e.m.alloc(int64(len(s))); err != nil {
		return err
	}
	e.output.WriteString(s)
	return nil
}

// print writes v as the template prints it, its size checked before it
// is printed (a list holding itself, or a short list holding one long
// string many times, prints long).
func (e *evaluator) print(v Value) error {
	if v.kind == KindString {
		return e.write(v.AsString())
	}
	if err := e.m.room(mulSat(e.m.printSize(v), 2)); err != nil { // printValue's string, then the output's copy
		return err
	}
	return e.write(printValue(v))
}

// call calls c (a filter when filter is set) within the render's budget:
// guard before, what it made counted after.
func (e *evaluator) call(c *Callable, filter bool, args []Value, kwargs map[string]Value) (Value, error) {
	class := callClasses[c.Name]
	if err := e.m.guard(c.Name, class, filter, args, kwargs); err != nil {
		return Undefined(), err
	}
	v, err := c.Fn(args, kwargs)
	if err != nil || class&refCall != 0 {
		return v, err
	}
	if err := e.m.alloc(shallow(v)); err != nil {
		return Undefined(), err
	}
	return v, nil
}

// binaryBudget checks, before op is applied to a and b, that what it
// makes fits (+ and ~ of strings and lists, a string or list repeated, a
// string formatted with %), and counts the steps of what `in` and the
// comparisons scan.
func (e *evaluator) binaryBudget(op string, a, b Value) error {
	switch op {
	case "+":
		if (a.kind == KindString && b.kind == KindString) || (a.kind == KindList && b.kind == KindList) {
			return e.m.alloc(addSat(shallow(a), shallow(b)))
		}
	case "~":
		return e.m.alloc(addSat(e.m.printSize(a), e.m.printSize(b)))
	case "*":
		n, x := b, a
		if a.kind == KindInt || a.kind == KindBool {
			n, x = a, b
		}
		if (n.kind == KindInt || n.kind == KindBool) && (x.kind == KindString || x.kind == KindList) {
			return e.m.alloc(mulSat(shallow(x), max(toInt64(n), 0)))
		}
	case "%":
		if a.kind == KindString {
			args := []Value{b}
			if b.kind == KindList {
				args = b.v.(*List).Items
			}
			return e.m.room(e.m.formatNeed(a.AsString(), args, nil))
		}
	case "in", "not in", "==", "!=", "<", ">", "<=", ">=":
		return e.m.stepN(addSat(scanSteps(a), scanSteps(b)))
	}
	return nil
}

// joinedLen is the length of the strings of parts joined.
func joinedLen(parts []string) int64 {
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	return n
}
