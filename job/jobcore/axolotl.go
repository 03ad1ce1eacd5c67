package jobcore

import (
	"fmt"
	"sort"
	"strings"

	"github.com/trajcompress/trajcompress/trainer/axolotl"
	"github.com/trajcompress/trajcompress/traj"
)

// templateRoles are the roles chat templates render; axolotl passes any
// other (a role its roles mapping does not name) to the template as it is
// (src/axolotl/prompt_strategies/chat_template.py, transform_message,
// lines 934–937, at commit 067b021c), where Qwen3's template leaves the
// message out and others raise.
var templateRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true}

// roleTargets are the template roles the unmapped roles of agent data
// stand for (LLaMA-Factory's ShareGPT tags, OpenAI's legacy function
// role, Llama's ipython), for the repair.
var roleTargets = map[string]string{"observation": "tool", "function": "tool", "ipython": "tool", "function_call": "assistant"}

// shareGPTName is the ShareGPT name a repaired turn of a template role
// is written with (traj.Record.NewTurn).
var shareGPTName = map[string]string{"system": "system", "user": "human", "assistant": "gpt", "tool": "tool"}

// UnmappedRoles counts the turns of rec, by their role as written, that
// axolotl's rules pass to the template under a role templates do not
// render; nil when there are none.
func UnmappedRoles(r axolotl.Rules, rec *traj.Record) map[string]int {
	var out map[string]int
	for _, t := range rec.Turns {
		if !templateRoles[r.MapRole(t.Name)] {
			if out == nil {
				out = map[string]int{}
			}
			out[t.Name]++
		}
	}
	return out
}

// describeRoles says which roles are unmapped, for messages.
func describeRoles(m map[string]int) string {
	var parts []string
	for n, k := range m {
		parts = append(parts, fmt.Sprintf("%q (%d turns)", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// AxolotlRepair returns the repair of the rows axolotl would give the
// template under roles it does not render: in a ShareGPT record, each
// such turn whose role stands for a template role (observation and
// function → tool, function_call → assistant) is renamed to the ShareGPT
// name axolotl maps to that role (tool, gpt), its value unchanged. The
// message was left out of the rendering (or made the template raise), so
// nothing trained is lost: a tool turn is rendered and not trained (unless
// roles_to_train names it), a function_call turn becomes a trained
// assistant turn. OpenAI records are not repaired (their messages carry
// ids and names a renamed message would lose): they are only reported.
func AxolotlRepair(r axolotl.Rules) func(rec *traj.Record) ([]traj.Turn, []string) {
	return func(rec *traj.Record) ([]traj.Turn, []string) {
		if rec.Dialect != traj.DialectShareGPT || UnmappedRoles(r, rec) == nil {
			return nil, nil
		}
		renamed := map[string]int{}
		turns := make([]traj.Turn, len(rec.Turns))
		for i, t := range rec.Turns {
			turns[i] = t
			if templateRoles[r.MapRole(t.Name)] {
				continue
			}
			target, ok := roleTargets[t.Name]
			if !ok || r.MapRole(shareGPTName[target]) != target {
				continue
			}
			turns[i] = rec.NewTurn(traj.Role(target), t.Text)
			renamed[t.Name+" → "+shareGPTName[target]]++
		}
		if len(renamed) == 0 {
			return nil, nil
		}
		var done []string
		for k, n := range renamed {
			done = append(done, fmt.Sprintf("renamed %d %s turns (a role axolotl's roles mapping does not render)", n, k))
		}
		sort.Strings(done)
		return turns, done
	}
}
