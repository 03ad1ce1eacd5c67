package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

// =============================================================================
// Scope
// =============================================================================

type scope struct {
	vars   map[string]Value
	parent *scope
}

func newScope(parent *scope) *scope {
	return &scope{vars: make(map[string]Value, 4), parent: parent}
}

func (s *scope) get(name string) (Value, bool) {
	if v, ok := s.vars[name]; ok {
		return v, true
	}
	if s.parent != nil {
		return s.parent.get(name)
	}
	return Undefined(), false
}

func (s *scope) set(name string, val Value) {
	s.vars[name] = val
}

// =============================================================================
// Evaluator
// =============================================================================

type evaluator struct {
	scope    *scope
	builtins *scope
	output   strings.Builder
	m        *meter // trajcompress patch: the render's budget, shared by its evaluators
}

func (e *evaluator) execNodes(nodes []node) error {
	for _, n := range nodes {
		if err := e.execNode(n); err != nil {
			return err
		}
	}
	return nil
}

func (e *evaluator) execNode(n node) error {
	if err := e.m.step(); err != nil { // trajcompress patch: the render budget
		return err
	}
	switch nd := n.(type) {
	case *textNode:
		return e.write(nd.text)

	case *outputNode:
		// trajcompress patch: a printed chain of + writes its string
		// operands straight to the output (see addChain).
		if b, ok := nd.expression.(*binExpr); ok && b.op == "+" {
			var buf [8]string
			parts, val, err := e.addChain(b, buf[:0])
			if err != nil {
				return err
			}
			if parts == nil {
				return e.print(val)
			}
			for _, s := range parts {
				if err := e.write(s); err != nil {
					return err
				}
			}
			return nil
		}
		val, err := e.evalExpr(nd.expression)
		if err != nil {
			return err
		}
		if t := val.IterType(); lazyIter(t) { // trajcompress patch
			return fmt.Errorf("unsupported construct: printing a %s (Python prints its address)", t)
		}
		return e.print(val)

	case *ifNode:
		return e.execIf(nd)

	case *forNode:
		return e.execFor(nd)

	case *setNode:
		return e.execSet(nd)

	case *setBlockNode:
		return e.execSetBlock(nd)

	case *macroNode:
		return e.execMacro(nd)

	case *callNode:
		return e.execCall(nd)

	case *filterBlockNode:
		return e.execFilterBlock(nd)

	case *breakNode:
		return errBreak

	case *continueNode:
		return errContinue

	default:
		return fmt.Errorf("unknown node type %T", n)
	}
}

func (e *evaluator) execIf(n *ifNode) error {
	for _, branch := range n.branches {
		if branch.condition == nil {
			// else branch
			return e.execNodes(branch.body)
		}
		cond, err := e.evalExpr(branch.condition)
		if err != nil {
			return err
		}
		if cond.IsTruthy() {
			return e.execNodes(branch.body)
		}
	}
	return nil
}

func (e *evaluator) execFor(n *forNode) error {
	iterVal, err := e.evalExpr(n.iter)
	if err != nil {
		return err
	}

	// trajcompress patch: None or a number raises Python's TypeError
	// (it iterated as empty). The strings a dict's keys or a string's
	// characters become are counted before they are made (render budget).
	switch {
	case iterVal.IsDict():
		if err := e.m.alloc(int64(iterVal.AsDict().Len()) * runeBytes); err != nil { // trajcompress patch
			return err
		}
	case iterVal.IsString():
		if err := e.m.alloc(int64(len(iterVal.AsString())) * runeBytes); err != nil { // trajcompress patch
			return err
		}
	}
	items, err := iterItems(iterVal)
	if err != nil {
		return err
	}
	gen := newGenPull(iterVal, len(items)) // trajcompress patch: a generator is pulled as Python's for does

	// Apply filter if present.
	if n.filterExpr != nil {
		var filtered []Value
		var src []int
		for j, item := range items {
			if err := e.m.step(); err != nil { // trajcompress patch
				return err
			}
			child := newScope(e.scope)
			child.set(n.valVar, item)
			old := e.scope
			e.scope = child
			fv, err := e.evalExpr(n.filterExpr)
			e.scope = old
			if err != nil {
				return err
			}
			if fv.IsTruthy() {
				filtered = append(filtered, item)
				if gen != nil {
					src = append(src, j)
				}
			}
		}
		items = filtered
		if gen != nil {
			gen.src = src
		}
	}

	if len(items) == 0 {
		if err := gen.done(false); err != nil { // trajcompress patch
			return err
		}
		if n.elseBody != nil {
			return e.execNodes(n.elseBody)
		}
		return nil
	}

	total := int64(len(items))

	// Pre-allocate the loop dict and child scope once, then reuse them
	// across iterations to avoid per-iteration allocations.
	loop := NewDict()
	ld := loop.AsDict()
	ld.Set("length", NewInt(total))

	child := newScope(e.scope)
	child.set("loop", loop)
	var cycleIdx int64
	ld.Data["cycle"] = NewCallable("loop.cycle", func(args []Value, kwargs map[string]Value) (Value, error) {
		if len(args) == 0 {
			return Undefined(), nil
		}
		return args[int(cycleIdx)%len(args)], nil
	})
	// trajcompress patch: jinja2's loop.changed(*values), true when the
	// values differ (Python's ==) from the last call's, and loop.depth /
	// depth0 of a loop that is not recursive (they were undefined).
	ld.Data["depth"], ld.Data["depth0"] = NewInt(1), NewInt(0)
	var lastChanged *Value
	var cur int // trajcompress patch: the item the body runs for
	if gen != nil {
		ld.onGet = func(key string) { gen.read(key, cur, len(items)) }
	}
	ld.Data["changed"] = NewCallable("loop.changed", func(args []Value, kwargs map[string]Value) (Value, error) {
		v := newTuple(append([]Value(nil), args...))
		if lastChanged != nil && valuesEqual(v, *lastChanged) {
			return NewBool(false), nil
		}
		lastChanged = &v
		return NewBool(true), nil
	})

	for i, item := range items {
		// trajcompress patch: what the body set lasts one iteration, as
		// in jinja2 (each iteration reads the outer value again).
		if len(child.vars) > 2+min(len(n.keyVar), 1) {
			clearLoopScope(child, n.keyVar, n.valVar)
		}
		// Set loop variable(s).
		if n.keyVar != "" {
			// Destructuring: for key, val in items
			if item.IsList() && item.AsList().Len() >= 2 {
				child.set(n.keyVar, item.AsList().Get(0))
				child.set(n.valVar, item.AsList().Get(1))
			} else {
				child.set(n.keyVar, NewInt(int64(i)))
				child.set(n.valVar, item)
			}
		} else {
			child.set(n.valVar, item)
		}

		// Update loop object for this iteration.
		idx := int64(i)
		ld.Data["index"] = NewInt(idx + 1)
		ld.Data["index0"] = NewInt(idx)
		ld.Data["revindex"] = NewInt(total - idx)
		ld.Data["revindex0"] = NewInt(total - idx - 1)
		ld.Data["first"] = NewBool(i == 0)
		ld.Data["last"] = NewBool(i == len(items)-1)

		if i > 0 {
			ld.Data["previtem"] = items[i-1]
		} else {
			ld.Data["previtem"] = Undefined()
		}
		if i < len(items)-1 {
			ld.Data["nextitem"] = items[i+1]
		} else {
			ld.Data["nextitem"] = Undefined()
		}

		// trajcompress patch: one loop.cycle per loop, reading the current
		// index (as jinja2's, bound to the loop), not a closure made per
		// iteration.
		cycleIdx = idx
		if err := e.m.step(); err != nil { // trajcompress patch: the render budget
			return err
		}
		cur = i
		if err := gen.item(i); err != nil { // trajcompress patch
			return err
		}

		old := e.scope
		e.scope = child

		err := e.execNodes(n.body)
		e.scope = old

		if err != nil {
			if errors.Is(err, errBreak) {
				return gen.done(true) // trajcompress patch
			}
			if errors.Is(err, errContinue) {
				continue
			}
			return err
		}
	}

	return gen.done(false) // trajcompress patch
}

