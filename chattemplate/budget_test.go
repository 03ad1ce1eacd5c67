package chattemplate

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ardanlabs/jinja"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// Hostile templates: each would run for hours, or allocate gigabytes (Go
// ends the process with "fatal error: out of memory", which recover cannot
// catch), without the render budget. Each is refused with an ErrTemplate
// wrapping jinja.ErrBudget (or the sandbox's own error) naming the bound,
// quickly, and the render's allocations stay within the byte budget plus
// slack: measured with runtime.MemStats' TotalAlloc, so the test fails
// (or the process dies) if a guard is removed.
var hostile = []struct {
	name, src string
	want      string // in the error
}{
	{"repeat 2e9", `{{ 'x' * 2000000000 }}`, "template output over"},
	{"repeat list", `{{ [1, 2] * 1000000000 }}`, "template output over"},
	{"doubling loop", `{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}`, "template output over"},
	{"replace with itself", `{% set ns = namespace(a='x' * 1000) %}{% for i in range(10) %}{% set ns.a = ns.a.replace('x', ns.a) %}{% endfor %}{{ ns.a|length }}`, "template output over"},
	{"replace filter", `{% set ns = namespace(a='x' * 1000) %}{% for i in range(10) %}{% set ns.a = ns.a|replace('x', ns.a) %}{% endfor %}{{ ns.a|length }}`, "template output over"},
	{"range 10**9", `{% for i in range(10**9) %}{% endfor %}`, "Range too big"},
	{"nested range loops", `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`, "template exceeded"},
	{"macro twice 40 deep", `{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}`, "template exceeded"},
	{"appended copies", `{% set ns = namespace(l=[]) %}{% set big = 'x' * 1000000 %}{% for i in range(100000) %}{% set ns.l = ns.l + [big ~ i] %}{% endfor %}{{ ns.l|length }}`, "template output over"},
	{"joined references", `{% set ns = namespace(l=[]) %}{% set big = 'x' * 1000000 %}{% for i in range(2000) %}{% set ns.l = ns.l + [big] %}{% endfor %}{{ ns.l|join }}`, "template output over"},
	{"printed references", `{% set ns = namespace(l=[]) %}{% set big = 'x' * 1000000 %}{% for i in range(2000) %}{% set ns.l = ns.l + [big] %}{% endfor %}{{ ns.l }}`, "template output over"},
	{"tojson references", `{% set ns = namespace(l=[]) %}{% set big = 'x' * 1000000 %}{% for i in range(2000) %}{% set ns.l = ns.l + [big] %}{% endfor %}{{ ns.l|tojson }}`, "template output over"},
	{"center method", `{{ 'x'.center(2000000000) }}`, "padded string of width 2000000000"},
	{"zfill method", `{{ 'x'.zfill(2000000000) }}`, "padded string of width 2000000000"},
	{"ljust method", `{{ 'x'.ljust(2000000000) }}`, "padded string of width 2000000000"},
	{"rjust method", `{{ 'x'.rjust(2000000000) }}`, "padded string of width 2000000000"},
	{"format width", `{{ '{:>2000000000}'.format('x') }}`, "template output over"},
	{"printf width", `{{ '%2000000000s' % 'x' }}`, "template output over"},
	{"format filter width", `{{ '%2000000000s'|format('x') }}`, "template output over"},
	{"sum of lists", `{% set a = [1] * 1000 %}{% set b = [a] * 2000 %}{{ (b|sum(start=[]))|length }}`, "template output over"},
	{"sum of strings", `{{ (['x' * 1000] * 3000)|sum(start='')|length }}`, "template output over"},
	{"join a string's characters", `{{ ('a' * 100000)|join('x' * 100000) }}`, "template output over"},
	{"list append, unsafe in the sandbox", `{% set l = [] %}{% set _ = l.append(l) %}{{ l }}`, "unsafe"},
	{"join separator", `{{ range(100000)|join('x' * 1000000) }}`, "template output over"},
	{"indent width", `{{ 'a\nb'|indent(2000000000) }}`, "template output over"},
	{"tojson indent", `{{ messages|tojson(indent=2000000000) }}`, "template output over"},
	{"format placeholders", `{% set big = 'x' * 1000000 %}{{ ('{0}' * 1000).format(big) }}`, "template output over"},
	{"scan in a loop", `{% set big = 'x' * 1000000 %}{% for i in range(100000) %}{% for j in range(100000) %}{% if 'y' in big %}{% endif %}{% endfor %}{% endfor %}`, "template exceeded"},
	{"output", `{% set big = 'x' * 1000000 %}{% for i in range(100000) %}{{ big }}{% endfor %}`, "template output over"},
	{"string loop", `{% set big = 'x' * 10000000 %}{% for i in range(100) %}{% for c in big %}{% endfor %}{% endfor %}`, "template output over"},
}

