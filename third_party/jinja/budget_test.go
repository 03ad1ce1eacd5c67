package jinja

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func renderLimited(t *testing.T, src string, l Limits) (string, Usage, error) {
	t.Helper()
	tmpl, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	var u Usage
	l.Used = &u
	out, err := tmpl.RenderLimits(map[string]Value{}, 0, l)
	return out, u, err
}

// Steps and bytes are counted as budget.go says, and checked: a render
// within its limits gives the text RenderValues gives, one over them the
// budget's error, with nothing over the byte limit made.
func TestLimitsCountAndRefuse(t *testing.T) {
	src := `{% for i in range(3) %}{{ i }},{% endfor %}`
	out, u, err := renderLimited(t, src, Limits{})
	if err != nil || out != "0,1,2," {
		t.Fatalf("%q, %v", out, err)
	}
	// The for node, three iterations, two nodes in each, the range call.
	if u.Steps != 1+3+3*2+1 || u.Bytes != 6+3*itemBytes {
		t.Errorf("used %+v, want 11 steps and %d bytes", u, 6+3*itemBytes)
	}
	if _, _, err := renderLimited(t, src, Limits{Steps: 10}); err == nil || err.Error() != "template exceeded 10 steps" || !errors.Is(err, ErrBudget) {
		t.Errorf("10 steps: %v", err)
	}
	if _, _, err := renderLimited(t, src, Limits{Steps: 11}); err != nil {
		t.Errorf("11 steps: %v", err)
	}
	_, u, err = renderLimited(t, `{{ 'x' * 2000000000 }}`, Limits{Bytes: 1 << 20})
	if err == nil || err.Error() != "template output over 1048576 bytes" || u.Bytes > 1<<20 {
		t.Errorf("repeat: %v, used %+v", err, u)
	}
}

// A list that holds itself, printed: refused within a byte budget (a
// stack overflow, which ends the process, without one). The sandbox no
// longer lets a template build one (l.append is unsafe, as in jinja2's
// immutable sandbox), so the caller's data holds it.
func TestSelfContainingListRefused(t *testing.T) {
	tmpl, err := Compile(`{{ l }}`)
	if err != nil {
		t.Fatal(err)
	}
	l := NewList(nil)
	l.AsList().Items = append(l.AsList().Items, l)
	_, err = tmpl.RenderLimits(map[string]Value{"l": l}, 0, Limits{Bytes: 1 << 20})
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("%v; want the budget's error", err)
	}
	if _, _, err := renderLimited(t, `{% set l = [] %}{% set _ = l.append(l) %}{{ l }}`, Limits{Bytes: 1 << 20}); err == nil || !strings.Contains(err.Error(), "unsafe") {
		t.Fatalf("l.append in a template: %v; want the sandbox's refusal", err)
	}
}

// A cancelled context stops the render at its next poll, with the
// context's error.
func TestContextPolled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, u, err := renderLimited(t, `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`, Limits{Ctx: ctx})
	if !errors.Is(err, context.Canceled) || u.Steps > 2*pollEvery {
		t.Fatalf("%v after %d steps; want context.Canceled within %d", err, u.Steps, 2*pollEvery)
	}
}

// Without limits the render is as before: a long output is not refused.
func TestNoLimits(t *testing.T) {
	tmpl, err := Compile(`{{ 'ab' * 1000000 }}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.RenderValues(map[string]Value{})
	if err != nil || out != strings.Repeat("ab", 1000000) {
		t.Fatalf("%d bytes, %v", len(out), err)
	}
}
