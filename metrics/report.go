package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
)

// RunInfo describes the run a [Report] is about.
type RunInfo struct {
	Tokenizer string // tokenizer name, e.g. "o200k_base"
	// For a tokenizer loaded from a file (tokenize.Describe): its kind,
	// split path and SHA-256; empty for the embedded encodings.
	TokenizerKind, TokenizerSplit, TokenizerSHA256 string
	TurnOverhead                                   int // tokens added per turn for chat-template framing
	// ChatTemplate and ChatTemplateSHA256 name the chat template records
	// were counted with (its path, SHA-256 of the file); empty for none.
	ChatTemplate, ChatTemplateSHA256 string
	// ImageTokens names the rule images were counted by (imagetok.Rule's
	// String: "openai", "flat:85", "qwen(patch=14,…)"); the report has it
	// only when an image was found.
	ImageTokens string
	// Budget is the planning budget used; nil leaves it out of the report.
	Budget     *snap.Budget
	Start, End time.Time // processing start and end, printed in their own location

	// Summarizer details for the summarization section; all optional.
	Summarizer        string
	Model             string
	RetriesByCause    map[string]int64
	ErrorsByCause     map[string]int64
	CacheMisses       *int64
	PriceIn, PriceOut float64 // USD per million prompt / completion tokens; 0: no cost figure
	Estimated         bool    // dry run: summarization figures are estimates

	// Reproducibility record; all optional.
	ToolVersion       string
	Config            json.RawMessage // effective configuration, as JSON
	ConfigFingerprint string
	InputFingerprint  string
	// Outputs are the files the run wrote that these metrics vouch for.
	Outputs []OutputFile
	// DryRun: nothing was written, and LLM summaries were estimated.
	DryRun bool
	// GroupBy is the record field the per-source breakdown groups by
	// (compress --group-by); "" means by input file.
	GroupBy string
	// Prepass and Redaction say whether compression.prepass and
	// redaction.enabled were on: their report sections are present then.
	Prepass, Redaction bool
}

// OutputFile is one file a run wrote, as its metrics vouch for it:
// `trajcompress check` refuses metrics whose files do not match.
type OutputFile struct {
	Path  string `json:"path"` // relative to the metrics file's directory, '/'-separated
	Bytes int64  `json:"bytes"`
	XXH3  string `json:"xxh3_128"` // hex xxh3-128 of the file's bytes
}

// Report is the aggregate metrics document. Marshalled with encoding/json it
// has the peer's sections and keys in the peer's order (summary, tokens,
// turns, averages, summarization, processing; docs/peer.md §7), then the
// trajcompress sections outcomes, distributions, groups, prepass and
// redaction (when on), images (when any was found), retention and run. Build it with [Summary.Report]
// and write it with [Report.WriteJSON]; it reads back with encoding/json
// (metrics of older versions lack the histograms, the groups and the
// quality sections: those fields are then nil or zero).
type Report struct {
	Summary       SummarySection       `json:"summary"`
	Tokens        TokensSection        `json:"tokens"`
	Turns         TurnsSection         `json:"turns"`
	Averages      AveragesSection      `json:"averages"`
	Summarization SummarizationSection `json:"summarization"`
	Processing    ProcessingSection    `json:"processing"`
	Outcomes      OutcomesSection      `json:"outcomes"`
	Distributions DistributionsSection `json:"distributions"`
	Groups        *GroupsSection       `json:"groups,omitempty"`
	Prepass       *PrepassSection      `json:"prepass,omitempty"`
	Redaction     *RedactionSection    `json:"redaction,omitempty"`
	Images        *ImagesSection       `json:"images,omitempty"`
	Trainer       *TrainerSection      `json:"trainer,omitempty"`
	Retention     RetentionSection     `json:"retention"`
	Run           RunSection           `json:"run"`
}

