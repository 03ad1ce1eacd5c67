package snap

import (
	"fmt"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

// spec builds turns from a compact form: "S" system, "U" user, "A" plain
// assistant, "A:a,b" assistant calling a and b, "T:a" the result of a.
func spec(items ...string) []traj.Turn {
	var ts []traj.Turn
	for _, it := range items {
		switch {
		case it == "S":
			ts = append(ts, traj.Turn{Role: traj.RoleSystem})
		case it == "U":
			ts = append(ts, traj.Turn{Role: traj.RoleUser})
		case it == "A":
			ts = append(ts, traj.Turn{Role: traj.RoleAssistant})
		case it[:2] == "A:":
			ids := append([]string(nil), splitComma(it[2:])...)
			ts = append(ts, traj.Turn{Role: traj.RoleAssistant, CallIDs: ids})
		case it[:2] == "T:":
			ts = append(ts, traj.Turn{Role: traj.RoleTool, AnswersID: it[2:]})
		default:
			panic(it)
		}
	}
	return ts
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// after assembles what the output's pairing would be for plan p: the head,
// one summary turn (no ids), the rest.
func after(ts []traj.Turn, p Plan) []traj.Turn {
	if p.Outcome != outcome.Compressed {
		return ts
	}
	out := append([]traj.Turn{}, ts[:p.Start]...)
	out = append(out, traj.Turn{Role: traj.RoleUser})
	return append(out, ts[p.End:]...)
}

func TestKeepPairs(t *testing.T) {
	b := Budget{Target: 10, SummaryTokens: 1, LastN: 2, ProtectFirstSystem: true, ProtectFirstUser: true, ProtectFirstAssistant: true, ProtectFirstTool: true}
	tests := []struct {
		name       string
		turns      []traj.Turn
		start, end int // the region after KeepPairs; 0, 0 for uncompressible
		reason     outcome.Reason
		target     int // 0: 10
	}{
		// The case: a user turn between a call and one of its
		// results. The region used to start at the user turn and take the
		// orphaned result T:b with it, leaving call b without a result.
		// The head ends after T:a (first tool), the region used to start at
		// the user turn and took T:b with it: call b lost its result.
		{"user_between_call_and_result", spec("S", "U", "A:a,b", "T:a", "U", "T:b", "A", "A", "A", "U", "A"), 6, 9, "", 0},
		// A region ending between a call and its late result takes the
		// result in.
		{"late_result_taken_in", spec("S", "U", "A:x", "T:x", "A:a", "U", "A", "U", "T:a", "A", "A", "U", "A"), 4, 9, "", 22},
		// A late result in the protected tail: the call stays out.
		{"result_in_tail", spec("S", "U", "A:x", "T:x", "A", "A", "A", "A:a", "U", "T:a", "A"), 4, 7, "", 0},
		// Well-formed records are left alone.
		{"well_formed", spec("S", "U", "A:a", "T:a", "A:b", "T:b", "A", "A", "U", "A"), 4, 8, "", 0},
		// Nothing left to summarise once T:b stays with its call.
		{"too_small", spec("S", "U", "A:a,b", "T:a", "U", "T:b", "U", "A"), 0, 0, outcome.Collapsed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			roles := make([]traj.Role, len(tt.turns))
			tok := make([]int, len(tt.turns))
			for i, x := range tt.turns {
				roles[i], tok[i] = x.Role, 2
			}
			b := b
			if tt.target > 0 {
				b.Target = tt.target
			}
			p := Compute(roles, tok, b)
			t.Logf("Compute: [%d,%d) %s", p.Start, p.End, p.Outcome)
			if p.Outcome != outcome.Compressed {
				t.Fatalf("Compute: %s %s", p.Outcome, p.Reason)
			}
			before := len(CheckPairing(tt.turns))
			q := KeepPairs(p, roles, tok, PairCuts(tt.turns), b)
			if q.Start != tt.start || q.End != tt.end || q.Reason != tt.reason {
				t.Fatalf("Compute [%d,%d) → KeepPairs [%d,%d) %s %s, want [%d,%d) %s", p.Start, p.End, q.Start, q.End, q.Outcome, q.Reason, tt.start, tt.end, tt.reason)
			}
			if n := len(CheckPairing(after(tt.turns, q))); n > before {
				t.Errorf("the output has %d pairing problems, the input %d", n, before)
			}
		})
	}
}

// FuzzKeepPairs: whatever the record, the planned output never has a
// pairing problem the input did not have.
func FuzzKeepPairs(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 1, 4, 2, 2, 1, 2}, uint8(3), uint8(2))
	f.Add([]byte{0, 1, 5, 3, 3, 1, 4, 4, 2, 2, 2}, uint8(6), uint8(1))
	f.Fuzz(func(t *testing.T, code []byte, target, lastN uint8) {
		if len(code) > 64 {
			return
		}
		// Each byte is a turn: 0 system, 1 user, 2 assistant, 3 assistant
		// calling the next id, 4 the result of the oldest unanswered call,
		// 5 the result of the newest, 6 a result of an unknown id.
		var ts []traj.Turn
		var open []string
		next := 0
		for _, c := range code {
			switch c % 7 {
			case 0:
				ts = append(ts, traj.Turn{Role: traj.RoleSystem})
			case 1:
				ts = append(ts, traj.Turn{Role: traj.RoleUser})
			case 2:
				ts = append(ts, traj.Turn{Role: traj.RoleAssistant})
			case 3:
				id := fmt.Sprint("c", next)
				next++
				open = append(open, id)
				ts = append(ts, traj.Turn{Role: traj.RoleAssistant, CallIDs: []string{id}})
			case 4, 5:
				if len(open) == 0 {
					ts = append(ts, traj.Turn{Role: traj.RoleTool, AnswersID: "none"})
					continue
				}
				k := 0
				if c%7 == 5 {
					k = len(open) - 1
				}
				ts = append(ts, traj.Turn{Role: traj.RoleTool, AnswersID: open[k]})
				open = append(open[:k], open[k+1:]...)
			case 6:
				ts = append(ts, traj.Turn{Role: traj.RoleTool, AnswersID: "x"})
			}
		}
		roles := make([]traj.Role, len(ts))
		tok := make([]int, len(ts))
		for i, x := range ts {
			roles[i], tok[i] = x.Role, 1+i%3
		}
		b := Budget{Target: int(target%40) + 1, SummaryTokens: 1, LastN: int(lastN % 5), ProtectFirstSystem: true, ProtectFirstUser: true, ProtectFirstAssistant: true, ProtectFirstTool: true}
		q := KeepPairs(Compute(roles, tok, b), roles, tok, PairCuts(ts), b)
		type key struct {
			kind string
			id   string
		}
		had := map[key]int{}
		for _, pr := range CheckPairing(ts) {
			had[key{pr.Kind, pr.ID}]++
		}
		for _, pr := range CheckPairing(after(ts, q)) {
			k := key{pr.Kind, pr.ID}
			if had[k] == 0 {
				t.Fatalf("new %v for id %q with region [%d,%d) of %v", pr.Kind, pr.ID, q.Start, q.End, code)
			}
			had[k]--
		}
		if q.Outcome == outcome.Compressed && (q.Start < q.HeadEnd || q.End > q.TailStart || q.Start >= q.End) {
			t.Fatalf("region [%d,%d) outside the middle [%d,%d)", q.Start, q.End, q.HeadEnd, q.TailStart)
		}
	})
}
