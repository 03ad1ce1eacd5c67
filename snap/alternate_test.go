package snap

import (
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

func TestPlaceAlternating(t *testing.T) {
	A, U, T, S := traj.RoleAssistant, traj.RoleUser, traj.RoleTool, traj.RoleSystem
	ones := func(n int) []int {
		ts := make([]int, n)
		for i := range ts {
			ts[i] = 100
		}
		return ts
	}
	compressed := func(start, end, tail, region int) Plan {
		return Plan{Outcome: outcome.Compressed, Start: start, End: end, TailStart: tail, RegionTokens: region}
	}
	cases := []struct {
		name  string
		roles []traj.Role
		tok   []int
		s     int // summary tokens
		in    Plan
		want  Plan
	}{
		{"between_assistants", []traj.Role{S, U, A, U, A, U, A}, ones(7), 10,
			compressed(3, 4, 5, 100), compressed(3, 4, 5, 100)},
		{"insert", []traj.Role{U, A, U, A, U, A}, ones(6), 10,
			compressed(2, 3, 6, 100), compressed(2, 3, 6, 100)},
		{"merge_next", []traj.Role{U, A, U, A, U, A}, ones(6), 10,
			compressed(2, 4, 6, 200), withPlacement(compressed(2, 4, 6, 200), MergeNext)},
		{"merge_prev", []traj.Role{U, A, T, A, U, A}, ones(6), 10,
			compressed(3, 5, 6, 200), withPlacement(compressed(3, 5, 6, 200), MergePrev)},
		{"move_end_forward", []traj.Role{U, A, T, A, U, A, U, A}, ones(8), 10,
			compressed(3, 4, 6, 100), withPlacement(compressed(3, 5, 6, 200), MergePrev)},
		{"move_end_back", []traj.Role{S, U, A, A, U, U}, []int{10, 10, 5, 100, 10, 10}, 1,
			compressed(2, 4, 4, 105), withPlacement(compressed(2, 3, 4, 5), MergePrev)},
		{"moved_region_too_small", []traj.Role{S, U, A, A, U, U}, []int{10, 10, 5, 100, 10, 10}, 50,
			compressed(2, 4, 4, 105), Plan{Outcome: outcome.Uncompressible, Reason: outcome.RegionTooSmall, TailStart: 4}},
		{"no_placement", []traj.Role{U, A, T, A, U, U}, ones(6), 10,
			compressed(3, 4, 4, 100), Plan{Outcome: outcome.Uncompressible, Reason: outcome.Alternation, TailStart: 4}},
		{"not_compressed", []traj.Role{U, U}, ones(2), 10,
			Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle}, Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PlaceAlternating(c.in, c.roles, c.tok, Budget{Target: 1, SummaryTokens: c.s})
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func withPlacement(p Plan, how Placement) Plan {
	p.Placement = how
	return p
}

// checkPlaced asserts the invariants of q = PlaceAlternating(p, ...) for a
// plan p that satisfies checkPlan.
func checkPlaced(t *testing.T, rs []traj.Role, ts []int, b Budget, p, q Plan) {
	t.Helper()
	if p.Outcome != outcome.Compressed {
		if q != p {
			t.Fatalf("plan %+v changed to %+v", p, q)
		}
		return
	}
	n := len(rs)
	bothUser := func(end int) bool {
		return p.Start > 0 && userSide(rs[p.Start-1]) && end < n && userSide(rs[end])
	}
	switch q.Outcome {
	case outcome.Uncompressible:
		if q.Reason != outcome.Alternation && q.Reason != outcome.RegionTooSmall {
			t.Fatalf("uncompressible for %q", q.Reason)
		}
		if q.Reason == outcome.Alternation && !bothUser(p.End) {
			t.Fatalf("alternation refused though turn %d or %d is assistant-side", p.Start-1, p.End)
		}
		if q.Start != 0 || q.End != 0 || q.RegionTokens != 0 || q.Placement != Insert {
			t.Fatalf("uncompressible plan carries a region: %+v", q)
		}
		return
	case outcome.Compressed:
	default:
		t.Fatalf("outcome %q", q.Outcome)
	}
	if q.Start != p.Start || q.End < p.End-1 || q.End > p.End+1 || q.End <= q.Start || q.End > q.TailStart {
		t.Fatalf("region [%d,%d) from [%d,%d) tail %d", q.Start, q.End, p.Start, p.End, q.TailStart)
	}
	if q.End < n && rs[q.End].IsTool() {
		t.Fatalf("region ends right before tool turn %d", q.End)
	}
	if r := sum(ts, q.Start, q.End); q.RegionTokens != r || r <= b.SummaryTokens {
		t.Fatalf("RegionTokens %d (sum %d), S %d", q.RegionTokens, r, b.SummaryTokens)
	}
	prevUser := q.Start > 0 && userSide(rs[q.Start-1])
	nextUser := q.End < n && userSide(rs[q.End])
	want := map[Placement][2]bool{Insert: {false, false}, MergeNext: {false, true}, MergePrev: {true, false}}
	if w, ok := want[q.Placement]; !ok || w != [2]bool{prevUser, nextUser} {
		t.Fatalf("placement %s with user-side before %v, after %v", q.Placement, prevUser, nextUser)
	}
	checkKeptTools(t, rs, q)
}
