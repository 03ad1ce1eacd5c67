package metrics

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/trajcompress/trajcompress/outcome"
)

// stateVersion is the version of the state form; a reader refuses others.
const stateVersion = 1

// summaryState is the JSON form of a Summary's exact state: every counter
// by name (outcomes and reasons by their names, so that a reordering of
// package outcome's lists cannot shift them), the histograms as
// [Hist.MarshalJSON] writes them, the groups with their exact counts.
type summaryState struct {
	Version          int                   `json:"version"`
	Outcomes         map[string]int64      `json:"outcomes"`
	Reasons          map[string]int64      `json:"reasons"`
	TokensBefore     int64                 `json:"tokens_before"`
	TokensAfter      int64                 `json:"tokens_after"`
	TurnsBefore      int64                 `json:"turns_before"`
	TurnsAfter       int64                 `json:"turns_after"`
	RatioSum         [2]uint64             `json:"ratio_sum"` // fixed-point 64.64: hi, lo
	TokensSavedSum   int64                 `json:"tokens_saved_sum"`
	TurnsRemovedSum  int64                 `json:"turns_removed_sum"`
	SummaryCalls     int64                 `json:"summary_calls"`
	SummaryErrors    int64                 `json:"summary_errors"`
	CacheHits        int64                 `json:"cache_hits"`
	PromptTokens     int64                 `json:"prompt_tokens"`
	CompletionTokens int64                 `json:"completion_tokens"`
	PairingRecords   int64                 `json:"pairing_records"`
	Fallbacks        int64                 `json:"fallbacks"`
	Quality          qualityState          `json:"quality"`
	UTF8Repaired     int64                 `json:"utf8_repaired,omitempty"`
	TwoTurnLists     int64                 `json:"two_turn_lists,omitempty"`
	ImagesRemoved    int64                 `json:"images_removed,omitempty"`
	ImageTokensSaved int64                 `json:"image_tokens_saved,omitempty"`
	Images           int64                 `json:"images,omitempty"`
	ImagesUnknown    int64                 `json:"images_unknown_size,omitempty"`
	Trainer          *trainerCounts        `json:"trainer,omitempty"`
	Before           *Hist                 `json:"before"`
	After            *Hist                 `json:"after"`
	Groups           map[string]groupState `json:"groups"`
	Other            *groupState           `json:"other,omitempty"`
}

// qualityState is the state of the prepass, redaction and retention
// counters (quality.go).
type qualityState struct {
	PrepassRan, PrepassChanged, PrepassFit int64
	PrepassSaved                           [NumPrepassSteps]int64
	RedactedRecords                        int64
	Regions, Tools, ToolsKept, Args, Kept  int64
	Redactions                             map[string]int64 `json:",omitempty"`
}

type groupState struct {
	Outcomes     map[string]int64 `json:"outcomes"`
	TokensBefore int64            `json:"tokens_before"`
	TokensAfter  int64            `json:"tokens_after"`
}

// MarshalState returns the exact state of s as JSON: what a task of a
// sharded or resumed run keeps beside its outputs, so that the merge of
// every task's state ([Summary.UnmarshalState], then [Summary.Merge])
// equals the Summary of one process that observed every record. It is not
// the report ([Summary.Report]), which rounds.
func (s *Summary) MarshalState() ([]byte, error) {
	c := &s.c
	st := summaryState{
		Version: stateVersion, Outcomes: byOutcome(c.outcomes), Reasons: map[string]int64{},
		TokensBefore: c.tokensBefore, TokensAfter: c.tokensAfter, TurnsBefore: c.turnsBefore, TurnsAfter: c.turnsAfter,
		RatioSum: [2]uint64{c.ratioSum.hi, c.ratioSum.lo}, TokensSavedSum: c.tokensSavedSum, TurnsRemovedSum: c.turnsRemovedSum,
		SummaryCalls: c.summaryCalls, SummaryErrors: c.summaryErrors, CacheHits: c.cacheHits,
		PromptTokens: c.promptTokens, CompletionTokens: c.completionTokens,
		PairingRecords: c.pairingRecords, Fallbacks: c.fallbacks, UTF8Repaired: c.utf8Repaired,
		TwoTurnLists: c.twoTurnLists, ImagesRemoved: c.imagesRemoved, ImageTokensSaved: c.imageTokensSaved,
		Images: c.images, ImagesUnknown: c.imagesUnknownSize,
		Before: &s.before, After: &s.after, Groups: map[string]groupState{},
	}
	if c.trainer.Records > 0 {
		t := c.trainer
		st.Trainer = &t
	}
	for i, r := range outcome.AllReasons() {
		if c.reasons[i] != 0 {
			st.Reasons[string(r)] = c.reasons[i]
		}
	}
	q := &s.q.qcounters
	st.Quality = qualityState{PrepassRan: q.prepassRan, PrepassChanged: q.prepassChanged, PrepassFit: q.prepassFit, PrepassSaved: q.prepassSaved,
		RedactedRecords: q.redactedRecords, Regions: q.regions, Tools: q.tools, ToolsKept: q.toolsKept, Args: q.args, Kept: q.kept,
		Redactions: s.q.redactions}
	for name, g := range s.groups.named {
		st.Groups[name] = groupStateOf(g)
	}
	if s.groups.Other != (GroupCounts{}) {
		o := groupStateOf(&s.groups.Other)
		st.Other = &o
	}
	return json.Marshal(st)
}

