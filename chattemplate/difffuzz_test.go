package chattemplate

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/jinja2ref"
)

var (
	diffFuzzN    = flag.Int("difffuzz.n", 300, "TestDiffFuzz: snippets to generate and compare with jinja2 (make fuzz runs more)")
	diffFuzzSeed = flag.Int64("difffuzz.seed", 1, "TestDiffFuzz: the generator's seed")
)

// TestDiffFuzz is the differential fuzzer: it generates small template
// snippets and contexts, renders each with the engine and with Python
// jinja2 (one long-lived process, internal/jinja2ref), and fails on a
// different text or a one-sided exception (except a refusal of ours naming
// a construct the engine lacks). Half the snippets are the expressions and
// conditions of the corpus templates (testdata/corpus) with every name
// bound to a generated value; half are generated from the filters, tests,
// methods, operators and literals those templates use. go test -fuzz needs
// no Python, so this is a plain test with a count: -difffuzz.n=N and
// -difffuzz.seed=S (make fuzz runs 20000).
func TestDiffFuzz(t *testing.T) {
	if testing.Short() || *diffFuzzN <= 0 {
		t.Skip("-short or -difffuzz.n=0")
	}
	py := jinja2ref.Start(t)
	rng := rand.New(rand.NewSource(*diffFuzzSeed))
	g := &snippetGen{rng: rng, seeds: corpusSeeds(t)}
	equal, raisedBoth, refused, known, failed := 0, 0, 0, 0, 0
	for i := 0; i < *diffFuzzN; i++ {
		src, ctx := g.snippet()
		want := py.Render(t, src, ctx)
		got, err := renderExpr(src, ctx)
		var msg string
		switch {
		case want.Text != nil && pythonObjectRepr.MatchString(*want.Text):
			known++ // printed a Python view, method or generator: see pythonObjectRepr
		case want.Error != nil && err != nil:
			raisedBoth++
		case want.Error != nil:
			msg = fmt.Sprintf("rendered %q, jinja2 raised %s: %s", got, want.Type, *want.Error)
		case err != nil && unsupportedNamed(err):
			refused++
		case err != nil:
			msg = fmt.Sprintf("raised %v, jinja2 rendered %q", err, *want.Text)
		case got != *want.Text:
			msg = fmt.Sprintf("got %q, jinja2 %q", got, *want.Text)
		default:
			equal++
		}
		if msg != "" {
			failed++
			if failed <= 25 {
				c, _ := json.Marshal(ctx)
				t.Errorf("seed %d #%d: %s\n  template %q\n  context  %s", *diffFuzzSeed, i, msg, src, c)
			}
		}
	}
	t.Logf("%s; %d snippets (seed %d): %d equal, %d raised in both, %d refused naming the construct, %d printing a Python object (not compared), %d differ",
		py.Version, *diffFuzzN, *diffFuzzSeed, equal, raisedBoth, refused, known, failed)
}

// pythonObjectRepr matches what jinja2 prints for a value whose repr is
// its address: a bound method (d['items'] without the key, s['format']:
// the sandbox wraps str.format in a function), a generator or iterator
// (map or select not turned into a list). The engine refuses to print a
// generator and prints nothing for a method; no chat template prints
// these, so such snippets are counted apart, not compared. (A dict's
// views print as Python's, dict_items([...]), and are compared.)
var pythonObjectRepr = regexp.MustCompile(`<built-in method |<generator object |<bound method |<function [^ >]+ at 0x|<[a-z_]+ object at 0x`)

var (
	exprTag = regexp.MustCompile(`\{\{-?\s*(.+?)\s*-?\}\}|\{%-?\s*(?:if|elif)\s+(.+?)\s*-?%\}`)
	nameRe  = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// corpusSeeds are the short expressions and conditions of the corpus
// templates.
func corpusSeeds(t *testing.T) []string {
	paths, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.jinja"))
	set := map[string]bool{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range exprTag.FindAllStringSubmatch(string(b), -1) {
			e := m[1] + m[2]
			if len(e) < 100 && !strings.ContainsAny(e, "\n") && !strings.Contains(e, "raise_exception") {
				set[e] = true
			}
		}
	}
	seeds := make([]string, 0, len(set))
	for e := range set {
		seeds = append(seeds, e)
	}
	sort.Strings(seeds)
	return seeds
}

type snippetGen struct {
	rng   *rand.Rand
	seeds []string
}

func (g *snippetGen) pick(xs ...string) string { return xs[g.rng.Intn(len(xs))] }

var jinjaWords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true,
	"true": true, "false": true, "none": true, "True": true, "False": true, "None": true, "loop": true, "namespace": true,
	"defined": true, "undefined": true, "string": true, "mapping": true, "iterable": true, "sequence": true, "number": true,
	"integer": true, "float": true, "boolean": true, "equalto": true, "odd": true, "even": true, "range": true}

