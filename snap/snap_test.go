package snap

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

// roles parses a space-separated role list: sys, user, asst, tool; any other
// word is kept as an unknown role.
func roles(s string) []traj.Role {
	var out []traj.Role
	for _, w := range strings.Fields(s) {
		switch w {
		case "sys":
			out = append(out, traj.RoleSystem)
		case "user":
			out = append(out, traj.RoleUser)
		case "asst":
			out = append(out, traj.RoleAssistant)
		case "tool":
			out = append(out, traj.RoleTool)
		default:
			out = append(out, traj.Role(w))
		}
	}
	return out
}

// toks returns n copies of v.
func toks(n, v int) []int {
	t := make([]int, n)
	for i := range t {
		t[i] = v
	}
	return t
}

// budget is DefaultBudget with target, S and last_n replaced.
func budget(target, s, lastN int) Budget {
	b := DefaultBudget()
	b.Target, b.SummaryTokens, b.LastN = target, s, lastN
	return b
}

type computeCase struct {
	name  string
	roles string
	tok   []int
	b     Budget
	want  Plan
}

func runCompute(t *testing.T, cases []computeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := roles(tc.roles)
			if len(r) != len(tc.tok) {
				t.Fatalf("bad case: %d roles, %d tok", len(r), len(tc.tok))
			}
			got := Compute(r, tc.tok, tc.b)
			if got != tc.want {
				t.Errorf("Compute =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// The five worked examples of docs/planning.md, verbatim.
func TestComputeWorkedExamples(t *testing.T) {
	runCompute(t, []computeCase{
		{
			name:  "example1_skipped_under_target",
			roles: "sys user asst tool asst tool asst tool asst user",
			tok:   []int{4, 3, 4, 3, 2, 3, 3, 2, 1, 1},
			b:     DefaultBudget(),
			want:  Plan{Outcome: outcome.SkippedUnderTarget, Total: 26, Need: 26 - 15250 + 750, HeadEnd: 4, TailStart: 6},
		},
		{
			name:  "example2_region_4_8",
			roles: "sys user asst tool asst tool asst tool asst tool asst user",
			tok:   toks(12, 100),
			b:     budget(900, 50, 4),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 8, Total: 1200, Need: 350, HeadEnd: 4, TailStart: 8, RegionTokens: 400},
		},
		{
			name:  "example3_end_walks_back_to_7",
			roles: "sys user asst tool asst tool asst asst tool asst asst user",
			tok:   toks(12, 100),
			b:     budget(900, 50, 4),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 1200, Need: 350, HeadEnd: 4, TailStart: 8, RegionTokens: 300},
		},
		{
			name:  "example4_no_middle",
			roles: "sys user asst tool",
			tok:   toks(4, 100),
			b:     budget(100, 10, 4),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle, Total: 400, Need: 310, HeadEnd: 4, TailStart: 0},
		},
		{
			// Head sys+user of 200+200 tokens, a middle of one 2-token turn
			// (a second user turn, so it is not first-of-role), no tail.
			name:  "example5_region_too_small",
			roles: "sys user user",
			tok:   []int{200, 200, 2},
			b:     budget(300, 20, 0),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.RegionTooSmall, Total: 402, Need: 122, HeadEnd: 2, TailStart: 3},
		},
	})
	// Example 2: 4 turns become 1 summary, 9 turns after.
	p := Compute(roles("sys user asst tool asst tool asst tool asst tool asst user"), toks(12, 100), budget(900, 50, 4))
	if got := p.TurnsAfter(12); got != 9 {
		t.Errorf("example2 TurnsAfter = %d, want 9", got)
	}
	// Example 3: about 1200 − 300 + 50 = 950 tokens remain > 900.
	if got := Settle(950, budget(900, 50, 4)); got != outcome.CompressedOverLimit {
		t.Errorf("example3 Settle(950) = %s, want %s", got, outcome.CompressedOverLimit)
	}
}