func (e *evaluator) execSet(n *setNode) error {
	val, err := e.evalExpr(n.value)
	if err != nil {
		return err
	}

	if n.namespace != "" {
		nsVal, ok := e.scope.get(n.namespace)
		if !ok || !nsVal.IsDict() {
			return fmt.Errorf("set: namespace %q not found or not a dict", n.namespace)
		}
		nsVal.AsDict().Set(n.target, val)
		return nil
	}

	e.scope.set(n.target, val)
	return nil
}

func (e *evaluator) execSetBlock(n *setBlockNode) error {
	bodyEval := evaluator{
		scope:    e.scope,
		builtins: e.builtins,
		m:        e.m,
	}
	if err := bodyEval.execNodes(n.body); err != nil {
		return err
	}
	e.scope.set(n.target, NewString(bodyEval.output.String()))
	return nil
}

func (e *evaluator) execMacro(n *macroNode) error {
	// Capture the macro body and params.
	params := n.params
	body := n.body
	parentScope := e.scope

	depth := 0 // trajcompress patch: calls under way, for maxMacroDepth
	fn := NewCallable(n.name, func(args []Value, kwargs map[string]Value) (Value, error) {
		if depth >= maxMacroDepth {
			return Undefined(), errRecursion
		}
		depth++
		defer func() { depth-- }()
		child := newScope(parentScope)

		// Bind positional args.
		for i, param := range params {
			if i < len(args) {
				child.set(param.name, args[i])
			} else if v, ok := kwargs[param.name]; ok {
				child.set(param.name, v)
			} else if param.defaultVal != nil {
				defEval := evaluator{scope: child, builtins: e.builtins, m: e.m}
				defVal, err := defEval.evalExpr(param.defaultVal)
				if err != nil {
					return Undefined(), err
				}
				child.set(param.name, defVal)
			} else {
				child.set(param.name, Undefined())
			}
		}

		// Set caller if available.
		if caller, ok := kwargs["caller"]; ok {
			child.set("caller", caller)
		}

		macroEval := evaluator{
			scope:    child,
			builtins: e.builtins,
			m:        e.m,
		}

		if err := macroEval.execNodes(body); err != nil {
			return Undefined(), err
		}

		return NewString(macroEval.output.String()), nil
	})

	e.scope.set(n.name, fn)
	return nil
}

func (e *evaluator) execCall(n *callNode) error {
	// Create a caller callable that renders the body.
	callerArgs := n.callerArgs
	body := n.body
	parentScope := e.scope

	caller := NewCallable("caller", func(args []Value, kwargs map[string]Value) (Value, error) {
		child := newScope(parentScope)
		for i, argName := range callerArgs {
			if i < len(args) {
				child.set(argName, args[i])
			}
		}

		callerEval := evaluator{
			scope:    child,
			builtins: e.builtins,
			m:        e.m,
		}
		if err := callerEval.execNodes(body); err != nil {
			return Undefined(), err
		}
		return NewString(callerEval.output.String()), nil
	})

	// Evaluate the call expression with caller in kwargs.
	callEx, ok := n.expr.(*callExpr)
	if ok {
		fn, err := e.evalExpr(callEx.fn)
		if err != nil {
			return err
		}
		if !fn.IsCallable() {
			return fmt.Errorf("call: expression is not callable")
		}

		var args []Value
		for _, a := range callEx.args {
			av, err := e.evalExpr(a)
			if err != nil {
				return err
			}
			args = append(args, av)
		}

		kwargs := map[string]Value{"caller": caller}
		for _, kw := range callEx.kwargs {
			v, err := e.evalExpr(kw.value)
			if err != nil {
				return err
			}
			kwargs[kw.name] = v
		}

		result, err := e.call(fn.AsCallable(), false, args, kwargs)
		if err != nil {
			return err
		}
		return e.print(result)
	}

	// Fallback: evaluate expression and call with caller.
	fn, err := e.evalExpr(n.expr)
	if err != nil {
		return err
	}
	if !fn.IsCallable() {
		return fmt.Errorf("call: expression is not callable")
	}

	result, err := e.call(fn.AsCallable(), false, nil, map[string]Value{"caller": caller})
	if err != nil {
		return err
	}
	return e.print(result)
}

func (e *evaluator) execFilterBlock(n *filterBlockNode) error {
	// Render body to string.
	bodyEval := evaluator{
		scope:    e.scope,
		builtins: e.builtins,
		m:        e.m,
	}
	if err := bodyEval.execNodes(n.body); err != nil {
		return err
	}
	bodyStr := bodyEval.output.String()

	// Apply the filter. The filter expression should be a name or filter chain.
	if fe, ok := n.filter.(*nameExpr); ok {
		filterVal, ok := lookupFilter(e.builtins, fe.name)
		if !ok {
			return fmt.Errorf("unknown filter %q", fe.name)
		}
		result, err := e.call(filterVal.AsCallable(), true, []Value{NewString(bodyStr)}, nil)
		if err != nil {
			return err
		}
		return e.print(result)
	}

	// For more complex filter expressions, just output the body.
	return e.write(bodyStr)
}

