package traj

import (
	"fmt"
	"strings"
)

// Dialect names the shape of a record. What the rest of the program needs
// to know about a dialect are its capabilities, [Dialect.Form] and
// [Dialect.Pairing], never its name: code outside this package asks them
// and never compares dialects, so a new dialect is one case in
// [Dialect.traits] and one entry in [Dialects] (docs/architecture.md, "A
// new dialect"; TestEveryDialectHasEveryCapability fails when a dialect
// lacks one).
type Dialect string

// The dialects. [DialectAuto] detects the dialect per record from its shape.
const (
	DialectAuto     Dialect = ""
	DialectShareGPT Dialect = "sharegpt" // {"conversations":[{"from","value"}]}
	DialectOpenAI   Dialect = "openai"   // {"messages":[{"role","content",…}]}
)

// dialects are the dialects records are read in, in the order detection
// tries them. A new dialect is one more entry, and a case in traits.
var dialects = [...]Dialect{DialectShareGPT, DialectOpenAI}

// Dialects are the dialects records are read in, in the order detection
// tries them (a copy).
func Dialects() []Dialect { return append([]Dialect(nil), dialects[:]...) }

// ParseDialect reads a dialect's name as a user writes it (input.format,
// --format): one of [Dialects], or "" for [DialectAuto]. Any other name is
// an error: a record is never read in a dialect this package does not
// know.
func ParseDialect(s string) (Dialect, error) {
	d := Dialect(s)
	if d == DialectAuto || d.known() {
		return d, nil
	}
	names := make([]string, 0, 2)
	for _, k := range dialects {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("input.format must be %s, got %q", strings.Join(names, " or "), s)
}

// Form is how a dialect writes a turn.
type Form uint8

// The forms.
const (
	// FormMessage: a turn is a chat message as chat templates and
	// OpenAI's API take it: a role, a content that is a string, null or a
	// list of parts (text, images), and tool calls beside it
	// ("tool_calls"); it is passed to a template as written.
	FormMessage Form = iota + 1
	// FormShareGPT: a turn is {"from", "value"}, the value a string; tool
	// calls and results are written in the text (Hermes <tool_call> and
	// <tool_response> blocks, LLaMA-Factory function_call and observation
	// turns). A trainer maps it to a message (package trainview).
	FormShareGPT
)

// Pairing is how a dialect's tool results name the calls they answer.
type Pairing uint8

// The pairings.
const (
	// PairByID: calls are structured entries with ids (OpenAI
	// "tool_calls"), and each tool turn is one result answering one of
	// them by its id ("tool_call_id"). A trainer or an API refuses a
	// result whose call is gone, so the record path never separates a
	// call from its result and reports broken pairs (snap.KeepPairs,
	// snap.CheckPairing); calls written in a message's text are not
	// calls there.
	PairByID Pairing = iota + 1
	// PairByOrder: calls and results are blocks in the turns' texts; a
	// result answers a call by the id it names when it names one, else
	// by name and order (package prepass pairs them). Nothing in the
	// record structurally ties them, and nothing checks them.
	PairByOrder
)

// traits is everything this package and its users know about a dialect.
type traits struct {
	turns, role, content string          // the standard turn-list, role and content keys
	roles                map[string]Role // role names → normalised roles
	names                map[Role]string // normalised roles → the names new turns take; nil: the role's own
	form                 Form
	pairing              Pairing
}

// traits is d's; it panics on a dialect that is not one of [Dialects]:
// [ParseDialect] and [Schema.Validate] refuse such a name where a user
// gives it, and [Decode] never makes a record of one.
func (d Dialect) traits() traits {
	switch d {
	case DialectShareGPT:
		return traits{turns: "conversations", role: "from", content: "value", roles: shareGPTRoles, names: shareGPTNames, form: FormShareGPT, pairing: PairByOrder}
	case DialectOpenAI:
		return traits{turns: "messages", role: "role", content: "content", roles: openAIRoles, form: FormMessage, pairing: PairByID}
	}
	panic(fmt.Sprintf("traj: dialect %q is not one of traj.Dialects (ParseDialect refuses it)", string(d)))
}

// known reports whether d is one of [Dialects].
func (d Dialect) known() bool {
	for _, k := range dialects {
		if d == k {
			return true
		}
	}
	return false
}

// Form is how d writes a turn. It panics on [DialectAuto] and on a name
// that is not one of [Dialects] (a record's Dialect is always one).
func (d Dialect) Form() Form { return d.traits().form }

// Pairing is how d's tool results name their calls. It panics as
// [Dialect.Form] does.
func (d Dialect) Pairing() Pairing { return d.traits().pairing }

var shareGPTRoles = map[string]Role{
	"system": RoleSystem, "human": RoleUser, "user": RoleUser,
	"gpt": RoleAssistant, "assistant": RoleAssistant, "function_call": RoleAssistant,
	"tool": RoleTool, "observation": RoleTool, "ipython": RoleTool,
}

var openAIRoles = map[string]Role{
	"system": RoleSystem, "developer": RoleSystem, "user": RoleUser,
	"assistant": RoleAssistant, "tool": RoleTool, "function": RoleTool,
	"ipython": RoleTool, // Llama-3 / Llama-3.1 tool results
}

var shareGPTNames = map[Role]string{
	RoleSystem: "system", RoleUser: "human", RoleAssistant: "gpt", RoleTool: "tool",
}
