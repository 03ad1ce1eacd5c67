package jinja

import (
	"fmt"
	"strings"
)

// Template is a compiled Jinja template ready for rendering.
type Template struct {
	nodes []node
	src   string
}

// Compile parses a Jinja template source string and returns a compiled
// template that can be rendered multiple times with different data.
func Compile(source string) (*Template, error) {
	// trajcompress patch: jinja2's lexer (newlines, keep_trailing_newline
	// false: one final newline dropped).
	source = strings.TrimSuffix(normalizeNewlines(source), "\n")
	segs, err := scan(source)
	if err != nil {
		return nil, fmt.Errorf("jinja scan: %w", err)
	}

	nodes, err := parseTemplate(segs)
	if err != nil {
		return nil, fmt.Errorf("jinja parse: %w", err)
	}

	return &Template{nodes: nodes, src: source}, nil
}

// Render executes the template with the provided data and returns the
// rendered string. Each call creates an isolated scope so templates are
// safe to render concurrently after compilation.
func (t *Template) Render(data map[string]any) (string, error) {
	// Convert Go data to Value types.
	vals := make(map[string]Value, len(data))
	for k, v := range data {
		vals[k] = FromGoValue(v)
	}

	return render(t.nodes, vals, 0, Limits{})
}

// RenderValues is like Render but accepts pre-converted Value data.
func (t *Template) RenderValues(data map[string]Value) (string, error) {
	return render(t.nodes, data, 0, Limits{})
}

// RenderValuesSize is RenderValues with room for size bytes of output
// made before rendering (trajcompress patch: a caller that knows about how
// long the output is spares the builder's doubling copies).
func (t *Template) RenderValuesSize(data map[string]Value, size int) (string, error) {
	return render(t.nodes, data, size, Limits{})
}

// RenderLimits is RenderValuesSize within limits (trajcompress patch, see
// budget.go): a render that goes over one returns an error wrapping
// ErrBudget ("template exceeded N steps", "template output over N bytes"),
// one whose context is done returns the context's error.
func (t *Template) RenderLimits(data map[string]Value, size int, l Limits) (string, error) {
	return render(t.nodes, data, size, l)
}

// =============================================================================

// render executes the AST with the given data and returns the result.
func render(nodes []node, data map[string]Value, size int, l Limits) (string, error) {
	e := evaluator{
		output: strings.Builder{},
		m:      newMeter(l),
	}
	if size > 0 {
		e.output.Grow(size)
	}

	// Use the cached builtins scope directly. The scope is initialized
	// once at package init and is only read after that (lookupFilter,
	// chained get() through parent links, passed to nested evaluators).
	// No code path writes to e.builtins, so sharing the cached scope
	// across renders is safe and avoids cloning ~20 entries per render.
	e.builtins = cachedBuiltins

	// Create user data scope on top of builtins.
	e.scope = newScope(e.builtins)
	for k, v := range data {
		e.scope.set(k, v)
	}

	err := e.execNodes(nodes)
	if l.Used != nil {
		*l.Used = Usage{Steps: e.m.steps, Bytes: e.m.bytes}
	}
	if err != nil {
		return "", err
	}

	return e.output.String(), nil
}
