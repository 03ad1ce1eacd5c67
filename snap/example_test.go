package snap_test

import (
	"fmt"

	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// docs/planning.md, worked example 3: the protected tail begins with a tool
// result, so the region's end walks back to keep the calling turn verbatim.
func ExampleCompute() {
	const (
		sys  = traj.RoleSystem
		user = traj.RoleUser
		asst = traj.RoleAssistant
		tool = traj.RoleTool
	)
	roles := []traj.Role{sys, user, asst, tool, asst, tool, asst, asst, tool, asst, asst, user}
	tok := []int{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	b := snap.DefaultBudget()
	b.Target, b.SummaryTokens, b.LastN = 900, 50, 4
	if err := b.Validate(); err != nil {
		panic(err)
	}
	p := snap.Compute(roles, tok, b)
	fmt.Printf("%s [%d,%d) %d tokens, %d turns after\n", p.Outcome, p.Start, p.End, p.RegionTokens, p.TurnsAfter(len(roles)))
	after := p.Total - p.RegionTokens + b.SummaryTokens // the pipeline recounts the assembled turns
	fmt.Println(snap.Settle(after, b))
	// Output:
	// compressed [4,7) 300 tokens, 10 turns after
	// compressed_over_limit
}
