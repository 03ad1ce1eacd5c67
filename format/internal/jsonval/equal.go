package jsonval

import (
	"encoding/json"
	"slices"
	"strconv"
)

// EqualOptions relax [Equal].
type EqualOptions struct {
	// NullIsAbsent treats an object key holding null as absent: the
	// equivalence Parquet and Arrow round trips guarantee.
	NullIsAbsent bool
	// IgnoreOrder compares objects as sets of keys. Parquet and Arrow write
	// struct fields in schema order, so a record whose nested keys come in
	// another order comes back reordered.
	IgnoreOrder bool
}

// Equal reports whether two decoded trees are the same JSON value. Numbers
// compare by value (1.0 equals 1 unless either is an integer that float64
// cannot hold exactly); objects compare key order too unless o.IgnoreOrder.
func Equal(a, b any, o EqualOptions) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bb, ok := b.(string)
		return ok && a == bb
	case json.Number:
		bb, ok := b.(json.Number)
		return ok && numbersEqual(a, bb)
	case []any:
		bb, ok := b.([]any)
		if !ok || len(a) != len(bb) {
			return false
		}
		for i := range a {
			if !Equal(a[i], bb[i], o) {
				return false
			}
		}
		return true
	case *Object:
		bb, ok := b.(*Object)
		if !ok {
			return false
		}
		ak, av := pairs(a, o.NullIsAbsent)
		bk, bv := pairs(bb, o.NullIsAbsent)
		if len(ak) != len(bk) {
			return false
		}
		for i := range ak {
			j := i
			if o.IgnoreOrder {
				j = slices.Index(bk, ak[i])
			}
			if j < 0 || ak[i] != bk[j] || !Equal(av[i], bv[j], o) {
				return false
			}
		}
		return true
	}
	return false
}

func pairs(o *Object, dropNull bool) ([]string, []any) {
	if !dropNull {
		return o.Keys, o.Vals
	}
	var ks []string
	var vs []any
	for i, v := range o.Vals {
		if v != nil {
			ks = append(ks, o.Keys[i])
			vs = append(vs, v)
		}
	}
	return ks, vs
}

func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	ai, aerr := strconv.ParseInt(string(a), 10, 64)
	bi, berr := strconv.ParseInt(string(b), 10, 64)
	if aerr == nil && berr == nil {
		return ai == bi
	}
	af, err1 := strconv.ParseFloat(string(a), 64)
	bf, err2 := strconv.ParseFloat(string(b), 64)
	if err1 != nil || err2 != nil || af != bf {
		return false
	}
	const exact = 1 << 53
	return (aerr != nil || (ai < exact && ai > -exact)) && (berr != nil || (bi < exact && bi > -exact))
}
