// Package validate checks trajectories against the role-order rules of
// the trainers that consume them, so a user can see before training which
// records a consumer would reject, and why. It is pure: no I/O.
//
// Two consumers are known:
//
//   - [LlamaFactory]: LLaMA-Factory's sharegpt converter (docs/formats.md,
//     "LLaMA-Factory"). After an optional leading system turn, even
//     positions must be user-side (human, observation/tool) and odd
//     positions assistant-side (gpt, function_call), and the count must be
//     even; otherwise it logs "Invalid role tag" and skips the example.
//   - [OpenAI]: strict chat templates over OpenAI messages (Mistral's
//     "Conversation roles must alternate"; docs/formats.md, "OpenAI
//     messages"): after optional system messages, user and assistant
//     alternate starting with user;
//     tool messages may only follow an assistant message that made tool
//     calls (or another tool message); tool results must pair with calls
//     by id.
package validate

import (
	"fmt"

	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// Consumer names a role-order rule set.
type Consumer string

// The known consumers.
const (
	LlamaFactory Consumer = "llamafactory"
	OpenAI       Consumer = "openai"
)

// Problem is why a consumer would reject a record: the first offending turn
// index (-1 for the whole record) and a reason.
type Problem struct {
	Index  int
	Reason string
}

func (p Problem) String() string {
	if p.Index < 0 {
		return p.Reason
	}
	return fmt.Sprintf("turn %d: %s", p.Index, p.Reason)
}

// Check returns the problems c would find in turns (nil: accepted). It
// reports the first role-order problem only, as the consumers do, plus
// every tool-pairing problem for OpenAI.
func Check(turns []traj.Turn, c Consumer) ([]Problem, error) {
	switch c {
	case LlamaFactory:
		return checkLlamaFactory(turns), nil
	case OpenAI:
		return checkOpenAI(turns), nil
	}
	return nil, fmt.Errorf("unknown consumer %q (want llamafactory or openai)", c)
}

func side(r traj.Role) byte {
	switch r {
	case traj.RoleUser, traj.RoleTool:
		return 'U'
	case traj.RoleAssistant:
		return 'A'
	case traj.RoleSystem:
		return 'S'
	}
	return '?'
}

func checkLlamaFactory(turns []traj.Turn) []Problem {
	body := turns
	off := 0
	if len(body) > 0 && body[0].Role == traj.RoleSystem {
		body, off = body[1:], 1
	}
	for i, t := range body {
		want, name := byte('U'), "user/observation"
		if i%2 == 1 {
			want, name = 'A', "assistant/function_call"
		}
		if side(t.Role) != want {
			return []Problem{{off + i, fmt.Sprintf("role %q where %s is required (roles must alternate)", t.Name, name)}}
		}
	}
	if len(body)%2 != 0 {
		return []Problem{{-1, fmt.Sprintf("odd number of turns (%d) after the system turn: the last user turn has no answer", len(body))}}
	}
	if len(body) == 0 {
		return []Problem{{-1, "no turns"}}
	}
	return nil
}

func checkOpenAI(turns []traj.Turn) []Problem {
	var out []Problem
	i := 0
	for i < len(turns) && turns[i].Role == traj.RoleSystem {
		i++
	}
	prev := byte('S') // what came before: S start, U user, A assistant, C assistant with calls, T tool
	for ; i < len(turns); i++ {
		t := turns[i]
		var p string
		switch t.Role {
		case traj.RoleUser:
			if prev == 'U' {
				p = "two user messages in a row (roles must alternate)"
			} else if prev == 'C' {
				p = "user message where the results of the previous assistant message's tool calls are required"
			}
			prev = 'U'
		case traj.RoleAssistant:
			if prev == 'S' {
				p = "the first message after the system prompt must be a user message"
			} else if prev == 'A' || prev == 'C' {
				p = "two assistant messages in a row (roles must alternate)"
			}
			prev = 'A'
			if len(t.CallIDs) > 0 {
				prev = 'C'
			}
		case traj.RoleTool:
			if prev != 'C' && prev != 'T' {
				p = "tool message that does not follow an assistant message with tool calls"
			}
			prev = 'T'
		case traj.RoleSystem:
			p = "system message after the conversation started"
		default:
			p = fmt.Sprintf("unknown role %q", t.Name)
		}
		if p != "" {
			out = append(out, Problem{i, p})
			break
		}
	}
	for _, pp := range snap.CheckPairing(turns) {
		out = append(out, Problem{pp.Index, fmt.Sprintf("%s %q", pp.Kind, pp.ID)})
	}
	return out
}
