package llamafactory

import (
	"strings"

	"github.com/trajcompress/trajcompress/traj"
)

// LLaMA-Factory's roles (data_utils.Role).
const (
	roleUser        = "user"
	roleAssistant   = "assistant"
	roleSystem      = "system"
	roleFunction    = "function"
	roleObservation = "observation"
)

// Tags are a dataset's tags in dataset_info.json ("tags"): the keys of a
// message's role and content and the role names. "" is a tag the dataset
// leaves unset (None in LLaMA-Factory: a "tags" mapping sets the tags it
// does not name to None), which only a null or absent role equals.
type Tags struct {
	Role, Content                                  string
	User, Assistant, Observation, Function, System string
}

// ShareGPTTags are DatasetAttr's defaults (parser.py), what a dataset
// without a "tags" mapping gets.
var ShareGPTTags = Tags{Role: "from", Content: "value", User: "human", Assistant: "gpt",
	Observation: "observation", Function: "function_call", System: "system"}

// OpenAITags are the tags an OpenAI-messages dataset is given: LLaMA-
// Factory's data/README.md ("OpenAI Format") names role, content, user,
// assistant and system; "tool" is named as the observation tag, without
// which a tool message is not accepted.
var OpenAITags = Tags{Role: "role", Content: "content", User: "user", Assistant: "assistant",
	Observation: "tool", System: "system"}

// tagIs reports whether role equals tag (a None tag equals only None).
func tagIs(role value, tag string) bool {
	if tag == "" {
		return role.K == kNone
	}
	return role.K == kStr && role.S == tag
}

type message struct {
	role       string
	content    value
	first, end int // the turns it was made of
}

// example is the converter's output: _prompt, _response, _system, _tools.
type example struct {
	prompt, response []message
	system           value
	tools            value
	skip             string // the warning it logged when it returned an empty example
}

// mapping is the converters' tag_mapping dict: a later entry with the same
// tag wins, as in a dict literal.
func (g Tags) mapping(role value) (string, bool) {
	pairs := [][2]string{{g.User, roleUser}, {g.Assistant, roleAssistant}, {g.Observation, roleObservation},
		{g.Function, roleFunction}, {g.System, roleSystem}}
	for i := len(pairs) - 1; i >= 0; i-- {
		if tagIs(role, pairs[i][0]) {
			return pairs[i][1], true
		}
	}
	return "", false
}

