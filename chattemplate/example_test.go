package chattemplate_test

import (
	"errors"
	"fmt"

	"github.com/trajcompress/trajcompress/chattemplate"
)

// Load a model's tokenizer_config.json and render a conversation as
// transformers' apply_chat_template(messages, tools=tools, tokenize=False)
// does: here Qwen3's template, which prints the tool schemas in its system
// turn and a call's arguments as JSON, keys in the record's order. The
// text is jinja2's for the same input (testdata/ref/render.py).
func ExampleLoad() {
	tmpl, err := chattemplate.Load("testdata/templates/qwen3.tokenizer_config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	messages := []byte(`[
		{"role": "user", "content": "What is in /tmp?"},
		{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "ls", "arguments": {"path": "/tmp", "all": true}}}]},
		{"role": "tool", "content": "a.txt"},
		{"role": "assistant", "content": "One file: a.txt."}
	]`)
	tools := []byte(`[{"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]`)
	text, err := tmpl.Render(messages, tools)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(text)
	// Output:
	// <|im_start|>system
	// # Tools
	//
	// You may call one or more functions to assist with the user query.
	//
	// You are provided with function signatures within <tools></tools> XML tags:
	// <tools>
	// {"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
	// </tools>
	//
	// For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
	// <tool_call>
	// {"name": <function-name>, "arguments": <args-json-object>}
	// </tool_call><|im_end|>
	// <|im_start|>user
	// What is in /tmp?<|im_end|>
	// <|im_start|>assistant
	// <tool_call>
	// {"name": "ls", "arguments": {"path": "/tmp", "all": true}}
	// </tool_call><|im_end|>
	// <|im_start|>user
	// <tool_response>
	// a.txt
	// </tool_response><|im_end|>
	// <|im_start|>assistant
	// <think>
	//
	// </think>
	//
	// One file: a.txt.<|im_end|>
}

// Parse a template from its source, with the special tokens it reads. A
// template that raises gives an error wrapping ErrTemplate with the
// template's message, never a crash.
func ExampleParse() {
	src := `{{ bos_token }}{% for m in messages %}{% if m.role not in ["user", "assistant"] %}` +
		`{{ raise_exception("unknown role " + m.role) }}{% endif %}` +
		`[{{ m.role }}] {{ m.content }}{{ eos_token }}{% endfor %}`
	tmpl, err := chattemplate.Parse("tiny", src, map[string]string{"bos_token": "<s>", "eos_token": "</s>"})
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := tmpl.Render([]byte(`[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]`), nil)
	fmt.Printf("%q %v\n", text, err)

	_, err = tmpl.Render([]byte(`[{"role": "narrator", "content": "once"}]`), nil)
	fmt.Println(errors.Is(err, chattemplate.ErrTemplate))
	fmt.Println(err)
	// Output:
	// "<s>[user] hi</s>[assistant] hello</s>" <nil>
	// true
	// chat template: unknown role narrator
}
