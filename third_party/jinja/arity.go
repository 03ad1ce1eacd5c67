package jinja

// trajcompress patch: the builtin filters and tests take the arguments of
// jinja2 3.1.2's functions (filters.py, tests.py) and no others. Python
// raises TypeError for an extra positional argument, an unknown keyword, a
// keyword naming an argument already given by position or a missing
// required one ('abc'|upper(1), l|sort(foo=1), 'a'|replace('b')); the
// upstream engine ignored them and rendered.

import (
	"fmt"
	"strings"
)

// signature is a builtin's parameters after the value (jinja2's
// environment, context and eval_ctx are not the template's to pass). A
// name marked "!" is read by position only by the engine's function, so a
// keyword naming it is moved into its position; one marked "@" is read as
// a keyword only, so a positional argument there is moved into kwargs.
type signature struct {
	params   []string
	required int  // how many of params have no default
	varargs  bool // *args and **kwargs: anything goes
}

// filterSignatures are jinja2 3.1.2's filter signatures for the filters the
// engine has.
var filterSignatures = map[string]signature{
	"tojson":     {params: []string{"@indent"}},
	"items":      {},
	"join":       {params: []string{"d", "@attribute"}},
	"default":    {params: []string{"!default_value", "boolean"}},
	"d":          {params: []string{"!default_value", "boolean"}},
	"trim":       {params: []string{"!chars"}},
	"lower":      {},
	"upper":      {},
	"title":      {},
	"capitalize": {},
	"first":      {},
	"last":       {},
	"length":     {}, // Python's len(obj)
	"count":      {},
	"reverse":    {},
	"sort":       {params: []string{"reverse", "case_sensitive", "attribute"}},
	"unique":     {params: []string{"case_sensitive", "attribute"}},
	"list":       {},
	"int":        {params: []string{"default", "base"}},
	"float":      {params: []string{"default"}},
	"string":     {}, // markupsafe's soft_str(s)
	"safe":       {},
	"replace":    {params: []string{"!old", "!new", "count"}, required: 2},
	"round":      {params: []string{"precision", "method"}},
	"abs":        {}, // Python's abs(x)
	"map":        {varargs: true},
	"select":     {varargs: true},
	"reject":     {varargs: true},
	"selectattr": {varargs: true},
	"rejectattr": {varargs: true},
	"indent":     {params: []string{"width", "first", "blank"}},
	"wordcount":  {},
	"escape":     {}, // markupsafe's escape(s)
	"e":          {},
	"dictsort":   {params: []string{"case_sensitive", "by", "reverse"}},
	"max":        {params: []string{"case_sensitive", "attribute"}},
	"min":        {params: []string{"case_sensitive", "attribute"}},
	"sum":        {params: []string{"attribute", "start"}},
	"batch":      {params: []string{"!linecount", "fill_with"}, required: 1},
	"format":     {varargs: true},
}

// testArgs is how many arguments after the value each builtin test takes,
// all required (tests.py; the operator tests are Python's operator.eq and
// such, which take exactly two).
var testArgs = map[string]int{
	"defined": 0, "undefined": 0, "none": 0, "boolean": 0, "integer": 0, "float": 0, "number": 0,
	"string": 0, "mapping": 0, "iterable": 0, "sequence": 0, "callable": 0, "true": 0, "false": 0,
	"odd": 0, "even": 0, "upper": 0, "lower": 0,
	"eq": 1, "equalto": 1, "==": 1, "ne": 1, "!=": 1, "gt": 1, "greaterthan": 1, ">": 1,
	"ge": 1, ">=": 1, "lt": 1, "lessthan": 1, "<": 1, "le": 1, "<=": 1,
	"in": 1, "divisibleby": 1, "sameas": 1,
}

// checkTestArgs raises Python's TypeError for a test given other than its
// arguments.
func checkTestArgs(name string, args []Value) error {
	n, ok := testArgs[name]
	if !ok || len(args) == n {
		return nil
	}
	if n == 0 {
		return fmt.Errorf("test_%s() takes 1 positional argument but %d were given", name, len(args)+1)
	}
	return fmt.Errorf("test %s expected %d arguments, got %d", name, n+1, len(args)+1)
}

// withSignature wraps a builtin filter so that it raises, as Python does,
// where its arguments do not fit jinja2's signature, and hands the
// function its arguments where it reads them (see signature).
func withSignature(name string, fn func([]Value, map[string]Value) (Value, error)) func([]Value, map[string]Value) (Value, error) {
	sig, ok := filterSignatures[name]
	if !ok || sig.varargs {
		return fn
	}
	return func(args []Value, kwargs map[string]Value) (Value, error) {
		args, kwargs, err := sig.bind(name, args, kwargs)
		if err != nil {
			return Undefined(), err
		}
		return fn(args, kwargs)
	}
}

// bind checks args (the value first) and kwargs against the signature and
// returns them as the engine's function reads them.
func (sig signature) bind(name string, args []Value, kwargs map[string]Value) ([]Value, map[string]Value, error) {
	given := len(args) - 1 // the value is the first
	if given > len(sig.params) {
		return nil, nil, fmt.Errorf("%s() takes %d positional arguments but %d were given", name, len(sig.params)+1, len(args))
	}
	for k := range kwargs {
		i := sig.index(k)
		if i < 0 {
			return nil, nil, fmt.Errorf("%s() got an unexpected keyword argument '%s'", name, k)
		}
		if i < given {
			return nil, nil, fmt.Errorf("%s() got multiple values for argument '%s'", name, k)
		}
	}
	for i := given; i < sig.required; i++ {
		if _, ok := kwargs[bare(sig.params[i])]; !ok {
			return nil, nil, fmt.Errorf("%s() missing required argument: '%s'", name, bare(sig.params[i]))
		}
	}
	copied := false
	own := func() {
		if !copied {
			args = append([]Value(nil), args...)
			m := make(map[string]Value, len(kwargs)+1)
			for k, v := range kwargs {
				m[k] = v
			}
			kwargs, copied = m, true
		}
	}
	for i, p := range sig.params {
		n := bare(p)
		switch p[0] {
		case '!':
			if v, ok := kwargs[n]; ok {
				if len(args) != i+1 {
					return nil, nil, fmt.Errorf("unsupported construct: the %s filter's %s argument by keyword after a missing one", name, n)
				}
				own()
				args = append(args, v)
				delete(kwargs, n)
			}
		case '@':
			if i < given {
				own()
				kwargs[n] = args[i+1]
			}
		}
	}
	if copied {
		for len(args) > 1 && sig.params[len(args)-2][0] == '@' {
			args = args[:len(args)-1]
		}
	}
	return args, kwargs, nil
}

// index is the position of the parameter named k, or -1.
func (sig signature) index(k string) int {
	for i, p := range sig.params {
		if bare(p) == k {
			return i
		}
	}
	return -1
}

// bare is a parameter's name without its mark.
func bare(p string) string { return strings.TrimLeft(p, "!@") }
