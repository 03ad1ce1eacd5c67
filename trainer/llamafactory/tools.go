package llamafactory

import (
	"fmt"
	"regexp"
	"strings"
)

// pyError is an exception LLaMA-Factory's code raises: the row's
// pre-processing stops there.
type pyError struct {
	Type, Msg string
}

func (e *pyError) Error() string { return e.Type + ": " + e.Msg }

func raise(typ, format string, a ...any) error {
	return &pyError{typ, fmt.Sprintf(format, a...)}
}

const defaultToolPrompt = "You have access to the following tools:\n%s" +
	"Use the following format if using a tool:\n" +
	"```\n" +
	"Action: tool name (one of [%s])\n" +
	"Action Input: the input to the tool, in a JSON format representing the kwargs " +
	"(e.g. ```{\"input\": \"hello world\", \"num_beams\": 5}```)\n" +
	"```\n"

const glm4ToolPrompt = "你是一个名为 ChatGLM 的人工智能助手。你是基于智谱 AI 公司训练的语言模型 GLM-4 模型开发的，" +
	"你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具%s"

const llama3ToolPrompt = "Cutting Knowledge Date: December 2023\nToday Date: %s\n\n" +
	"You have access to the following functions. To call a function, please respond with JSON for a function call. " +
	"Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}. " +
	"Do not use variables.\n\n%s"

const qwenToolPrompt = "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
	"You are provided with function signatures within <tools></tools> XML tags:\n<tools>%s" +
	"\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
	"<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, " +
	"\"arguments\": <args-json-object>}\n</tool_call>"

// funcCall is tool_utils.FunctionCall: a name and the arguments as
// json.dumps wrote them.
type funcCall struct{ name, args string }

// toolFunc returns tool.get("function", "") if tool.get("type") ==
// "function" else tool.
func toolFunc(tool value) value {
	if typ, _ := tool.get("type"); typ.K == kStr && typ.S == "function" {
		f, ok := tool.get("function")
		if !ok {
			return pyStr("")
		}
		return f
	}
	return tool
}

// wrapTool returns tool if tool.get("type") == "function" else {"type":
// "function", "function": tool}.
func wrapTool(tool value) value {
	if typ, _ := tool.get("type"); typ.K == kStr && typ.S == "function" {
		return tool
	}
	return value{K: kDict, O: []member{{"type", pyStr("function")}, {"function", tool}}}
}

// subscript is obj[key] for a dict (KeyError), other types raise TypeError.
func subscript(obj value, key string) (value, error) {
	if obj.K != kDict {
		return value{}, raise("TypeError", "%s indices must be integers", obj.typeName())
	}
	v, ok := obj.get(key)
	if !ok {
		return value{}, raise("KeyError", "%s", strRepr(key))
	}
	return v, nil
}

// dictGet is obj.get(key, def): AttributeError when obj is not a dict.
func dictGet(obj value, key string, def value) (value, error) {
	if obj.K != kDict {
		return value{}, raise("AttributeError", "'%s' object has no attribute 'get'", obj.typeName())
	}
	if v, ok := obj.get(key); ok {
		return v, nil
	}
	return def, nil
}