// UnmarshalState replaces s with the state [Summary.MarshalState] wrote.
// It refuses another version, an outcome or reason this version does not
// know, a negative count, and more groups than [MaxGroups].
func (s *Summary) UnmarshalState(b []byte) error {
	var st summaryState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("metrics: state: %w", err)
	}
	if st.Version != stateVersion {
		return fmt.Errorf("metrics: state: version %d, this version reads %d", st.Version, stateVersion)
	}
	var out Summary
	c := &out.c
	var err error
	if c.outcomes, err = outcomesOf(st.Outcomes); err != nil {
		return err
	}
	for name, n := range st.Reasons {
		i := outcome.Reason(name).Index()
		if i < 0 || n < 0 {
			return fmt.Errorf("metrics: state: reason %q: %d", name, n)
		}
		c.reasons[i] = n
	}
	c.tokensBefore, c.tokensAfter, c.turnsBefore, c.turnsAfter = st.TokensBefore, st.TokensAfter, st.TurnsBefore, st.TurnsAfter
	c.ratioSum = fixed128{hi: st.RatioSum[0], lo: st.RatioSum[1]}
	c.tokensSavedSum, c.turnsRemovedSum = st.TokensSavedSum, st.TurnsRemovedSum
	c.summaryCalls, c.summaryErrors, c.cacheHits = st.SummaryCalls, st.SummaryErrors, st.CacheHits
	c.promptTokens, c.completionTokens = st.PromptTokens, st.CompletionTokens
	c.pairingRecords, c.fallbacks, c.utf8Repaired = st.PairingRecords, st.Fallbacks, st.UTF8Repaired
	c.twoTurnLists = st.TwoTurnLists
	if st.Images < 0 || st.ImagesUnknown < 0 || st.ImagesRemoved < 0 {
		return fmt.Errorf("metrics: state: images %d, of unknown size %d, removed %d", st.Images, st.ImagesUnknown, st.ImagesRemoved)
	}
	c.images, c.imagesUnknownSize = st.Images, st.ImagesUnknown
	c.imagesRemoved, c.imageTokensSaved = st.ImagesRemoved, st.ImageTokensSaved
	if t := st.Trainer; t != nil {
		if t.Records < 0 || t.LossyBefore < 0 || t.LossyAfter < 0 || t.LostBefore < 0 || t.LostAfter < 0 {
			return fmt.Errorf("metrics: state: trainer counts %+v", *t)
		}
		c.trainer = *t
	}
	qs := st.Quality
	out.q.qcounters = qcounters{prepassRan: qs.PrepassRan, prepassChanged: qs.PrepassChanged, prepassFit: qs.PrepassFit, prepassSaved: qs.PrepassSaved,
		redactedRecords: qs.RedactedRecords, regions: qs.Regions, tools: qs.Tools, toolsKept: qs.ToolsKept, args: qs.Args, kept: qs.Kept}
	if len(qs.Redactions) > 0 {
		out.q.redactions = qs.Redactions
	}
	if st.Before != nil {
		out.before = *st.Before
	}
	if st.After != nil {
		out.after = *st.After
	}
	if len(st.Groups) > MaxGroups {
		return fmt.Errorf("metrics: state: %d groups, more than %d", len(st.Groups), MaxGroups)
	}
	for _, name := range slices.Sorted(maps.Keys(st.Groups)) {
		g, err := st.Groups[name].counts()
		if err != nil {
			return fmt.Errorf("metrics: state: group %q: %w", name, err)
		}
		out.groups.Add(name, &g)
	}
	if st.Other != nil {
		if out.groups.Other, err = st.Other.counts(); err != nil {
			return fmt.Errorf("metrics: state: other group: %w", err)
		}
	}
	*s = out
	return nil
}

func byOutcome(counts [outcome.N]int64) map[string]int64 {
	m := map[string]int64{}
	for i, oc := range outcome.All() {
		if counts[i] != 0 {
			m[string(oc)] = counts[i]
		}
	}
	return m
}

func outcomesOf(m map[string]int64) ([outcome.N]int64, error) {
	var counts [outcome.N]int64
	for name, n := range m {
		i := outcome.Outcome(name).Index()
		if i < 0 || n < 0 {
			return counts, fmt.Errorf("metrics: state: outcome %q: %d", name, n)
		}
		counts[i] = n
	}
	return counts, nil
}

func groupStateOf(g *GroupCounts) groupState {
	return groupState{Outcomes: byOutcome(g.Outcomes), TokensBefore: g.TokensBefore, TokensAfter: g.TokensAfter}
}

func (g groupState) counts() (GroupCounts, error) {
	o, err := outcomesOf(g.Outcomes)
	return GroupCounts{Outcomes: o, TokensBefore: g.TokensBefore, TokensAfter: g.TokensAfter}, err
}
