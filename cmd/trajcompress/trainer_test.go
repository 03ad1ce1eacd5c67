package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/tokenize"
)

// trainerInput writes ShareGPT records: n long ones that alternate as
// LLaMA-Factory wants, and one with two human turns in a row (which its
// ShareGPT converter skips).
func trainerInput(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	for r := range n {
		var turns []string
		turns = append(turns, `{"from": "system", "value": "You are an agent."}`)
		for i := range 16 {
			turns = append(turns, fmt.Sprintf(`{"from": "human", "value": "step %d of run %d: %s"}`, i, r, strings.Repeat("please look at the logs again ", 6)))
			turns = append(turns, fmt.Sprintf(`{"from": "gpt", "value": "done %d: %s"}`, i, strings.Repeat("I read the file and ran the tests ", 6)))
		}
		fmt.Fprintf(&b, `{"conversations": [%s]}`+"\n", strings.Join(turns, ", "))
	}
	b.WriteString(`{"conversations": [{"from": "human", "value": "a"}, {"from": "human", "value": "b"}, {"from": "gpt", "value": "c"}]}` + "\n")
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// compress --trainer-config with a LLaMA-Factory config counts rows as its
// template does, fits them to its cutoff_len (the target), turns the
// alternation placement on, warns once about an unknown key, repairs the
// row it would skip (two human turns merged) and reports what
// LLaMA-Factory does to each row before and after; validate with the same
// config then finds no row cut or skipped. With --no-repair the row is
// only reported, and validate names it.
func TestCompressLlamaFactoryConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := trainerInput(t, dir, 3)
	cfg := filepath.Join(dir, "lf.yaml")
	if err := os.WriteFile(cfg, []byte("stage: sft\ntemplate: chatml\ncutoff_len: 700\nlearning_rate: 1.0e-4\nmy_key: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, oc, met := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "oc.jsonl"), filepath.Join(dir, "m.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--trainer-config", cfg, "--tokenizer", "o200k_base", "--summary-target-tokens", "100",
		"--input", in, "--output", out, "--outcomes", oc, "--metrics", met, "--quiet"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := strings.Count(stderr.String(), "my_key"); got != 1 || !strings.Contains(stderr.String(), "warning: "+cfg+": keys llamafactory does not know, ignored: my_key") {
		t.Errorf("the unknown key is named %d times: %s", got, stderr.String())
	}
	lines, err := os.ReadFile(oc)
	if err != nil {
		t.Fatal(err)
	}
	var compressed, repaired int
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var o struct {
			Outcome, Reason, ChatTemplateError string
			TokensBefore, TokensAfter          int
			TrainerBefore, TrainerAfter        struct{ Action string }
			Repairs                            []string
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &raw); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(raw["outcome"], &o.Outcome)
		json.Unmarshal(raw["chat_template_error"], &o.ChatTemplateError)
		json.Unmarshal(raw["tokens_after"], &o.TokensAfter)
		json.Unmarshal(raw["trainer_before"], &o.TrainerBefore)
		json.Unmarshal(raw["trainer_after"], &o.TrainerAfter)
		json.Unmarshal(raw["repairs"], &o.Repairs)
		switch o.Outcome {
		case "compressed":
			compressed++
			if o.TokensAfter > 700 || o.TrainerBefore.Action != "cut" || o.TrainerAfter.Action != "" {
				t.Errorf("compressed row: %s", l)
			}
		case "skipped_under_target":
			repaired++
			if len(o.Repairs) != 1 || o.Repairs[0] != "merged 1 consecutive turns of the same role" || o.TrainerBefore.Action != "skip" || o.TrainerAfter.Action != "" {
				t.Errorf("repaired row: %s", l)
			}
		default:
			t.Errorf("unexpected row: %s", l)
		}
	}
	if compressed != 3 || repaired != 1 {
		t.Errorf("%d compressed, %d repaired", compressed, repaired)
	}
	outb, _ := os.ReadFile(out)
	if !strings.Contains(string(outb), `{"from": "human", "value": "a\n\nb"}, {"from": "gpt", "value": "c"}`) {
		t.Errorf("repaired row as written:\n%s", outb[bytes.LastIndexByte(outb[:len(outb)-1], '\n')+1:])
	}
	var m struct {
		Trainer map[string]int `json:"trainer"`
		Run     struct {
			ChatTemplate string `json:"chat_template"`
		} `json:"run"`
	}
	b, _ := os.ReadFile(met)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Trainer["rows_lossy_before"] != 4 || m.Trainer["rows_lossy_after"] != 0 || m.Trainer["rows_skipped_before"] != 1 || m.Trainer["rows_repaired"] != 1 || m.Trainer["tokens_lost_after"] != 0 {
		t.Errorf("trainer section %v", m.Trainer)
	}
	if m.Run.ChatTemplate != "LLaMA-Factory template chatml" {
		t.Errorf("run.chat_template %q", m.Run.ChatTemplate)
	}

	// validate: before, every long row is cut; after, none is.
	for _, tc := range []struct {
		file string
		want string
	}{
		{in, "4 records: 0 accepted, 4 would be rejected (llamafactory at 700: 3 cut, 0 dropped, 1 skipped for their shape (1 repairable by compress)"},
		{out, "4 records: 4 accepted, 0 would be rejected (llamafactory at 700: 0 cut, 0 dropped, 0 skipped for their shape (0 repairable by compress), 0 tokens lost"},
	} {
		stdout.Reset()
		stderr.Reset()
		run(context.Background(), []string{"validate", "--trainer-config", cfg, "--tokenizer", "o200k_base", tc.file}, nil, &stdout, &stderr)
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("validate %s: %s", filepath.Base(tc.file), stderr.String())
		}
		if tc.file == in && !strings.Contains(stdout.String(), ":1: LLaMA-Factory cuts it to cutoff_len 700 (infer_seqlen): ") {
			t.Errorf("validate lines: %s", stdout.String())
		}
	}

	// --no-repair: the row is left as it is, uncompressible with the
	// converter's reason.
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"compress", "--trainer-config", cfg, "--tokenizer", "o200k_base", "--summary-target-tokens", "100", "--no-repair",
		"--input", in, "--output", out, "--outcomes", oc, "--quiet"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("--no-repair: exit %d: %s", code, stderr.String())
	}
	lines, _ = os.ReadFile(oc)
	last := strings.TrimSpace(string(lines))
	last = last[strings.LastIndexByte(last, '\n')+1:]
	if !strings.Contains(last, `"outcome":"uncompressible","reason":"chat_template"`) || !strings.Contains(last, "LLaMA-Factory skips the row: invalid_role_tag") || strings.Contains(last, "repairs") {
		t.Errorf("--no-repair: %s", last)
	}
}