// rawMessages decodes the turns' JSON objects, a missing key read as None
// (what the datasets library gives).
func rawMessages(turns []traj.Turn) ([]value, error) {
	out := make([]value, len(turns))
	for i, t := range turns {
		v, err := fromRaw(t.Raw)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func field(m value, key string) value {
	v, _ := m.get(key)
	return v
}

// Reasons a converter or supervised.py gives for not training on a row.
const (
	ReasonRoleTag      = "invalid_role_tag"      // converter: "Invalid role tag in …"
	ReasonMessageCount = "invalid_message_count" // converter: "Invalid message count in …"
	ReasonEmpty        = "invalid_example"       // supervised.py: "Dropped invalid example"
)

// leadingSystem is both converters' start: a first message under the
// system tag is the system prompt (the dataset's system column
// otherwise), and the messages after it, off of them taken.
func leadingSystem(msgs []value, g Tags, system string) (sys value, rest []value, off int) {
	if g.System != "" && len(msgs) != 0 && tagIs(field(msgs[0], g.Role), g.System) {
		return field(msgs[0], g.Content), msgs[1:], 1
	}
	return pyStr(system), msgs, 0
}

// sharegpt is SharegptDatasetConverter.__call__ (not ranking, not KTO).
func sharegpt(msgs []value, g Tags, system string, tools value) (example, error) {
	sys, msgs, off := leadingSystem(msgs, g, system)
	var aligned []message
	skip := ""
	for i, m := range msgs {
		role := field(m, g.Role)
		ok := tagIs(role, g.User) || tagIs(role, g.Observation)
		if i%2 == 1 {
			ok = tagIs(role, g.Assistant) || tagIs(role, g.Function)
		}
		if !ok {
			skip = ReasonRoleTag
			break
		}
		r, _ := g.mapping(role)
		aligned = append(aligned, message{r, field(m, g.Content), off + i, off + i + 1})
	}
	if skip == "" && len(aligned)%2 != 0 {
		skip = ReasonMessageCount
	}
	ex := example{system: sys, tools: tools, skip: skip}
	if skip == "" && len(aligned) > 0 {
		ex.prompt, ex.response = aligned[:len(aligned)-1], aligned[len(aligned)-1:]
	}
	return ex, nil
}

// openai is OpenAIDatasetConverter.__call__ (not ranking, not KTO).
func openai(msgs []value, g Tags, system string, tools value) (example, error) {
	sys, msgs, off := leadingSystem(msgs, g, system)
	var aligned []message
	var responses []value
	firstResp := 0
	for j, m := range msgs {
		role := field(m, g.Role)
		content := field(m, g.Content)
		if tagIs(role, g.Assistant) || tagIs(role, g.Function) {
			if tc := field(m, "tool_calls"); tc.truthy() {
				list := value{K: kList}
				if tc.K == kDict {
					for _, mb := range tc.O { // iterating a dict gives its keys
						list.A = append(list.A, pyStr(mb.Key))
					}
				} else if tc.K == kList {
					list.A = tc.A
				} else {
					return example{}, raise("TypeError", "tool_calls is a %s", tc.typeName())
				}
				fns := value{K: kList}
				for _, c := range list.A {
					f, err := subscript(c, "function")
					if err != nil {
						return example{}, err
					}
					fns.A = append(fns.A, f)
				}
				content = pyStr(dumps(fns, 0))
				role = pyStr(g.Function)
				if g.Function == "" {
					role = value{}
				}
			}
		}
		if tagIs(role, g.Observation) {
			if len(responses) == 0 {
				firstResp = off + j
			}
			responses = append(responses, content)
			continue
		} else if len(responses) > 0 {
			parts := make([]string, len(responses))
			for i, c := range responses {
				if c.K != kStr {
					return example{}, raise("TypeError", "sequence item %d: expected str instance, %s found", i, c.typeName())
				}
				parts[i] = c.S
			}
			aligned = append(aligned, message{roleObservation, pyStr(strings.Join(parts, "\n</tool_response>\n<tool_response>\n")), firstResp, off + j})
			responses = nil
		}
		r, ok := g.mapping(role)
		if !ok {
			return example{}, raise("KeyError", "%s", pyRepr(role))
		}
		aligned = append(aligned, message{r, content, off + j, off + j + 1})
	}
	skip := ""
	for i, m := range aligned {
		ok := m.role == roleUser || m.role == roleObservation
		if i%2 == 1 {
			ok = m.role == roleAssistant || m.role == roleFunction
		}
		if !ok {
			skip = ReasonRoleTag
			break
		}
	}
	if skip == "" && len(aligned)%2 != 0 {
		skip = ReasonMessageCount
	}
	if tools.K == kDict || tools.K == kList {
		tools = pyStr(dumps(tools, 0))
	}
	const short = "detailed thinking off"
	if !sys.truthy() {
		if !tools.truthy() {
			sys = pyStr(short)
		}
	} else if sys.K == kList {
		// list += str extends the list with the string's characters; "x" in
		// list is a membership test
		in := false
		for _, x := range sys.A {
			in = in || tagIs(x, "detailed thinking on") || tagIs(x, short)
		}
		add := "\n"
		if !tools.truthy() && !in {
			add += short
		}
		if tools.truthy() || !in {
			sys.A = append(append([]value(nil), sys.A...), chars(add)...)
		}
	} else {
		if sys.K != kStr {
			return example{}, raise("TypeError", "unsupported operand type(s) for +=: '%s' and 'str'", sys.typeName())
		}
		if !tools.truthy() {
			if !strings.Contains(sys.S, "detailed thinking on") && !strings.Contains(sys.S, short) {
				sys = pyStr(sys.S + "\n" + short)
			}
		} else {
			sys = pyStr(sys.S + "\n")
		}
	}
	ex := example{system: sys, tools: tools, skip: skip}
	if skip == "" && len(aligned) > 0 {
		ex.prompt, ex.response = aligned[:len(aligned)-1], aligned[len(aligned)-1:]
	}
	return ex, nil
}

// chars is list(s): one string per character.
func chars(s string) []value {
	var out []value
	for _, r := range s {
		out = append(out, pyStr(string(r)))
	}
	return out
}