// =============================================================================
// Expression evaluation
// =============================================================================

func (e *evaluator) evalExpr(ex expr) (Value, error) {
	switch n := ex.(type) {
	case *litExpr:
		return n.val, nil

	case *starExpr: // trajcompress patch: *xs where only a call takes it
		return Undefined(), fmt.Errorf("unsupported construct: *args unpacking outside a call")

	case *nameExpr:
		v, ok := e.scope.get(n.name)
		if !ok {
			// trajcompress patch: jinja2's hint for an undefined name.
			return undefinedWith(fmt.Sprintf("'%s' is undefined", n.name)), nil
		}
		return v, nil

	case *attrExpr:
		return e.evalAttr(n)

	case *itemExpr:
		return e.evalItem(n)

	case *sliceExpr:
		return e.evalSlice(n)

	case *unaryExpr:
		return e.evalUnary(n)

	case *binExpr:
		return e.evalBinary(n)

	case *condExpr:
		return e.evalCond(n)

	case *callExpr:
		return e.evalCallExpr(n)

	case *filterExpr:
		return e.evalFilter(n)

	case *testExpr:
		return e.evalTestExpr(n)

	case *listExpr:
		if err := e.m.alloc(int64(len(n.items)) * itemBytes); err != nil { // trajcompress patch
			return Undefined(), err
		}
		items := make([]Value, len(n.items))
		for i, item := range n.items {
			v, err := e.evalExpr(item)
			if err != nil {
				return Undefined(), err
			}
			items[i] = v
		}
		if n.tuple {
			return newTuple(items), nil
		}
		return NewList(items), nil

	case *dictExpr:
		if err := e.m.alloc(int64(len(n.pairs)) * entryBytes); err != nil { // trajcompress patch
			return Undefined(), err
		}
		d := NewDict()
		dict := d.AsDict()
		for _, pair := range n.pairs {
			key, err := e.evalExpr(pair.key)
			if err != nil {
				return Undefined(), err
			}
			val, err := e.evalExpr(pair.value)
			if err != nil {
				return Undefined(), err
			}
			if err := dict.setKey(key, val); err != nil { // trajcompress patch: keys of any kind
				return Undefined(), err
			}
		}
		return d, nil

	default:
		return Undefined(), fmt.Errorf("unknown expression type %T", ex)
	}
}

func (e *evaluator) evalAttr(n *attrExpr) (Value, error) {
	obj, err := e.evalExpr(n.obj)
	if err != nil {
		return Undefined(), err
	}

	// trajcompress patch: an attribute of an undefined value raises, as
	// jinja2's Undefined does; a missing one is undefined with jinja2's hint.
	if obj.IsUndefined() {
		return Undefined(), undefinedError(obj)
	}

	// trajcompress patch: the sandbox's mutating methods are unsafe.
	if u, ok := unsafeAttr(obj, n.attr); ok {
		return u, nil
	}

	// Dict attribute access.
	if obj.IsDict() {
		// trajcompress patch: as jinja2's getattr, a.b is Python's
		// attribute first, so a read-only dict method wins over a key of
		// the same name (tool.parameters.properties.items() with a
		// parameter named "items"); a[b] is the key first.
		switch n.attr {
		case "items", "keys", "values", "get":
			return e.dictMethod(obj, n.attr)
		}
		if v, ok := obj.AsDict().Get(n.attr); ok {
			return v, nil
		}

		// Dict methods.
		return orMissing(e.dictMethod(obj, n.attr))(obj, n.attr)
	}

	return e.seqAttr(obj, n.attr)
}

// seqAttr is the attribute name of a string or list: its method, or
// undefined with jinja2's hint (trajcompress patch: also what s['name']
// falls back to, as jinja2's getitem does).
func (e *evaluator) seqAttr(obj Value, name string) (Value, error) {
	if isMarkup(obj) { // trajcompress patch: a Markup's methods (markup.go)
		return e.markupMethod(obj, name)
	}
	if t := obj.IterType(); t != "" && (t != rangeIter || name != "count" && name != "index") {
		// trajcompress patch: a generator, an iterator or a dict view has
		// none of a list's methods, a range only count and index.
		return undefinedWith(fmt.Sprintf("'%s object' has no attribute %s", t, pyStrRepr(name))), nil
	}
	if u, ok := unsafeAttr(obj, name); ok { // the sandbox's mutating methods
		return u, nil
	}
	// String methods.
	if obj.IsString() {
		// trajcompress patch: a method of a string scans it (find, count,
		// split, …), so taking one counts the string's steps.
		if err := e.m.stepN(scanSteps(obj)); err != nil {
			return Undefined(), err
		}
		return orMissing(e.stringMethod(obj, name))(obj, name)
	}

	// List methods.
	if obj.IsList() {
		return orMissing(e.listMethod(obj, name))(obj, name)
	}

	return missingAttr(obj, name), nil
}

// orMissing turns the undefined result of a method lookup into the
// undefined value of a missing attribute, with its hint (trajcompress patch).
func orMissing(v Value, err error) func(Value, string) (Value, error) {
	return func(obj Value, name string) (Value, error) {
		if err == nil && v.IsUndefined() {
			return missingAttr(obj, name), nil
		}
		return v, err
	}
}