// SummarySection is the peer's "summary" section.
//
// Unlike the peer, TotalTrajectories counts every non-rejected record,
// summary_failed ones included (the peer left its failed entries out of the
// total): our failed records are written unchanged, so they are part of the
// output. TrajectoriesCompressed counts compressed and compressed_over_limit;
// TrajectoriesStillOverLimit counts every record written over target:
// compressed_over_limit, uncompressible and summary_failed.
// TrajectoriesFailed is the summary_failed count.
type SummarySection struct {
	TotalTrajectories              int64 `json:"total_trajectories"`
	TrajectoriesCompressed         int64 `json:"trajectories_compressed"`
	TrajectoriesSkippedUnderTarget int64 `json:"trajectories_skipped_under_target"`
	TrajectoriesStillOverLimit     int64 `json:"trajectories_still_over_limit"`
	TrajectoriesFailed             int64 `json:"trajectories_failed"`
	CompressionRate                Float `json:"compression_rate"` // round(compressed/max(total,1), 4)
}

// TokensSection is the peer's "tokens" section, over non-rejected records
// (before = after for records written unchanged).
type TokensSection struct {
	TotalBefore             int64 `json:"total_before"`
	TotalAfter              int64 `json:"total_after"`
	TotalSaved              int64 `json:"total_saved"`
	OverallCompressionRatio Float `json:"overall_compression_ratio"` // round(after/max(before,1), 4)
}

// TurnsSection is the peer's "turns" section, over non-rejected records.
type TurnsSection struct {
	TotalBefore  int64 `json:"total_before"`
	TotalAfter   int64 `json:"total_after"`
	TotalRemoved int64 `json:"total_removed"`
}

// AveragesSection is the peer's "averages" section, over compressed records
// (compressed and compressed_over_limit), from unrounded per-record values.
// With none, the peer's defaults: ratio 1.0, saved and removed the int 0.
// The ratio mean is taken over per-record ratios summed exactly in 64.64
// fixed point (each ratio truncated by less than 2^-64), so it is
// merge-exact and differs from the peer's float mean by far less than the
// 4-decimal rounding.
type AveragesSection struct {
	AvgCompressionRatio          Float  `json:"avg_compression_ratio"`            // round(mean(after/max(before,1)), 4)
	AvgTokensSavedPerCompressed  Number `json:"avg_tokens_saved_per_compressed"`  // round(mean, 1)
	AvgTurnsRemovedPerCompressed Number `json:"avg_turns_removed_per_compressed"` // round(mean, 2)
}

// SummarizationSection is the peer's "summarization" section; the last three
// keys are trajcompress additions.
type SummarizationSection struct {
	TotalAPICalls    int64 `json:"total_api_calls"`
	TotalErrors      int64 `json:"total_errors"`
	SuccessRate      Float `json:"success_rate"` // round(1 − errors/max(calls,1), 4)
	CacheHits        int64 `json:"cache_hits"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`

	// Method is the summarizer: "deterministic" or "llm"; Model its model.
	Method string `json:"method,omitempty"`
	Model  string `json:"model,omitempty"`
	// Fallbacks counts records whose summary came from the deterministic
	// fallback after the LLM failed (--on-summary-failure fallback).
	Fallbacks int64 `json:"fallbacks"`
	// RetriesByCause and ErrorsByCause count failed requests by cause
	// (rate_limit, server_error, timeout, …); present for the llm method.
	RetriesByCause map[string]int64 `json:"retries_by_cause,omitempty"`
	ErrorsByCause  map[string]int64 `json:"errors_by_cause,omitempty"`
	CacheMisses    *int64           `json:"cache_misses,omitempty"`
	// CostUSD is prompt and completion tokens at the given prices per
	// million tokens; present when a price was given.
	CostUSD *Float `json:"cost_usd,omitempty"`
	// Estimated is true in a dry run: calls and tokens are estimates for
	// requests that were not sent.
	Estimated bool `json:"estimated,omitempty"`
}

// ProcessingSection is the peer's "processing" section. Times are Python
// isoformat() strings in the times' own location, without zone:
// 2006-01-02T15:04:05 plus .ffffff when the microseconds are not zero.
type ProcessingSection struct {
	StartTime       string `json:"start_time"`
	EndTime         string `json:"end_time"`
	DurationSeconds Float  `json:"duration_seconds"` // round(seconds, 2)
}