// toolText is ToolUtils.tool_formatter(tools) of format f.
func toolText(f string, tools []value, date string) (string, error) {
	for _, t := range tools {
		if t.K != kDict {
			return "", raise("AttributeError", "'%s' object has no attribute 'get'", t.typeName())
		}
	}
	var b strings.Builder
	switch f {
	case "default":
		var names []string
		for _, tool := range tools {
			tool = toolFunc(tool)
			params, err := subscript(tool, "parameters")
			if err != nil {
				return "", err
			}
			props, err := subscript(params, "properties")
			if err != nil {
				return "", err
			}
			if props.K != kDict {
				return "", raise("AttributeError", "'%s' object has no attribute 'items'", props.typeName())
			}
			required, err := dictGet(params, "required", value{K: kList})
			if err != nil {
				return "", err
			}
			var pt strings.Builder
			for _, m := range props.O {
				param := m.Val
				req, enum, items := "", "", ""
				in, err := pyIn(m.Key, required)
				if err != nil {
					return "", err
				}
				if in {
					req = ", required"
				}
				e, err := dictGet(param, "enum", value{})
				if err != nil {
					return "", err
				}
				if e.truthy() {
					j, err := pyJoin(e)
					if err != nil {
						return "", err
					}
					enum = ", should be one of [" + j + "]"
				}
				it, _ := dictGet(param, "items", value{})
				if it.truthy() {
					ty, err := dictGet(it, "type", pyStr(""))
					if err != nil {
						return "", err
					}
					items = ", where each item should be " + pyFormat(ty)
				}
				typ, _ := dictGet(param, "type", pyStr(""))
				desc, _ := dictGet(param, "description", pyStr(""))
				fmt.Fprintf(&pt, "  - %s (%s%s): %s%s%s\n", m.Key, pyFormat(typ), req, pyFormat(desc), enum, items)
			}
			name, err := subscript(tool, "name")
			if err != nil {
				return "", err
			}
			desc, _ := dictGet(tool, "description", pyStr(""))
			fmt.Fprintf(&b, "> Tool Name: %s\nTool Description: %s\nTool Args:\n%s\n", pyFormat(name), pyFormat(desc), pt.String())
			if name.K != kStr {
				return "", raise("TypeError", "sequence item: expected str instance, %s found", name.typeName())
			}
			names = append(names, name.S)
		}
		return fmt.Sprintf(defaultToolPrompt, b.String(), strings.Join(names, ", ")), nil
	case "qwen":
		for _, tool := range tools {
			b.WriteString("\n" + dumps(wrapTool(tool), 0))
		}
		return fmt.Sprintf(qwenToolPrompt, b.String()), nil
	case "llama3":
		for _, tool := range tools {
			b.WriteString(dumps(wrapTool(tool), 4) + "\n\n")
		}
		return fmt.Sprintf(llama3ToolPrompt, date, b.String()), nil
	case "mistral":
		w := value{K: kList}
		for _, tool := range tools {
			w.A = append(w.A, wrapTool(tool))
		}
		return "[AVAILABLE_TOOLS] " + dumps(w, 0) + "[/AVAILABLE_TOOLS]", nil
	case "glm4":
		for _, tool := range tools {
			tool = toolFunc(tool)
			name, err := subscript(tool, "name")
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "\n\n## %s\n\n%s\n在调用上述函数时，请使用 Json 格式表示调用的参数。", pyFormat(name), dumps(tool, 4))
		}
		return fmt.Sprintf(glm4ToolPrompt, b.String()), nil
	}
	return "", raise("ValueError", "Tool utils `%s` not found.", f)
}

// pyIn is `key in container` for a list (equality) or str (substring).
func pyIn(key string, c value) (bool, error) {
	switch c.K {
	case kList:
		for _, x := range c.A {
			if x.K == kStr && x.S == key {
				return true, nil
			}
		}
		return false, nil
	case kStr:
		return strings.Contains(c.S, key), nil
	case kDict:
		_, ok := c.get(key)
		return ok, nil
	}
	return false, raise("TypeError", "argument of type '%s' is not iterable", c.typeName())
}

// pyJoin is ", ".join(v) for a list of str or a str.
func pyJoin(v value) (string, error) {
	switch v.K {
	case kStr:
		return strings.Join(strings.Split(v.S, ""), ", "), nil
	case kList:
		parts := make([]string, len(v.A))
		for i, x := range v.A {
			if x.K != kStr {
				return "", raise("TypeError", "sequence item %d: expected str instance, %s found", i, x.typeName())
			}
			parts[i] = x.S
		}
		return strings.Join(parts, ", "), nil
	case kDict:
		parts := make([]string, len(v.O))
		for i, m := range v.O {
			parts[i] = m.Key
		}
		return strings.Join(parts, ", "), nil
	}
	return "", raise("TypeError", "can only join an iterable")
}

