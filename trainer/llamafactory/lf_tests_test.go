package llamafactory

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The literal expectations of LLaMA-Factory's own tests at the pinned
// commit: tests/data/processor/test_processor_utils.py,
// tests/data/test_formatter.py and tests/data/test_template.py.

func TestInferSeqlenTable(t *testing.T) {
	// test_processor_utils.py, test_infer_seqlen
	for _, c := range []struct{ in, out [3]int }{
		{[3]int{3000, 2000, 1000}, [3]int{600, 400}},
		{[3]int{2000, 3000, 1000}, [3]int{400, 600}},
		{[3]int{1000, 100, 1000}, [3]int{900, 100}},
		{[3]int{100, 1000, 1000}, [3]int{100, 900}},
		{[3]int{100, 500, 1000}, [3]int{100, 500}},
		{[3]int{500, 100, 1000}, [3]int{500, 100}},
		{[3]int{10, 10, 1000}, [3]int{10, 10}},
	} {
		s, tg := InferSeqlen(c.in[0], c.in[1], c.in[2])
		if s != c.out[0] || tg != c.out[1] {
			t.Errorf("InferSeqlen%v = (%d, %d), want (%d, %d)", c.in, s, tg, c.out[0], c.out[1])
		}
	}
}

var (
	lfFunction = `{"name": "tool_name", "arguments": {"foo": "bar", "size": 10}}`
	lfTools    = `[{"name": "test_tool", "description": "tool_desc", "parameters": {"type": "object", "properties": {"foo": {"type": "string", "description": "foo_desc"}, "bar": {"type": "number", "description": "bar_desc"}}, "required": ["foo"]}}]`
	lfWrapped  = `{"type": "function", "function": {"name": "test_tool", "description": "tool_desc", "parameters": {"type": "object", "properties": {"foo": {"type": "string", "description": "foo_desc"}, "bar": {"type": "number", "description": "bar_desc"}}, "required": ["foo"]}}}`
)

// indent4 is json.dumps(v, indent=4, ensure_ascii=False) of a JSON text.
func indent4(t *testing.T, s string) string {
	v, err := loads(s)
	if err != nil {
		t.Fatal(err)
	}
	return dumps(v, 4)
}

// slotsText writes elements as strings, eos as "</s>".
func slotsText(es []element) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.s
		if e.kind == eEOS {
			out[i] = "</s>"
		}
	}
	return out
}

