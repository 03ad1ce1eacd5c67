package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
)

// Case is one record of a worst-cases table, as its --outcomes line
// (metrics.Observation.AppendJSON) describes it.
type Case struct {
	Source                    string
	Line                      int64
	Outcome                   outcome.Outcome
	Reason                    string
	TokensBefore, TokensAfter int64
	TurnsBefore, TurnsAfter   int64
}

func (c Case) saved() int64 { return c.TokensBefore - c.TokensAfter }

// Worst keeps the worst cases of a run as its records go by, in bounded
// memory: the K records written furthest over target (the largest tokens
// after among compressed_over_limit, uncompressible and summary_failed)
// and the K compressed records that saved the most tokens. Ties keep the
// record seen first, so the tables depend only on the records and their
// order. The zero Worst is not usable: use [NewWorst].
type Worst struct {
	k           int
	over, saved []Case
	counts      [outcome.N]int64 // records seen per outcome
}

// DefaultWorst is the number of records per worst-cases table.
const DefaultWorst = 10

// NewWorst returns a Worst keeping k records per table.
func NewWorst(k int) *Worst { return &Worst{k: max(k, 1)} }

// Records returns the number of records seen.
func (w *Worst) Records() int64 {
	var n int64
	for _, c := range w.counts {
		n += c
	}
	return n
}

// Observe adds the record o describes (what the compress run sees).
func (w *Worst) Observe(o metrics.Observation) {
	c := Case{Source: o.Source, Line: o.Line, Outcome: o.Outcome, Reason: o.Reason,
		TokensBefore: int64(o.TokensBefore), TokensAfter: int64(o.TokensAfter),
		TurnsBefore: int64(o.TurnsBefore), TurnsAfter: int64(o.TurnsAfter)}
	if o.Outcome.Unchanged() {
		c.TokensAfter, c.TurnsAfter = c.TokensBefore, c.TurnsBefore // as the outcome line says
	}
	w.Add(c)
}

// Add adds one record.
func (w *Worst) Add(c Case) {
	if i := c.Outcome.Index(); i >= 0 {
		w.counts[i]++
	}
	if c.Outcome.OverLimit() {
		w.over = keep(w.over, c, w.k, func(a, b Case) bool { return a.TokensAfter > b.TokensAfter })
	}
	if c.Outcome.WasCompressed() && c.saved() > 0 {
		w.saved = keep(w.saved, c, w.k, func(a, b Case) bool { return a.saved() > b.saved() })
	}
}

// Merge adds what o kept and counted, as records seen after w's, with
// shift added to their line numbers (a task of a split file counts its
// lines from its own start). Merging the Worst of consecutive parts of a
// run, in order, gives the Worst of the whole: a case not kept by its part
// had k better (or as good and earlier) cases there.
func (w *Worst) Merge(o *Worst, shift int64) {
	for i, n := range o.counts {
		w.counts[i] += n
	}
	better := func(over bool) func(a, b Case) bool {
		if over {
			return func(a, b Case) bool { return a.TokensAfter > b.TokensAfter }
		}
		return func(a, b Case) bool { return a.saved() > b.saved() }
	}
	for _, c := range o.over {
		c.Line += shift
		w.over = keep(w.over, c, w.k, better(true))
	}
	for _, c := range o.saved {
		c.Line += shift
		w.saved = keep(w.saved, c, w.k, better(false))
	}
}

// worstJSON is the JSON form of a Worst: what it keeps and counts.
type worstJSON struct {
	K      int              `json:"k"`
	Over   []Case           `json:"over"`
	Saved  []Case           `json:"saved"`
	Counts map[string]int64 `json:"counts"`
}

// MarshalJSON implements json.Marshaler: the state a task of a sharded or
// resumed run keeps, read back by [Worst.UnmarshalJSON].
func (w *Worst) MarshalJSON() ([]byte, error) {
	j := worstJSON{K: w.k, Over: w.over, Saved: w.saved, Counts: map[string]int64{}}
	for i, oc := range outcome.All() {
		if w.counts[i] != 0 {
			j.Counts[string(oc)] = w.counts[i]
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler for the form MarshalJSON
// writes.
func (w *Worst) UnmarshalJSON(b []byte) error {
	var j worstJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("report: worst cases: %w", err)
	}
	out := Worst{k: max(j.K, 1), over: j.Over, saved: j.Saved}
	for name, n := range j.Counts {
		i := outcome.Outcome(name).Index()
		if i < 0 {
			return fmt.Errorf("report: worst cases: unknown outcome %q", name)
		}
		out.counts[i] = n
	}
	if len(out.over) > out.k || len(out.saved) > out.k {
		return fmt.Errorf("report: worst cases: more than %d cases", out.k)
	}
	*w = out
	return nil
}

// keep inserts c into the list sorted by better (strictly better first,
// earlier first among equals) and keeps at most k.
func keep(list []Case, c Case, k int, better func(a, b Case) bool) []Case {
	i := len(list)
	for i > 0 && better(c, list[i-1]) {
		i--
	}
	if i >= k {
		return list
	}
	list = append(list, Case{})
	copy(list[i+1:], list[i:])
	list[i] = c
	return list[:min(len(list), k)]
}

// outcomeLine is the part of an --outcomes line the report reads.
type outcomeLine struct {
	Source       string  `json:"source"`
	Line         int64   `json:"line"`
	Outcome      string  `json:"outcome"`
	Reason       *string `json:"reason"`
	TokensBefore *int64  `json:"tokens_before"`
	TokensAfter  *int64  `json:"tokens_after"`
	TurnsBefore  int64   `json:"turns_before"`
	TurnsAfter   int64   `json:"turns_after"`
}

// ReadOutcomes adds every line of an --outcomes file (JSON lines, as
// compress --outcomes writes them) to w. name is used in errors, which
// give the line: a line that is not such a JSON object, or names an
// unknown outcome, stops the reading. Blank lines are skipped.
func ReadOutcomes(r io.Reader, name string, w *Worst) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := int64(1); ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ol outcomeLine
			if jerr := json.Unmarshal(line, &ol); jerr != nil {
				return fmt.Errorf("%s:%d: not an outcomes line: %v", name, n, jerr)
			}
			oc := outcome.Outcome(ol.Outcome)
			if oc.Index() < 0 || ol.TokensBefore == nil || ol.TokensAfter == nil {
				return fmt.Errorf("%s:%d: not an outcomes line (outcome %q, tokens_before and tokens_after expected)", name, n, ol.Outcome)
			}
			c := Case{Source: ol.Source, Line: ol.Line, Outcome: oc, TokensBefore: *ol.TokensBefore, TokensAfter: *ol.TokensAfter,
				TurnsBefore: ol.TurnsBefore, TurnsAfter: ol.TurnsAfter}
			if ol.Reason != nil {
				c.Reason = *ol.Reason
			}
			w.Add(c)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
}