// One case per rule of docs/planning.md.
func TestComputeRules(t *testing.T) {
	runCompute(t, []computeCase{
		{
			name:  "rule1_under_target_equal_is_under",
			roles: "sys user asst tool asst user",
			tok:   toks(6, 10),
			b:     budget(60, 5, 1),
			want:  Plan{Outcome: outcome.SkippedUnderTarget, Total: 60, Need: 5, HeadEnd: 4, TailStart: 5},
		},
		{
			name:  "rule1_one_over_target_is_over",
			roles: "sys user asst tool asst user",
			tok:   toks(6, 10),
			b:     budget(59, 5, 1),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 5, Total: 60, Need: 6, HeadEnd: 4, TailStart: 5, RegionTokens: 10},
		},
		{
			name:  "rule2_head_is_prefix_to_last_first_of_role",
			roles: "user sys asst asst asst asst asst tool asst asst asst user",
			tok:   toks(12, 10),
			b:     budget(50, 5, 2),
			// first tool at 7 → head [0,8) even though 3..6 are not first-of-role
			want: Plan{Outcome: outcome.Compressed, Start: 8, End: 10, Total: 120, Need: 75, HeadEnd: 8, TailStart: 10, RegionTokens: 20},
		},
		{
			name:  "rule2_disabled_flags_protect_nothing",
			roles: "sys user asst tool asst user",
			tok:   toks(6, 10),
			b:     Budget{Target: 30, SummaryTokens: 5, LastN: 1},
			want:  Plan{Outcome: outcome.Compressed, Start: 0, End: 4, Total: 60, Need: 35, HeadEnd: 0, TailStart: 5, RegionTokens: 40},
		},
		{
			name:  "rule2_only_enabled_roles_count",
			roles: "sys user asst asst asst tool asst user",
			tok:   toks(8, 10),
			b:     Budget{Target: 40, SummaryTokens: 5, LastN: 1, ProtectFirstSystem: true, ProtectFirstUser: true},
			want:  Plan{Outcome: outcome.Compressed, Start: 2, End: 7, Total: 80, Need: 45, HeadEnd: 2, TailStart: 7, RegionTokens: 50},
		},
		{
			name:  "rule2_unknown_role_is_never_first_of_role",
			roles: "function sys user asst function function asst user",
			tok:   toks(8, 10),
			b:     budget(50, 5, 1),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 80, Need: 35, HeadEnd: 4, TailStart: 7, RegionTokens: 30},
		},
		{
			name:  "rule2_absent_role_is_ignored",
			roles: "sys user asst asst asst asst",
			tok:   toks(6, 10),
			b:     budget(40, 5, 1),
			want:  Plan{Outcome: outcome.Compressed, Start: 3, End: 5, Total: 60, Need: 25, HeadEnd: 3, TailStart: 5, RegionTokens: 20},
		},
		{
			name:  "rule3_tail_is_last_n_turns",
			roles: "sys user asst tool asst asst asst asst asst user",
			tok:   toks(10, 10),
			b:     budget(10, 5, 3),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 100, Need: 95, HeadEnd: 4, TailStart: 7, RegionTokens: 30},
		},
		{
			name:  "rule3_last_n_zero_protects_no_tail",
			roles: "sys user asst tool asst asst asst tool",
			tok:   toks(8, 10),
			b:     budget(10, 5, 0),
			// accumulation runs to n; n is clean even after a tool turn
			want: Plan{Outcome: outcome.Compressed, Start: 4, End: 8, Total: 80, Need: 75, HeadEnd: 4, TailStart: 8, RegionTokens: 40},
		},
		{
			name:  "rule3_last_n_above_n_protects_all",
			roles: "sys user asst asst",
			tok:   toks(4, 10),
			b:     budget(10, 5, 9),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle, Total: 40, Need: 35, HeadEnd: 3, TailStart: 0},
		},
		{
			name:  "rule4_empty_middle_is_no_middle",
			roles: "sys user asst tool asst user",
			tok:   toks(6, 10),
			b:     budget(10, 5, 2),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle, Total: 60, Need: 55, HeadEnd: 4, TailStart: 4},
		},
		{
			name:  "rule5_unknown_role_is_a_clean_boundary",
			roles: "sys user asst tool asst observation_x asst",
			tok:   []int{10, 10, 10, 10, 50, 10, 10},
			b:     budget(70, 5, 1),
			// until 5 (unknown role) is clean: no forward walk
			want: Plan{Outcome: outcome.Compressed, Start: 4, End: 5, Total: 110, Need: 45, HeadEnd: 4, TailStart: 6, RegionTokens: 50},
		},
		{
			name:  "rule5_position_n_is_clean",
			roles: "sys user asst tool asst tool tool",
			tok:   toks(7, 10),
			b:     budget(10, 5, 0),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 70, Need: 65, HeadEnd: 4, TailStart: 7, RegionTokens: 30},
		},
		{
			name:  "rule6_start_snaps_forward_past_tool_results",
			roles: "sys user asst tool tool tool asst asst asst user",
			tok:   toks(10, 10),
			b:     budget(10, 5, 1),
			want:  Plan{Outcome: outcome.Compressed, Start: 6, End: 9, Total: 100, Need: 95, HeadEnd: 4, TailStart: 9, RegionTokens: 30},
		},
		{
			name:  "rule6_middle_of_only_tool_results_is_no_middle",
			roles: "sys user asst tool tool tool asst user",
			tok:   toks(8, 10),
			b:     budget(10, 5, 2),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle, Total: 80, Need: 75, HeadEnd: 4, TailStart: 6},
		},
		{
			name:  "rule7_need_is_total_minus_target_plus_s",
			roles: "sys user asst tool asst asst asst asst asst user",
			tok:   []int{10, 10, 10, 10, 7, 7, 7, 7, 10, 10},
			b:     budget(87, 6, 2),
			// need = 88 − 87 + 6 = 7 → a single 7-token turn suffices
			want: Plan{Outcome: outcome.Compressed, Start: 4, End: 5, Total: 88, Need: 7, HeadEnd: 4, TailStart: 8, RegionTokens: 7},
		},
		{
			name:  "rule8_accumulation_stops_at_need",
			roles: "sys user asst tool asst asst asst asst asst asst user",
			tok:   []int{10, 10, 10, 10, 10, 20, 30, 40, 10, 10, 10},
			b:     budget(120, 10, 2),
			// need = 170 − 120 + 10 = 60: 10+20+30 = 60 at i=6 → until 7
			want: Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 170, Need: 60, HeadEnd: 4, TailStart: 9, RegionTokens: 60},
		},
		{
			name:  "rule8_need_never_reached_takes_whole_middle",
			roles: "sys user asst tool asst asst asst user",
			tok:   []int{100, 100, 100, 100, 10, 10, 10, 100},
			b:     budget(50, 5, 1),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 530, Need: 485, HeadEnd: 4, TailStart: 7, RegionTokens: 30},
		},
		{
			name:  "rule9_end_snaps_forward_over_tool_results",
			roles: "sys user asst tool asst tool tool asst asst user",
			tok:   []int{10, 10, 10, 10, 50, 10, 10, 10, 10, 10},
			b:     budget(100, 10, 2),
			// need 50 reached at i=4 → until 5 (tool) → 6 (tool) → 7 (asst)
			want: Plan{Outcome: outcome.Compressed, Start: 4, End: 7, Total: 140, Need: 50, HeadEnd: 4, TailStart: 8, RegionTokens: 70},
		},
		{
			name:  "rule9_end_snaps_backward_when_tail_begins_with_tool",
			roles: "sys user asst tool asst asst tool tool asst user",
			tok:   []int{10, 10, 10, 10, 10, 50, 10, 10, 10, 10},
			b:     budget(100, 5, 4),
			// tail_start 6 is a tool turn: until 6 walks back to 5, so the
			// calling asst (5) stays verbatim with its results
			want: Plan{Outcome: outcome.Compressed, Start: 4, End: 5, Total: 140, Need: 45, HeadEnd: 4, TailStart: 6, RegionTokens: 10},
		},
		{
			name:  "rule10_collapsed",
			roles: "sys user asst tool asst tool tool tool asst user",
			tok:   []int{10, 10, 10, 10, 500, 10, 10, 10, 10, 10},
			b:     budget(100, 10, 3),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.Collapsed, Total: 590, Need: 500, HeadEnd: 4, TailStart: 7},
		},
		{
			name:  "rule10_region_too_small_equal_to_s",
			roles: "sys user asst tool asst asst user",
			tok:   []int{100, 100, 100, 100, 10, 10, 100},
			b:     budget(100, 20, 1),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.RegionTooSmall, Total: 520, Need: 440, HeadEnd: 4, TailStart: 6},
		},
		{
			name:  "rule10_region_one_above_s_is_compressed",
			roles: "sys user asst tool asst asst user",
			tok:   []int{100, 100, 100, 100, 10, 11, 100},
			b:     budget(100, 20, 1),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 6, Total: 521, Need: 441, HeadEnd: 4, TailStart: 6, RegionTokens: 21},
		},
		{
			name:  "rule11_region_in_original_indices",
			roles: "sys user asst tool tool asst tool asst tool asst asst user",
			tok:   []int{10, 10, 10, 10, 10, 30, 30, 30, 30, 10, 10, 10},
			b:     budget(150, 10, 2),
			// head_end 4; 4 is a tool → start 5; need 60: 30+30 at i=6 → 7
			want: Plan{Outcome: outcome.Compressed, Start: 5, End: 7, Total: 200, Need: 60, HeadEnd: 4, TailStart: 10, RegionTokens: 60},
		},
	})
}