func TestFormatterExpectations(t *testing.T) {
	fn := func(slots []element, format string) *Template {
		return &Template{function: slots, functionTools: format, tools: format,
			thought: [2]string{"<think>\n", "\n</think>\n\n"}, toolCall: [2]string{"<tool_call>", "</tool_call>"}}
	}
	two := "[" + lfFunction + ", " + lfFunction + "]"
	fcs := []struct {
		name   string
		slots  []element
		format string
		in     string
		want   []string
	}{
		{"function", []element{text("{{content}}"), eos}, "default", lfFunction,
			[]string{"Action: tool_name\nAction Input: {\"foo\": \"bar\", \"size\": 10}", "</s>"}},
		{"multi_function", []element{text("{{content}}"), eos}, "default", two,
			[]string{"Action: tool_name\nAction Input: {\"foo\": \"bar\", \"size\": 10}\nAction: tool_name\nAction Input: {\"foo\": \"bar\", \"size\": 10}", "</s>"}},
		{"glm4_function", []element{text("{{content}}")}, "glm4", lfFunction,
			[]string{"tool_name\n{\"foo\": \"bar\", \"size\": 10}"}},
		{"llama3_function", []element{text("{{content}}<|eot_id|>")}, "llama3", lfFunction,
			[]string{`{"name": "tool_name", "parameters": {"foo": "bar", "size": 10}}<|eot_id|>`}},
		{"llama3_multi_function", []element{text("{{content}}<|eot_id|>")}, "llama3", two,
			[]string{`[{"name": "tool_name", "parameters": {"foo": "bar", "size": 10}}, {"name": "tool_name", "parameters": {"foo": "bar", "size": 10}}]<|eot_id|>`}},
		{"mistral_function", []element{text("[TOOL_CALLS] {{content}}"), eos}, "mistral", lfFunction,
			[]string{`[TOOL_CALLS] [{"name": "tool_name", "arguments": {"foo": "bar", "size": 10}}]`, "</s>"}},
		{"mistral_multi_function", []element{text("[TOOL_CALLS] {{content}}"), eos}, "mistral", two,
			[]string{`[TOOL_CALLS] [{"name": "tool_name", "arguments": {"foo": "bar", "size": 10}}, {"name": "tool_name", "arguments": {"foo": "bar", "size": 10}}]`, "</s>"}},
		{"qwen_function", []element{text("{{content}}<|im_end|>\n")}, "qwen", lfFunction,
			[]string{"<tool_call>\n{\"name\": \"tool_name\", \"arguments\": {\"foo\": \"bar\", \"size\": 10}}\n</tool_call><|im_end|>\n"}},
		{"qwen_multi_function", []element{text("{{content}}<|im_end|>\n")}, "qwen", two,
			[]string{"<tool_call>\n{\"name\": \"tool_name\", \"arguments\": {\"foo\": \"bar\", \"size\": 10}}\n</tool_call>\n<tool_call>\n{\"name\": \"tool_name\", \"arguments\": {\"foo\": \"bar\", \"size\": 10}}\n</tool_call><|im_end|>\n"}},
	}
	for _, c := range fcs {
		got, err := fn(c.slots, c.format).formatFunction(c.in, true)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if g := slotsText(got); strings.Join(g, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, g, c.want)
		}
	}
	date := "15 Jan 2025"
	tcs := []struct{ format, want string }{
		{"default", "You have access to the following tools:\n" +
			"> Tool Name: test_tool\n" +
			"Tool Description: tool_desc\n" +
			"Tool Args:\n" +
			"  - foo (string, required): foo_desc\n" +
			"  - bar (number): bar_desc\n\n" +
			"Use the following format if using a tool:\n" +
			"```\n" +
			"Action: tool name (one of [test_tool])\n" +
			"Action Input: the input to the tool, in a JSON format representing the kwargs " +
			"(e.g. ```{\"input\": \"hello world\", \"num_beams\": 5}```)\n" +
			"```\n"},
		{"glm4", "你是一个名为 ChatGLM 的人工智能助手。你是基于智谱 AI 公司训练的语言模型 GLM-4 模型开发的，" +
			"你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具\n\n" +
			"## test_tool\n\n" + indent4(t, lfTools[1:len(lfTools)-1]) + "\n" +
			"在调用上述函数时，请使用 Json 格式表示调用的参数。"},
		{"llama3", "Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n" +
			"You have access to the following functions. " +
			"To call a function, please respond with JSON for a function call. " +
			`Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}. ` +
			"Do not use variables.\n\n" + indent4(t, lfWrapped) + "\n\n"},
		{"mistral", "[AVAILABLE_TOOLS] [" + lfWrapped + "][/AVAILABLE_TOOLS]"},
		{"qwen", "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
			"You are provided with function signatures within <tools></tools> XML tags:\n<tools>" +
			"\n" + lfWrapped +
			"\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
			"<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, " +
			"\"arguments\": <args-json-object>}\n</tool_call>"},
	}
	for _, c := range tcs {
		got, err := fn(nil, c.format).formatTools(pyStr(lfTools), date)
		if err != nil {
			t.Errorf("%s tool formatter: %v", c.format, err)
		} else if got != c.want {
			t.Errorf("%s tool formatter:\n got %q\nwant %q", c.format, got, c.want)
		}
	}
	// test_empty_formatter, test_string_formatter
	if g := slotsText(apply([]element{text("<s>"), text("Human: {{content}}\nAssistant:")}, "content", "Hi")); strings.Join(g, "|") != "<s>|Human: Hi\nAssistant:" {
		t.Errorf("string formatter: %q", g)
	}
}

var (
	lfMessages = []message{
		{role: roleUser, content: pyStr("How are you")},
		{role: roleAssistant, content: pyStr("I am fine!")},
		{role: roleUser, content: pyStr("你好")},
		{role: roleAssistant, content: pyStr("很高兴认识你！")},
	}
	lfThought = []message{
		{role: roleUser, content: pyStr("How are you")},
		{role: roleAssistant, content: pyStr("<think>\nModel thought here\n</think>\n\nI am fine!")},
		{role: roleUser, content: pyStr("你好")},
		{role: roleAssistant, content: pyStr("<think>\n模型思考内容\n</think>\n\n很高兴认识你！")},
	}
)

// pairTexts encodes msgs and writes each pair's source and target as
// text (bos as <|begin_of_text|>, eos as <|eot_id|>: the Llama-3 tokens).
func pairTexts(t *testing.T, o Options, msgs []message) []string {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := r.encodeMultiturn(msgs, pyStr(""), pyStr(""))
	if err != nil {
		t.Fatal(err)
	}
	w := func(es []element) string {
		var b strings.Builder
		for _, e := range es {
			switch e.kind {
			case eBOS:
				b.WriteString("<|begin_of_text|>")
			case eEOS:
				b.WriteString("<|eot_id|>")
			default:
				b.WriteString(e.s)
			}
		}
		return b.String()
	}
	var out []string
	for _, p := range pairs {
		out = append(out, w(p.src), w(p.tgt))
	}
	return out
}

