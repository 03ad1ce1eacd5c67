package jobcore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainview"
)

// markedTemplate is a ChatML template marking the assistant turns with
// {% generation %}, as TRL's training templates do.
const markedTemplate = "{% for m in messages %}{% if m.role == 'assistant' %}<|im_start|>assistant\n{% generation %}{{ m.content }}<|im_end|>\n{% endgeneration %}{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}"

// TRL's fates, shared by validate (FateOf) and the metrics (TrainerRule):
// a row cut to max_length is dropped under assistant_only_loss when no
// trained token is left (the first assistant turn starts after the cut
// under keep_start; the last one ends before the kept part under
// keep_end), and only then; under packing nothing is dropped: bfd cuts
// the end, bfd_split and wrapped split the row.
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
	} {
		s, err := trainercfg.Parse("trl.yaml", []byte("model_name_or_path: m\nchat_template_path: "+tmpl+"\n"+tc.yaml), "")
		if err != nil {
			t.Fatal(err)
		}
		rc, err := TrainerCounter(&s, tok, "")
		if err != nil {
			t.Fatal(err)
		}
		v, err := trainview.Mapper{}.Record([]byte(rows[tc.row]))
		if err != nil {
			t.Fatal(err)
		}
		f, err := FateOf(&s, rc, v, s.Limit)
		if err != nil {
			t.Fatal(err)
		}
		m := TrainerRule(&s, rc, s.Limit)(f.Tokens, func() (trainview.View, error) { return v, nil })
		if f.Action != tc.action || m.Action != tc.action || m.Lost != f.Lost {
			t.Errorf("%s, %s: validate %s (%d lost: %s), metrics %s (%d lost); want %s", tc.name, tc.row, f.Action, f.Lost, f.Why, m.Action, m.Lost, tc.action)
		}
	}
}