// validate with an axolotl or TRL config says what that trainer does to a
// row over its limit; a config it cannot read names the file, line and key.
func TestValidateTrainerConfigs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := trainerInput(t, dir, 1)
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"axolotl.yml", "base_model: m\nchat_template: jinja\nchat_template_jinja: " + tmpl + "\nsequence_len: 500\n", ":1: axolotl drops it: "},
		{"axolotl_trunc.yml", "base_model: m\nchat_template_jinja: " + tmpl + "\nsequence_len: 500\nexcess_length_strategy: truncate\n", ":1: axolotl truncates it to sequence_len 500: the last "},
		{"trl.yaml", "model_name_or_path: m\nchat_template_path: " + tmpl + "\nmax_length: 500\n", ":1: TRL cuts it to max_length 500: the last "},
	} {
		cfg := filepath.Join(dir, tc.name)
		if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"validate", "--trainer-config", cfg, "--tokenizer", "o200k_base", in}, nil, &stdout, &stderr)
		if code != exitError || !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%s: exit %d\n%s%s", tc.name, code, stdout.String(), stderr.String())
		}
	}
	// Under assistant_only_loss, a row with no assistant turn is one TRL
	// raises on, whatever its length.
	noAnswer, trl := filepath.Join(dir, "no_answer.jsonl"), filepath.Join(dir, "trl_aol.yaml")
	marked := "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}"
	for p, b := range map[string]string{noAnswer: `{"messages": [{"role": "user", "content": "hi"}]}` + "\n", tmpl + ".marked": marked,
		trl: "model_name_or_path: m\nchat_template_path: " + tmpl + ".marked\nmax_length: 500\nassistant_only_loss: true\n"} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var so, se bytes.Buffer
	code := run(context.Background(), []string{"validate", "--trainer-config", trl, "--tokenizer", "o200k_base", noAnswer}, nil, &so, &se)
	if code != exitError || !strings.Contains(so.String(), ":1: TRL raises (its tokenization stops): You're using `assistant_only_loss=True`, but at least one example has no assistant tokens.") ||
		!strings.Contains(so.String()+se.String(), "0 cut, 1 dropped") {
		t.Errorf("TRL, no assistant turn: exit %d\n%s%s", code, so.String(), se.String())
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("template: qwen3\ncutoff_len: long\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code = run(context.Background(), []string{"validate", "--trainer-config", bad, "--tokenizer", "o200k_base", in}, nil, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), bad+":2: cutoff_len: \"long\" is not a whole number") {
		t.Errorf("bad config: exit %d: %s", code, stderr.String())
	}
}

