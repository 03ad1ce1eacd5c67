package metrics

import (
	"fmt"
	"math/bits"

	"github.com/trajcompress/trajcompress/outcome"
)

// Observation is what the pipeline records about one input record.
type Observation struct {
	Source string // input file the record came from
	Line   int64  // 1-based line (JSONL; JSON array: where it starts) or row (Parquet/Arrow) of the record
	// Record is the record's 1-based index in a JSON array, whose records
	// may share a line; 0 for the other formats.
	Record int64

	Outcome outcome.Outcome
	// Reason is the [outcome.Reason] of an Uncompressible outcome; for other
	// outcomes it may carry a free-text reason (e.g. why a summary failed)
	// that appears only in the --outcomes line.
	Reason string

	// Token and turn counts before and after compression. For outcomes that
	// write the record unchanged (skipped_under_target, uncompressible,
	// summary_failed) the after values are taken to equal the before values
	// whatever they hold. Invalid records count in no total.
	TokensBefore, TokensAfter int
	TurnsBefore, TurnsAfter   int

	// Region is the replaced region [start, end) in input turn indices, or
	// nil when nothing was replaced.
	Region *[2]int

	SummaryCalls, SummaryErrors    int    // summarizer attempts and failed attempts
	CacheHit                       bool   // the summary came from a cache
	PromptTokens, CompletionTokens int    // as reported by an LLM summarizer
	RejectReason                   string // why an Invalid record was rejected

	// PairingProblems counts tool-pairing problems by id (OpenAI dialect)
	// in the record as written: a tool result whose call is not in the
	// record, or a call whose result is not. Input that was already broken
	// is reported here, never repaired.
	PairingProblems int
	// PairingProblemsBefore is the same count for the record as read; the
	// planner never makes it grow (snap.KeepPairs).
	PairingProblemsBefore int

	// Fallback is set when the summary came from the deterministic
	// fallback after the configured summarizer failed.
	Fallback bool

	// Group is the record's group in the per-source breakdown when the run
	// groups by a record field (compress --group-by; see [GroupName]); ""
	// otherwise: a run grouped by input file labels each input's Summary
	// with [Summary.Label] instead.
	Group string

	// TemplateError is the chat template's message for a record it refused
	// (reason chat_template); "" otherwise. In the outcome line only then.
	TemplateError string
	// UTF8Repaired counts the ill-formed UTF-8 sequences of the record as
	// read that were replaced by U+FFFD (0: the record was valid UTF-8).
	UTF8Repaired int
	// Images counts the images found in the record as read (package
	// imagetok: content parts and "<image>" markers with the record's
	// images list), ImagesUnknownSize those whose size could not be read
	// from their header (a link, a missing file), counted by the rule's
	// fallback. In the outcome line (images) only when non-zero.
	Images, ImagesUnknownSize int
	// TurnListRead is the key of the turn list read when the record held
	// two, "conversations" and "messages", with the same turns (the other
	// is written as it came); "" otherwise.
	TurnListRead string
	// Prepass is what the prepass did (quality.go).
	Prepass Prepass
	// ImagesRemoved counts the old images the image step replaced by text
	// in the record as written (compression.drop_old_images), and
	// ImageTokensSaved the tokens that saved, as the turns are counted.
	ImagesRemoved, ImageTokensSaved int
	// Redactions counts the secrets replaced in the record, per kind
	// (package redact's marker kinds); it never holds a value.
	Redactions map[string]int
	// Retention is what the summary kept of the region it replaced.
	Retention Retention
	// Trainer, in a run with a trainer, is what it does to the row as read
	// ([0]) and as written ([1]); nil otherwise.
	Trainer *[2]TrainerFate
	// Repairs names the repairs made to the record so that its trainer
	// accepts it (merged turns, a dropped trailing turn); nil for none.
	Repairs []string
}

// normalized returns o with the after counts equal to the before counts when
// the record is written unchanged.
func (o Observation) normalized() Observation {
	if o.Outcome.Unchanged() {
		o.TokensAfter, o.TurnsAfter = o.TokensBefore, o.TurnsBefore
	}
	return o
}

// Summary is the mergeable aggregate of many [Observation] values: counts per
// outcome and per uncompressible reason, token and turn totals, the sums
// behind the peer's per-compressed averages, summarizer counters and
// histograms of tokens before and after.
//
// Every field is an integer sum, an exact fixed-point sum, a maximum or a
// histogram, so [Summary.Merge] is exact and order-independent: merging
// per-worker summaries gives the same Summary, and the same report, as
// observing every record in one. The zero Summary is empty and ready to use.
// A Summary is not safe for concurrent use: one goroutine observes into it
// (in pipeline.Run, the ordered writer, one Summary per input); combine
// several with Merge.
type Summary struct {
	c             counters
	q             quality // prepass, redaction, retention (quality.go)
	before, after Hist    // tokens before and after, non-rejected records
	groups        Groups  // the per-source breakdown
}

