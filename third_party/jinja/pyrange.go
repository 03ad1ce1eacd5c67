package jinja

// trajcompress patch: range(...) is Python's range, not its list. It is a
// list of its items for everything a range does as a sequence (len,
// indexing, iteration, in, filters), marked List.iter "range" with its
// start, stop and step (List.rng): it prints as range(0, 3), a slice of it
// is a range, it never equals a list, +, * and < of it raise Python's
// TypeError, and json.dumps refuses it (IterType is "range").

import (
	"fmt"
	"math/big"
)

// rangeIter is the List.iter of a range.
const rangeIter = "range"

// newRange is range(start, stop, step) with its items.
func newRange(items []Value, start, stop, step int64) Value {
	return Value{kind: KindList, v: &List{Items: items, iter: rangeIter, rng: [3]int64{start, stop, step}}}
}

// isRange reports whether v is a range.
func isRange(v Value) bool { return v.kind == KindList && v.v.(*List).iter == rangeIter }

// lazyIter reports whether a List.iter is a generator's or an iterator's:
// no len(), true when empty, used up by iterating (not a dict view, not a
// range).
func lazyIter(t string) bool { return t != "" && t != rangeIter && !isDictView(t) }

// rangeRepr is Python's repr of a range.
func rangeRepr(l *List) string {
	if l.rng[2] == 1 {
		return fmt.Sprintf("range(%d, %d)", l.rng[0], l.rng[1])
	}
	return fmt.Sprintf("range(%d, %d, %d)", l.rng[0], l.rng[1], l.rng[2])
}

// rangeSlice is r[start:stop:step], a range as Python's: its bounds are
// r's at the slice's indices (slice.indices), its step r's times the
// slice's.
func (e *evaluator) rangeSlice(n *sliceExpr, r *List) (Value, error) {
	start, stop, step := resolveSlice(n, e, r.Len())
	var items []Value
	for i := start; step > 0 && i < stop || step < 0 && i > stop; i += step {
		items = append(items, r.Items[i])
	}
	if err := e.m.alloc(int64(len(items)) * itemBytes); err != nil {
		return Undefined(), err
	}
	bound := func(i int64) (int64, error) { // r.start + i*r.step, exact
		b := new(big.Int).Mul(big.NewInt(i), big.NewInt(r.rng[2]))
		b.Add(b, big.NewInt(r.rng[0]))
		if !b.IsInt64() {
			return 0, errBigInt(fmt.Sprintf("a bound of a slice of %s", rangeRepr(r)))
		}
		return b.Int64(), nil
	}
	lo, err := bound(int64(start))
	if err != nil {
		return Undefined(), err
	}
	hi, err := bound(int64(stop))
	if err != nil {
		return Undefined(), err
	}
	st := new(big.Int).Mul(big.NewInt(int64(step)), big.NewInt(r.rng[2]))
	if !st.IsInt64() {
		return Undefined(), errBigInt(fmt.Sprintf("the step of a slice of %s", rangeRepr(r)))
	}
	return newRange(items, lo, hi, st.Int64()), nil
}

// rangeOpError is Python's TypeError for an operator that ranges do not
// support (+, *), or nil when neither operand is a range.
func rangeOpError(op string, a, b Value) error {
	if isRange(a) || isRange(b) {
		return fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
	}
	return nil
}
