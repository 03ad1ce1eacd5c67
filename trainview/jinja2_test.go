package trainview

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/chattemplate"
)

// refPython is Debian's python3, where python3-jinja2 installs.
const refPython = "/usr/bin/python3"

// TestViewsMatchJinja2 renders every real record as a trainer passes it
// (OpenAI and ShareGPT alike, with and without tools) with each test
// template and compares the text with Python jinja2 in transformers'
// environment (chattemplate/testdata/ref/render.py): the same text, or an
// error where jinja2 raised (a content given as a list of OpenAI parts
// included: the engine raises where jinja2 does). It needs python3-jinja2 (the
// template sources and special tokens are in chattemplate/testdata), not
// node.
func TestViewsMatchJinja2(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	if err := exec.Command(refPython, "-c", "import jinja2").Run(); err != nil {
		t.Skipf("Debian's python3-jinja2 is missing (%v): run %s/setup.sh", err, refDir)
	}
	cases := realViews(t)
	in := writeCases(t, cases)
	tdir := filepath.Join("..", "chattemplate", "testdata", "templates")
	for _, tt := range []struct{ name, config, jinja string }{
		{"qwen3", "qwen3.tokenizer_config.json", ""},
		{"qwen2_5", "qwen2_5.tokenizer_config.json", ""},
		{"llama3_1", "llama3_1.tokenizer_config.json", "llama3_1.jinja"},
		{"deepseek_v3", "deepseek_v3.tokenizer_config.json", ""},
		{"gptoss", "gptoss.tokenizer_config.json", "gptoss.jinja"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{filepath.Join(refDir, "render.py"), filepath.Join(tdir, tt.config), in}
			path := filepath.Join(tdir, tt.config)
			var special map[string]string
			if tt.jinja != "" {
				args = append(args, filepath.Join(tdir, tt.jinja))
				cfg, err := chattemplate.Load(filepath.Join(tdir, tt.config))
				if err == nil {
					special = cfg.Special
				}
				path = filepath.Join(tdir, tt.jinja)
			}
			cmd := exec.Command(refPython, args...)
			cmd.Env = append(os.Environ(), "TZ=UTC", "REF_NOW="+refNow.Format(time.RFC3339))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("render.py: %v", err)
			}
			var tmpl *chattemplate.Template
			if tt.jinja == "" {
				tmpl, err = chattemplate.Load(path)
			} else {
				src, rerr := os.ReadFile(path)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if special == nil {
					special = specialOf(t, filepath.Join(tdir, tt.config))
				}
				tmpl, err = chattemplate.Parse(path, string(src), special)
			}
			if err != nil {
				t.Fatal(err)
			}
			tmpl.Now = func() time.Time { return refNow }
			lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
			if len(lines) != len(cases) {
				t.Fatalf("%d reference lines for %d cases", len(lines), len(cases))
			}
			equal, raised := 0, 0
			for i, c := range cases {
				got, err := tmpl.RenderValid(c.Messages, c.Tools)
				eq, both := jinja2Verdict(t, c.Name, lines[i], got, err)
				equal, raised = equal+eq, raised+both
			}
			t.Logf("%s: %d/%d renders equal to jinja2 (%d raised in both)", tt.name, equal, len(cases), raised)
		})
	}
}

// specialOf reads the special tokens of a tokenizer_config.json that has
// no chat template.
func specialOf(t *testing.T, path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range cfg {
		if !strings.HasSuffix(k, "_token") {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil && s != "" {
			out[k] = s
			continue
		}
		var tok struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(v, &tok) == nil && tok.Content != "" {
			out[k] = tok.Content
		}
	}
	return out
}

// jinja2Verdict compares a render (got, err) of case name with render.py's
// reference line for it ({"text"} or {"error"}), reporting a difference;
// it returns 1 when they agree, and 1 in raised when both raised.
func jinja2Verdict(t *testing.T, name string, line []byte, got string, err error) (equal, raised int) {
	t.Helper()
	var g struct {
		Text  *string `json:"text"`
		Error *string `json:"error"`
	}
	if jerr := json.Unmarshal(line, &g); jerr != nil {
		t.Fatal(jerr)
	}
	switch {
	case g.Error != nil && err != nil:
		return 1, 1
	case g.Error != nil:
		t.Errorf("%s: rendered, jinja2 raised %q", name, *g.Error)
	case err != nil:
		t.Errorf("%s: %v", name, err)
	case g.Text == nil:
		t.Errorf("%s: the reference line has neither text nor error: %s", name, line)
	case got != *g.Text:
		t.Errorf("%s: differs from jinja2 (%d bytes against %d)", name, len(got), len(*g.Text))
	default:
		return 1, 0
	}
	return 0, 0
}