// counters holds every scalar of a Summary; it is comparable.
type counters struct {
	outcomes [outcome.N]int64        // indexed like outcome.All()
	reasons  [outcome.NReasons]int64 // indexed like outcome.AllReasons(), Uncompressible only

	// Over all non-rejected records.
	tokensBefore, tokensAfter int64
	turnsBefore, turnsAfter   int64

	// Over compressed records (compressed and compressed_over_limit).
	ratioSum        fixed128 // Σ after/max(before,1)
	tokensSavedSum  int64
	turnsRemovedSum int64

	summaryCalls, summaryErrors    int64
	cacheHits                      int64
	promptTokens, completionTokens int64

	pairingRecords int64 // records written with tool-pairing problems
	fallbacks      int64 // records summarised by the fallback
	utf8Repaired   int64 // records written with ill-formed UTF-8 replaced
	twoTurnLists   int64 // records read by one of two identical turn lists

	imagesRemoved, imageTokensSaved int64 // old images replaced by text, and the tokens that saved
	images, imagesUnknownSize       int64 // images found in the inputs, and of them of unknown size

	trainer trainerCounts // what a run's trainer loses (trainer.go)
}

// Observe adds one record's observation. It panics if o.Outcome is not one
// of [outcome.All], or if an Uncompressible observation's Reason is not one
// of [outcome.AllReasons]: both are programming errors.
func (s *Summary) Observe(o Observation) {
	oi := o.Outcome.Index()
	if oi < 0 {
		panic(fmt.Sprintf("metrics: %s:%d: unknown outcome %q", o.Source, o.Line, o.Outcome))
	}
	if o.Outcome == outcome.Uncompressible {
		ri := outcome.Reason(o.Reason).Index()
		if ri < 0 {
			panic(fmt.Sprintf("metrics: %s:%d: unknown uncompressible reason %q", o.Source, o.Line, o.Reason))
		}
		s.c.reasons[ri]++
	}
	s.c.outcomes[oi]++
	var g GroupCounts
	g.Outcomes[oi] = 1
	s.q.observe(&o) // a rejected line's secrets are redacted too
	if o.Outcome == outcome.Invalid {
		if o.Group != "" {
			s.groups.Add(o.Group, &g)
		}
		return
	}
	o = o.normalized()
	if o.Group != "" {
		g.TokensBefore, g.TokensAfter = int64(o.TokensBefore), int64(o.TokensAfter)
		s.groups.Add(o.Group, &g)
	}
	addSat(&s.c.tokensBefore, int64(o.TokensBefore))
	addSat(&s.c.tokensAfter, int64(o.TokensAfter))
	s.c.turnsBefore += int64(o.TurnsBefore)
	s.c.turnsAfter += int64(o.TurnsAfter)
	if o.Outcome.WasCompressed() {
		s.c.ratioSum.add(ratioFixed(o.TokensAfter, o.TokensBefore))
		addSat(&s.c.tokensSavedSum, int64(o.TokensBefore-o.TokensAfter))
		s.c.turnsRemovedSum += int64(o.TurnsBefore - o.TurnsAfter)
	}
	s.c.summaryCalls += int64(o.SummaryCalls)
	s.c.summaryErrors += int64(o.SummaryErrors)
	if o.CacheHit {
		s.c.cacheHits++
	}
	addSat(&s.c.promptTokens, int64(o.PromptTokens))
	addSat(&s.c.completionTokens, int64(o.CompletionTokens))
	if o.PairingProblems > 0 {
		s.c.pairingRecords++
	}
	if o.Fallback {
		s.c.fallbacks++
	}
	if o.UTF8Repaired > 0 {
		s.c.utf8Repaired++
	}
	if o.TurnListRead != "" {
		s.c.twoTurnLists++
	}
	s.c.imagesRemoved += int64(o.ImagesRemoved)
	addSat(&s.c.imageTokensSaved, int64(o.ImageTokensSaved))
	s.c.images += int64(o.Images)
	s.c.imagesUnknownSize += int64(o.ImagesUnknownSize)
	s.c.trainer.observe(o)
	s.before.Add(int64(o.TokensBefore))
	s.after.Add(int64(o.TokensAfter))
}

