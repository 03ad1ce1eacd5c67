package traj

// Role is a normalised turn role. The four known roles are the constants
// below; any other value is a role the reader did not recognise, kept
// verbatim, and never treated as a tool turn.
type Role string

// The normalised roles. ShareGPT "human" is [RoleUser], "gpt" is
// [RoleAssistant]; "tool", OpenAI's older "function", Llama-3's "ipython"
// and LLaMA-Factory "observation" are [RoleTool]; LLaMA-Factory
// "function_call" is [RoleAssistant].
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// IsTool reports whether r is a tool-result turn.
func (r Role) IsTool() bool { return r == RoleTool }