// The peer's test cases (docs/peer.md §9) that still apply under our rule, and the
// two peer bugs our rule fixes.
func TestComputePeerCases(t *testing.T) {
	ten := "sys user asst tool asst tool asst tool asst user"
	runCompute(t, []computeCase{
		{
			// peer: 0–3 and 6–9 protected, start >= 4, end <= 6
			name:  "peer_protected_10_turns",
			roles: ten,
			tok:   toks(10, 100),
			b:     budget(700, 50, 4),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 6, Total: 1000, Need: 350, HeadEnd: 4, TailStart: 6, RegionTokens: 200},
		},
		{
			name:  "peer_3_turns_all_protected",
			roles: "sys user asst",
			tok:   toks(3, 100),
			b:     budget(100, 10, 4),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle, Total: 300, Need: 210, HeadEnd: 3, TailStart: 0},
		},
		{
			// peer: with last_n 0, index 7 is not protected
			name:  "peer_last_n_zero_index_7_unprotected",
			roles: ten,
			tok:   toks(10, 100),
			b:     budget(100, 10, 0),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 10, Total: 1000, Need: 910, HeadEnd: 4, TailStart: 10, RegionTokens: 600},
		},
		{
			// peer: with no system turn, index 0 (the first human) is protected
			name:  "peer_no_system_first_user_protected",
			roles: "user asst tool asst tool asst tool asst asst user",
			tok:   toks(10, 100),
			b:     budget(100, 10, 4),
			want:  Plan{Outcome: outcome.Compressed, Start: 3, End: 5, Total: 1000, Need: 910, HeadEnd: 3, TailStart: 6, RegionTokens: 200},
		},
		{
			// peer: protect_first_system=false leaves 0 unprotected. Ours: 0
			// is unprotected only if no later first-of-role turn pulls the
			// prefix head past it; with only user protection and the first
			// user at 1, the head is [0,2).
			name:  "peer_first_system_off",
			roles: "sys user asst asst asst asst user",
			tok:   toks(7, 100),
			b:     Budget{Target: 100, SummaryTokens: 10, LastN: 1, ProtectFirstUser: true},
			want:  Plan{Outcome: outcome.Compressed, Start: 2, End: 6, Total: 700, Need: 610, HeadEnd: 2, TailStart: 6, RegionTokens: 400},
		},
		{
			name:  "peer_first_system_off_nothing_else_protected",
			roles: "sys user asst asst asst asst user",
			tok:   toks(7, 100),
			b:     Budget{Target: 600, SummaryTokens: 10, LastN: 1},
			want:  Plan{Outcome: outcome.Compressed, Start: 0, End: 2, Total: 700, Need: 110, HeadEnd: 0, TailStart: 6, RegionTokens: 200},
		},
		{
			// peer tool-pair integrity: target chosen so accumulation stops
			// just after the oversized asst turn 4; until 5 is its result, so
			// the end snaps forward to 6.
			name:  "peer_tool_pair_integrity",
			roles: ten,
			tok:   []int{10, 10, 10, 10, 500, 10, 10, 10, 10, 10},
			b:     budget(200, 50, 4),
			want:  Plan{Outcome: outcome.Compressed, Start: 4, End: 6, Total: 590, Need: 440, HeadEnd: 4, TailStart: 6, RegionTokens: 510},
		},
		{
			// peer net-savings guard (#56415/#70243): 200+200 head, 2-token
			// middle, S 20 → not compressed.
			name:  "peer_net_savings_guard",
			roles: "sys user user user",
			tok:   []int{200, 200, 2, 0},
			b:     budget(300, 20, 1),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.RegionTooSmall, Total: 402, Need: 122, HeadEnd: 2, TailStart: 3},
		},
		{
			// peer snap(1,0,1) on [gpt, tool] → 0: the end collapses.
			name:  "peer_snap_backward_fallback_collapses",
			roles: "asst tool",
			tok:   []int{100, 100},
			b:     Budget{Target: 50, SummaryTokens: 10, LastN: 1},
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.Collapsed, Total: 200, Need: 160, HeadEnd: 0, TailStart: 1},
		},
		{
			// #50411: the first tool turn at 12 >= n//2 = 10. The peer makes it
			// tail protection and ends the middle at 12; ours puts it in the
			// head ([0,13)) and compresses [13,16) before the last 4 turns.
			name:  "peer_bug_50411_late_first_tool",
			roles: "sys user asst asst asst asst asst asst asst asst asst asst tool asst asst asst asst asst asst user",
			tok:   toks(20, 100),
			b:     budget(1500, 50, 4),
			want:  Plan{Outcome: outcome.Compressed, Start: 13, End: 16, Total: 2000, Need: 550, HeadEnd: 13, TailStart: 16, RegionTokens: 300},
		},
		{
			// #7248: a short trajectory whose protected head and tail
			// overlap. The peer's midpoint split yields an empty or inverted
			// region; ours says no_middle.
			name:  "peer_bug_7248_short_trajectory",
			roles: "sys user asst tool asst user",
			tok:   toks(6, 1000),
			b:     budget(1000, 50, 4),
			want:  Plan{Outcome: outcome.Uncompressible, Reason: outcome.NoMiddle, Total: 6000, Need: 5050, HeadEnd: 4, TailStart: 2},
		},
	})
}

