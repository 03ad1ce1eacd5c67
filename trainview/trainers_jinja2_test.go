package trainview

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
)

// TestTrainerViewsMatchJinja2 renders every real record as axolotl and TRL
// give it to the chat template, and compares the text with Python jinja2
// in transformers' environment (chattemplate/testdata/ref/render.py), so
// that their counts (the text's tokens) are the trainers':
//
//   - axolotl (type: chat_template) parses string tool-call arguments into
//     objects first: Go with ParseArguments, Python with json.loads
//     (testdata/axolotl_args.py), then Qwen3's template (which prints the
//     arguments with tojson) renders both;
//   - TRL with assistant_only_loss renders with its Qwen3 training template
//     (trainer/trl/templates/qwen3_training.jinja, the think block in every
//     assistant turn);
//   - axolotl's named templates (chat_template: chatml, llama3, …;
//     trainer/axolotl/templates), arguments parsed as for Qwen3's.
func TestTrainerViewsMatchJinja2(t *testing.T) {
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
	config := filepath.Join(tdir, "qwen3.tokenizer_config.json")
	qwen3, err := chattemplate.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	trlPath := filepath.Join("..", "trainer", "trl", "templates", "qwen3_training.jinja")
	src, err := os.ReadFile(trlPath)
	if err != nil {
		t.Fatal(err)
	}
	trlTmpl, err := chattemplate.Parse(trlPath, string(src), qwen3.Special)
	if err != nil {
		t.Fatal(err)
	}
	axIn := filepath.Join(t.TempDir(), "axolotl.jsonl")
	if out, err := exec.Command(refPython, filepath.Join("testdata", "axolotl_args.py"), in, axIn).CombinedOutput(); err != nil {
		t.Fatalf("axolotl_args.py: %v\n%s", err, out)
	}
	type run struct {
		name    string
		tmpl    *chattemplate.Template
		args    []string
		prepare func([]byte) ([]byte, error)
	}
	runs := []run{
		{"axolotl_qwen3", qwen3, []string{config, axIn}, ParseArguments},
		{"trl_qwen3_training", trlTmpl, []string{config, in, trlPath}, nil},
	}
	// axolotl's named templates (chat_template: NAME), with Qwen3's
	// special tokens and a bos token (the text is what is compared, not
	// the model's), at the reference's clock (strftime_now).
	special := map[string]string{"bos_token": "<s>"}
	for k, v := range qwen3.Special {
		special[k] = v
	}
	namedConfig := filepath.Join(t.TempDir(), "tokenizer_config.json")
	if b, err := json.Marshal(special); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(namedConfig, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range axolotl.Templates() {
		path := filepath.Join("..", "trainer", "axolotl", "templates", name+".jinja")
		src, _ := axolotl.Template(name)
		tm, err := chattemplate.Parse(path, src, special)
		if err != nil {
			t.Errorf("axolotl %s: %v", name, err)
			continue
		}
		tm.Now = func() time.Time { return refNow }
		runs = append(runs, run{"axolotl_named_" + name, tm, []string{namedConfig, axIn, path}, ParseArguments})
	}
	for _, tt := range runs {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(refPython, append([]string{filepath.Join(refDir, "render.py")}, tt.args...)...)
			cmd.Env = append(os.Environ(), "TZ=UTC", "REF_NOW="+refNow.Format(time.RFC3339))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("render.py: %v", err)
			}
			lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
			if len(lines) != len(cases) {
				t.Fatalf("%d reference lines for %d cases", len(lines), len(cases))
			}
			equal, raised, parsed := 0, 0, 0
			for i, c := range cases {
				msgs := c.Messages
				var err error
				if tt.prepare != nil {
					var m []byte
					if m, err = tt.prepare(msgs); err == nil && !bytes.Equal(m, msgs) {
						parsed++
					}
					msgs = m
				}
				got := ""
				if err == nil {
					got, err = tt.tmpl.RenderValid(msgs, c.Tools)
				}
				eq, both := jinja2Verdict(t, c.Name, lines[i], got, err)
				equal, raised = equal+eq, raised+both
			}
			t.Logf("%s: %d/%d renders equal to jinja2 (%d raised in both; %d with arguments parsed)", tt.name, equal, len(cases), raised, parsed)
		})
	}
}
