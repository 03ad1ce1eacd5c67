package pipeline

import (
	"errors"
	"time"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

// DefaultNotice is the peer's default summary_notice_text.
const DefaultNotice = "\n\nSome of your previous tool responses may be summarized to preserve context."

// Options configure a [Compressor]: the run's settings, one group per
// concern, each group a struct of its own named after the command-line
// option group it comes from (package config's groups; the caller, job or
// the Beam pipeline, maps a config onto them). The zero value is not
// usable: Counting.Counter and Summarizing.Summarizer are required; see
// [Options.Validate].
type Options struct {
	Budget snap.Budget // what a record must fit and what is never compressed (the budget group)

	Counting    Counting    // how a record is read and counted
	Trainer     Trainer     // what the trainer does to a row; zero: no trainer
	Summarizing Summarizing // how a region's summary is made
	Placement   Placement   // where the summary goes, and the notice of it

	// Prepass, when set (compression.prepass, or
	// compression.drop_old_images alone: ImagesOnly), makes a record over
	// target smaller without removing a turn before any region of it is
	// summarised (package prepass). Its Counter is the Compressor's
	// counter when unset; its Finder is made per record, with the
	// directory of the record's input file.
	Prepass *prepass.Config
	// Redactor, when set (redaction.enabled), replaces the secrets of every
	// input line with typed markers before any other step reads it: see
	// [Compressor.Compress].
	Redactor *redact.Redactor
	// GroupBy, when set, names the top-level record field whose value is
	// each record's group in the metrics' per-source breakdown
	// (Observation.Group, metrics.GroupName); a rejected line that is still
	// a JSON object is grouped by it too.
	GroupBy string

	PerRecordMetrics bool // add "compression_metrics" to compressed records
	DryRun           bool // plan and count; remote summarizers are not called
}

// Counting is how a record is read and counted: its schema and tools
// field (the records group), the tokenizer (tokenizer group), the chat
// template (template group) and the image rule (images group).
type Counting struct {
	Schema       traj.Schema
	Counter      tokenize.Counter // counts turn texts; wrap it in tokenize.Memo
	TurnOverhead int              // tokens added per turn for chat-template framing
	// ToolsKey names the record field holding its tool schemas ("" means
	// "tools"). Without a Template the schemas are counted as the tokens
	// of their JSON, once per record.
	ToolsKey string
	// ImageRule counts each image of a record (package imagetok: content
	// parts, and "<image>" markers paired with the record's images list,
	// whose relative paths are resolved against the directory of the
	// record's file, traj.Pos.File) into its turn's Extra. nil is
	// imagetok.OpenAI().
	ImageRule imagetok.Rule

	// Template, when set (tokenizer.chat_template), makes every count of a
	// whole record the count of the record as the trainer sees it: its
	// messages and tool schemas (package trainview) rendered by the model's
	// chat template and tokenized. A record is then skipped_under_target
	// only when its templated count is at or under the target, and
	// compressed only when its rendered result is; the per-turn counts
	// only guide the planner (see Compressor.fit). A record the template
	// refuses is uncompressible, reason chat_template, written unchanged.
	// Images: when the Counter's Images is set, it counts the images the
	// template renders (their relative paths against the record's file's
	// directory when its Finder is nil; a refusal of its placeholder is
	// the template's refusal); when nil, each image found in the record
	// adds its ImageRule tokens to the templated count. A record whose
	// images list the prepass or the summary rewrote is counted with the
	// rewritten list.
	//
	// Any trainview.RecordCounter counts: a *trainview.Counter (a model's
	// chat template, as transformers, axolotl and TRL render it) or a
	// trainer's own renderer (LLaMA-Factory's templates); Images apply to
	// a *trainview.Counter only, any other counts each image by ImageRule.
	Template trainview.RecordCounter
}

// Trainer is what the trainer of a run with a trainer's config does to
// a row (the trainer and repair groups). Its zero value is no trainer.
type Trainer struct {
	// Fate, when set, says what that trainer does to a row of so many
	// tokens as Counting.Template counts them (its rules at its own
	// limit); view returns the row's view, for a rule that looks at more
	// than its length (which tokens are trained), and is called only by
	// such a rule (it builds the view once, however often it is called). Each observation then carries the fate of the record as
	// read and as written (metrics.Observation.Trainer), a record Template
	// refuses as read being "skip" both times.
	Fate func(tokens int, view func() (trainview.View, error)) metrics.TrainerFate
	// Repair, when set, is given each record as read (after redaction) and
	// returns the turns of the record made acceptable to the trainer, and
	// the repairs made, or no repairs: the record is then read as if it
	// came with those turns (its output holds them, whatever its outcome),
	// and its observation names the repairs (metrics.Observation.Repairs).
	Repair func(rec *traj.Record) (turns []traj.Turn, done []string)
	// Unrepaired, when set, is the trainer's fate of a repaired record as
	// the user gave it (LLaMA-Factory: it skips the row, whatever its
	// length); nil means Fate of the record before its repair (axolotl:
	// the messages it cannot map left out, and its length).
	Unrepaired func(tokens int, view func() (trainview.View, error)) metrics.TrainerFate
}

// Summarizing is how the summary of a region is made (the summarizer
// group, and processing.per_trajectory_timeout).
type Summarizing struct {
	Summarizer summary.Summarizer
	// Fallback, when set, summarises a region whose Summarizer failed
	// (after its retries); the record's metrics say so. When nil such a
	// record is summary_failed and written unchanged.
	Fallback summary.Summarizer
	// RecordTimeout bounds the time of one record from the start of its
	// Compress call (0: none); the summarizer gets what is left. A record
	// whose summary has not arrived by then is summary_failed, never
	// dropped (a summary that arrived in time is used); the summarizer's
	// context then reports a [summary.TimeoutError] as its cause.
	RecordTimeout time.Duration
}

// Placement is where the summary goes in a record (the placement group)
// and the notice the head's system turns get of it.
type Placement struct {
	Role traj.Role // role of the summary turn; "" means user (as the peer)
	// Alternate keeps strict user/assistant alternation around the summary
	// (LLaMA-Factory, Mistral templates): see [snap.PlaceAlternating]. The
	// summary is then user-side, so Role must be user.
	Alternate  bool
	AddNotice  bool // append NoticeText to the system turns of the head
	NoticeText string
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	var errs []error
	if o.Counting.Counter == nil {
		errs = append(errs, errors.New("pipeline: no token counter"))
	}
	if o.Summarizing.Summarizer == nil {
		errs = append(errs, errors.New("pipeline: no summarizer"))
	}
	if err := o.Budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Counting.Schema.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := snap.ValidateSettings(o.Counting.TurnOverhead, o.Placement.Role, o.Placement.Alternate); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