// The peer's snap helper cases, on our rule-9 end snap.
func TestSnapEnd(t *testing.T) {
	ten := roles("sys user asst tool asst tool asst tool asst user")
	cases := []struct {
		name                     string
		roles                    []traj.Role
		until, start, tail, want int
	}{
		{"peer_snap_5_4_8_is_6", ten, 5, 4, 8, 6},
		{"peer_snap_4_4_8_is_4", ten, 4, 4, 8, 4},
		{"peer_snap_1_0_1_is_0_backward", roles("asst tool"), 1, 0, 1, 0},
		{"forward_stops_at_tail_then_backward", roles("asst asst tool tool tool"), 3, 0, 4, 1},
		{"at_n_is_clean", roles("asst tool"), 2, 0, 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := snapEnd(tc.roles, tc.until, tc.start, tc.tail); got != tc.want {
				t.Errorf("snapEnd(%d, %d, %d) = %d, want %d", tc.until, tc.start, tc.tail, got, tc.want)
			}
		})
	}
}

func TestComputePanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Compute with 2 roles and 1 count did not panic")
		}
	}()
	Compute(roles("sys user"), []int{1}, DefaultBudget())
}

func TestSettle(t *testing.T) {
	b := budget(900, 50, 4)
	cases := []struct {
		name  string
		after int
		want  outcome.Outcome
	}{
		{"under_target_fits", 899, outcome.Compressed},
		{"equal_to_target_fits", 900, outcome.Compressed},
		{"one_over_target_is_over_limit", 901, outcome.CompressedOverLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Settle(tc.after, b); got != tc.want {
				t.Errorf("Settle(%d) = %s, want %s", tc.after, got, tc.want)
			}
		})
	}
}

