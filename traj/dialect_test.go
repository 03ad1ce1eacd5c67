package traj

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// capabilities calls every capability of d (every exported method of
// Dialect that takes no argument) and its traits, and says what is
// missing: a capability that panics (no case for d in traits) or returns
// its zero value (a case that forgot it). A dialect added to dialects
// without a full case in traits fails here.
func capabilities(d Dialect) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	v := reflect.ValueOf(d)
	n := 0
	for i := range v.NumMethod() {
		m := v.Type().Method(i)
		if m.Type.NumIn() != 1 || m.Type.NumOut() != 1 {
			continue
		}
		n++
		if out := v.Method(i).Call(nil)[0]; out.IsZero() {
			return fmt.Errorf("%s.%s() is the zero %s", d, m.Name, out.Type())
		}
	}
	if n < 2 {
		return fmt.Errorf("found %d capabilities, want Form and Pairing at least", n)
	}
	t := d.traits()
	if t.turns == "" || t.role == "" || t.content == "" || len(t.roles) == 0 {
		return fmt.Errorf("%s: traits %+v lack keys or roles", d, t)
	}
	return nil
}

// TestEveryDialectHasEveryCapability: each dialect answers every
// capability; a name that is not a dialect (the miss: a dialect added
// to the list without its case) is caught by the same check.
func TestEveryDialectHasEveryCapability(t *testing.T) {
	for _, d := range Dialects() {
		if err := capabilities(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
		if p, err := ParseDialect(string(d)); p != d || err != nil {
			t.Errorf("ParseDialect(%q) = %q, %v", d, p, err)
		}
	}
	if err := capabilities("anthropic"); err == nil || !strings.Contains(err.Error(), "not one of traj.Dialects") {
		t.Errorf("a dialect without a case: %v; want the panic of a missing case", err)
	}
}

// TestUnknownDialect: a name that is not a dialect is an error where it
// is parsed, and never read as ShareGPT: Decode panics on a schema that
// Validate refuses, and so does asking its capabilities.
func TestUnknownDialect(t *testing.T) {
	for _, s := range []string{"anthropic", "ShareGPT", "auto", " openai"} {
		if _, err := ParseDialect(s); err == nil || !strings.Contains(err.Error(), "input.format must be sharegpt or openai") {
			t.Errorf("ParseDialect(%q): %v; want an error", s, err)
		}
		if err := (Schema{Dialect: Dialect(s)}).Validate(); err == nil {
			t.Errorf("Validate(%q): no error", s)
		}
		mustPanic(t, "Decode "+s, func() {
			_, _ = Decode([]byte(`{"conversations": [{"from": "human", "value": "hi"}]}`), Pos{}, Schema{Dialect: Dialect(s)})
		})
		mustPanic(t, "Form "+s, func() { Dialect(s).Form() })
		mustPanic(t, "Pairing "+s, func() { Dialect(s).Pairing() })
	}
	if d, err := ParseDialect(""); d != DialectAuto || err != nil {
		t.Errorf(`ParseDialect("") = %q, %v; want auto`, d, err)
	}
	mustPanic(t, "auto's Form", func() { DialectAuto.Form() })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// TestDialectCapabilities pins what each dialect answers: the record
// path's pairing protection and the trainer view's mapping follow them.
func TestDialectCapabilities(t *testing.T) {
	for d, want := range map[Dialect]struct {
		form    Form
		pairing Pairing
	}{
		DialectShareGPT: {FormShareGPT, PairByOrder},
		DialectOpenAI:   {FormMessage, PairByID},
	} {
		if d.Form() != want.form || d.Pairing() != want.pairing {
			t.Errorf("%s: form %d pairing %d; want %d %d", d, d.Form(), d.Pairing(), want.form, want.pairing)
		}
	}
	if len(Dialects()) != 2 {
		t.Errorf("Dialects() = %v: a new dialect needs its row here", Dialects())
	}
}

// TestTurnsKey: the key the turns were read from, the dialect's own or
// the schema's renaming.
func TestTurnsKey(t *testing.T) {
	for _, tc := range []struct {
		line string
		s    Schema
		want string
	}{
		{`{"conversations": [{"from": "human", "value": "hi"}], "messages": [{"role": "user", "content": "hi"}]}`, Schema{}, "conversations"},
		{`{"messages": [{"role": "user", "content": "hi"}]}`, Schema{}, "messages"},
		{`{"dialog": [{"from": "human", "value": "hi"}]}`, Schema{Dialect: DialectShareGPT, TurnsKey: "dialog"}, "dialog"},
	} {
		r, err := Decode([]byte(tc.line), Pos{}, tc.s)
		if err != nil || r.TurnsKey() != tc.want {
			t.Errorf("%s: TurnsKey %q, %v; want %q", tc.line, r.TurnsKey(), err, tc.want)
		}
	}
}
