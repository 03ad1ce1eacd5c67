package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/outcome"
)

// MaxGroups bounds the groups a [Summary] names (see [Groups]).
const MaxGroups = 64

// Group names of records without a usable value in the group-by field.
const (
	GroupNone  = "(none)"  // the field is missing or null
	GroupEmpty = "(empty)" // the field is the empty string
)

// maxGroupName bounds a group name, in bytes: a longer value is cut (at a
// rune boundary) and marked with "…".
const maxGroupName = 120

// GroupName returns the group of a record whose group-by field holds the
// raw JSON value v (ok false: the record has no such field): a string's
// text, the compact JSON text of any other value, [GroupNone] for a
// missing field or null, [GroupEmpty] for "". Invalid UTF-8 becomes
// U+FFFD; names longer than 120 bytes are cut, ending in "…". The name
// never shares v's memory.
func GroupName(v []byte, ok bool) string {
	if !ok || len(v) == 0 || string(v) == "null" {
		return GroupNone
	}
	var name string
	if s, isStr := jsonx.Unquote(v); isStr {
		name = s
	} else {
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			name = buf.String()
		} else {
			name = string(v)
		}
	}
	if name == "" {
		return GroupEmpty
	}
	// A copy (Unquote shares the record's memory), valid UTF-8 so that
	// the name reads back from the JSON as it is.
	name = strings.Clone(strings.ToValidUTF8(name, "\uFFFD"))
	if len(name) > maxGroupName {
		cut := maxGroupName
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	return name
}

// GroupCounts are the counts of one group: records per outcome, and
// tokens before and after over its non-rejected records.
type GroupCounts struct {
	Outcomes                  [outcome.N]int64 // indexed like outcome.All()
	TokensBefore, TokensAfter int64
}

func (g *GroupCounts) add(o *GroupCounts) {
	for i, n := range o.Outcomes {
		g.Outcomes[i] += n
	}
	addSat(&g.TokensBefore, o.TokensBefore)
	addSat(&g.TokensAfter, o.TokensAfter)
}

// Count returns the records of the group with outcome oc.
func (g *GroupCounts) Count(oc outcome.Outcome) int64 {
	if i := oc.Index(); i >= 0 {
		return g.Outcomes[i]
	}
	return 0
}

// RecordsIn returns the records of the group.
func (g *GroupCounts) RecordsIn() int64 {
	var n int64
	for _, c := range g.Outcomes {
		n += c
	}
	return n
}

// Groups is the per-group breakdown of a [Summary]: counts per group name
// (an input file, or the value of a record field chosen with --group-by)
// for at most [MaxGroups] names, and Other for the rest.
//
// The names kept are the MaxGroups smallest in byte order of all the names
// seen; every record of any other name is counted in Other. That rule is
// what keeps the breakdown bounded and still exactly mergeable: a name
// among the MaxGroups smallest of a union of parts is among the
// MaxGroups smallest of each part that has it, so its counts are complete
// whatever the split and the merge order, and Other holds exactly the
// rest. The zero Groups is empty and ready to use.
type Groups struct {
	named map[string]*GroupCounts
	Other GroupCounts
	top   string // the largest name kept, when len(named) == MaxGroups
}

// Add counts c under name.
func (g *Groups) Add(name string, c *GroupCounts) {
	if n, ok := g.named[name]; ok {
		n.add(c)
		return
	}
	if len(g.named) >= MaxGroups {
		if name > g.top {
			g.Other.add(c)
			return
		}
		g.Other.add(g.named[g.top]) // evict the largest name kept
		delete(g.named, g.top)
	}
	if g.named == nil {
		g.named = make(map[string]*GroupCounts)
	}
	cc := *c
	g.named[name] = &cc
	if len(g.named) == MaxGroups {
		g.top = ""
		for n := range g.named {
			g.top = max(g.top, n)
		}
	}
}

// Merge adds every group of o to g; o is not modified. The result is the
// same whatever the split and the order of merges (see [Groups]).
func (g *Groups) Merge(o *Groups) {
	for _, name := range o.Names() {
		g.Add(name, o.named[name])
	}
	g.Other.add(&o.Other)
}

// Names returns the names kept, in ascending byte order.
func (g *Groups) Names() []string {
	return slices.Sorted(maps.Keys(g.named))
}

// Get returns the counts of the group name, nil when it is not kept.
func (g *Groups) Get(name string) *GroupCounts { return g.named[name] }

