package llamafactory

import (
	"sort"
	"strings"
)

// elemKind is what a slot or an encoded element is: text, a named token
// ({"token": …}), or the tokenizer's bos or eos token ({"bos_token"},
// {"eos_token"}).
type elemKind uint8

const (
	eText elemKind = iota
	eToken
	eBOS
	eEOS
)

// element is one slot or one element of an encoded message, as
// Template._convert_elements_to_ids sees it.
type element struct {
	kind elemKind
	s    string
}

func text(s string) element { return element{kind: eText, s: s} }

var (
	bos = element{kind: eBOS}
	eos = element{kind: eEOS}
)

// class is a template's Python class.
type class uint8

const (
	plainClass     class = iota // Template
	llama2Class                 // Llama2Template: the system text joins the first user message
	reasoningClass              // ReasoningTemplate: an empty think block in every pair
)

// Template is a template of LLaMA-Factory's registry (template.py,
// register_template), with the formatters it registers and the defaults
// register_template fills in.
type Template struct {
	Name          string
	prefix        []element
	user          []element
	assistant     []element
	system        []element
	function      []element
	functionTools string // the function formatter's tool format
	observation   []element
	tools         string // the tool formatter's tool format
	DefaultSystem string
	EfficientEOS  bool
	// StopWords are the template's stop_words: LLaMA-Factory's
	// fix_special_tokens makes the first the eos token when ReplaceEOS,
	// and adds the others as additional special tokens, so a Tokens
	// counter must count each as one token (the models these templates
	// are for already have them as special tokens).
	StopWords  []string
	ReplaceEOS bool
	class      class
	// multimodal is set for a template whose mm_plugin is not the base
	// one: its process_messages first checks that the messages hold as
	// many <image>, <video>, <audio> placeholders as the row has media.
	multimodal bool
	thought    [2]string
	toolCall   [2]string
}

const qwenDefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// tmplSpec is register_template's arguments; nil means not given.
type tmplSpec struct {
	name                                 string
	user, assistant, system, observation []element
	function                             []element
	functionTools                        string
	tools                                string
	prefix                               []element
	defaultSystem                        string
	efficientEOS                         bool
	stopWords                            []string
	replaceEOS                           bool
	class                                class
	multimodal                           bool
}

// register is register_template: the defaults it fills in for the
// formatters not given.
func register(s tmplSpec) *Template {
	defaultSlots := []element{text("{{content}}"), eos}
	if s.efficientEOS {
		defaultSlots = []element{text("{{content}}")}
	}
	t := &Template{
		Name:          s.name,
		prefix:        s.prefix,
		user:          s.user,
		assistant:     s.assistant,
		system:        s.system,
		function:      s.function,
		functionTools: s.functionTools,
		observation:   s.observation,
		tools:         s.tools,
		DefaultSystem: s.defaultSystem,
		EfficientEOS:  s.efficientEOS,
		StopWords:     s.stopWords,
		ReplaceEOS:    s.replaceEOS,
		class:         s.class,
		multimodal:    s.multimodal,
		thought:       [2]string{"<think>\n", "\n</think>\n\n"},
		toolCall:      [2]string{"<tool_call>", "</tool_call>"},
	}
	content := []element{text("{{content}}")}
	if t.function == nil {
		t.function, t.functionTools = defaultSlots, "default"
		if s.assistant != nil {
			t.function = s.assistant
		}
	}
	if t.assistant == nil {
		t.assistant = defaultSlots
	}
	if t.observation == nil {
		t.observation = content
		if s.user != nil {
			t.observation = s.user
		}
	}
	if t.user == nil {
		t.user = content
	}
	if t.system == nil {
		t.system = content
	}
	if t.tools == "" {
		t.tools = "default"
	}
	return t
}

var (
	imUser    = []element{text("<|im_start|>user\n{{content}}<|im_end|>\n<|im_start|>assistant\n")}
	imAsst    = []element{text("{{content}}<|im_end|>\n")}
	imSystem  = []element{text("<|im_start|>system\n{{content}}<|im_end|>\n")}
	qwenObs   = []element{text("<|im_start|>user\n<tool_response>\n{{content}}\n</tool_response><|im_end|>\n<|im_start|>assistant\n")}
	llama3Hdr = "<|start_header_id|>assistant<|end_header_id|>\n\n"
	imEnd     = []string{"<|im_end|>"}
)