func TestTemplateExpectations(t *testing.T) {
	// test_encode_multiturn (llama3)
	got := pairTexts(t, Options{Template: "llama3"}, lfMessages)
	want := []string{
		"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHow are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		"I am fine!<|eot_id|>",
		"<|start_header_id|>user<|end_header_id|>\n\n你好<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		"很高兴认识你！<|eot_id|>",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("llama3 multiturn:\n got %q\nwant %q", got, want)
	}
	// test_reasoning_encode_multiturn (qwen3), enable_thinking True, False, None
	yes, no := true, false
	for _, cot := range []bool{true, false} {
		for _, et := range []*bool{&yes, &no, nil} {
			o := Options{Template: "qwen3", EnableThinking: et, EnableThinkingNull: et == nil}
			in := lfMessages
			if cot {
				in = lfThought
			}
			msgs := lfThought
			if !cot || (et != nil && !*et) {
				msgs = lfMessages
			}
			p1 := "<|im_start|>user\nHow are you<|im_end|>\n<|im_start|>assistant\n"
			a1 := msgs[1].content.S + "<|im_end|>\n"
			p2 := "<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n"
			a2 := msgs[3].content.S + "<|im_end|>\n"
			if !cot || (et != nil && !*et) {
				if et != nil && *et {
					a1, a2 = "<think>\n\n</think>\n\n"+a1, "<think>\n\n</think>\n\n"+a2
				} else {
					p1, p2 = p1+"<think>\n\n</think>\n\n", p2+"<think>\n\n</think>\n\n"
				}
			}
			got := pairTexts(t, o, in)
			want := []string{p1, a1, p2, a2}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("qwen3 cot=%v enable_thinking=%v:\n got %q\nwant %q", cot, fmtBool(et), got, want)
			}
		}
	}
	// test_reasoning_encode_multiturn_discarding_history_cot
	for _, discard := range []bool{true, false} {
		for _, et := range []*bool{&yes, &no, nil} {
			o := Options{Template: "qwen3", EnableThinking: et, EnableThinkingNull: et == nil, MaskHistory: discard}
			p1 := "<|im_start|>user\nHow are you<|im_end|>\n<|im_start|>assistant\n"
			p2 := "<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n"
			var a1, a2 string
			if et != nil && !*et {
				a1, a2 = lfMessages[1].content.S+"<|im_end|>\n", lfMessages[3].content.S+"<|im_end|>\n"
				if discard {
					p2 += "<think>\n\n</think>\n\n"
				} else {
					p1 += "<think>\n\n</think>\n\n"
					p2 += "<think>\n\n</think>\n\n"
				}
			} else {
				a1 = lfThought[1].content.S + "<|im_end|>\n"
				if discard {
					a1 = lfMessages[1].content.S + "<|im_end|>\n"
				}
				a2 = lfThought[3].content.S + "<|im_end|>\n"
			}
			got := pairTexts(t, o, lfThought)
			want := []string{p1, a1, p2, a2}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("qwen3 discarding_history_cot=%v enable_thinking=%v:\n got %q\nwant %q", discard, fmtBool(et), got, want)
			}
		}
	}
	// test_qwen2_5_template: the default system in the first prompt
	got = pairTexts(t, Options{Template: "qwen"}, lfMessages)
	if w := "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHow are you<|im_end|>\n<|im_start|>assistant\n"; got[0] != w {
		t.Errorf("qwen first prompt %q, want %q", got[0], w)
	}
}

func fmtBool(b *bool) string {
	if b == nil {
		return "None"
	}
	j, _ := json.Marshal(*b)
	return string(j)
}

// registryFacts are the facts of a registered template ref.py prints.
type registryFacts struct {
	StopWords          []string `json:"stop_words"`
	ReplaceEOS         bool     `json:"replace_eos"`
	EfficientEOS       bool     `json:"efficient_eos"`
	DefaultSystem      string   `json:"default_system"`
	Reasoning          bool     `json:"reasoning"`
	Llama2             bool     `json:"llama2"`
	ThoughtWords       []string `json:"thought_words"`
	ToolCallWords      []string `json:"tool_call_words"`
	FunctionToolFormat string   `json:"function_tool_format"`
	ToolFormat         string   `json:"tool_format"`
}

const registryPath = "testdata/registry.json"

// TestRegistryMatchesLLaMAFactory: each template's stop words, eos
// replacement, efficient_eos, default system, class, thought and tool-call
// words and tool formats are those of LLaMA-Factory's registry
// (testdata/registry.json, printed by ref.py --registry with -update).
func TestRegistryMatchesLLaMAFactory(t *testing.T) {
	if *update {
		if out, err := exec.Command("sh", "testdata/ref/setup.sh").CombinedOutput(); err != nil {
			t.Fatalf("-update needs LLaMA-Factory's source: %s", out)
		}
		out, err := exec.Command("python3", append([]string{"testdata/ref/ref.py", "testdata/ref/lf", "--registry"}, Names()...)...).Output()
		if err != nil {
			t.Fatalf("ref.py --registry: %v", err)
		}
		if err := os.WriteFile(registryPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(registryPath)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	var want map[string]registryFacts
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		tm, _ := Lookup(name)
		got := registryFacts{
			StopWords: tm.StopWords, ReplaceEOS: tm.ReplaceEOS, EfficientEOS: tm.EfficientEOS,
			DefaultSystem: tm.DefaultSystem, Reasoning: tm.class == reasoningClass, Llama2: tm.class == llama2Class,
			ThoughtWords: tm.thought[:], ToolCallWords: tm.toolCall[:],
			FunctionToolFormat: tm.functionTools, ToolFormat: tm.tools,
		}
		if got.StopWords == nil {
			got.StopWords = []string{}
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want[name])
		if string(g) != string(w) {
			t.Errorf("%s:\n got %s\nwant %s", name, g, w)
		}
	}
}