func TestDefaultBudget(t *testing.T) {
	want := Budget{Target: 15250, SummaryTokens: 750, LastN: 4,
		ProtectFirstSystem: true, ProtectFirstUser: true, ProtectFirstAssistant: true, ProtectFirstTool: true}
	if got := DefaultBudget(); got != want {
		t.Errorf("DefaultBudget() = %+v, want %+v", got, want)
	}
}

func TestBudgetValidate(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(*Budget)
		wantKeys []string // empty: valid
	}{
		{"default_is_valid", func(*Budget) {}, nil},
		{"zero_summary_and_tail_are_valid", func(b *Budget) { b.SummaryTokens, b.LastN = 0, 0 }, nil},
		{"negative_last_n", func(b *Budget) { b.LastN = -1 }, []string{"protected_turns.last_n_turns"}},
		{"zero_target", func(b *Budget) { b.Target = 0 }, []string{"compression.target_max_tokens"}},
		{"negative_summary", func(b *Budget) { b.SummaryTokens = -5 }, []string{"compression.summary_target_tokens"}},
		{"all_bad_names_every_key", func(b *Budget) { b.Target, b.SummaryTokens, b.LastN = -1, -1, -1 },
			[]string{"compression.target_max_tokens", "compression.summary_target_tokens", "protected_turns.last_n_turns"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := DefaultBudget()
			tc.mutate(&b)
			err := b.Validate()
			if len(tc.wantKeys) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidBudget) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalidBudget", err)
			}
			for _, k := range tc.wantKeys {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("Validate() = %q, does not name %s", err, k)
				}
			}
		})
	}
}

