package jinja2ref

import (
	"encoding/json"
	"testing"
	"time"
)

// A render that overruns its timeout comes back as a ReferenceTimeout
// within about the timeout, and the process renders the next template as
// before; without a timeout a render is not stopped.
func TestRenderTimeout(t *testing.T) {
	r := Start(t)
	slow := `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x`
	start := time.Now()
	res := r.RenderTimeout(t, slow, nil, 500*time.Millisecond)
	took := time.Since(start)
	if !res.TimedOut() {
		t.Fatalf("a render of 10^10 iterations with a 0.5 s timeout: %+v, want a %s", res, TimeoutType)
	}
	if took > 10*time.Second {
		t.Errorf("the timed-out render took %s", took)
	}
	res = r.Render(t, `{{ a + 1 }}`, map[string]json.RawMessage{"a": json.RawMessage("41")})
	if res.Text == nil || *res.Text != "42" || res.TimedOut() {
		t.Fatalf("the render after a timeout: %+v, want 42", res)
	}
	res = r.RenderTimeout(t, `{{ raise_exception('no') }}`, nil, time.Second)
	if res.Error == nil || res.TimedOut() {
		t.Fatalf("a template that raises: %+v, want its error, not a timeout", res)
	}
}
