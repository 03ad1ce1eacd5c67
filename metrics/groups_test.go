package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
)

func TestGroupName(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	for _, tc := range []struct {
		v    string
		ok   bool
		want string
	}{
		{`"gpt-4o"`, true, "gpt-4o"},
		{`"a\"b\u00e9"`, true, `a"bé`},
		{`""`, true, GroupEmpty},
		{`null`, true, GroupNone},
		{``, false, GroupNone},
		{`42`, true, "42"},
		{`true`, true, "true"},
		{`{"a": [1, 2]}`, true, `{"a":[1,2]}`},
		{`"` + long + `"`, true, strings.Repeat("é", 60) + "…"},
		{"\"bad \xff\"", true, "bad \uFFFD"},
	} {
		if got := GroupName([]byte(tc.v), tc.ok); got != tc.want {
			t.Errorf("GroupName(%s, %v) = %q, want %q", tc.v, tc.ok, got, tc.want)
		}
	}
}

// TestGroupsBoundedAndExact: with more names than MaxGroups, the names
// kept are the MaxGroups smallest, each with all of its records, and
// other holds exactly the rest, however the records were split and merged
// (also after a round trip through the report's JSON).
func TestGroupsBoundedAndExact(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 64))
		nNames := 1 + r.IntN(3*MaxGroups)
		want := map[string]*GroupCounts{}
		parts := make([]Groups, 1+r.IntN(7))
		var total GroupCounts
		for range 2000 {
			name := fmt.Sprintf("src-%03d", r.IntN(nNames))
			var c GroupCounts
			c.Outcomes[r.IntN(outcome.N)] = 1
			c.TokensBefore, c.TokensAfter = r.Int64N(9000), r.Int64N(9000)
			parts[r.IntN(len(parts))].Add(name, &c)
			if want[name] == nil {
				want[name] = &GroupCounts{}
			}
			want[name].add(&c)
			total.add(&c)
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range want {
				if !yield(n) {
					return
				}
			}
		})
		kept := names[:min(len(names), MaxGroups)]
		var merged Groups
		for _, i := range r.Perm(len(parts)) {
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(parts[i].Section("model")); err != nil {
				t.Fatal(err)
			}
			var sec GroupsSection
			if err := json.Unmarshal(buf.Bytes(), &sec); err != nil {
				t.Fatal(err)
			}
			p, err := sec.Groups()
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, buf.Bytes())
			}
			if !p.equal(&parts[i]) {
				t.Fatalf("seed %d: part %d does not round-trip", seed, i)
			}
			merged.Merge(&p)
		}
		if got := merged.Names(); !slices.Equal(got, kept) {
			t.Fatalf("seed %d: kept %v, want the %d smallest %v", seed, got, len(kept), kept)
		}
		var sum GroupCounts
		for _, n := range kept {
			if *merged.Get(n) != *want[n] {
				t.Fatalf("seed %d: group %s = %+v, want %+v", seed, n, *merged.Get(n), *want[n])
			}
			sum.add(want[n])
		}
		sum.add(&merged.Other)
		if sum != total {
			t.Fatalf("seed %d: kept groups + other = %+v, want the total %+v", seed, sum, total)
		}
	}
}

func TestGroupsSectionRefuses(t *testing.T) {
	row := func(name string, skipped int64) GroupRow {
		c := GroupCounts{TokensBefore: 10, TokensAfter: 10}
		c.Outcomes[outcome.SkippedUnderTarget.Index()] = skipped
		return rowOf(name, &c)
	}
	bad := row("b", 2)
	bad.RecordsIn = 3
	for _, tc := range []struct {
		s    GroupsSection
		want string
	}{
		{GroupsSection{Limit: 10}, "limit 10"},
		{GroupsSection{Limit: MaxGroups, Values: []GroupRow{row("b", 1), row("a", 1)}}, "not above the previous"},
		{GroupsSection{Limit: MaxGroups, Values: []GroupRow{row("", 1)}}, "empty"},
		{GroupsSection{Limit: MaxGroups, Values: []GroupRow{bad}}, "derived figures"},
	} {
		if _, err := tc.s.Groups(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.s, err, tc.want)
		}
	}
}

func TestLabelAndObserveGroups(t *testing.T) {
	var a, b Summary
	a.Observe(Observation{Outcome: outcome.Compressed, TokensBefore: 100, TokensAfter: 40})
	a.Observe(Observation{Outcome: outcome.Invalid})
	a.Label("a.jsonl")
	b.Observe(Observation{Outcome: outcome.Uncompressible, Reason: string(outcome.NoMiddle), TokensBefore: 70, TokensAfter: 1})
	b.Label("b.jsonl")
	a.Merge(&b)
	sec := a.Report(RunInfo{}).Groups
	if sec.By != "file" || len(sec.Values) != 2 || sec.Other != nil {
		t.Fatalf("section %+v", sec)
	}
	if g := sec.Values[0]; g.Name != "a.jsonl" || g.RecordsIn != 2 || g.Invalid != 1 || g.TokensAfter != 40 || g.OverallCompressionRatio != 0.4 {
		t.Errorf("a.jsonl: %+v", g)
	}
	if g := sec.Values[1]; g.Uncompressible != 1 || g.FailedToFit != 1 || g.TokensAfter != 70 {
		t.Errorf("b.jsonl (unchanged record: after = before): %+v", g)
	}
	var f Summary
	f.Observe(Observation{Outcome: outcome.SkippedUnderTarget, TokensBefore: 5, Group: "m1"})
	f.Observe(Observation{Outcome: outcome.Invalid, Group: GroupNone})
	if sec := f.Report(RunInfo{GroupBy: "model"}).Groups; sec.By != "field" || sec.Field != "model" || len(sec.Values) != 2 || sec.Values[0].Name != GroupNone {
		t.Errorf("by field: %+v", sec)
	}
}

func TestCompactNumberArrays(t *testing.T) {
	in := "{\n  \"a\": [\n    [\n      1,\n      2\n    ],\n    [\n      -3,\n      4.5e+2\n    ]\n  ],\n  \"s\": \"[ 1, 2 ]\",\n  \"o\": [\n    {\n      \"x\": [\n        7\n      ]\n    }\n  ],\n  \"q\": \"\\\"[ 1 ]\",\n  \"e\": []\n}\n"
	want := "{\n  \"a\": [[1,2],[-3,4.5e+2]],\n  \"s\": \"[ 1, 2 ]\",\n  \"o\": [\n    {\n      \"x\": [7]\n    }\n  ],\n  \"q\": \"\\\"[ 1 ]\",\n  \"e\": []\n}\n"
	if got := string(compactNumberArrays([]byte(in))); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestReportReadsBack(t *testing.T) {
	var s Summary
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 500 {
		s.Observe(randomObservation(r, int64(i+1)))
	}
	rep := s.Report(RunInfo{Tokenizer: "o200k_base", GroupBy: "task"})
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.WriteJSON(&again); err != nil {
		t.Fatal(err)
	}
	if buf.String() != again.String() {
		t.Errorf("the report does not read back to the same bytes:\n%s", firstLineDiff(buf.String(), again.String()))
	}
	g, err := back.Groups.Groups()
	if err != nil || !g.equal(s.Groups()) {
		t.Errorf("groups do not read back: %v", err)
	}
	before, _ := s.Hists()
	if !back.Distributions.TokensBefore.Histogram.equal(before) {
		t.Error("tokens_before histogram does not read back")
	}
}

func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n%s\n%s", i+1, al[i], bl[i])
		}
	}
	return "lengths differ"
}
