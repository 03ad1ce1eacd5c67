package chattemplate

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A panic while rendering (here the template's clock, which strftime_now
// calls, standing for a bug of the engine) is the template's error, naming
// the template and the panic, for Render and RenderValid alike: the record
// is reported as one the template cannot render and the caller goes on.
// The template still renders the next record once the panic is gone.
func TestRenderPanicIsTemplateError(t *testing.T) {
	tmpl, err := Parse("clock.jinja", `{% for m in messages %}{{ m.content }}{% endfor %}@{{ strftime_now('%Y') }}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	boom := true
	tmpl.Now = func() time.Time {
		if boom {
			panic("clock exploded")
		}
		return refNow
	}
	msgs := []byte(`[{"role": "user", "content": "hi"}]`)
	for name, render := range map[string]func([]byte, []byte) (string, error){
		"Render":      func(m, tl []byte) (string, error) { return tmpl.Render(m, tl) },
		"RenderValid": func(m, tl []byte) (string, error) { return tmpl.RenderValid(m, tl) },
	} {
		boom = true
		out, err := render(msgs, nil)
		if !errors.Is(err, ErrTemplate) || out != "" {
			t.Fatalf("%s: %q, %v; want an ErrTemplate", name, out, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "clock.jinja") || !strings.Contains(msg, "clock exploded") {
			t.Errorf("%s: message %q does not name the template and the panic", name, msg)
		}
		boom = false
		if out, err := render(msgs, nil); err != nil || out != "hi@2025" {
			t.Errorf("%s after the panic: %q, %v", name, out, err)
		}
	}
}

// The template of the issue-24 review that crashed the CLI (selectattr
// without a test sliced past its arguments) renders as jinja2 does; the
// engine cases of testdata/strict.jsonl check the filters against jinja2.
func TestSelectattrTemplateRenders(t *testing.T) {
	tmpl, err := Parse("selectattr.jinja", "{%- for m in messages | selectattr('content') %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.Render([]byte(`[{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}, {"role": "assistant", "content": "ok"}]`), nil)
	// jinja2 3.1.2 (python3-jinja2) prints the same for this template and these messages.
	if want := "<|im_start|>user\nhi<|im_end|><|im_start|>assistant\nok<|im_end|>"; err != nil || out != want {
		t.Errorf("%q, %v; want %q", out, err, want)
	}
}