func (e *evaluator) evalItem(n *itemExpr) (Value, error) {
	obj, err := e.evalExpr(n.obj)
	if err != nil {
		return Undefined(), err
	}

	key, err := e.evalExpr(n.key)
	if err != nil {
		return Undefined(), err
	}
	if isMarkup(obj) { // trajcompress patch: an item of a Markup (markup.go)
		return e.markupItem(obj, key)
	}

	// trajcompress patch: an item of an undefined value raises (jinja2).
	if obj.IsUndefined() {
		return Undefined(), undefinedError(obj)
	}
	if obj.IsDict() {
		if _, ok := dictGet(obj.AsDict(), key); !ok { // trajcompress patch: keys of any kind
			// trajcompress patch: jinja2's getitem falls back to the
			// attribute: d['items'] without the key is the method.
			if k := printValue(key); key.IsString() && (k == "items" || k == "keys" || k == "values" || k == "get") {
				return e.dictMethod(obj, k)
			}
			if u, ok := unsafeAttr(obj, printValue(key)); ok && key.IsString() {
				return u, nil
			}
			return missingAttr(obj, printValue(key)), nil
		}
	}

	// trajcompress patch: a list or string indexed by anything but an
	// int is undefined (jinja2's getitem falls back to the attribute); it
	// took toInt64 of the key, so 'abc'['text'] was 'a'.
	if t := obj.IterType(); t != "" && t != rangeIter { // trajcompress patch: a lazy iterable has no items by index
		return undefinedWith(fmt.Sprintf("'%s object' has no attribute %s", obj.IterType(), printValue(key))), nil
	}
	if (obj.IsList() || obj.IsString()) && !isIntLike(key) {
		if key.IsString() {
			return e.seqAttr(obj, key.AsString()) // trajcompress patch: 'abc'['upper'] is the method
		}
		return undefinedWith(fmt.Sprintf("'%s object' has no element %s", pyTypeName(obj), printValue(key))), nil
	}
	if obj.IsList() {
		idx := int(toInt64(key))
		list := obj.AsList()
		if idx < 0 {
			idx += list.Len()
		}
		if idx < 0 || idx >= list.Len() {
			return Undefined(), nil
		}
		return list.Get(idx), nil
	}

	if obj.IsDict() {
		if v, ok := dictGet(obj.AsDict(), key); ok { // trajcompress patch: keys of any kind
			return v, nil
		}
		return Undefined(), nil
	}

	if obj.IsString() {
		idx := int(toInt64(key))
		s := obj.AsString()
		if err := e.m.alloc(int64(len(s)) * 4); err != nil { // trajcompress patch: the runes
			return Undefined(), err
		}
		runes := []rune(s)
		if idx < 0 {
			idx += len(runes)
		}
		if idx < 0 || idx >= len(runes) {
			return Undefined(), nil
		}
		return NewString(string(runes[idx])), nil
	}

	return Undefined(), nil
}

func (e *evaluator) evalSlice(n *sliceExpr) (Value, error) {
	obj, err := e.evalExpr(n.obj)
	if err != nil {
		return Undefined(), err
	}
	if obj.IsUndefined() { // trajcompress patch: slicing undefined raises (jinja2)
		return Undefined(), undefinedError(obj)
	}
	if err := e.checkSliceIndices(n); err != nil {
		return Undefined(), err
	}
	if !obj.IsList() && !obj.IsString() { // trajcompress patch: Python's TypeError
		if obj.IsDict() {
			return Undefined(), fmt.Errorf("unhashable type: 'slice'")
		}
		return Undefined(), fmt.Errorf("'%s' object is not subscriptable", pyTypeName(obj))
	}

	if isRange(obj) { // trajcompress patch: a range's slice is a range
		return e.rangeSlice(n, obj.AsList())
	}
	if isMarkup(obj) { // trajcompress patch: a slice of a Markup is one (markup.go)
		v, err := e.evalSlice(&sliceExpr{obj: &litExpr{val: plainOf(obj)}, start: n.start, stop: n.stop, step: n.step})
		return markupFilterResult("", obj, v), err
	}
	if obj.IsList() {
		list := obj.AsList()
		length := list.Len()
		start, stop, step := resolveSlice(n, e, length)

		// Fast path for the overwhelmingly common step==1 case
		// (e.g. messages[1:] in chat templates). A single allocation
		// of the exact size avoids the geometric growth of append.
		// Aliasing the source slice would be unsafe because List.Append
		// could later mutate beyond Len() into the backing array.
		if step == 1 {
			if start < 0 {
				start = 0
			}
			if stop > length {
				stop = length
			}
			if start >= stop {
				return NewList(nil), nil
			}
			if err := e.m.alloc(int64(stop-start) * itemBytes); err != nil { // trajcompress patch
				return Undefined(), err
			}
			items := make([]Value, stop-start)
			copy(items, list.Items[start:stop])
			return NewList(items), nil
		}

		var items []Value
		if step > 0 {
			// Pre-size to the maximum possible iteration count to
			// avoid append's geometric growth allocations.
			count := (stop - start + step - 1) / step
			if err := e.m.alloc(int64(max(count, 0)) * itemBytes); err != nil { // trajcompress patch
				return Undefined(), err
			}
			if count > 0 {
				items = make([]Value, 0, count)
			}
			for i := start; i < stop; i += step {
				if i >= 0 && i < length {
					items = append(items, list.Items[i])
				}
			}
		} else if step < 0 {
			count := (start - stop - step - 1) / -step
			if err := e.m.alloc(int64(max(count, 0)) * itemBytes); err != nil { // trajcompress patch
				return Undefined(), err
			}
			if count > 0 {
				items = make([]Value, 0, count)
			}
			for i := start; i > stop; i += step {
				if i >= 0 && i < length {
					items = append(items, list.Items[i])
				}
			}
		}
		return NewList(items), nil
	}

	if obj.IsString() {
		s := obj.AsString()

		// ASCII fast path. Most chat-template string slicing operates
		// on tag/role names or message content that is ASCII; for those
		// we can index by byte and skip the []rune conversion entirely.
		// This is the dominant cost in the kronk dense profile because
		// the system prompt can be tens of thousands of bytes.
		if isASCII(s) {
			length := len(s)
			start, stop, step := resolveSlice(n, e, length)

			if step == 1 {
				if start < 0 {
					start = 0
				}
				if stop > length {
					stop = length
				}
				if start >= stop {
					return NewString(""), nil
				}
				return NewString(s[start:stop]), nil
			}

			if step == -1 {
				if start >= length {
					start = length - 1
				}
				if stop < -1 {
					stop = -1
				}
				if start <= stop {
					return NewString(""), nil
				}
				if err := e.m.alloc(int64(start - stop)); err != nil { // trajcompress patch
					return Undefined(), err
				}
				buf := make([]byte, 0, start-stop)
				for i := start; i > stop; i-- {
					buf = append(buf, s[i])
				}
				return NewString(string(buf)), nil
			}
			// Fall through to the general path for unusual steps.
		}

		if err := e.m.alloc(int64(len(s)) * 5); err != nil { // trajcompress patch: the runes and the result
			return Undefined(), err
		}
		runes := []rune(s)
		length := len(runes)
		start, stop, step := resolveSlice(n, e, length)
		var result []rune
		if step > 0 {
			for i := start; i < stop; i += step {
				if i >= 0 && i < length {
					result = append(result, runes[i])
				}
			}
		} else if step < 0 {
			for i := start; i > stop; i += step {
				if i >= 0 && i < length {
					result = append(result, runes[i])
				}
			}
		}
		return NewString(string(result)), nil
	}

	return Undefined(), nil
}