// OutcomesSection counts records per outcome (all six keys always present)
// and per uncompressible reason. RecordsIn = RecordsOut + RecordsRejected
// always; rejected records are the invalid ones.
type OutcomesSection struct {
	OutcomeCounts
	UncompressibleReasons ReasonsCounts `json:"uncompressible_reasons"`
	FailedToFit           int64         `json:"failed_to_fit"` // compressed_over_limit + uncompressible
	RecordsIn             int64         `json:"records_in"`
	RecordsOut            int64         `json:"records_out"`
	RecordsRejected       int64         `json:"records_rejected"`
	// RecordsWithPairingProblems counts records written with a tool result
	// whose call is missing or a call whose result is missing (by id,
	// OpenAI dialect). Compression never creates such a problem; these
	// come from the input and are reported, not repaired.
	RecordsWithPairingProblems int64 `json:"records_with_pairing_problems"`
	// RecordsUTF8Repaired counts records written with ill-formed UTF-8
	// replaced by U+FFFD (the outcome lines say how many sequences each);
	// absent when there were none.
	RecordsUTF8Repaired int64 `json:"records_utf8_repaired,omitempty"`
	// RecordsTwoTurnLists counts records that held both "conversations"
	// and "messages", with the same turns, read by one of them (the
	// outcome lines say which); absent when there were none.
	RecordsTwoTurnLists int64 `json:"records_two_turn_lists,omitempty"`
}

// OutcomeCounts are records per outcome, under the outcomes' names (the
// first keys of the outcomes section and of each group).
type OutcomeCounts struct {
	SkippedUnderTarget  int64 `json:"skipped_under_target"`
	Compressed          int64 `json:"compressed"`
	CompressedOverLimit int64 `json:"compressed_over_limit"`
	Uncompressible      int64 `json:"uncompressible"`
	SummaryFailed       int64 `json:"summary_failed"`
	Invalid             int64 `json:"invalid"`
}

// outcomeCounts returns what count says for each outcome.
func outcomeCounts(count func(outcome.Outcome) int64) OutcomeCounts {
	return OutcomeCounts{
		SkippedUnderTarget:  count(outcome.SkippedUnderTarget),
		Compressed:          count(outcome.Compressed),
		CompressedOverLimit: count(outcome.CompressedOverLimit),
		Uncompressible:      count(outcome.Uncompressible),
		SummaryFailed:       count(outcome.SummaryFailed),
		Invalid:             count(outcome.Invalid),
	}
}

// Count returns the records with outcome oc (0 for an unknown outcome).
func (c OutcomeCounts) Count(oc outcome.Outcome) int64 {
	switch oc {
	case outcome.SkippedUnderTarget:
		return c.SkippedUnderTarget
	case outcome.Compressed:
		return c.Compressed
	case outcome.CompressedOverLimit:
		return c.CompressedOverLimit
	case outcome.Uncompressible:
		return c.Uncompressible
	case outcome.SummaryFailed:
		return c.SummaryFailed
	case outcome.Invalid:
		return c.Invalid
	}
	return 0
}

// ImagesSection counts the images found in the inputs (content parts,
// "<image>" markers with the record's images list; package imagetok),
// over the non-rejected records: present when there was one. Each counts
// in the record's tokens by the run's rule (run.image_tokens);
// ImagesUnknownSize are those whose size could not be read from their
// header (a link, a missing file), counted by the rule's fallback.
//
// ImagesRemoved are the old images the image step replaced by text in the
// records written (compression.drop_old_images or compression.prepass),
// and ImageTokensSaved the tokens that saved as the turns are counted
// (negative when the replacement text costs more than the rule counted
// the images, e.g. under flat:0).
type ImagesSection struct {
	Images            int64 `json:"images"`
	ImagesUnknownSize int64 `json:"images_unknown_size"`
	ImagesRemoved     int64 `json:"images_removed"`
	ImageTokensSaved  int64 `json:"image_tokens_saved"`
}

