// Command enginecmp renders the chattemplate test cases with Go Jinja engines,
// untouched (only the globals transformers adds are supplied: raise_exception,
// strftime_now, the special tokens), and compares each result with the Python
// jinja2 golden of ../golden. It is its own module, inside testdata so that the
// trajcompress module neither builds it nor depends on the engines it tries.
//
//	cd chattemplate/testdata/enginecmp && go run .
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	ardan "github.com/ardanlabs/jinja"
	"github.com/nikolalohinski/gonja/v2"
	gconfig "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

type tcase struct {
	Name     string `json:"name"`
	Messages any    `json:"messages"`
	Tools    any    `json:"tools"`
}

type golden struct {
	Name  string  `json:"name"`
	Text  *string `json:"text"`
	Error *string `json:"error"`
}

var templates = []struct{ name, config, jinja string }{
	{"qwen3", "qwen3.tokenizer_config.json", ""},
	{"qwen2_5", "qwen2_5.tokenizer_config.json", ""},
	{"llama3_1", "llama3_1.tokenizer_config.json", "llama3_1.jinja"},
	{"deepseek_v3", "deepseek_v3.tokenizer_config.json", ""},
	{"gptoss", "gptoss.tokenizer_config.json", "gptoss.jinja"},
}

var now = time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)

// numbers turns json.Number into int64 or float64, what an engine takes.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func decode(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	return d.Decode(v)
}

func specials(cfg map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"} {
		v := cfg[k]
		if m, ok := v.(map[string]any); ok {
			v = m["content"]
		}
		if s, ok := v.(string); ok && s != "" {
			out[k] = s
		}
	}
	return out
}

type engine struct {
	name    string
	compile func(src string) (func(ctx map[string]any) (string, error), error)
}

var engines = []engine{
	{"ardanlabs/jinja v1.8.0", func(src string) (func(map[string]any) (string, error), error) {
		t, err := ardan.Compile(src)
		if err != nil {
			return nil, err
		}
		return func(ctx map[string]any) (string, error) {
			vals := map[string]ardan.Value{}
			for k, v := range ctx {
				vals[k] = ardan.FromGoValue(v)
			}
			vals["strftime_now"] = ardan.NewCallable("strftime_now", func(args []ardan.Value, _ map[string]ardan.Value) (ardan.Value, error) {
				f := args[0].AsString()
				f = strings.NewReplacer("%Y", "2006", "%m", "01", "%d", "02", "%B", "January", "%b", "Jan").Replace(f)
				return ardan.NewString(now.Format(f)), nil
			})
			return t.RenderValues(vals)
		}, nil
	}},
	{"nikolalohinski/gonja/v2 v2.9.1", func(src string) (func(map[string]any) (string, error), error) {
		cfg := gconfig.New()
		cfg.TrimBlocks = true
		cfg.LeftStripBlocks = true
		loader, err := loaders.NewFileSystemLoader("")
		if err != nil {
			return nil, err
		}
		sl, err := loaders.NewShiftedLoader("root", strings.NewReader(src), loader)
		if err != nil {
			return nil, err
		}
		t, err := exec.NewTemplate("root", cfg, sl, gonja.DefaultEnvironment)
		if err != nil {
			return nil, err
		}
		return func(ctx map[string]any) (string, error) {
			c := exec.NewContext(map[string]any{})
			for k, v := range ctx {
				c.Set(k, v)
			}
			c.Set("raise_exception", func(msg string) (string, error) { return "", errors.New(msg) })
			c.Set("strftime_now", func(f string) string {
				f = strings.NewReplacer("%Y", "2006", "%m", "01", "%d", "02", "%B", "January", "%b", "Jan").Replace(f)
				return now.Format(f)
			})
			var b strings.Builder
			err := t.Execute(&b, c)
			return b.String(), err
		}, nil
	}},
}

func main() {
	dir := ".."
	raw, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	check(err)
	var lines [][]byte
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	verbose := len(os.Args) > 1 && os.Args[1] == "-v"
	for _, e := range engines {
		fmt.Printf("## %s\n", e.name)
		for _, tp := range templates {
			cfgRaw, err := os.ReadFile(filepath.Join(dir, "templates", tp.config))
			check(err)
			var cfg map[string]any
			check(json.Unmarshal(cfgRaw, &cfg))
			src, _ := cfg["chat_template"].(string)
			if tp.jinja != "" {
				b, err := os.ReadFile(filepath.Join(dir, "templates", tp.jinja))
				check(err)
				src = string(b)
			}
			gl := readGolden(filepath.Join(dir, "golden", tp.name+".jsonl"))
			render, err := e.compile(src)
			if err != nil {
				fmt.Printf("%-12s compile error: %.200s\n", tp.name, err)
				continue
			}
			equal := 0
			var total time.Duration
			var n int
			var fails []string
			for i, l := range lines {
				c, ctx := context(cfg, l)
				start := time.Now()
				out, err := safe(render, ctx)
				total += time.Since(start)
				n++
				g := gl[i]
				switch {
				case g.Error != nil && err != nil:
					equal++
				case g.Text != nil && err == nil && out == *g.Text:
					equal++
				case err != nil:
					fails = append(fails, fmt.Sprintf("%s: error %.160q", c.Name, err.Error()))
				case g.Error != nil:
					fails = append(fails, fmt.Sprintf("%s: rendered, jinja2 raised %q", c.Name, *g.Error))
				default:
					fails = append(fails, fmt.Sprintf("%s: differs at %s", c.Name, diffAt(*g.Text, out)))
				}
			}
			// Time: render every case 20 times more.
			start := time.Now()
			reps := 0
			for r := 0; r < 20; r++ {
				for _, l := range lines {
					_, ctx := context(cfg, l)
					safe(render, ctx)
					reps++
				}
			}
			per := time.Since(start) / time.Duration(reps)
			fmt.Printf("%-12s %2d/%2d equal, %v/render\n", tp.name, equal, len(lines), per.Round(time.Microsecond))
			if verbose {
				for _, f := range fails {
					fmt.Printf("    %s\n", f)
				}
			}
		}
	}
}

// context is what transformers passes a template for one case line.
func context(cfg map[string]any, line []byte) (tcase, map[string]any) {
	var c tcase
	check(decode(line, &c))
	ctx := specials(cfg)
	ctx["messages"] = numbers(c.Messages)
	ctx["tools"] = numbers(c.Tools)
	ctx["documents"] = nil
	ctx["add_generation_prompt"] = false
	return c, ctx
}

func safe(render func(map[string]any) (string, error), ctx map[string]any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return render(ctx)
}

func diffAt(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-30)
	return fmt.Sprintf("byte %d: want %q got %q", i, want[lo:min(len(want), i+50)], got[lo:min(len(got), i+50)])
}

func readGolden(path string) []golden {
	raw, err := os.ReadFile(path)
	check(err)
	var out []golden
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var g golden
		check(json.Unmarshal(l, &g))
		out = append(out, g)
	}
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