// templates are the registry entries implemented, as template.py
// registers them at the pinned commit.
var templates = map[string]func() *Template{
	"qwen": func() *Template {
		return register(tmplSpec{name: "qwen", user: imUser, assistant: imAsst, system: imSystem,
			function: imAsst, functionTools: "qwen", observation: qwenObs, tools: "qwen",
			defaultSystem: qwenDefaultSystem, stopWords: imEnd, replaceEOS: true})
	},
	"qwen3": func() *Template {
		return register(tmplSpec{name: "qwen3", user: imUser, assistant: imAsst, system: imSystem,
			function: imAsst, functionTools: "qwen", observation: qwenObs, tools: "qwen", class: reasoningClass, stopWords: imEnd, replaceEOS: true})
	},
	"qwen3_nothink": func() *Template {
		return register(tmplSpec{name: "qwen3_nothink", user: imUser, assistant: imAsst, system: imSystem,
			function: imAsst, functionTools: "qwen", observation: qwenObs, tools: "qwen", stopWords: imEnd, replaceEOS: true})
	},
	"llama3": func() *Template {
		return register(tmplSpec{name: "llama3",
			user:          []element{text("<|start_header_id|>user<|end_header_id|>\n\n{{content}}<|eot_id|>" + llama3Hdr)},
			assistant:     []element{text("{{content}}<|eot_id|>")},
			system:        []element{text("<|start_header_id|>system<|end_header_id|>\n\n{{content}}<|eot_id|>")},
			function:      []element{text("{{content}}<|eot_id|>")},
			functionTools: "llama3",
			observation:   []element{text("<|start_header_id|>ipython<|end_header_id|>\n\n{{content}}<|eot_id|>" + llama3Hdr)},
			tools:         "llama3",
			prefix:        []element{bos},
			stopWords:     []string{"<|eot_id|>", "<|eom_id|>"},
			replaceEOS:    true,
		})
	},
	"mistral": func() *Template {
		return register(tmplSpec{name: "mistral",
			user:          []element{text("[INST] {{content}}[/INST]")},
			assistant:     []element{text(" {{content}}"), eos},
			system:        []element{text("{{content}}\n\n")},
			function:      []element{text("[TOOL_CALLS] {{content}}"), eos},
			functionTools: "mistral",
			observation:   []element{text(`[TOOL_RESULTS] {"content": {{content}}}[/TOOL_RESULTS]`)},
			tools:         "mistral",
			prefix:        []element{bos},
			class:         llama2Class,
		})
	},
	"glm4": func() *Template {
		return register(tmplSpec{name: "glm4",
			user:          []element{text("<|user|>\n{{content}}<|assistant|>")},
			assistant:     []element{text("\n{{content}}")},
			system:        []element{text("<|system|>\n{{content}}")},
			function:      []element{text("{{content}}")},
			functionTools: "glm4",
			observation:   []element{text("<|observation|>\n{{content}}<|assistant|>")},
			tools:         "glm4",
			prefix:        []element{text("[gMASK]<sop>")},
			efficientEOS:  true,
			stopWords:     []string{"<|user|>", "<|observation|>"},
		})
	},
	"deepseek3": func() *Template {
		return register(tmplSpec{name: "deepseek3",
			user:   []element{text("<｜User｜>{{content}}<｜Assistant｜>")},
			prefix: []element{bos},
		})
	},
	"gemma3": func() *Template {
		return register(tmplSpec{name: "gemma3",
			user:        []element{text("<start_of_turn>user\n{{content}}<end_of_turn>\n<start_of_turn>model\n")},
			assistant:   []element{text("{{content}}<end_of_turn>\n")},
			system:      []element{text("{{content}}\n\n")},
			observation: []element{text("<start_of_turn>tool\n{{content}}<end_of_turn>\n<start_of_turn>model\n")},
			prefix:      []element{bos},
			class:       llama2Class,
			multimodal:  true, // mm_plugin gemma3
			stopWords:   []string{"<end_of_turn>"},
			replaceEOS:  true,
		})
	},
	"chatml": func() *Template {
		return register(tmplSpec{name: "chatml", user: imUser, assistant: imAsst, system: imSystem,
			observation: []element{text("<|im_start|>tool\n{{content}}<|im_end|>\n<|im_start|>assistant\n")},
			stopWords:   []string{"<|im_end|>", "<|im_start|>"}, replaceEOS: true})
	},
	"default": func() *Template {
		return register(tmplSpec{name: "default",
			user:      []element{text("Human: {{content}}"), eos, text("\nAssistant:")},
			assistant: []element{text("{{content}}"), eos, text("\n")},
			system:    []element{text("System: {{content}}"), eos, text("\n")},
		})
	},
	"empty": func() *Template {
		return register(tmplSpec{name: "empty", assistant: []element{text("{{content}}")}})
	},
}

// Names returns the names of the templates implemented, sorted.
func Names() []string {
	names := make([]string, 0, len(templates))
	for n := range templates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ToolFormats returns the tool formats implemented, sorted.
func ToolFormats() []string {
	return []string{"default", "glm4", "llama3", "mistral", "qwen"}
}

// Lookup returns a fresh copy of the registered template name.
func Lookup(name string) (*Template, bool) {
	f, ok := templates[name]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Reasoning reports whether the template is a ReasoningTemplate (it adds
// an empty think block to the pairs whose response has none).
func (t *Template) Reasoning() bool { return t.class == reasoningClass }

// withToolFormat is get_template_and_fix_tokenizer's tool_format override:
// the function formatter becomes FunctionFormatter(default slots, format)
// and the tool formatter ToolFormatter(format).
func (t *Template) withToolFormat(f string) {
	t.function = []element{text("{{content}}"), eos}
	if t.EfficientEOS {
		t.function = []element{text("{{content}}")}
	}
	t.functionTools, t.tools = f, f
}

// apply is StringFormatter.apply: each text slot has the first
// "{{name}}" of each kwarg replaced, in the kwargs' order.
func apply(slots []element, kv ...string) []element {
	out := make([]element, 0, len(slots))
	for _, s := range slots {
		if s.kind == eText {
			v := s.s
			for i := 0; i+1 < len(kv); i += 2 {
				v = strings.Replace(v, "{{"+kv[i]+"}}", kv[i+1], 1)
			}
			s = text(v)
		}
		out = append(out, s)
	}
	return out
}