// ReasonsCounts counts uncompressible records per outcome.Reason.
type ReasonsCounts struct {
	NoMiddle       int64 `json:"no_middle"`
	Collapsed      int64 `json:"collapsed"`
	RegionTooSmall int64 `json:"region_too_small"`
	Alternation    int64 `json:"alternation"`
	// ChatTemplate counts the records the chat template refused, as read
	// or once compressed; absent when none (a run without a template).
	ChatTemplate int64 `json:"chat_template,omitempty"`
}

// DistributionsSection holds the token distributions over non-rejected
// records.
type DistributionsSection struct {
	TokensBefore Quantiles `json:"tokens_before"`
	TokensAfter  Quantiles `json:"tokens_after"`
}

// Quantiles summarises a [Hist]: p50, p90 and p99 as [Hist.Quantile] (value
// at rank ceil(p·N), relative error <= 1/256) and the exact max; all 0 when
// empty. Histogram is the histogram itself (its JSON form: count, max and
// the non-empty bins, see [Hist.MarshalJSON]), so that the metrics of
// several runs merge exactly and a report can draw the distribution
// without the outputs; nil in metrics of older versions.
type Quantiles struct {
	P50       int64 `json:"p50"`
	P90       int64 `json:"p90"`
	P99       int64 `json:"p99"`
	Max       int64 `json:"max"`
	Histogram *Hist `json:"histogram,omitempty"`
}

// QuantilesOf returns the quantiles of h, with a copy of h.
func QuantilesOf(h *Hist) Quantiles {
	c := Hist{counts: slices.Clone(h.counts), n: h.n, max: h.max}
	return Quantiles{P50: h.Quantile(500), P90: h.Quantile(900), P99: h.Quantile(990), Max: h.Max(), Histogram: &c}
}

// RunSection describes the run.
//
// It is the run's reproducibility record: together with the input
// fingerprint, the tool version, tokenizer and effective config determine
// every other figure of the report except processing times (and, for the
// LLM summarizer, the calls the cache saved).
type RunSection struct {
	ToolVersion string `json:"tool_version,omitempty"`
	Tokenizer   string `json:"tokenizer"`
	// TokenizerKind, TokenizerSplit and TokenizerSHA256 identify a
	// tokenizer loaded from a file (absent for the embedded encodings).
	TokenizerKind   string `json:"tokenizer_kind,omitempty"`
	TokenizerSplit  string `json:"tokenizer_split,omitempty"`
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty"`
	TurnOverhead    int    `json:"turn_overhead"`
	// ChatTemplate is the chat template every record was counted with, as
	// the trainer renders it (its path), and ChatTemplateSHA256 the
	// SHA-256 of its file; absent when records were counted turn by turn.
	ChatTemplate       string `json:"chat_template,omitempty"`
	ChatTemplateSHA256 string `json:"chat_template_sha256,omitempty"`
	// ImageTokens is the rule every image was counted by (tokenizer.
	// image_tokens resolved: "openai", "flat:N" or the Qwen2-VL family's
	// "qwen(patch=…,merge=…,min_pixels=…,max_pixels=…)").
	ImageTokens string         `json:"image_tokens,omitempty"`
	Budget      *BudgetSection `json:"budget,omitempty"`
	// Config is the effective configuration (config file, then flags).
	Config json.RawMessage `json:"config,omitempty"`
	// ConfigFingerprint is sha256 over the settings that can change the
	// output; InputFingerprint is sha256 over the input files' names and
	// bytes, in processing order.
	ConfigFingerprint string `json:"config_fingerprint,omitempty"`
	InputFingerprint  string `json:"input_fingerprint,omitempty"`
	// Outputs are the files of the run (records, rejects, outcomes written
	// as files) with their sizes and hashes.
	Outputs []OutputFile `json:"outputs,omitempty"`
	// DryRun marks the metrics of a dry run (absent otherwise): check
	// refuses to compare them with a real run's.
	DryRun bool `json:"dry_run,omitempty"`
}