// snippet returns a template and its context (JSON values by name).
func (g *snippetGen) snippet() (string, map[string]json.RawMessage) {
	ctx := map[string]json.RawMessage{}
	var e string
	if len(g.seeds) > 0 && g.rng.Intn(2) == 0 {
		e = g.seeds[g.rng.Intn(len(g.seeds))]
		// Bind every name that is not an attribute, a keyword, a filter or
		// a test to a generated value.
		for _, loc := range nameRe.FindAllStringIndex(e, -1) {
			name := e[loc[0]:loc[1]]
			prev := strings.TrimRight(e[:loc[0]], " ")
			if jinjaWords[name] || strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, "|") || strings.HasSuffix(prev, " is") ||
				strings.HasSuffix(prev, "'") || strings.HasSuffix(prev, `"`) || strings.HasPrefix(e[loc[1]:], "=") || strings.HasPrefix(e[loc[1]:], "(") {
				continue
			}
			if _, ok := ctx[name]; !ok {
				ctx[name] = g.value(2)
			}
		}
	} else {
		for _, n := range []string{"x", "y", "s", "l", "d", "m", "n"} {
			ctx[n] = g.value(2)
		}
		e = g.expr(3)
	}
	switch g.rng.Intn(4) {
	case 0:
		return fmt.Sprintf("{%% if %s %%}T{%% else %%}F{%% endif %%}", e), ctx
	case 1:
		return fmt.Sprintf("{%% for v in %s %%}[{{ v }}]{%% endfor %%}", e), ctx
	}
	return "{{ " + e + " }}", ctx
}

// value is a JSON value as chat data has them.
func (g *snippetGen) value(depth int) json.RawMessage {
	var v any
	switch k := g.rng.Intn(10); {
	case k == 0:
		v = nil
	case k == 1:
		v = g.rng.Intn(2) == 0
	case k == 2:
		v = g.rng.Intn(14) - 3
	case k == 3:
		v = []float64{0.5, 1.0, -2.25, 1e-7, 3.0, 2.675}[g.rng.Intn(6)]
	case k <= 6 || depth == 0:
		v = g.pick("", "a", "Hello World", "a</think>b</think>c", " x\n", "é日本", `{"k": 1}`, "%s", "user", "assistant", "10", "9", "a,b,,c", "  ", "It's", "tool")
	case k == 7:
		var l []json.RawMessage
		for i := g.rng.Intn(4); i > 0; i-- {
			l = append(l, g.value(depth-1))
		}
		b, _ := json.Marshal(l)
		return b
	default:
		var b strings.Builder
		b.WriteByte('{')
		for i, n := 0, g.rng.Intn(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(g.pick("role", "content", "tool_calls", "name", "type", "function", "arguments", "parameters", "properties", "description", "items", "a", "b"))
			b.Write(k)
			b.WriteByte(':')
			b.Write(g.value(depth - 1))
		}
		b.WriteByte('}')
		return json.RawMessage(b.String())
	}
	b, _ := json.Marshal(v)
	return b
}

func (g *snippetGen) literal() string {
	return g.pick("0", "1", "2", "-1", "1.5", "0.1", "''", "'a'", "'a b'", `"x,y"`, "'%s'", "'</think>'", "none", "true", "false", "[]", "[1, 2]", "['a', 'b']", "{}", "{'role': 'user'}", "(1, 2)")
}

func (g *snippetGen) expr(depth int) string {
	if depth <= 0 {
		if g.rng.Intn(2) == 0 {
			return g.pick("x", "y", "s", "l", "d", "m", "n", "u")
		}
		return g.literal()
	}
	a := func() string { return g.expr(depth - 1) }
	switch g.rng.Intn(9) {
	case 0:
		return a() + " " + g.pick("+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">", "<=", ">=", "and", "or", "in", "not in") + " " + a()
	case 1:
		return g.pick("not ", "-", "") + "(" + a() + ")"
	case 2:
		return a() + " is " + g.pick("", "not ") + g.pick("defined", "undefined", "none", "string", "mapping", "iterable", "sequence", "number", "integer", "float", "boolean", "odd", "even", "true", "false")
	case 3:
		return "(" + a() + ")|" + g.pick("length", "list", "join(', ')", "join", "tojson", "trim", "upper", "lower", "first", "last", "default('d')",
			"default('d', true)", "map('upper')|list", "map(attribute='role')|list", "selectattr('role', 'equalto', 'user')|list", "rejectattr('content')|list",
			"select|list", "reject|list", "items|list", "dictsort", "sort", "unique|list", "int", "float", "string", "round", "round(1)", "indent(2)",
			"replace('a', 'b')", "capitalize", "title", "abs", "sum", "min", "max", "reverse|list", "batch(2)|list", "map('tojson')|join(',')", "tojson(indent=2)", "wordcount", "count")
	case 4:
		return "(" + a() + ")." + g.pick("split()", "split(',')", "split('</think>', 1)", "rsplit(',', 1)", "strip()", "lstrip()", "rstrip('\\n')", "startswith('a')",
			"endswith('c')", "replace('a', 'b')", "upper()", "lower()", "title()", "get('role')", "get('x', 1)", "items()", "keys()", "values()", "format(1)", "find('b')", "count('a')",
			"role", "content", "tool_calls", "function", "name", "isdigit()")
	case 5:
		// On a variable: jinja2 constant-folds a subscript of literals
		// and raises or not where a variable would not.
		return g.pick("x", "y", "s", "l", "d", "m", "n") + "[" + g.pick("0", "-1", "1", "'role'", "'content'", "1:", ":-1", "::-1", "::2", "1:3") + "]"
	case 6:
		return a() + " if " + a() + " else " + a()
	case 7:
		return "[" + a() + ", " + a() + "]"
	}
	return a()
}
