package llamafactory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// runes counts one token per code point: ref.py's CharTokenizer.
type runes struct{}

func (runes) Count(s string) int { return utf8.RuneCountInString(s) }

// cutConfig is a configuration and cutoff_len the cutoff loop is compared
// under.
type cutConfig struct {
	refConfig
	TrainOnPrompt bool `json:"train_on_prompt,omitempty"`
	CutoffLen     int  `json:"cutoff_len"`
}

func (c cutConfig) String() string {
	s := c.refConfig.String()
	if c.TrainOnPrompt {
		s += " train_on_prompt"
	}
	return fmt.Sprintf("%s cutoff_len=%d", s, c.CutoffLen)
}

var cutConfigs = func() []cutConfig {
	var cs []cutConfig
	for _, n := range []int{64, 1000, 8192} {
		cs = append(cs,
			cutConfig{refConfig: refConfig{Template: "qwen3"}, CutoffLen: n},
			cutConfig{refConfig: refConfig{Template: "glm4"}, CutoffLen: n},
			cutConfig{refConfig: refConfig{Template: "llama3", MaskHistory: true}, CutoffLen: n},
			cutConfig{refConfig: refConfig{Template: "qwen3", MaskHistory: true}, CutoffLen: n},
			cutConfig{refConfig: refConfig{Template: "default"}, TrainOnPrompt: true, CutoffLen: n},
			cutConfig{refConfig: refConfig{Template: "mistral"}, CutoffLen: n},
		)
	}
	return cs
}()

const cutGoldenPath = "testdata/cutoff.tsv"

// TestCutoffMatchesSupervised runs supervised.py's _encode_data_example
// (with a one-token-per-code-point tokenizer) on the real records with
// their own tools, and compares len(input_ids) and the trained labels
// with Renderer.Cutoff's Length and Trained (testdata/cutoff.tsv, written
// by -update).
func TestCutoffMatchesSupervised(t *testing.T) {
	cases := ownCases(t)
	if testing.Short() && !*update {
		var some []refCase
		for i := 0; i < len(cases); i += 10 {
			some = append(some, cases[i])
		}
		t.Logf("-short: every tenth record (%d of %d)", len(some), len(cases))
		cases = some
	}
	if *update {
		regenerateCutoff(t, cases)
	}
	want := readTable(t, cutGoldenPath)
	compared, equal, cut := 0, 0, 0
	for _, c := range cases {
		w := want[c.Name]
		if len(w) != len(cutConfigs) {
			t.Errorf("%s: %d results in %s, want %d (run with -update)", c.Name, len(w), cutGoldenPath, len(cutConfigs))
			continue
		}
		for i, cc := range cutConfigs {
			o := cc.options(c.Formatting, c.tags)
			o.TrainOnPrompt = cc.TrainOnPrompt
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			system := ""
			if c.System != nil {
				system = c.rec.System
			}
			row := r.Encode(c.rec, c.rec.Turns, system, Tokens{Counter: runes{}, HasBOS: true})
			got := "-"
			if row.Skip == nil {
				k := r.Cutoff(row, cc.CutoffLen)
				got = fmt.Sprintf("%d:%d", k.Length, k.Trained)
				if len(k.Cut)+len(k.Dropped) > 0 {
					cut++
				}
			}
			compared++
			if got == w[i] {
				equal++
			} else {
				t.Errorf("%s %s: got %s, supervised.py %s", c.Name, cc, got, w[i])
			}
		}
	}
	t.Logf("cutoff loop: %d results compared, %d equal (%d with a pair cut)", compared, equal, cut)
}

// ownCases are the real records with their own tools and tags.
func ownCases(t *testing.T) []refCase {
	var cases []refCase
	for _, c := range realCases(t) {
		if !strings.Contains(c.Name, "#") {
			cases = append(cases, c)
		}
	}
	return cases
}

func regenerateCutoff(t *testing.T, cases []refCase) {
	if out, err := exec.Command("sh", "testdata/ref/setup.sh").CombinedOutput(); err != nil {
		t.Fatalf("-update needs LLaMA-Factory's source: %s", out)
	}
	in := writeCases(t, cases, cutConfigs)
	cmd := exec.Command("python3", "testdata/ref/ref.py", "testdata/ref/lf", in, "--cutoff")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ref.py: %v", err)
	}
	results := map[string][]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r struct {
			Name   string `json:"name"`
			Config int    `json:"config"`
			Result struct {
				Length  *int   `json:"length"`
				Trained int    `json:"trained"`
				Fatal   string `json:"fatal"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if results[r.Name] == nil {
			results[r.Name] = make([]string, len(cutConfigs))
		}
		res := "-"
		if r.Result.Length != nil {
			res = fmt.Sprintf("%d:%d", *r.Result.Length, r.Result.Trained)
		}
		results[r.Name][r.Config] = res
	}
	var g bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&g, "%s\t%s\n", c.Name, strings.Join(results[c.Name], "\t"))
	}
	if err := os.WriteFile(cutGoldenPath, g.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