// BudgetSection is the planning budget, under the YAML key names.
type BudgetSection struct {
	TargetMaxTokens     int  `json:"target_max_tokens"`
	SummaryTargetTokens int  `json:"summary_target_tokens"`
	LastNTurns          int  `json:"last_n_turns"`
	FirstSystem         bool `json:"first_system"`
	FirstHuman          bool `json:"first_human"`
	FirstGPT            bool `json:"first_gpt"`
	FirstTool           bool `json:"first_tool"`
}

// Report builds the aggregate report of everything s observed. It does not
// modify s.
func (s *Summary) Report(info RunInfo) Report {
	c := &s.c
	total := s.RecordsOut()
	compressed := s.compressed()
	var r Report

	r.Summary = SummarySection{
		TotalTrajectories:              total,
		TrajectoriesCompressed:         compressed,
		TrajectoriesSkippedUnderTarget: s.Count(outcome.SkippedUnderTarget),
		TrajectoriesStillOverLimit:     s.Count(outcome.CompressedOverLimit) + s.Count(outcome.Uncompressible) + s.Count(outcome.SummaryFailed),
		TrajectoriesFailed:             s.Count(outcome.SummaryFailed),
		CompressionRate:                Round(float64(compressed)/float64(max(total, 1)), 4),
	}
	r.Tokens = TokensSection{
		TotalBefore:             c.tokensBefore,
		TotalAfter:              c.tokensAfter,
		TotalSaved:              c.tokensBefore - c.tokensAfter,
		OverallCompressionRatio: Round(float64(c.tokensAfter)/float64(max(c.tokensBefore, 1)), 4),
	}
	r.Turns = TurnsSection{
		TotalBefore:  c.turnsBefore,
		TotalAfter:   c.turnsAfter,
		TotalRemoved: c.turnsBefore - c.turnsAfter,
	}
	r.Averages = AveragesSection{AvgCompressionRatio: 1.0, AvgTokensSavedPerCompressed: IntNumber(0), AvgTurnsRemovedPerCompressed: IntNumber(0)}
	if compressed > 0 {
		n := float64(compressed)
		r.Averages = AveragesSection{
			AvgCompressionRatio:          Round(c.ratioSum.float()/n, 4),
			AvgTokensSavedPerCompressed:  FloatNumber(Round(float64(c.tokensSavedSum)/n, 1)),
			AvgTurnsRemovedPerCompressed: FloatNumber(Round(float64(c.turnsRemovedSum)/n, 2)),
		}
	}
	r.Summarization = SummarizationSection{
		TotalAPICalls:    c.summaryCalls,
		TotalErrors:      c.summaryErrors,
		SuccessRate:      Round(1-float64(c.summaryErrors)/float64(max(c.summaryCalls, 1)), 4),
		CacheHits:        c.cacheHits,
		PromptTokens:     c.promptTokens,
		CompletionTokens: c.completionTokens,
		Method:           info.Summarizer,
		Model:            info.Model,
		Fallbacks:        c.fallbacks,
		RetriesByCause:   info.RetriesByCause,
		ErrorsByCause:    info.ErrorsByCause,
		CacheMisses:      info.CacheMisses,
		Estimated:        info.Estimated,
	}
	if info.PriceIn > 0 || info.PriceOut > 0 {
		cost := Round((float64(c.promptTokens)*info.PriceIn+float64(c.completionTokens)*info.PriceOut)/1e6, 6)
		r.Summarization.CostUSD = &cost
	}
	r.Processing = ProcessingSection{
		StartTime:       pyISOFormat(info.Start),
		EndTime:         pyISOFormat(info.End),
		DurationSeconds: Round(info.End.Sub(info.Start).Seconds(), 2),
	}
	r.Outcomes = OutcomesSection{
		OutcomeCounts: outcomeCounts(s.Count),
		UncompressibleReasons: ReasonsCounts{
			NoMiddle:       s.ReasonCount(outcome.NoMiddle),
			Collapsed:      s.ReasonCount(outcome.Collapsed),
			RegionTooSmall: s.ReasonCount(outcome.RegionTooSmall),
			Alternation:    s.ReasonCount(outcome.Alternation),
			ChatTemplate:   s.ReasonCount(outcome.ChatTemplate),
		},
		FailedToFit:                s.Count(outcome.CompressedOverLimit) + s.Count(outcome.Uncompressible),
		RecordsIn:                  s.RecordsIn(),
		RecordsOut:                 s.RecordsOut(),
		RecordsRejected:            s.RecordsRejected(),
		RecordsWithPairingProblems: c.pairingRecords,
		RecordsUTF8Repaired:        c.utf8Repaired,
		RecordsTwoTurnLists:        c.twoTurnLists,
	}
	r.Distributions = DistributionsSection{TokensBefore: QuantilesOf(&s.before), TokensAfter: QuantilesOf(&s.after)}
	r.Groups = s.groups.Section(info.GroupBy)
	if info.Prepass {
		r.Prepass = s.q.prepassSection()
	}
	if info.Redaction {
		r.Redaction = s.q.redactionSection()
	}
	if c.images > 0 || c.imagesRemoved > 0 {
		r.Images = &ImagesSection{Images: c.images, ImagesUnknownSize: c.imagesUnknownSize,
			ImagesRemoved: c.imagesRemoved, ImageTokensSaved: c.imageTokensSaved}
	}
	r.Trainer = c.trainer.section()
	r.Retention = s.q.retentionSection()
	r.Run = RunSection{ToolVersion: info.ToolVersion, Tokenizer: info.Tokenizer, TurnOverhead: info.TurnOverhead,
		TokenizerKind: info.TokenizerKind, TokenizerSplit: info.TokenizerSplit, TokenizerSHA256: info.TokenizerSHA256,
		ChatTemplate: info.ChatTemplate, ChatTemplateSHA256: info.ChatTemplateSHA256,
		Config: info.Config, ConfigFingerprint: info.ConfigFingerprint, InputFingerprint: info.InputFingerprint,
		Outputs: info.Outputs, DryRun: info.DryRun}
	if c.images > 0 {
		r.Run.ImageTokens = info.ImageTokens
	}
	if b := info.Budget; b != nil {
		r.Run.Budget = &BudgetSection{
			TargetMaxTokens: b.Target, SummaryTargetTokens: b.SummaryTokens, LastNTurns: b.LastN,
			FirstSystem: b.ProtectFirstSystem, FirstHuman: b.ProtectFirstUser,
			FirstGPT: b.ProtectFirstAssistant, FirstTool: b.ProtectFirstTool,
		}
	}
	return r
}