func TestHostileTemplatesRefused(t *testing.T) {
	msgs := []byte(`[{"role": "user", "content": "hi"}]`)
	limit := DefaultBytes(len(msgs))
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			tmpl, err := Parse(h.name, h.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			out, err := tmpl.RenderValid(msgs, nil)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTemplate) || out != "" || !strings.Contains(err.Error(), h.want) {
				t.Fatalf("%q, %v; want an ErrTemplate saying %q", out, err, h.want)
			}
			if h.want != "Range too big" && h.want != "unsafe" && !errors.Is(err, jinja.ErrBudget) {
				t.Errorf("%v does not wrap jinja.ErrBudget", err)
			}
			// Allocations: the budget counts what the template makes
			// (a string built by a builder may take twice its length
			// while it grows), plus the engine's own per-step garbage.
			alloc := after.TotalAlloc - before.TotalAlloc
			if bound := uint64(3*limit) + 256<<20; alloc > bound {
				t.Errorf("allocated %d MiB, over %d MiB", alloc>>20, bound>>20)
			}
			t.Logf("refused in %v, %d MiB allocated: %v", took.Round(time.Millisecond), alloc>>20, err)
		})
	}
}

// A render whose context is cancelled stops within the poll interval and
// returns the context's error, not an ErrTemplate: the run is stopping,
// the record is not at fault.
func TestRenderStopsWhenCancelled(t *testing.T) {
	tmpl, err := Parse("endless.jinja", `{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Budget = Budget{Steps: 1 << 62}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err = tmpl.RenderValidContext(ctx, []byte(`[]`), nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTemplate) {
		t.Fatalf("%v; want context.Canceled, not an ErrTemplate", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stopped %v after the start, the cancel was at 200ms", took)
	}
}

// The budget is sized from the record, or set: a template that prints
// each message's content twice renders a long record within the default,
// and is refused once the set bytes are fewer than its output.
func TestBudgetSizedFromRecord(t *testing.T) {
	tmpl, err := Parse("twice.jinja", `{% for m in messages %}{{ m.content }}{{ m.content }}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("y", 80<<20) // over the constant part of the default
	msgs := []byte(`[{"role": "user", "content": "` + long + `"}]`)
	out, err := tmpl.RenderValid(msgs, nil)
	if err != nil || len(out) != 2*len(long) {
		t.Fatalf("%d bytes, %v", len(out), err)
	}
	tmpl.Budget = Budget{Bytes: 1000}
	if _, err := tmpl.RenderValid([]byte(`[{"role": "user", "content": "`+strings.Repeat("y", 600)+`"}]`), nil); err == nil || !strings.Contains(err.Error(), "template output over 1000 bytes") {
		t.Errorf("%v; want template output over 1000 bytes", err)
	}
	tmpl.Budget = Budget{Steps: 10}
	if _, err := tmpl.RenderValid([]byte(`[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "user", "content": "c"}, {"role": "user", "content": "d"}]`), nil); err == nil || !strings.Contains(err.Error(), "template exceeded 10 steps") {
		t.Errorf("%v; want template exceeded 10 steps", err)
	}
}

// The default budget leaves the real templates ample room: on the real
// data (each record with and without tools) every render of the test
// templates uses under a quarter of its default steps and bytes. The
// figures (most used, as a share of the default) are logged.
func TestBudgetHeadroomRealData(t *testing.T) {
	files, _ := testenv.RealJSONL()
	if len(files) == 0 {
		t.Skip("no real data (../shared/data/real)")
	}
	cases := realCases(t, files)
	for _, name := range []string{"qwen3.tokenizer_config.json", "qwen2_5.tokenizer_config.json", "llama3_1.jinja", "deepseek_v3.tokenizer_config.json", "gptoss.jinja", "qwen2_vl.jinja"} {
		tmpl, err := Load(filepath.Join("testdata", "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		var steps, bytes float64
		var maxSteps, maxBytes int64
		budgetUsed = func(n int, u jinja.Usage) {
			steps = max(steps, float64(u.Steps)/float64(DefaultSteps(n)))
			bytes = max(bytes, float64(u.Bytes)/float64(DefaultBytes(n)))
			maxSteps, maxBytes = max(maxSteps, u.Steps), max(maxBytes, u.Bytes)
		}
		for _, c := range cases {
			if _, err := tmpl.RenderValid(c.Messages, c.Tools); errors.Is(err, jinja.ErrBudget) {
				t.Errorf("%s: %s: %v", name, c.Name, err)
			}
		}
		budgetUsed = nil
		t.Logf("%s: %d renders, most steps %d (%.3f of the default), most bytes %d (%.3f)", name, len(cases), maxSteps, steps, maxBytes, bytes)
		if steps > 0.25 || bytes > 0.25 {
			t.Errorf("%s: a render used %.3f of its default steps, %.3f of its bytes: over a quarter", name, steps, bytes)
		}
	}
}

// A filter the budget has no rule for is bounded by its arguments' printed
// size times one plus its numeric arguments; a string argument counted as
// a number (its length) made `message.content | string` quadratic, and
// NVIDIA's Nemotron 3 template refused a record with a 19 KB user turn
// that jinja2 renders. The cost of `| string` now grows with the string.
func TestUnknownFilterBoundLinear(t *testing.T) {
	var used []jinja.Usage
	budgetUsed = func(_ int, u jinja.Usage) { used = append(used, u) }
	defer func() { budgetUsed = nil }()
	tmpl, err := Parse("string.jinja", `{% for m in messages %}{% set c = m.content | string %}{{ c }}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1000, 100000} {
		msgs, _ := json.Marshal([]map[string]string{{"role": "user", "content": strings.Repeat("word ", n/5)}})
		if _, err := tmpl.Render(msgs, nil); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	if len(used) != 2 || used[1].Steps > 200*used[0].Steps || used[1].Steps > 5000 { // 100 times the string: at most twice linear
		t.Fatalf("steps %+v: want linear in the string's length", used)
	}
}