// isASCII reports whether s contains only 7-bit ASCII bytes. Used to
// skip the []rune conversion in evalSlice's string branch when byte
// indexing produces the same result as code-point indexing.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func resolveSlice(n *sliceExpr, e *evaluator, length int) (int, int, int) {
	step := 1
	// trajcompress patch: a None bound is an absent one (x[:None]).
	if v, _ := e.evalOpt(n.step); v != nil {
		step = int(toInt64(*v))
		if step == 0 {
			step = 1
		}
	}

	var start, stop int

	if step > 0 {
		start = 0
		stop = length
	} else {
		start = length - 1
		stop = -length - 1
	}

	if v, _ := e.evalOpt(n.start); v != nil {
		start = int(toInt64(*v))
		if start < 0 {
			start += length
		}
	}

	if v, _ := e.evalOpt(n.stop); v != nil {
		stop = int(toInt64(*v))
		if stop < 0 {
			stop += length
		}
	}

	start, stop = clampSlice(start, stop, step, length) // trajcompress patch: bounded loops
	return start, stop, step
}

func (e *evaluator) evalUnary(n *unaryExpr) (Value, error) {
	operand, err := e.evalExpr(n.operand)
	if err != nil {
		return Undefined(), err
	}

	// trajcompress patch: Python's TypeError for -'s', undefined raises.
	if v, ok, err := unaryStrict(n.op, operand); ok {
		return v, err
	}
	switch n.op {
	case "not":
		return NewBool(!operand.IsTruthy()), nil
	case "-":
		if operand.IsInt() {
			return NewInt(-operand.AsInt()), nil
		}
		if operand.IsFloat() {
			return NewFloat(-operand.AsFloat()), nil
		}
		return NewInt(0), nil
	case "+":
		return operand, nil
	}

	return Undefined(), fmt.Errorf("unknown unary operator %q", n.op)
}

func (e *evaluator) evalBinary(n *binExpr) (Value, error) {
	// Short-circuit for and/or.
	if n.op == "and" {
		left, err := e.evalExpr(n.left)
		if err != nil {
			return Undefined(), err
		}
		if !left.IsTruthy() {
			return left, nil
		}
		return e.evalExpr(n.right)
	}

	if n.op == "or" {
		left, err := e.evalExpr(n.left)
		if err != nil {
			return Undefined(), err
		}
		if left.IsTruthy() {
			return left, nil
		}
		return e.evalExpr(n.right)
	}

	// trajcompress patch: a + chain of strings is joined once (addChain).
	if n.op == "+" {
		if l, ok := n.left.(*binExpr); ok && l.op == "+" {
			var buf [8]string
			parts, val, err := e.addChain(n, buf[:0])
			if err != nil || parts == nil {
				return val, err
			}
			if err := e.m.alloc(joinedLen(parts)); err != nil { // trajcompress patch
				return Undefined(), err
			}
			return NewString(strings.Join(parts, "")), nil
		}
	}

	left, err := e.evalExpr(n.left)
	if err != nil {
		return Undefined(), err
	}

	right, err := e.evalExpr(n.right)
	if err != nil {
		return Undefined(), err
	}
	if err := e.binaryBudget(n.op, left, right); err != nil { // trajcompress patch
		return Undefined(), err
	}
	if isMarkup(left) || isMarkup(right) { // trajcompress patch: markupsafe's operators (markup.go)
		return e.markupBinary(n, left, right)
	}

	// trajcompress patch: Python's *, /, //, %, ** where they differ.
	if v, ok, err := arithStrict(n.op, left, right); ok {
		return v, err
	}
	switch n.op {
	case "+":
		return addStrict(left, right) // trajcompress patch: Python's TypeErrors
	case "-":
		return subValues(left, right), nil
	case "*":
		return mulValues(left, right), nil
	case "/":
		return divValues(left, right), nil
	case "//":
		return floorDivValues(left, right), nil
	case "%":
		return modValues(left, right), nil
	case "**":
		return powValues(left, right), nil
	case "~":
		return NewString(printValue(left) + printValue(right)), nil
	case "==":
		return NewBool(valuesEqual(left, right)), nil
	case "!=":
		return NewBool(!valuesEqual(left, right)), nil
	case "<":
		return NewBool(compareValues(left, right) < 0), nil
	case ">":
		return NewBool(compareValues(left, right) > 0), nil
	case "<=":
		return NewBool(compareValues(left, right) <= 0), nil
	case ">=":
		return NewBool(compareValues(left, right) >= 0), nil
	case "in", "not in":
		// trajcompress patch: Python's TypeErrors for a container that is
		// not one.
		ok, err := containsStrict(right, left)
		if err != nil {
			return Undefined(), err
		}
		return NewBool(ok == (n.op == "in")), nil
	}

	return Undefined(), fmt.Errorf("unknown binary operator %q", n.op)
}

func (e *evaluator) evalCond(n *condExpr) (Value, error) {
	cond, err := e.evalExpr(n.condition)
	if err != nil {
		return Undefined(), err
	}

	if cond.IsTruthy() {
		return e.evalExpr(n.trueExpr)
	}

	if n.falseExpr != nil {
		return e.evalExpr(n.falseExpr)
	}

	return Undefined(), nil
}

func (e *evaluator) evalCallExpr(n *callExpr) (Value, error) {
	fn, err := e.evalExpr(n.fn)
	if err != nil {
		return Undefined(), err
	}

	if fn.IsUndefined() {
		if _, hint := fn.v.(string); hint { // trajcompress patch: jinja2's message
			return Undefined(), undefinedError(fn)
		}
	}
	if !fn.IsCallable() {
		return Undefined(), fmt.Errorf("%s is not callable: %s", callableName(n.fn), fn.String())
	}

	args := make([]Value, len(n.args))
	for i, a := range n.args {
		if s, ok := a.(*starExpr); ok { // trajcompress patch: f(*xs)
			rest, err := e.starArgs(s, n.args[i+1:])
			if err != nil {
				return Undefined(), err
			}
			args = append(args[:i], rest...)
			break
		}
		v, err := e.evalExpr(a)
		if err != nil {
			return Undefined(), err
		}
		args[i] = v
	}

	var kwargs map[string]Value
	if len(n.kwargs) > 0 {
		kwargs = make(map[string]Value, len(n.kwargs))
		for _, kw := range n.kwargs {
			v, err := e.evalExpr(kw.value)
			if err != nil {
				return Undefined(), err
			}
			kwargs[kw.name] = v
		}
	}

	return e.call(fn.AsCallable(), false, args, kwargs)
}

