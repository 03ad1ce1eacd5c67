package snap

import (
	"slices"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

var fuzzRoles = []traj.Role{traj.RoleSystem, traj.RoleUser, traj.RoleAssistant, traj.RoleTool, traj.RoleTool, "observation_x"}

// decodeFuzz turns bytes into turns: each pair of bytes is one turn, the
// first picking its role (tool twice as likely), the second its token count.
func decodeFuzz(data []byte) ([]traj.Role, []int) {
	var rs []traj.Role
	var ts []int
	for i := 0; i+1 < len(data); i += 2 {
		rs = append(rs, fuzzRoles[int(data[i])%len(fuzzRoles)])
		ts = append(ts, int(data[i+1]))
	}
	return rs, ts
}

func encodeFuzz(rs []traj.Role, ts []int) []byte {
	var out []byte
	for i, r := range rs {
		out = append(out, byte(slices.Index(fuzzRoles, r)), byte(ts[i]))
	}
	return out
}

// checkPlan asserts the invariants every plan must satisfy.
func checkPlan(t *testing.T, rs []traj.Role, ts []int, b Budget, p Plan) {
	t.Helper()
	n := len(rs)
	total := 0
	for _, v := range ts {
		total += v
	}
	if p.Total != total || p.Need != total-b.Target+b.SummaryTokens {
		t.Fatalf("Total/Need = %d/%d, want %d/%d", p.Total, p.Need, total, total-b.Target+b.SummaryTokens)
	}
	if p.HeadEnd < 0 || p.HeadEnd > n || p.TailStart < 0 || p.TailStart > n {
		t.Fatalf("HeadEnd %d / TailStart %d outside [0,%d]", p.HeadEnd, p.TailStart, n)
	}
	// Head protection: every enabled first-of-role turn is in the head.
	flags := map[traj.Role]bool{traj.RoleSystem: b.ProtectFirstSystem, traj.RoleUser: b.ProtectFirstUser,
		traj.RoleAssistant: b.ProtectFirstAssistant, traj.RoleTool: b.ProtectFirstTool}
	for r, on := range flags {
		if i := slices.Index(rs, r); on && i >= 0 && i >= p.HeadEnd {
			t.Fatalf("first %s turn %d not in head [0,%d)", r, i, p.HeadEnd)
		}
	}
	if total <= b.Target {
		if p.Outcome != outcome.SkippedUnderTarget {
			t.Fatalf("total %d <= target %d but outcome %s", total, b.Target, p.Outcome)
		}
	} else if p.Outcome == outcome.SkippedUnderTarget {
		t.Fatalf("total %d > target %d but skipped", total, b.Target)
	}
	switch p.Outcome {
	case outcome.SkippedUnderTarget, outcome.Uncompressible:
		if (p.Outcome == outcome.Uncompressible) != (p.Reason.Index() >= 0) {
			t.Fatalf("outcome %s with reason %q", p.Outcome, p.Reason)
		}
		if p.Start != 0 || p.End != 0 || p.RegionTokens != 0 {
			t.Fatalf("%s plan carries a region: %+v", p.Outcome, p)
		}
	case outcome.Compressed:
		if p.Reason != "" {
			t.Fatalf("compressed with reason %q", p.Reason)
		}
		if !(p.HeadEnd <= p.Start && p.Start < p.End && p.End <= p.TailStart) {
			t.Fatalf("region [%d,%d) not within [%d,%d)", p.Start, p.End, p.HeadEnd, p.TailStart)
		}
		if rs[p.Start].IsTool() {
			t.Fatalf("region starts on tool turn %d", p.Start)
		}
		if p.End < n && rs[p.End].IsTool() {
			t.Fatalf("region ends right before tool turn %d", p.End)
		}
		region := 0
		for _, v := range ts[p.Start:p.End] {
			region += v
		}
		if p.RegionTokens != region || region <= b.SummaryTokens {
			t.Fatalf("RegionTokens %d (sum %d) not > S %d", p.RegionTokens, region, b.SummaryTokens)
		}
		checkKeptTools(t, rs, p)
	default:
		t.Fatalf("Compute returned outcome %q", p.Outcome)
	}
}

// checkKeptTools asserts that, after assembly, the turn after the summary is
// not a tool turn and every kept tool turn still follows the turn it followed
// in the input.
func checkKeptTools(t *testing.T, rs []traj.Role, p Plan) {
	t.Helper()
	for i, r := range rs {
		kept := i < p.Start || i >= p.End
		if !kept || !r.IsTool() || i == 0 {
			continue
		}
		if prevKept := i-1 < p.Start || i-1 >= p.End; !prevKept {
			t.Fatalf("kept tool turn %d lost its predecessor %d to the region [%d,%d)", i, i-1, p.Start, p.End)
		}
	}
}

func TestPeerToolPairIntegrityAssembly(t *testing.T) {
	rs := roles("sys user asst tool asst tool asst tool asst user")
	ts := []int{10, 10, 10, 10, 500, 10, 10, 10, 10, 10}
	b := budget(200, 50, 4)
	p := Compute(rs, ts, b)
	if p.Outcome != outcome.Compressed {
		t.Fatalf("outcome %s, want compressed", p.Outcome)
	}
	checkPlan(t, rs, ts, b, p)
	// every kept tool turn directly follows an asst (or a parallel tool) turn
	out := append(append(slices.Clone(rs[:p.Start]), traj.RoleUser), rs[p.End:]...)
	for i, r := range out {
		if r.IsTool() && (i == 0 || !(out[i-1] == traj.RoleAssistant || out[i-1].IsTool())) {
			t.Errorf("assembled turn %d is a tool turn after %q", i, out[i-1])
		}
	}
}

func FuzzCompute(f *testing.F) {
	add := func(rs string, ts []int, b Budget) {
		r := roles(rs)
		flags := uint8(0)
		for i, on := range []bool{b.ProtectFirstSystem, b.ProtectFirstUser, b.ProtectFirstAssistant, b.ProtectFirstTool} {
			if on {
				flags |= 1 << i
			}
		}
		f.Add(encodeFuzz(r, ts), b.Target, b.SummaryTokens, b.LastN, flags)
	}
	add("sys user asst tool asst tool asst tool asst tool asst user", toks(12, 100), budget(900, 50, 4))
	add("sys user asst tool asst tool asst asst tool asst asst user", toks(12, 100), budget(900, 50, 4))
	add("sys user asst tool", toks(4, 100), budget(100, 10, 4))
	add("sys user user", []int{200, 200, 2}, budget(300, 20, 0))
	add("sys user asst tool asst tool tool tool asst user", []int{10, 10, 10, 10, 200, 10, 10, 10, 10, 10}, budget(100, 10, 3))
	add("asst tool", []int{100, 100}, Budget{Target: 50, SummaryTokens: 10, LastN: 1})
	// Alternation mode (flags bit 4): merges, a moved end, no placement.
	f.Add(encodeFuzz(roles("sys user asst user asst user asst user asst user asst"), toks(11, 100)), 700, 50, 2, uint8(31))
	f.Add(encodeFuzz(roles("user asst tool asst user user asst user"), []int{10, 10, 300, 10, 10, 10, 10, 10}), 200, 50, 3, uint8(16))
	f.Add(encodeFuzz(roles("sys user asst asst user user"), []int{10, 10, 5, 100, 10, 10}), 60, 50, 2, uint8(16|15))
	// flags: bits 0-3 the ProtectFirst* flags, bit 4 alternation mode.
	f.Fuzz(func(t *testing.T, data []byte, target, s, lastN int, flags uint8) {
		rs, ts := decodeFuzz(data)
		b := Budget{Target: target % 5000, SummaryTokens: s % 500, LastN: lastN % 20,
			ProtectFirstSystem: flags&1 != 0, ProtectFirstUser: flags&2 != 0,
			ProtectFirstAssistant: flags&4 != 0, ProtectFirstTool: flags&8 != 0}
		p := Compute(rs, ts, b)
		if b.Validate() != nil {
			return // any plan is acceptable for an invalid budget, as long as Compute did not panic
		}
		checkPlan(t, rs, ts, b, p)
		if flags&16 != 0 { // alternation mode
			checkPlaced(t, rs, ts, b, p, PlaceAlternating(p, rs, ts, b))
		}
	})
}