// WriteJSON writes r as JSON indented by two spaces, as the peer's
// json.dump(indent=2), without HTML escaping, followed by a newline;
// arrays of numbers only (the histograms' bins) are written on one line.
func (r Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("metrics: encoding report: %w", err)
	}
	if _, err := w.Write(compactNumberArrays(buf.Bytes())); err != nil {
		return fmt.Errorf("metrics: writing report: %w", err)
	}
	return nil
}

// compactNumberArrays returns the indented JSON b with every array that
// holds only numbers and such arrays (no string, no object) written on one
// line without spaces: [[256,3],[300,1]] instead of one number per line.
func compactNumberArrays(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case '"':
			end := i + 1
			for end < len(b) && b[end] != '"' {
				if b[end] == '\\' {
					end++
				}
				end++
			}
			out = append(out, b[i:min(end+1, len(b))]...)
			i = end
			continue
		case '[':
			if end, ok := numberArrayEnd(b, i); ok {
				for _, d := range b[i : end+1] {
					if d != ' ' && d != '\n' {
						out = append(out, d)
					}
				}
				i = end
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// numberArrayEnd returns the index of the bracket closing the array that
// opens at b[i], and whether that array holds no string and no object.
func numberArrayEnd(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"', '{':
			return 0, false
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				return j, true
			}
		}
	}
	return 0, false
}

// pyISOFormat formats t like Python's naive datetime.isoformat().
func pyISOFormat(t time.Time) string {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}