func callableName(ex expr) string {
	switch n := ex.(type) {
	case *nameExpr:
		return n.name

	case *attrExpr:
		return callableName(n.obj) + "." + n.attr

	case *itemExpr:
		return callableName(n.obj) + "[item]"

	default:
		return ex.nodeType()
	}
}

func (e *evaluator) evalFilter(n *filterExpr) (Value, error) {
	input, err := e.evalExpr(n.expr)
	if err != nil {
		return Undefined(), err
	}

	// Look up filter in builtins.
	filterVal, ok := lookupFilter(e.builtins, n.name)
	builtin := ok
	// trajcompress patch: a filter the caller overrides (pyconform.go).
	if o, found := e.scope.get(filterOverridePrefix + n.name); found && o.IsCallable() {
		filterVal, ok, builtin = o, true, false
	}
	if !ok {
		// Also check scope for user-defined filters.
		filterVal, ok = e.scope.get(n.name)
		if !ok {
			return Undefined(), fmt.Errorf("unknown filter %q", n.name)
		}
	}

	if !filterVal.IsCallable() {
		return Undefined(), fmt.Errorf("filter %q is not callable", n.name)
	}

	// Build args: input as first, then additional args.
	args := make([]Value, 1+len(n.args))
	args[0] = input
	for i, a := range n.args {
		v, err := e.evalExpr(a)
		if err != nil {
			return Undefined(), err
		}
		args[i+1] = v
	}

	var kwargs map[string]Value
	if len(n.kwargs) > 0 {
		kwargs = make(map[string]Value, len(n.kwargs))
		for _, kw := range n.kwargs {
			v, err := e.evalExpr(kw.value)
			if err != nil {
				return Undefined(), err
			}
			kwargs[kw.name] = v
		}
	}

	if builtin {
		if err := lazyInput(n.name, input); err != nil { // trajcompress patch
			return Undefined(), err
		}
		rest, kw, err := markupFilterArgs(n.name, input, args[1:], kwargs) // trajcompress patch
		if err != nil {
			return Undefined(), err
		}
		args, kwargs = append(args[:1], rest...), kw
	}
	var out Value
	if n.name == "map" {
		out, err = e.evalMapFilter(args, kwargs) // trajcompress patch: map('filter'), each call within the budget
	} else {
		out, err = e.call(filterVal.AsCallable(), true, args, kwargs)
	}
	if err == nil && builtin && out.IsList() { // trajcompress patch: jinja2's generators
		out = lazyResult(n.name, input, out)
	}
	if err == nil && builtin { // trajcompress patch: a filter of a Markup that keeps it one
		out = markupFilterResult(n.name, input, out)
	}
	if builtin && n.name != "default" && n.name != "d" { // trajcompress patch: the filter iterated its input
		consumed := len(iterOrNil(input))
		if n.name == "first" {
			consumed = 1
		}
		consumeIter(input, consumed)
	}
	return out, err
}

func (e *evaluator) evalTestExpr(n *testExpr) (Value, error) {
	val, err := e.evalExpr(n.expr)
	if err != nil {
		return Undefined(), err
	}

	var testArgs []Value
	for _, a := range n.args {
		v, err := e.evalExpr(a)
		if err != nil {
			return Undefined(), err
		}
		testArgs = append(testArgs, v)
	}

	result, err := evalTest(n.name, val, testArgs)
	if err != nil {
		return Undefined(), err
	}

	if n.negated {
		result = !result
	}

	return NewBool(result), nil
}

// =============================================================================
// String methods
// =============================================================================