func (g *Groups) equal(o *Groups) bool {
	return g.Other == o.Other && maps.EqualFunc(g.named, o.named, func(a, b *GroupCounts) bool { return *a == *b })
}

// GroupsSection is the "groups" section of the report: the per-source
// breakdown. By is "file" (one group per input file, named by its path
// relative to the input directory, or its base name) or "field" (one per
// value of the record field Field, chosen with compress --group-by).
// Values lists at most Limit groups in ascending name order; Other holds the
// records of every other name (absent when there are none).
type GroupsSection struct {
	By     string     `json:"by"`
	Field  string     `json:"field,omitempty"`
	Limit  int        `json:"limit"`
	Values []GroupRow `json:"values"`
	Other  *GroupRow  `json:"other,omitempty"`
}

// GroupRow is one group's counts in the report. RecordsIn, FailedToFit
// and OverallCompressionRatio are derived from the others, as in the
// outcomes and tokens sections.
type GroupRow struct {
	Name      string `json:"name,omitempty"`
	RecordsIn int64  `json:"records_in"`
	OutcomeCounts
	FailedToFit             int64 `json:"failed_to_fit"`
	TokensBefore            int64 `json:"tokens_before"`
	TokensAfter             int64 `json:"tokens_after"`
	OverallCompressionRatio Float `json:"overall_compression_ratio"` // round(after/max(before,1), 4)
}

func rowOf(name string, c *GroupCounts) GroupRow {
	return GroupRow{
		Name:                    name,
		RecordsIn:               c.RecordsIn(),
		OutcomeCounts:           outcomeCounts(c.Count),
		FailedToFit:             c.Count(outcome.CompressedOverLimit) + c.Count(outcome.Uncompressible),
		TokensBefore:            c.TokensBefore,
		TokensAfter:             c.TokensAfter,
		OverallCompressionRatio: Round(float64(c.TokensAfter)/float64(max(c.TokensBefore, 1)), 4),
	}
}

// counts returns the counts of r, checking the derived figures.
func (r GroupRow) counts() (GroupCounts, error) {
	var c GroupCounts
	for _, oc := range outcome.All() {
		n := r.Count(oc)
		if n < 0 {
			return c, fmt.Errorf("%s: negative count", oc)
		}
		c.Outcomes[oc.Index()] = n
	}
	c.TokensBefore, c.TokensAfter = r.TokensBefore, r.TokensAfter
	if want := rowOf(r.Name, &c); want != r {
		return c, fmt.Errorf("derived figures do not match the counts (records_in %d, failed_to_fit %d, ratio %s expected)",
			want.RecordsIn, want.FailedToFit, want.OverallCompressionRatio)
	}
	return c, nil
}

// Section returns the report section of g, grouped by field (the record
// field's name) or by input file when field is "".
func (g *Groups) Section(field string) *GroupsSection {
	s := &GroupsSection{By: "file", Field: field, Limit: MaxGroups, Values: []GroupRow{}}
	if field != "" {
		s.By = "field"
	}
	for _, name := range g.Names() {
		s.Values = append(s.Values, rowOf(name, g.named[name]))
	}
	if g.Other.RecordsIn() > 0 {
		o := rowOf("", &g.Other)
		s.Other = &o
	}
	return s
}

// Groups reads the section back into a mergeable [Groups]. It refuses a
// section with another limit than [MaxGroups] (its groups could not be
// merged exactly with ours), more values than the limit, names out of
// order, repeated or empty, and rows whose derived figures do not match.
func (s *GroupsSection) Groups() (Groups, error) {
	var g Groups
	if s.Limit != MaxGroups {
		return g, fmt.Errorf("metrics: groups: limit %d, this version keeps %d: cannot be merged exactly", s.Limit, MaxGroups)
	}
	if len(s.Values) > s.Limit {
		return g, fmt.Errorf("metrics: groups: %d values, more than the limit %d", len(s.Values), s.Limit)
	}
	for i, r := range s.Values {
		if r.Name == "" || i > 0 && r.Name <= s.Values[i-1].Name {
			return g, fmt.Errorf("metrics: groups: value %d: name %q is empty or not above the previous one", i, r.Name)
		}
		c, err := r.counts()
		if err != nil {
			return g, fmt.Errorf("metrics: groups: %q: %w", r.Name, err)
		}
		g.Add(r.Name, &c)
	}
	if s.Other != nil {
		c, err := s.Other.counts()
		if err != nil {
			return g, fmt.Errorf("metrics: groups: other: %w", err)
		}
		g.Other = c
	}
	return g, nil
}
