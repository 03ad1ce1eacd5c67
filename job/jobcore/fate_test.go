package jobcore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

// markedTemplate is a ChatML template marking the assistant turns with
// {% generation %}, as TRL's training templates do.
const markedTemplate = "{% for m in messages %}{% if m.role == 'assistant' %}<|im_start|>assistant\n{% generation %}{{ m.content }}<|im_end|>\n{% endgeneration %}{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}"

// TRL's fates, shared by validate (FateOf) and the metrics (TrainerRule):
// a row cut to max_length is dropped under assistant_only_loss when no
// trained token is left (the first assistant turn starts after the cut
// under keep_start; the last one ends before the kept part under
// keep_end), and only then; under packing nothing is dropped: bfd cuts
// the end, bfd_split and wrapped split the row. Under assistant_only_loss
// a row with no assistant turn, whatever its length, is one TRL raises on
// (its assistant mask holds no trained token).
func TestTRLFates(t *testing.T) {
	tok, err := tokenize.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tmpl, []byte(markedTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("the logs say the build failed again ", 40) // ~280 tokens
	rows := map[string]string{
		"prompt first": `{"messages": [{"role": "user", "content": "` + long + `"}, {"role": "assistant", "content": "ok"}]}`,
		"answer first": `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "` + long + `"}]}`,
		"answer late":  `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "` + long + `"}]}`,
		"no answer":    `{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}`,
	}
	for _, tc := range []struct {
		name, yaml, row, action string
	}{
		{"keep_start", "assistant_only_loss: true\nmax_length: 100\n", "prompt first", trainercfg.OverDrop},
		{"keep_start", "assistant_only_loss: true\nmax_length: 100\n", "answer first", trainercfg.OverTruncate},
		{"keep_start", "assistant_only_loss: true\nmax_length: 100\n", "answer late", trainercfg.OverTruncate},
		{"keep_end", "assistant_only_loss: true\nmax_length: 100\ntruncation_mode: keep_end\n", "answer first", trainercfg.OverDrop},
		{"keep_end", "assistant_only_loss: true\nmax_length: 100\ntruncation_mode: keep_end\n", "prompt first", trainercfg.OverTruncateStart},
		{"all tokens trained", "max_length: 100\n", "prompt first", trainercfg.OverTruncate},
		{"bfd", "assistant_only_loss: true\nmax_length: 100\npacking: true\n", "prompt first", trainercfg.OverTruncate},
		{"bfd_split", "assistant_only_loss: true\nmax_length: 100\npacking: true\npacking_strategy: bfd_split\n", "prompt first", trainercfg.OverSplit},
		{"wrapped", "max_length: 100\npacking: true\npacking_strategy: wrapped\n", "answer late", trainercfg.OverSplit},
		{"under the limit", "assistant_only_loss: true\nmax_length: 1000\n", "prompt first", ""},
		{"no assistant turn", "assistant_only_loss: true\nmax_length: 1000\n", "no answer", trainercfg.OverRaise},
		{"no assistant turn, packed", "assistant_only_loss: true\nmax_length: 1000\npacking: true\n", "no answer", trainercfg.OverRaise},
		{"no assistant turn, all trained", "max_length: 1000\n", "no answer", ""},
	} {
		f, m := fates(t, tok, "model_name_or_path: m\nchat_template_path: "+tmpl+"\n"+tc.yaml, rows[tc.row])
		if f.Action != tc.action || m.Action != tc.action || m.Lost != f.Lost {
			t.Errorf("%s, %s: validate %s (%d lost: %s), metrics %s (%d lost); want %s", tc.name, tc.row, f.Action, f.Lost, f.Why, m.Action, m.Lost, tc.action)
		}
		if tc.action == trainercfg.OverRaise && !strings.Contains(f.Why, "has no assistant tokens") {
			t.Errorf("%s: validate says %q, not TRL's reason", tc.name, f.Why)
		}
	}
}

// chatMLFile writes a ChatML template (no tools) to a temporary file.
func chatMLFile(t *testing.T) string {
	t.Helper()
	tmpl := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// fates is what the trainer of config yaml does to row, as validate
// (FateOf) and the metrics (TrainerRule) say it.
func fates(t *testing.T, tok tokenize.Counter, yaml, row string) (Fate, metrics.TrainerFate) {
	t.Helper()
	s, err := trainercfg.Parse("config.yaml", []byte(yaml), "")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := TrainerCounter(&s, tok, "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := trainview.Mapper{}.Record([]byte(row))
	if err != nil {
		t.Fatal(err)
	}
	f, err := FateOf(&s, rc, v, s.Limit)
	if err != nil {
		t.Fatal(err)
	}
	return f, TrainerRule(&s, rc, s.Limit)(f.Tokens, func() (trainview.View, error) { return v, nil })
}

// axolotl's fates: under sample_packing a row with no trained token is
// dropped, whatever its length (its roles_to_train, its training flags),
// and so is a row truncated to sequence_len that keeps none; without it
// such a row is kept; a row over the limit reports its trained tokens.
func TestAxolotlFates(t *testing.T) {
	tok, err := tokenize.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := chatMLFile(t)
	long := strings.Repeat("the logs say the build failed again ", 40) // ~280 tokens
	rows := map[string]string{
		"question":    `{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "only a question"}]}`,
		"not trained": `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok", "train": false}]}`,
		"trained":     `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}`,
		"late answer": `{"messages": [{"role": "user", "content": "` + long + `"}, {"role": "assistant", "content": "ok"}]}`,
		"early":       `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "` + long + `"}]}`,
	}
	base := "base_model: m\nchat_template_jinja: " + tmpl + "\n"
	ds := "datasets:\n  - path: x\n    type: chat_template\n    message_field_training: train\n"
	for _, tc := range []struct {
		yaml, row, action, why string
	}{
		{"sequence_len: 100\nsample_packing: true\n", "question", trainercfg.OverDrop, "no trained token"},
		{"sequence_len: 100\nsample_packing: true\n" + ds, "not trained", trainercfg.OverDrop, "no trained token"},
		{"sequence_len: 100\n" + ds, "not trained", "", ""},
		{"sequence_len: 100\nsample_packing: true\n" + ds, "trained", "", ""},
		{"sequence_len: 100\nsample_packing: true\nexcess_length_strategy: truncate\n", "late answer", trainercfg.OverDrop, "once truncated to sequence_len 100"},
		{"sequence_len: 100\nexcess_length_strategy: truncate\n", "late answer", trainercfg.OverTruncate, "1 of its 1 trained"},
		{"sequence_len: 100\nsample_packing: true\nexcess_length_strategy: truncate\n", "early", trainercfg.OverTruncate, "of its"},
		{"sequence_len: 100\n", "early", trainercfg.OverDrop, "axolotl drops it: "},
	} {
		f, m := fates(t, tok, base+tc.yaml, rows[tc.row])
		if f.Action != tc.action || m.Action != tc.action || m.Lost != f.Lost || !strings.Contains(f.Why, tc.why) {
			t.Errorf("%q, %s: validate %s (%d lost: %s), metrics %s (%d lost); want %s, %q", tc.yaml, tc.row, f.Action, f.Lost, f.Why, m.Action, m.Lost, tc.action, tc.why)
		}
	}
}

// A ShareGPT row with observation and function_call turns, which axolotl's
// default roles mapping passes to the template as they are: validate and
// the metrics say "unmapped" (and compress repairs it); the repair renames
// them tool and gpt, after which the row is trained as the template
// renders it; an OpenAI row is only reported.
func TestAxolotlRoles(t *testing.T) {
	tok, err := tokenize.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := chatMLFile(t)
	base := "base_model: m\nsequence_len: 1000\nchat_template_jinja: " + tmpl + "\n"
	row := `{"conversations": [{"from": "human", "value": "weather?"}, {"from": "function_call", "value": "{\"name\": \"w\", \"arguments\": {}}"}, {"from": "observation", "value": "sunny"}, {"from": "gpt", "value": "Sunny."}]}`
	f, m := fates(t, tok, base, row)
	if f.Action != ActionUnmapped || m.Action != ActionUnmapped || !f.Repairable ||
		!strings.Contains(f.Why, `"function_call" (1 turns), "observation" (1 turns)`) {
		t.Errorf("validate %s %v: %s; metrics %s", f.Action, f.Repairable, f.Why, m.Action)
	}
	s := trainercfg.Defaults(trainercfg.Axolotl, "", "")
	rec, err := traj.Decode([]byte(row), traj.Pos{}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	turns, done := AxolotlRepair(AxolotlRules(&s))(rec)
	want := `{"conversations": [{"from": "human", "value": "weather?"}, {"from": "gpt", "value": "{\"name\": \"w\", \"arguments\": {}}"}, {"from": "tool", "value": "sunny"}, {"from": "gpt", "value": "Sunny."}]}`
	if got := string(rec.AppendJSON(nil, turns)); got != want || len(done) != 2 {
		t.Errorf("repair:\n got %s %q\nwant %s", got, done, want)
	}
	// The roles mapping of the config: observation mapped to tool needs
	// no repair.
	mapped := base + "datasets:\n  - path: x\n    type: chat_template\n    roles:\n      user: [human]\n      assistant: [gpt, function_call]\n      tool: [observation]\n"
	if f, _ := fates(t, tok, mapped, row); f.Action != "" {
		t.Errorf("mapped roles: %s: %s", f.Action, f.Why)
	}
	openai := `{"messages": [{"role": "user", "content": "a"}, {"role": "function", "name": "f", "content": "r"}, {"role": "assistant", "content": "b"}]}`
	if f, _ := fates(t, tok, base, openai); f.Action != ActionUnmapped || f.Repairable {
		t.Errorf("openai: %s %v: %s", f.Action, f.Repairable, f.Why)
	}
}

// A row whose trained tokens axolotl's fate depends on but which cannot be
// counted (a training_detail — content parts with train flags — under a
// tokenizer without token offsets, here a tiktoken encoding:
// trainview.ErrNoOffsets) is not taken as trained silently: validate's
// reason and the metrics' fate carry the labeller's error, under
// sample_packing (whatever the length) and for a row over the limit.
func TestAxolotlTrainedUnknown(t *testing.T) {
	tok, err := tokenize.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	base := "base_model: m\nchat_template_jinja: " + chatMLFile(t) + "\n"
	long := strings.Repeat("the logs say the build failed again ", 40) // ~280 tokens
	parts := func(q string) string {
		return `{"messages": [{"role": "user", "content": "` + q + `"}, {"role": "assistant", "content": [{"text": "think", "train": false}, {"text": " answer", "train": true}]}]}`
	}
	for _, tc := range []struct {
		yaml, row, action string
		metrics           bool // the metrics label only under sample_packing
	}{
		{"sequence_len: 1000\nsample_packing: true\n", parts("hi"), "", true},
		{"sequence_len: 100\n", parts(long), trainercfg.OverDrop, false},
		{"sequence_len: 100\nsample_packing: true\nexcess_length_strategy: truncate\n", parts(long), trainercfg.OverTruncate, true},
		// Dropped for its length, whatever its labels: the metrics do not
		// label it.
		{"sequence_len: 100\nsample_packing: true\n", parts(long), trainercfg.OverDrop, false},
	} {
		f, m := fates(t, tok, base+tc.yaml, tc.row)
		if f.Action != tc.action || m.Action != tc.action {
			t.Errorf("%q: validate %s, metrics %s; want %s", tc.yaml, f.Action, m.Action, tc.action)
		}
		if !errors.Is(f.TrainedErr, trainview.ErrNoOffsets) || f.Trained != -1 || !strings.Contains(f.Why, "its trained tokens could not be counted (axolotl: no token offsets") {
			t.Errorf("%q: trained %d, error %v, why %q; want ErrNoOffsets said in why", tc.yaml, f.Trained, f.TrainedErr, f.Why)
		}
		if got := m.TrainedUnknown != ""; got != tc.metrics || got && !strings.Contains(m.TrainedUnknown, "no token offsets") {
			t.Errorf("%q: metrics trained_unknown %q", tc.yaml, m.TrainedUnknown)
		}
	}
	// A row without a training detail is labelled as before.
	f, m := fates(t, tok, base+"sequence_len: 1000\nsample_packing: true\n", `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}`)
	if f.TrainedErr != nil || f.Trained <= 0 || m.TrainedUnknown != "" || f.Why != "" {
		t.Errorf("plain row: trained %d, %v, %q", f.Trained, f.TrainedErr, f.Why)
	}
}
