package chattemplate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// A tokenizer_config.json with a list of named templates: "tool_use" for a
// record with tools, else "default", as transformers chooses.
func TestLoadNamedTemplates(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]any{
		"bos_token": map[string]any{"content": "<s>", "lstrip": false},
		"eos_token": "</s>",
		"unk_token": nil,
		"chat_template": []map[string]string{
			{"name": "default", "template": "D{{ bos_token }}{{ messages[0].content }}{{ eos_token }}{{ unk_token }}"},
			{"name": "tool_use", "template": "T{{ tools | length }}{{ tools[0] | tojson }}"},
		},
	}
	data, _ := json.Marshal(cfg)
	path := filepath.Join(dir, "tokenizer_config.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	msgs := json.RawMessage(`[{"role":"user","content":"hi"}]`)
	for _, tc := range []struct {
		tools json.RawMessage
		want  string
	}{
		{nil, "D<s>hi</s>"},
		{json.RawMessage(`null`), "D<s>hi</s>"},
		{json.RawMessage(`[{"b":1.0,"a":"x"}]`), `T1{"b": 1.0, "a": "x"}`},
	} {
		got, err := tmpl.Render(msgs, tc.tools)
		if err != nil || got != tc.want {
			t.Errorf("tools %s: got %q, %v; want %q", tc.tools, got, err, tc.want)
		}
	}

	// A .jinja takes its special tokens from the tokenizer_config.json beside it.
	jpath := filepath.Join(dir, "chat_template.jinja")
	if err := os.WriteFile(jpath, []byte("{{ bos_token }}|{{ eos_token }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Load(jpath)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := j.Render(msgs, nil); err != nil || got != "<s>|</s>" {
		t.Errorf(".jinja: got %q, %v", got, err)
	}
}

func TestRenderRaiseException(t *testing.T) {
	tmpl, err := Parse("t.jinja", `{% if messages[0].role != 'user' %}{{ raise_exception('Roles must alternate user/assistant/user/assistant/...') }}{% endif %}ok`, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render(json.RawMessage(`[{"role":"assistant","content":"x"}]`), nil)
	if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "Roles must alternate user/assistant/user/assistant/...") {
		t.Errorf("err = %v, want ErrTemplate with the template's message", err)
	}
}

func TestLoadErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokenizer_config.json")
	if err := os.WriteFile(path, []byte(`{"eos_token": "</s>"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("no chat_template: err = %v, want one naming %s", err, path)
	}
	bad := filepath.Join(dir, "bad.jinja")
	if err := os.WriteFile(bad, []byte("{% if %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad template: err = %v, want one naming %s", err, bad)
	}
}

// BenchmarkRender renders every hand-made case once per iteration.
func BenchmarkRender(b *testing.B) {
	cases := readJSONL[testCase](b, filepath.Join("testdata", "cases.jsonl"))
	for _, tt := range testTemplates {
		tmpl := loadTestTemplate(b, tt.config, tt.jinja)
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				for _, c := range cases {
					tmpl.Render(c.Messages, c.Tools)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(cases)), "µs/render")
		})
	}
}

// One Template rendered from several goroutines gives each the same text,
// with Render and RenderValid (run with -race): the CLI's workers will
// share a loaded template.
func TestRenderConcurrent(t *testing.T) {
	cases := readJSONL[testCase](t, filepath.Join("testdata", "cases.jsonl"))
	tmpl := loadTestTemplate(t, "qwen3.tokenizer_config.json", "")
	want := make([]string, len(cases))
	for i, c := range cases {
		want[i], _ = tmpl.Render(c.Messages, c.Tools)
	}
	errs := make(chan string, 4*len(cases))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, c := range cases {
				if got, _ := tmpl.Render(c.Messages, c.Tools); got != want[i] {
					errs <- c.Name
				}
				// RenderValid's renders share pooled buffers (rawForms).
				if got, _ := tmpl.RenderValid(c.Messages, c.Tools); got != want[i] {
					errs <- c.Name + " (RenderValid)"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for name := range errs {
		t.Errorf("%s: concurrent render differs", name)
	}
}

// TestFind finds a model directory's template as transformers does:
// chat_template.jinja first, else a tokenizer_config.json that sets one.
func TestFind(t *testing.T) {
	write := func(dir, name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if p, err := Find(dir); p != "" || err != nil {
		t.Fatalf("empty dir: %q, %v", p, err)
	}
	write(dir, "tokenizer_config.json", `{"eos_token": "x", "chat_template": null}`)
	if p, err := Find(dir); p != "" || err != nil {
		t.Fatalf("null chat_template: %q, %v", p, err)
	}
	write(dir, "tokenizer_config.json", `{"chat_template": "{{ messages }}"}`)
	if p, err := Find(dir); p != filepath.Join(dir, "tokenizer_config.json") || err != nil {
		t.Fatalf("config: %q, %v", p, err)
	}
	write(dir, "chat_template.jinja", `{{ messages }}`)
	if p, err := Find(dir); p != filepath.Join(dir, "chat_template.jinja") || err != nil {
		t.Fatalf("jinja: %q, %v", p, err)
	}
	bad := t.TempDir()
	write(bad, "tokenizer_config.json", `{`)
	if _, err := Find(bad); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") {
		t.Fatalf("invalid config: %v", err)
	}
}

// BenchmarkRenderRealData renders every real record (with and without
// tools, as TestRealDataMatchesJinja2) once per iteration with Qwen3's and
// Llama-3.1's templates: the engine's cost on the data, budget included.
func BenchmarkRenderRealData(b *testing.B) {
	files, _ := testenv.RealJSONL()
	if len(files) == 0 {
		b.Skip("no real data (../shared/data/real)")
	}
	cases := realCases(b, files)
	for _, name := range []string{"qwen3.tokenizer_config.json", "llama3_1.jinja"} {
		tmpl, err := Load(filepath.Join("testdata", "templates", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for _, c := range cases {
					tmpl.RenderValid(c.Messages, c.Tools)
				}
			}
		})
	}
}