// compress with an axolotl config renames the observation and
// function_call turns of a ShareGPT row (roles its default mapping passes
// to the template as they are), names the repairs in the outcome line and
// counts them in the metrics; validate then finds the row trained whole.
// With --no-repair the row is written as read and validate reports it.
func TestCompressAxolotlRoles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	row := `{"conversations": [{"from": "human", "value": "weather?"}, {"from": "function_call", "value": "{\"name\": \"w\", \"arguments\": {}}"}, {"from": "observation", "value": "sunny"}, {"from": "gpt", "value": "Sunny."}]}`
	tmpl := filepath.Join(dir, "t.jinja")
	cfg := filepath.Join(dir, "ax.yml")
	for p, b := range map[string]string{in: row + "\n", tmpl: "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
		cfg: "base_model: m\nsequence_len: 1000\nchat_template_jinja: " + tmpl + "\n"} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, noRepair := range []bool{false, true} {
		out, oc, met := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "oc.jsonl"), filepath.Join(dir, "m.json")
		args := []string{"compress", "--trainer-config", cfg, "--tokenizer", "o200k_base", "--input", in, "--output", out, "--outcomes", oc, "--metrics", met, "--quiet"}
		if noRepair {
			args = append(args, "--no-repair")
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		ocb, _ := os.ReadFile(oc)
		mb, _ := os.ReadFile(met)
		outb, _ := os.ReadFile(out)
		stdout.Reset()
		stderr.Reset()
		run(context.Background(), []string{"validate", "--trainer-config", cfg, "--tokenizer", "o200k_base", out}, nil, &stdout, &stderr)
		if !noRepair {
			if !strings.Contains(string(ocb), `"repairs":["renamed 1 function_call → gpt turns (a role axolotl's roles mapping does not render)","renamed 1 observation → tool turns`) ||
				!strings.Contains(string(mb), `"rows_repaired": 1`) || !strings.Contains(string(outb), `{"from": "tool", "value": "sunny"}`) ||
				!strings.Contains(stderr.String(), "1 records: 1 accepted, 0 would be rejected") ||
				// Before its repair axolotl would have trained on it without
				// the messages it cannot map: unmapped, never a skip.
				!strings.Contains(string(ocb), `"trainer_before":{"action":"unmapped"`) || !strings.Contains(string(mb), `"rows_skipped_before": 0`) {
				t.Errorf("repaired:\n%s\n%s\n%s\n%s", ocb, mb, outb, stderr.String())
			}
			continue
		}
		if strings.Contains(string(ocb), "repairs") || string(outb) != row+"\n" ||
			!strings.Contains(stdout.String(), `axolotl gives the template roles it does not render: "function_call" (1 turns), "observation" (1 turns)`) ||
			!strings.Contains(stderr.String(), "1 with roles the template does not render") {
			t.Errorf("--no-repair:\n%s\n%s\n%s%s", ocb, outb, stdout.String(), stderr.String())
		}
		// Its count is of the messages as axolotl gives them to the
		// template: roles as written, the function_call's value as text.
		tok, err := tokenize.New("o200k_base")
		if err != nil {
			t.Fatal(err)
		}
		want := tok.Count("<|im_start|>user\nweather?<|im_end|>\n<|im_start|>function_call\n{\"name\": \"w\", \"arguments\": {}}<|im_end|>\n" +
			"<|im_start|>observation\nsunny<|im_end|>\n<|im_start|>assistant\nSunny.<|im_end|>\n")
		if !strings.Contains(string(ocb), fmt.Sprintf(`"tokens_before":%d,`, want)) {
			t.Errorf("--no-repair: counted not as axolotl renders the row (%d tokens): %s", want, ocb)
		}
	}
}

// Under axolotl's sample_packing, a row whose trained tokens cannot be
// counted (a training_detail, content parts with train flags, under a
// tokenizer without token offsets: o200k_base) is not silently taken as
// trained: validate prints a note with the labeller's reason and counts
// it, compress's outcome line carries the reason and its metrics count it.
func TestAxolotlTrainedUnknownReported(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	row := `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"text": "think", "train": false}, {"text": " answer", "train": true}]}]}`
	tmpl := filepath.Join(dir, "t.jinja")
	cfg := filepath.Join(dir, "ax.yml")
	for p, b := range map[string]string{in: row + "\n", tmpl: "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
		cfg: "base_model: m\nsequence_len: 1000\nsample_packing: true\nchat_template_jinja: " + tmpl + "\n"} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"validate", "--trainer-config", cfg, "--tokenizer", "o200k_base", in}, nil, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), ":1: note: axolotl: its trained tokens could not be counted (axolotl: no token offsets") ||
		!strings.Contains(stderr.String(), "1 accepted") || !strings.Contains(stderr.String(), "1 whose trained tokens could not be counted") {
		t.Errorf("validate: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out, oc, met := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "oc.jsonl"), filepath.Join(dir, "m.json")
	stderr.Reset()
	if code := run(context.Background(), []string{"compress", "--trainer-config", cfg, "--tokenizer", "o200k_base", "--input", in, "--output", out,
		"--outcomes", oc, "--metrics", met, "--quiet"}, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("compress: exit %d: %s", code, stderr.String())
	}
	ocb, _ := os.ReadFile(oc)
	mb, _ := os.ReadFile(met)
	if !strings.Contains(string(ocb), `"trainer_before":{"action":"","tokens_lost":0,"trained_unknown":"axolotl: no token offsets`) ||
		!strings.Contains(string(mb), `"rows_trained_unknown_before": 1`) || !strings.Contains(string(mb), `"rows_trained_unknown_after": 1`) {
		t.Errorf("compress:\n%s\n%s", ocb, mb)
	}
}