func TestCheckPairing(t *testing.T) {
	call := func(ids ...string) traj.Turn { return traj.Turn{Role: traj.RoleAssistant, CallIDs: ids} }
	res := func(id string) traj.Turn { return traj.Turn{Role: traj.RoleTool, AnswersID: id} }
	sys := traj.Turn{Role: traj.RoleSystem}
	user := traj.Turn{Role: traj.RoleUser}
	cases := []struct {
		name  string
		turns []traj.Turn
		want  []PairProblem
	}{
		{"empty", nil, nil},
		{"consistent_single", []traj.Turn{sys, user, call("a"), res("a"), call()}, nil},
		{"consistent_parallel", []traj.Turn{user, call("a", "b"), res("b"), res("a"), call("c"), res("c")}, nil},
		{"answered_twice_is_fine", []traj.Turn{call("a"), res("a"), res("a")}, nil},
		{"orphan_unknown_id", []traj.Turn{user, call("a"), res("a"), res("zz")},
			[]PairProblem{{Kind: OrphanResult, Index: 3, ID: "zz"}}},
		{"orphan_without_id", []traj.Turn{user, res("")},
			[]PairProblem{{Kind: OrphanResult, Index: 1, ID: ""}}},
		{"missing_result_after_region_removed", []traj.Turn{sys, call("a", "b"), res("a"), user},
			[]PairProblem{{Kind: MissingResult, Index: 1, ID: "b"}}},
		{"result_before_call_is_orphan_and_missing", []traj.Turn{user, res("a"), call("a")},
			[]PairProblem{{Kind: OrphanResult, Index: 1, ID: "a"}, {Kind: MissingResult, Index: 2, ID: "a"}}},
		{"sorted_by_index", []traj.Turn{call("x"), user, res("q"), call("y"), res("y")},
			[]PairProblem{{Kind: MissingResult, Index: 0, ID: "x"}, {Kind: OrphanResult, Index: 2, ID: "q"}}},
		{"tool_ids_from_user_turn_do_not_count", []traj.Turn{{Role: traj.RoleUser, CallIDs: []string{"a"}}, res("a")},
			[]PairProblem{{Kind: OrphanResult, Index: 1, ID: "a"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckPairing(tc.turns)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("CheckPairing = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAbsorb(t *testing.T) {
	roles := []traj.Role{traj.RoleSystem, traj.RoleUser, traj.RoleAssistant, traj.RoleTool, traj.RoleUser, traj.RoleAssistant, traj.RoleTool, traj.RoleAssistant, traj.RoleUser, traj.RoleAssistant}
	tok := []int{10, 10, 10, 10, 50, 10, 10, 10, 10, 10}
	base := Plan{Outcome: outcome.Compressed, Start: 2, End: 4, HeadEnd: 2, TailStart: 8, RegionTokens: 20}
	mark := func(is ...int) []bool {
		m := make([]bool, len(roles))
		for _, i := range is {
			m[i] = true
		}
		return m
	}
	tests := []struct {
		name       string
		p          Plan
		summaries  []bool
		start, end int
	}{
		{"none", base, nil, 2, 4},
		{"after the region", base, mark(4), 2, 5},
		{"before the region", Plan{Outcome: outcome.Compressed, Start: 5, End: 7, HeadEnd: 2, TailStart: 8}, mark(4), 4, 7},
		{"end moved off a tool result", base, mark(5), 2, 7},
		{"in the head", base, mark(1), 2, 4},
		{"in the tail", base, mark(9), 2, 4},
		{"not compressed", Plan{Outcome: outcome.SkippedUnderTarget, HeadEnd: 2, TailStart: 8}, mark(4), 0, 0},
	}
	for _, tt := range tests {
		got := Absorb(tt.p, roles, tok, tt.summaries)
		if got.Start != tt.start || got.End != tt.end {
			t.Errorf("%s: region [%d, %d), want [%d, %d)", tt.name, got.Start, got.End, tt.start, tt.end)
		}
		if got.Outcome == outcome.Compressed && got.RegionTokens != sum(tok, got.Start, got.End) {
			t.Errorf("%s: region tokens %d", tt.name, got.RegionTokens)
		}
	}
}
