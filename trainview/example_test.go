package trainview_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/trainview"
)

// sharegpt is a LLaMA-Factory ShareGPT record with a tool call and its
// result, and its tool schemas stored as a string.
const sharegpt = `{"conversations": [` +
	`{"from": "human", "value": "What is in /tmp?"}, ` +
	`{"from": "function_call", "value": "{\"name\": \"ls\", \"arguments\": {\"path\": \"/tmp\"}}"}, ` +
	`{"from": "observation", "value": "a.txt"}, ` +
	`{"from": "gpt", "value": "One file: a.txt."}], ` +
	`"system": "You list files.", ` +
	`"tools": "[{\"type\": \"function\", \"function\": {\"name\": \"ls\", \"parameters\": {\"type\": \"object\"}}}]"}`

// Map a ShareGPT record to the messages and tools a trainer passes to the
// chat template: roles as LLaMA-Factory converts them, the function_call
// turn as an assistant message with a tool_calls entry, the system prompt
// held outside the turns first, the tools string parsed.
func ExampleMapper_Record() {
	v, err := trainview.Mapper{}.Record([]byte(sharegpt))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(v.Messages))
	fmt.Println(string(v.Tools))
	// Output:
	// [{"role":"system","content":"You list files."},{"role":"user","content":"What is in /tmp?"},{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"ls","arguments":{"path": "/tmp"}}}]},{"role":"tool","content":"a.txt"},{"role":"assistant","content":"One file: a.txt."}]
	// [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]
}

// words counts the words of a text: a stand-in for the model's tokenizer
// (tokenize.LoadHF of its tokenizer.json, which counts each special token
// as one) so that the example needs no tokenizer file.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// Count a record as a trainer's tokenizer sees it: the view rendered with
// the model's chat template (here Qwen3's), then counted: the template's
// own text (role headers, the tools block, the call as JSON) counts too.
func ExampleCounter_Count() {
	tmpl, err := chattemplate.Load("../chattemplate/testdata/templates/qwen3.tokenizer_config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := trainview.Mapper{}.Record([]byte(sharegpt))
	if err != nil {
		fmt.Println(err)
		return
	}
	c := trainview.Counter{Template: tmpl, Tokens: words{}}
	n, err := c.Count(v)
	if err != nil {
		fmt.Println(err)
		return
	}
	var msgs []struct{ Content string }
	if err := json.Unmarshal(v.Messages, &msgs); err != nil {
		fmt.Println(err)
		return
	}
	own := 0
	for _, m := range msgs {
		own += words{}.Count(m.Content)
	}
	fmt.Printf("the turns' texts: %d words; as the trainer sees the record: %d\n", own, n)
	// Output:
	// the turns' texts: 11 words; as the trainer sees the record: 85
}

// Resolve the --chat-template setting: "none" is no template (per-turn
// counting), a path loads that template.
func ExampleResolve() {
	none, err := trainview.Resolve("none", words{})
	fmt.Println(none == nil, err)
	tmpl, err := trainview.Resolve("../chattemplate/testdata/templates/llama3_1.tokenizer_config.json", words{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tmpl.Special["bos_token"])
	// Output:
	// true <nil>
	// <|begin_of_text|>
}