// Merge adds everything o observed to s; o is not modified. Merging is
// exact: any split of a set of observations over summaries, merged in any
// order, equals observing them all in one Summary.
func (s *Summary) Merge(o *Summary) {
	for i := range s.c.outcomes {
		s.c.outcomes[i] += o.c.outcomes[i]
	}
	for i := range s.c.reasons {
		s.c.reasons[i] += o.c.reasons[i]
	}
	addSat(&s.c.tokensBefore, o.c.tokensBefore)
	addSat(&s.c.tokensAfter, o.c.tokensAfter)
	s.c.turnsBefore += o.c.turnsBefore
	s.c.turnsAfter += o.c.turnsAfter
	s.c.ratioSum.add(o.c.ratioSum)
	addSat(&s.c.tokensSavedSum, o.c.tokensSavedSum)
	s.c.turnsRemovedSum += o.c.turnsRemovedSum
	s.c.summaryCalls += o.c.summaryCalls
	s.c.summaryErrors += o.c.summaryErrors
	s.c.cacheHits += o.c.cacheHits
	addSat(&s.c.promptTokens, o.c.promptTokens)
	addSat(&s.c.completionTokens, o.c.completionTokens)
	s.c.pairingRecords += o.c.pairingRecords
	s.c.fallbacks += o.c.fallbacks
	s.c.utf8Repaired += o.c.utf8Repaired
	s.c.twoTurnLists += o.c.twoTurnLists
	s.c.imagesRemoved += o.c.imagesRemoved
	addSat(&s.c.imageTokensSaved, o.c.imageTokensSaved)
	s.c.images += o.c.images
	s.c.imagesUnknownSize += o.c.imagesUnknownSize
	s.c.trainer.merge(o.c.trainer)
	s.q.merge(&o.q)
	s.before.Merge(&o.before)
	s.after.Merge(&o.after)
	s.groups.Merge(&o.groups)
}

// Label puts every record s has observed in the one group name, replacing
// its breakdown: a run grouped by input file labels each input's Summary
// with the file's name before merging them.
func (s *Summary) Label(name string) {
	g := GroupCounts{Outcomes: s.c.outcomes, TokensBefore: s.c.tokensBefore, TokensAfter: s.c.tokensAfter}
	s.groups = Groups{}
	if s.RecordsIn() > 0 {
		s.groups.Add(name, &g)
	}
}

// Groups returns the per-source breakdown of s; the caller must not
// modify it.
func (s *Summary) Groups() *Groups { return &s.groups }

// Hists returns the histograms of tokens before and after over the
// non-rejected records; the caller must not modify them.
func (s *Summary) Hists() (before, after *Hist) { return &s.before, &s.after }

// Count returns the number of records observed with outcome o (0 for an
// unknown outcome).
func (s *Summary) Count(o outcome.Outcome) int64 {
	if i := o.Index(); i >= 0 {
		return s.c.outcomes[i]
	}
	return 0
}

// ReasonCount returns the number of uncompressible records with reason r.
func (s *Summary) ReasonCount(r outcome.Reason) int64 {
	if i := r.Index(); i >= 0 {
		return s.c.reasons[i]
	}
	return 0
}

// RecordsIn returns the number of observations.
func (s *Summary) RecordsIn() int64 {
	var n int64
	for _, c := range s.c.outcomes {
		n += c
	}
	return n
}

// Images returns the number of images found in the non-rejected records,
// and of them those whose size was unknown.
func (s *Summary) Images() (found, unknownSize int64) { return s.c.images, s.c.imagesUnknownSize }

// RecordsRejected returns the number of invalid records.
func (s *Summary) RecordsRejected() int64 { return s.Count(outcome.Invalid) }

// SummaryCalls is the number of requests sent to a summarization
// endpoint (the metrics' total_api_calls).
func (s *Summary) SummaryCalls() int64 { return s.c.summaryCalls }

// RecordsOut returns the number of records written to the output: all but
// the rejected ones (summary_failed and uncompressible records are written
// unchanged).
func (s *Summary) RecordsOut() int64 { return s.RecordsIn() - s.RecordsRejected() }

// compressed returns the number of records a summary was spliced into.
func (s *Summary) compressed() int64 {
	return s.Count(outcome.Compressed) + s.Count(outcome.CompressedOverLimit)
}

// Equal reports whether s and o hold the same aggregate.
func (s *Summary) Equal(o *Summary) bool {
	return s.c == o.c && s.q.equal(&o.q) && s.before.equal(&o.before) && s.after.equal(&o.after) && s.groups.equal(&o.groups)
}

// fixed128 is an unsigned 64.64 fixed-point number; sums of them are exact
// and associative (wrapping only beyond 2^64 in the integer part).
type fixed128 struct{ hi, lo uint64 }

func (f *fixed128) add(o fixed128) {
	var carry uint64
	f.lo, carry = bits.Add64(f.lo, o.lo, 0)
	f.hi += o.hi + carry
}

func (f fixed128) float() float64 { return float64(f.hi) + float64(f.lo)/(1<<64) }

// ratioFixed returns after/max(before,1), rounded down to a multiple of
// 2^-64; negative counts are taken as 0.
func ratioFixed(after, before int) fixed128 {
	a, b := uint64(max(after, 0)), uint64(max(before, 1))
	frac, _ := bits.Div64(a%b, 0, b)
	return fixed128{hi: a / b, lo: frac}
}
