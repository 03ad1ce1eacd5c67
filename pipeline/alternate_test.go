package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
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
					o.Placement.Alternate = alternate
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
			if res.Obs.Outcome != outcome.Compressed && res.Obs.Outcome != outcome.CompressedOverLimit {
				continue
			}
			compressed++
			if ps, _ := check(false); len(ps) > 0 {
				rejectedWithout++
			}
		}
	}
}
