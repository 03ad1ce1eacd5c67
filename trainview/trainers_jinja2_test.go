package trainview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
	"github.com/trajcompress/trajcompress/traj"
)

// TestTrainerViewsMatchJinja2 renders every real record as axolotl and TRL
// give it to the chat template, and compares the text with Python jinja2
// in transformers' environment (chattemplate/testdata/ref/render.py), so
// that their counts (the text's tokens) are the trainers':
//
//   - axolotl (type: chat_template): every record as axolotl reads it, in
//     Go Mapper{Axolotl: true} (a ShareGPT turn's role as written, its
//     value the content; an OpenAI message's null members left out, its
//     content list kept; only a "system" field prepended; tool parameters
//     strings parsed), string tool-call arguments parsed (ParseArguments)
//     and axolotl's default roles mapping with content parts joined
//     (axolotl.Rules.Messages); in Python axolotl's own
//     get_conversation_thread, _get_tools and build_prompt at 067b021c on
//     the record as the file holds it (trainer/axolotl/testdata/ref/
//     view.py), read with message_property_mappings role: from, content:
//     value (ShareGPT) or the defaults (messages records); the ShareGPT
//     records, LLaMA-Factory's synthetic ShareGPT rows, the messages
//     records and synthetic messages rows (testdata/axolotl_messages.jsonl:
//     nulls at any depth, parts, blocks, system fields) are counted apart
//     in the log; rendered with Qwen3's template
//     (which prints the arguments with tojson);
//   - TRL with assistant_only_loss renders with its Qwen3 training template
//     (trainer/trl/templates/qwen3_training.jinja, the think block in every
//     assistant turn);
//   - axolotl's named templates (chat_template: chatml, llama3, …;
//     trainer/axolotl/templates), the records read as for Qwen3's.
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
	// Every record as axolotl reads it: Go's Mapper{Axolotl: true}, and
	// axolotl's own code on the record as the file holds it (view.py).
	realLines := func(each func(name string, line []byte)) {
		eachRealLine(t, func(path string, n int, line []byte) {
			each(fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(path)), filepath.Base(path), n), line)
		})
	}
	shareCases, shareIn := axolotlViews(t, traj.FormShareGPT, realLines)
	msgCases, msgIn := axolotlViews(t, traj.FormMessage, realLines)
	// LLaMA-Factory's ShareGPT rows written for its tests (function_call
	// and observation turns, which the real ShareGPT data has none of: an
	// axolotl reading that mapped roles before the template would differ
	// on them only).
	synthPath := filepath.Join("..", "trainer", "llamafactory", "testdata", "synthetic.jsonl")
	synthCases, synthIn := axolotlViews(t, traj.FormShareGPT, func(each func(name string, line []byte)) {
		b, err := os.ReadFile(synthPath)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			each(fmt.Sprintf("synthetic.jsonl:%d", n+1), line)
		}
	})
	// OpenAI rows written for it (testdata/axolotl_messages.jsonl): null
	// members at any depth (remove_none_values), a tools list and a tools
	// string with null members, OpenAI parts and LLaMA-Factory blocks, a
	// "system" field beside and before a system message, "system_prompt".
	msgSynthCases, msgSynthIn := axolotlViews(t, traj.FormMessage, func(each func(name string, line []byte)) {
		b, err := os.ReadFile(filepath.Join("testdata", "axolotl_messages.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			each(fmt.Sprintf("axolotl_messages.jsonl:%d", n+1), line)
		}
	})
	if n := len(shareCases.cases) + len(msgCases.cases); n != len(cases) {
		t.Fatalf("%d views read as axolotl reads them, %d as the trainers map them", n, len(cases))
	}
	// view.py needs axolotl's code at its commit (setup.sh); without it
	// the axolotl runs skip, saying so.
	axRef := filepath.Join("..", "trainer", "axolotl", "testdata", "ref")
	axSkip := ""
	if out, err := exec.Command("sh", filepath.Join(axRef, "setup.sh")).CombinedOutput(); err != nil {
		axSkip = fmt.Sprintf("axolotl's reference is not set up (view.py reads axolotl's code): %v: %s", err, out)
	}
	view, render := filepath.Join(axRef, "view.py"), filepath.Join(refDir, "render.py")
	qwen3Path := filepath.Join(t.TempDir(), "qwen3.jinja")
	if err := os.WriteFile(qwen3Path, []byte(qwen3.Source(false)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A group is cases and the reference command that renders them.
	type group struct {
		label string
		cases []refCase
		errs  []error // the Go mapping's refusal, per case
		ref   []string
	}
	type run struct {
		name    string
		tmpl    *chattemplate.Template
		groups  []group
		axolotl bool
	}
	axolotlRun := func(name string, tm *chattemplate.Template, config, path string) run {
		return run{name, tm, []group{
			{"ShareGPT records read as axolotl reads them", shareCases.cases, shareCases.errs, []string{view, config, shareIn, path}},
			{"LLaMA-Factory's synthetic ShareGPT rows read as axolotl reads them", synthCases.cases, synthCases.errs, []string{view, config, synthIn, path}},
			{"messages records read as axolotl reads them", msgCases.cases, msgCases.errs, []string{view, config, msgIn, path}},
			{"synthetic messages rows read as axolotl reads them", msgSynthCases.cases, msgSynthCases.errs, []string{view, config, msgSynthIn, path}},
		}, true}
	}
	runs := []run{
		axolotlRun("axolotl_qwen3", qwen3, config, qwen3Path),
		{"trl_qwen3_training", trlTmpl, []group{{"records", cases, nil, []string{render, config, in, trlPath}}}, false},
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
		runs = append(runs, axolotlRun("axolotl_named_"+name, tm, namedConfig, path))
	}
	rules := axolotl.NewRules(nil, []string{"assistant"}, false, "", "", "turn", "turn", false)
	for _, tt := range runs {
		t.Run(tt.name, func(t *testing.T) {
			if tt.axolotl && axSkip != "" {
				t.Skip(axSkip)
			}
			var all tally
			for _, g := range tt.groups {
				cmd := exec.Command(refPython, g.ref...)
				cmd.Env = append(os.Environ(), "TZ=UTC", "REF_NOW="+refNow.Format(time.RFC3339))
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v", filepath.Base(g.ref[0]), err)
				}
				lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
				if len(lines) != len(g.cases) {
					t.Fatalf("%d reference lines for %d cases", len(lines), len(g.cases))
				}
				var n tally
				for i, c := range g.cases {
					msgs := []byte(c.Messages)
					var err error
					if g.errs != nil {
						err = g.errs[i]
					}
					if tt.axolotl && err == nil {
						var m []byte
						if m, err = ParseArguments(msgs); err == nil {
							if !bytes.Equal(m, msgs) {
								n.parsed++
							}
							if g.errs != nil { // axolotl's roles mapping, content parts joined
								m, _, err = rules.Messages(m)
							}
						}
						msgs = m
					}
					got := ""
					if err == nil {
						got, err = tt.tmpl.RenderValid(msgs, c.Tools)
					}
					n.add(jinja2Verdict(t, c.Name, lines[i], got, err))
				}
				if len(tt.groups) > 1 {
					t.Logf("%s, %s: %d/%d equal (%d raised in both; %d with arguments parsed)", tt.name, g.label, n.equal, n.n, n.raised, n.parsed)
				}
				all.n, all.equal, all.raised, all.parsed = all.n+n.n, all.equal+n.equal, all.raised+n.raised, all.parsed+n.parsed
			}
			t.Logf("%s: %d/%d renders equal to jinja2 (%d raised in both; %d with arguments parsed)", tt.name, all.equal, all.n, all.raised, all.parsed)
		})
	}
}

// tally counts renders compared with the reference.
type tally struct{ n, equal, raised, parsed int }

func (t *tally) add(equal, raised int) {
	t.n, t.equal, t.raised = t.n+1, t.equal+equal, t.raised+raised
}

// axolotlRead are records' views as axolotl reads them, by name.
type axolotlRead struct {
	cases []refCase
	errs  []error // Mapper{Axolotl: true}'s refusal
	names map[string]bool
}

// axolotlViews maps every record of form that lines gives as axolotl reads
// it (Mapper{Axolotl: true}), as it is and with its tools swapped as in
// realViews, and writes view.py's input for them: the record as the file
// holds it, with the dataset keys axolotl reads it with (a ShareGPT
// record's message_property_mappings role: from, content: value; a
// messages record's the defaults).
func axolotlViews(t *testing.T, form traj.Form, lines func(each func(name string, line []byte))) (axolotlRead, string) {
	out := axolotlRead{names: map[string]bool{}}
	var buf bytes.Buffer
	m := Mapper{Axolotl: true}
	mappings := json.RawMessage("null")
	if form == traj.FormShareGPT {
		mappings = json.RawMessage(`{"role":"from","content":"value"}`)
	}
	lines(func(name string, line []byte) {
		rec, err := traj.Decode(line, traj.Pos{}, traj.Schema{})
		if err != nil || rec.Dialect.Form() != form {
			return
		}
		msgs, merr := m.Messages(rec.Dialect, rec.Turns, m.system(rec, rec.System))
		own, terr := m.Tools(rec)
		for _, swap := range []bool{false, true} {
			c := refCase{Name: name, Messages: msgs, Tools: own}
			err := merr
			var tools json.RawMessage
			if swap {
				c.Name += swappedSuffix
				c.Tools = nil
				if _, has := rec.Field("tools"); !has || own == nil && terr == nil {
					c.Tools, tools = json.RawMessage(extraTools), json.RawMessage(extraTools)
				}
			} else if err == nil {
				err = terr
			}
			out.cases, out.errs, out.names[c.Name] = append(out.cases, c), append(out.errs, err), true
			b, err := json.Marshal(struct {
				Name          string          `json:"name"`
				Record        json.RawMessage `json:"record"`
				FieldMessages string          `json:"field_messages"`
				Mappings      json.RawMessage `json:"message_property_mappings"`
				Swap          bool            `json:"swap_tools"`
				Tools         json.RawMessage `json:"tools"`
			}{c.Name, line, rec.TurnsKey(), mappings, swap, tools})
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
	})
	in := filepath.Join(t.TempDir(), "axolotl_views.jsonl")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, in
}
