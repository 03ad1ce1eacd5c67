package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

// lfLine is a LLaMA-Factory style record: human, then function_call /
// observation pairs, then gpt, alternating strictly.
func lfLine(pairs int, size int) string {
	turns := []string{fmt.Sprintf(`{"from": "human", "value": %q}`, words(size, "q"))}
	for i := range pairs {
		turns = append(turns,
			fmt.Sprintf(`{"from": "function_call", "value": %q}`, words(size, fmt.Sprintf("c%d", i))),
			fmt.Sprintf(`{"from": "observation", "value": %q}`, words(size, fmt.Sprintf("o%d", i))))
	}
	turns = append(turns, fmt.Sprintf(`{"from": "gpt", "value": %q}`, words(size, "done")),
		`{"from": "human", "value": "thanks"}`, `{"from": "gpt", "value": "welcome"}`)
	return `{"conversations": [` + strings.Join(turns, ", ") + `], "system": "sys", "tools": "[]"}`
}

func TestAlternationKeepsRoleOrder(t *testing.T) {
	compressed, rejectedWithout := 0, 0
	defer func() {
		t.Logf("%d compressed in alternation mode; %d of them rejected without it", compressed, rejectedWithout)
		if compressed == 0 || rejectedWithout == 0 {
			t.Error("the cases do not exercise alternation")
		}
	}()
	for pairs := 3; pairs <= 9; pairs++ {
		for _, target := range []int{150, 300, 500} {
			line := lfLine(pairs, 40)
			check := func(alternate bool) ([]validate.Problem, Result) {
				c := newComp(t, func(o *Options) {
					o.Budget = snap.Budget{Target: target, SummaryTokens: 10, LastN: 2, ProtectFirstSystem: true, ProtectFirstUser: true, ProtectFirstAssistant: true, ProtectFirstTool: true}
					o.Alternate = alternate
				})
				res, err := c.Compress(context.Background(), []byte(line), pos)
				if err != nil {
					t.Fatal(err)
				}
				r, err := traj.Decode(res.Out, pos, traj.Schema{})
				if err != nil {
					t.Fatalf("output: %v", err)
				}
				ps, _ := validate.Check(r.Turns, validate.LlamaFactory)
				return ps, res
			}
			ps, res := check(true)
			if len(ps) > 0 {
				t.Errorf("pairs %d target %d: alternation mode output rejected: %v (outcome %s region %v)", pairs, target, ps, res.Obs.Outcome, res.Obs.Region)
			}
			if res.Obs.Outcome != snap.Compressed && res.Obs.Outcome != snap.CompressedOverLimit {
				continue
			}
			compressed++
			if ps, _ := check(false); len(ps) > 0 {
				rejectedWithout++
			}
		}
	}
}

func TestAlternationPlacements(t *testing.T) {
	A, U, T, S := traj.RoleAssistant, traj.RoleUser, traj.RoleTool, traj.RoleSystem
	cases := []struct {
		name             string
		roles            []traj.Role
		start, end, tail int
		wantEnd          int
		want             placement
		ok               bool
	}{
		{"between_assistants", []traj.Role{S, U, A, U, A, U, A}, 3, 4, 5, 4, insertTurn, true},
		{"no_placement", []traj.Role{U, A, T, A, U, U}, 3, 4, 4, 4, insertTurn, false},
		{"insert", []traj.Role{U, A, U, A, U, A}, 2, 3, 6, 3, insertTurn, true},
		{"merge_next", []traj.Role{U, A, U, A, U, A}, 2, 4, 6, 4, mergeNext, true},
		{"merge_prev", []traj.Role{U, A, T, A, U, A}, 3, 5, 6, 5, mergePrev, true},
		{"move_end_forward", []traj.Role{U, A, T, A, U, A, U, A}, 3, 4, 6, 5, mergePrev, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			end, how, ok := placeAlternating(c.roles, c.start, c.end, c.tail)
			if ok != c.ok || ok && (end != c.wantEnd || how != c.want) {
				t.Errorf("got end %d how %d ok %v; want end %d how %d ok %v", end, how, ok, c.wantEnd, c.want, c.ok)
			}
		})
	}
}