func (e *evaluator) stringMethod(obj Value, method string) (Value, error) {
	s := obj.AsString()

	switch method {
	case "strip":
		return e.makeStringFunc("strip", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) > 0 {
				return NewString(strings.Trim(s, printValue(args[0]))), nil
			}
			return NewString(strings.TrimSpace(s)), nil
		}), nil

	case "lstrip":
		return e.makeStringFunc("lstrip", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) > 0 {
				return NewString(strings.TrimLeft(s, printValue(args[0]))), nil
			}
			return NewString(strings.TrimLeftFunc(s, func(r rune) bool {
				return r == ' ' || r == '\t' || r == '\n' || r == '\r'
			})), nil
		}), nil

	case "rstrip":
		return e.makeStringFunc("rstrip", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) > 0 {
				return NewString(strings.TrimRight(s, printValue(args[0]))), nil
			}
			return NewString(strings.TrimRightFunc(s, func(r rune) bool {
				return r == ' ' || r == '\t' || r == '\n' || r == '\r'
			})), nil
		}), nil

	case "split":
		return e.makeStringFunc("split", func(args []Value, kwargs map[string]Value) (Value, error) {
			if err := e.m.room(int64(len(s)) * runeBytes); err != nil { // trajcompress patch
				return Undefined(), err
			}
			if true { // trajcompress patch: maxsplit, Python's white space
				return pySplit(s, args, kwargs, false)
			}
			if len(args) == 0 {
				if err := e.m.room(int64(len(s)) * runeBytes); err != nil { // trajcompress patch
					return Undefined(), err
				}
				parts := strings.Fields(s)
				items := make([]Value, len(parts))
				for i, p := range parts {
					items[i] = NewString(p)
				}
				return NewList(items), nil
			}
			if err := e.m.room(int64(len(s)) * runeBytes); err != nil { // trajcompress patch
				return Undefined(), err
			}
			sep := printValue(args[0])
			parts := strings.Split(s, sep)
			items := make([]Value, len(parts))
			for i, p := range parts {
				items[i] = NewString(p)
			}
			return NewList(items), nil
		}), nil

	case "startswith":
		return e.makeStringFunc("startswith", func(args []Value, kwargs map[string]Value) (Value, error) {
			return pyAffix("startswith", s, args) // trajcompress patch: Python's, a tuple of affixes
		}), nil

	case "endswith":
		return e.makeStringFunc("endswith", func(args []Value, kwargs map[string]Value) (Value, error) {
			return pyAffix("endswith", s, args) // trajcompress patch: Python's, a tuple of affixes
		}), nil

	case "replace":
		return e.makeStringFunc("replace", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) < 2 {
				return NewString(s), nil
			}
			count := -1
			if len(args) > 2 {
				count = int(toInt64(args[2]))
			}
			// trajcompress patch: the result's size checked first.
			if err := e.m.stepN(int64(len(s)) >> 10); err != nil {
				return Undefined(), err
			}
			if err := e.m.room(e.m.replaceNeed(s, printValue(args[0]), args[1], int64(count))); err != nil {
				return Undefined(), err
			}
			old := printValue(args[0])
			newStr := printValue(args[1])
			return NewString(strings.Replace(s, old, newStr, count)), nil
		}), nil

	case "upper":
		return e.makeStringFunc("upper", func(args []Value, kwargs map[string]Value) (Value, error) {
			return NewString(pyUpper(s)), nil // trajcompress patch: Python's str.upper
		}), nil

	case "lower":
		return e.makeStringFunc("lower", func(args []Value, kwargs map[string]Value) (Value, error) {
			return NewString(pyLower(s)), nil // trajcompress patch: Python's str.lower
		}), nil

	case "title":
		return e.makeStringFunc("title", func(args []Value, kwargs map[string]Value) (Value, error) {
			if true { // trajcompress patch: Python's str.title
				return NewString(pyTitle(s)), nil
			}
			// Simple title case: capitalize first letter of each word.
			runes := []rune(s)
			inWord := false
			for i, r := range runes {
				if r == ' ' || r == '\t' || r == '\n' {
					inWord = false
				} else if !inWord {
					runes[i] = []rune(strings.ToUpper(string(r)))[0]
					inWord = true
				}
			}
			return NewString(string(runes)), nil
		}), nil

	case "capitalize":
		return e.makeStringFunc("capitalize", func(args []Value, kwargs map[string]Value) (Value, error) {
			return NewString(pyCapitalize(s)), nil // trajcompress patch: Python's str.capitalize
		}), nil

	case "count":
		return e.makeStringFunc("count", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) == 0 {
				return NewInt(0), nil
			}
			return NewInt(int64(strings.Count(s, printValue(args[0])))), nil
		}), nil

	case "find":
		return e.makeStringFunc("find", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) == 0 {
				return NewInt(-1), nil
			}
			// trajcompress patch: the index in characters, not bytes.
			i := strings.Index(s, printValue(args[0]))
			if i > 0 {
				i = utf8.RuneCountInString(s[:i])
			}
			return NewInt(int64(i)), nil
		}), nil

	case "format":
		return e.makeStringFunc("format", func(args []Value, kwargs map[string]Value) (Value, error) {
			if err := e.m.room(e.m.formatNeed(s, args, kwargs)); err != nil { // trajcompress patch
				return Undefined(), err
			}
			if true { // trajcompress patch: str.format as Python's, or refused
				return pyStrFormat(s, args, kwargs)
			}
			result := s
			for i, arg := range args {
				placeholder := fmt.Sprintf("{%d}", i)
				result = strings.ReplaceAll(result, placeholder, printValue(arg))
				result = strings.Replace(result, "{}", printValue(arg), 1)
			}
			return NewString(result), nil
		}), nil
	}

	return stringMethodMore(s, method) // trajcompress patch: isdigit
}

func (e *evaluator) makeStringFunc(name string, fn func([]Value, map[string]Value) (Value, error)) Value {
	return NewCallable("str."+name, fn)
}

// =============================================================================
// List methods
// =============================================================================

func (e *evaluator) listMethod(obj Value, method string) (Value, error) {
	list := obj.AsList()

	switch method {
	case "append":
		return NewCallable("list.append", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) > 0 {
				list.Append(args[0])
			}
			return None(), nil
		}), nil

	case "pop":
		return NewCallable("list.pop", func(args []Value, kwargs map[string]Value) (Value, error) {
			if list.Len() == 0 {
				return Undefined(), fmt.Errorf("pop from empty list")
			}
			idx := list.Len() - 1
			if len(args) > 0 {
				idx = int(toInt64(args[0]))
				if idx < 0 {
					idx += list.Len()
				}
			}
			if idx < 0 || idx >= list.Len() {
				return Undefined(), fmt.Errorf("pop index out of range")
			}
			val := list.Items[idx]
			list.Items = append(list.Items[:idx], list.Items[idx+1:]...)
			return val, nil
		}), nil

	case "insert":
		return NewCallable("list.insert", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) < 2 {
				return None(), nil
			}
			idx := min(max(int(toInt64(args[0])), 0), list.Len())
			list.Items = append(list.Items, Undefined())
			copy(list.Items[idx+1:], list.Items[idx:])
			list.Items[idx] = args[1]
			return None(), nil
		}), nil
	}

	return listMethodMore(list, method) // trajcompress patch: index
}

// =============================================================================
// Dict methods
// =============================================================================

func (e *evaluator) dictMethod(obj Value, method string) (Value, error) {
	d := obj.AsDict()

	switch method {
	case "items":
		return NewCallable("dict.items", func(args []Value, kwargs map[string]Value) (Value, error) {
			items := make([]Value, 0, d.Len())
			for _, key := range d.Keys {
				pair := newTuple([]Value{d.KeyValue(key), d.Data[key]}) // trajcompress patch: keys of any kind
				items = append(items, pair)
			}
			return newIter(NewList(items), "dict_items"), nil // trajcompress patch: a view
		}), nil

	case "keys":
		return NewCallable("dict.keys", func(args []Value, kwargs map[string]Value) (Value, error) {
			items := make([]Value, 0, d.Len())
			for _, key := range d.Keys {
				items = append(items, d.KeyValue(key)) // trajcompress patch: keys of any kind
			}
			return newIter(NewList(items), "dict_keys"), nil // trajcompress patch: a view
		}), nil

	case "values":
		return NewCallable("dict.values", func(args []Value, kwargs map[string]Value) (Value, error) {
			items := make([]Value, 0, d.Len())
			for _, key := range d.Keys {
				items = append(items, d.Data[key])
			}
			return newIter(NewList(items), "dict_values"), nil // trajcompress patch: a view
		}), nil

	case "get":
		return NewCallable("dict.get", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) == 0 {
				return Undefined(), nil
			}
			if v, ok := dictGet(d, args[0]); ok { // trajcompress patch: keys of any kind
				return v, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return None(), nil
		}), nil

	case "pop":
		return NewCallable("dict.pop", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) == 0 {
				return Undefined(), nil
			}
			key := printValue(args[0])
			v, ok := d.Get(key)
			if ok {
				delete(d.Data, key)
				newKeys := make([]string, 0, len(d.Keys)-1)
				for _, k := range d.Keys {
					if k != key {
						newKeys = append(newKeys, k)
					}
				}
				d.Keys = newKeys
				return v, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return Undefined(), nil
		}), nil

	case "update":
		return NewCallable("dict.update", func(args []Value, kwargs map[string]Value) (Value, error) {
			if len(args) > 0 && args[0].IsDict() {
				other := args[0].AsDict()
				for _, key := range other.Keys {
					d.Set(key, other.Data[key])
				}
			}
			return None(), nil
		}), nil
	}

	return Undefined(), nil
}