// functionText is ToolUtils.function_formatter(functions) of format f.
func functionText(f string, fs []funcCall) (string, error) {
	loadArgs := func(a string) (value, error) {
		v, err := loads(a)
		if err != nil {
			return value{}, raise("JSONDecodeError", "arguments")
		}
		return v, nil
	}
	switch f {
	case "default":
		parts := make([]string, len(fs))
		for i, c := range fs {
			parts[i] = "Action: " + c.name + "\nAction Input: " + c.args
		}
		return strings.Join(parts, "\n"), nil
	case "qwen", "mistral", "llama3":
		key := "arguments"
		if f == "llama3" {
			key = "parameters"
		}
		objs := make([]value, len(fs))
		for i, c := range fs {
			a, err := loadArgs(c.args)
			if err != nil {
				return "", err
			}
			objs[i] = value{K: kDict, O: []member{{"name", pyStr(c.name)}, {key, a}}}
		}
		switch f {
		case "qwen":
			parts := make([]string, len(objs))
			for i, o := range objs {
				parts[i] = "<tool_call>\n" + dumps(o, 0) + "\n</tool_call>"
			}
			return strings.Join(parts, "\n"), nil
		case "mistral":
			return dumps(value{K: kList, A: objs}, 0), nil
		default:
			if len(objs) == 1 {
				return dumps(objs[0], 0), nil
			}
			return dumps(value{K: kList, A: objs}, 0), nil
		}
	case "glm4":
		if len(fs) > 1 {
			return "", raise("ValueError", "GLM-4 does not support parallel functions.")
		}
		if len(fs) == 0 {
			return "", raise("IndexError", "list index out of range")
		}
		return fs[0].name + "\n" + fs[0].args, nil
	}
	return "", raise("ValueError", "Tool utils `%s` not found.", f)
}

// parseFunctions is FunctionFormatter's _parse_functions.
func parseFunctions(s string) ([]funcCall, error) {
	v, err := loads(s)
	if err != nil {
		return nil, raise("RuntimeError", "Invalid JSON format in function message")
	}
	calls := v.A
	if v.K != kList {
		calls = []value{v}
	}
	out := make([]funcCall, 0, len(calls))
	for _, tc := range calls {
		name, err := subscript(tc, "name")
		if err != nil {
			return nil, err
		}
		args, err := subscript(tc, "arguments")
		if err != nil {
			return nil, err
		}
		if name.K != kStr {
			// FunctionCall(name, …) keeps any value; the formatters then
			// write it with an f-string or json.dumps: only str is modelled.
			return nil, raise("TypeError", "function name is a %s", name.typeName())
		}
		out = append(out, funcCall{name.S, dumps(args, 0)})
	}
	return out, nil
}

// delimited compiles the regex rf"{re.escape(a)}(.*?){re.escape(b)}" with
// re.DOTALL.
func delimited(w [2]string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)` + regexp.QuoteMeta(w[0]) + `(.*?)` + regexp.QuoteMeta(w[1]))
}

// formatFunction is FunctionFormatter.apply: the text of the function
// message's content (its calls written in the tool format, a thought or
// the text beside a <tool_call> block kept in front) put in the slots.
// words is false where the template calls it without thought and
// tool-call words (Llama2Template).
func (t *Template) formatFunction(content string, words bool) ([]element, error) {
	var fstr string
	var m []int
	if words {
		m = delimited(t.toolCall).FindStringSubmatchIndex(content)
	}
	if m == nil {
		var th []int
		if words {
			th = delimited(t.thought).FindStringIndex(content)
		}
		jsonPart := content
		if th != nil {
			jsonPart = strings.ReplaceAll(content, content[th[0]:th[1]], "")
		}
		fs, err := parseFunctions(jsonPart)
		if err != nil {
			return nil, err
		}
		if fstr, err = functionText(t.functionTools, fs); err != nil {
			return nil, err
		}
		if th != nil {
			fstr = content[th[0]:th[1]] + fstr
		}
	} else {
		thought := strings.ReplaceAll(content, content[m[0]:m[1]], "")
		fs, err := parseFunctions(content[m[2]:m[3]])
		if err != nil {
			return nil, err
		}
		if fstr, err = functionText(t.functionTools, fs); err != nil {
			return nil, err
		}
		fstr = thought + fstr
	}
	return apply(t.function, "content", fstr), nil
}

// formatTools is ToolFormatter.apply(content=tools)[0].
func (t *Template) formatTools(tools value, date string) (string, error) {
	if tools.K != kStr {
		return "", raise("TypeError", "the JSON object must be str, bytes or bytearray, not %s", tools.typeName())
	}
	v, err := loads(tools.S)
	if err != nil {
		return "", raise("RuntimeError", "Invalid JSON format in tool description")
	}
	switch v.K {
	case kList:
		if len(v.A) == 0 {
			return "", nil
		}
		return toolText(t.tools, v.A, date)
	case kDict:
		if len(v.O) == 0 {
			return "", nil
		}
		return "", raise("AttributeError", "'str' object has no attribute 'get'")
	case kStr:
		if v.S == "" {
			return "", nil
		}
		return "", raise("AttributeError", "'str' object has no attribute 'get'")
	}
	return "", raise("TypeError", "object of type '%s' has no len()", v.typeName())
}