// =============================================================================
// Arithmetic helpers
// =============================================================================

func addValues(a, b Value) Value {
	if a.IsString() || b.IsString() {
		return NewString(printValue(a) + printValue(b))
	}
	if a.IsList() && b.IsList() {
		items := make([]Value, 0, a.AsList().Len()+b.AsList().Len())
		items = append(items, a.AsList().Items...)
		items = append(items, b.AsList().Items...)
		return NewList(items)
	}
	if a.IsFloat() || b.IsFloat() {
		return NewFloat(toFloat64(a) + toFloat64(b))
	}
	return NewInt(toInt64(a) + toInt64(b))
}

func subValues(a, b Value) Value {
	if a.IsFloat() || b.IsFloat() {
		return NewFloat(toFloat64(a) - toFloat64(b))
	}
	return NewInt(toInt64(a) - toInt64(b))
}

func mulValues(a, b Value) Value {
	if a.IsString() && b.IsInt() {
		return NewString(strings.Repeat(a.AsString(), int(b.AsInt())))
	}
	if a.IsFloat() || b.IsFloat() {
		return NewFloat(toFloat64(a) * toFloat64(b))
	}
	return NewInt(toInt64(a) * toInt64(b))
}

func divValues(a, b Value) Value {
	bf := toFloat64(b)
	if bf == 0 {
		return NewFloat(0)
	}
	return NewFloat(toFloat64(a) / bf)
}

func floorDivValues(a, b Value) Value {
	bi := toInt64(b)
	if bi == 0 {
		return NewInt(0)
	}
	return NewInt(toInt64(a) / bi)
}

func modValues(a, b Value) Value {
	bi := toInt64(b)
	if bi == 0 {
		return NewInt(0)
	}
	return NewInt(toInt64(a) % bi)
}

func powValues(a, b Value) Value {
	return NewFloat(math.Pow(toFloat64(a), toFloat64(b)))
}

func valuesEqual(a, b Value) bool { return valuesEqualDepth(a, b, 0) }

// valuesEqualDepth is valuesEqual of values depth lists or dicts deep.
// trajcompress patch: Python's ==, also inside lists and dicts: numbers
// equal across int, float and bool (1 == 1.0 == True), a tuple never
// equals a list, dicts by their keys' values. Values nested deeper than
// maxMacroDepth compare unequal (Python raises RecursionError; only a
// list that contains itself nests so deep, and the sandbox's refusal of
// append keeps templates from building one): endless recursion would
// overflow Go's stack, which kills the process.
func valuesEqualDepth(a, b Value, depth int) bool {
	if depth > maxMacroDepth {
		return false
	}
	switch {
	case isNumeric(a) && isNumeric(b):
		c, ok := numCmp(a, b) // exact across int and float
		return ok && c == 0
	case a.IsNone() && b.IsNone():
		return true
	case a.IsList() && b.IsList():
		x, y := a.AsList(), b.AsList()
		if x == y {
			return true
		}
		if x.tuple != y.tuple || (x.iter == rangeIter) != (y.iter == rangeIter) || len(x.Items) != len(y.Items) {
			return false
		}
		for i := range x.Items {
			if !valuesEqualDepth(x.Items[i], y.Items[i], depth+1) {
				return false
			}
		}
		return true
	case a.IsDict() && b.IsDict():
		x, y := a.AsDict(), b.AsDict()
		if x == y {
			return true
		}
		if x.Len() != y.Len() {
			return false
		}
		for _, k := range x.Keys {
			v, ok := y.Get(k)
			if !ok || !valuesEqualDepth(x.Data[k], v, depth+1) {
				return false
			}
		}
		return true
	}
	return a.Equals(b)
}

// addChain evaluates the left-leaning chain of + that n heads (a + b + c
// is (a + b) + c), operands in order as evalBinary does. While every
// operand so far is a string the sum is only collected: it returns the
// strings (appended to parts, non-nil) and joins nothing. From the first
// operand that is not a string it adds pair by pair with addStrict, as
// evalBinary would, and returns the value (parts nil). Adding strings
// cannot fail, so errors and the operands evaluated before one are the
// same as evaluating the nested pairs. (trajcompress patch: the chat
// templates' '<|im_start|>' + role + '\n' + content + ... copied the
// content once per +.)
func (e *evaluator) addChain(n *binExpr, parts []string) ([]string, Value, error) {
	var ops [16]expr
	x := ops[:0]
	var cur expr = n
	for {
		b, ok := cur.(*binExpr)
		if !ok || b.op != "+" {
			break
		}
		x = append(x, b.right)
		cur = b.left
	}
	x = append(x, cur) // the leftmost operand; x holds the chain right to left
	strs := true
	var acc Value
	for i := len(x) - 1; i >= 0; i-- {
		v, err := e.evalExpr(x[i])
		if err != nil {
			return nil, Undefined(), err
		}
		if strs {
			if v.IsString() && !isMarkup(v) { // trajcompress patch: a Markup's + escapes (addStrict)
				parts = append(parts, v.AsString())
				continue
			}
			strs = false
			if i == len(x)-1 {
				acc = v
				continue
			}
			if err := e.m.alloc(joinedLen(parts)); err != nil { // trajcompress patch
				return nil, Undefined(), err
			}
			acc = NewString(strings.Join(parts, ""))
		}
		if err := e.binaryBudget("+", acc, v); err != nil { // trajcompress patch
			return nil, Undefined(), err
		}
		if acc, err = addStrict(acc, v); err != nil {
			return nil, Undefined(), err
		}
	}
	if strs {
		return parts, Undefined(), nil
	}
	return nil, acc, nil
}
