package jobcore

import (
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

// NewCounter is the token counter of a config: its tokenizer behind the
// run's memo.
func NewCounter(cfg config.Config) (*tokenize.MemoCounter, error) {
	base, err := tokenize.NewRevision(cfg.Tokenizer.Name, cfg.Tokenizer.Revision)
	if err != nil {
		return nil, usagef("tokenizer.name %q: %v (set tokenizer.name in the config or pass --tokenizer)", cfg.Tokenizer.Name, err)
	}
	// 512 texts of at most 64 KiB: at most 32 MiB, plenty for the system
	// prompts and tool schemas that repeat (bench/README.md, "End to end").
	return tokenize.Memo(base, 512), nil
}

// NewCompressor builds the record path of cfg exactly as [Run] does — the
// tokenizer behind the same memo, the summarizer, the
// [pipeline.Compressor] — for a runner of records other than
// [pipeline.Run] (the Apache Beam pipeline, module beam/). The counter is
// returned for [tokenize.Describe] in the metrics' run block. A remote
// summarizer's client is built too, but its statistics are not reported:
// callers that cannot bound its requests should refuse the LLM
// summarizer.
func NewCompressor(cfg config.Config, dryRun bool, groupBy string) (*pipeline.Compressor, *tokenize.MemoCounter, error) {
	counter, err := NewCounter(cfg)
	if err != nil {
		return nil, nil, err
	}
	comp, _, err := Compressor(cfg, counter, dryRun, groupBy, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	return comp, counter, nil
}

// BudgetOf is the planning budget of a config.
func BudgetOf(cfg config.Config) snap.Budget {
	return snap.Budget{
		Target:                cfg.Compression.TargetMaxTokens,
		SummaryTokens:         cfg.Compression.SummaryTargetTokens,
		LastN:                 cfg.ProtectedTurns.LastNTurns,
		ProtectFirstSystem:    cfg.ProtectedTurns.FirstSystem,
		ProtectFirstUser:      cfg.ProtectedTurns.FirstHuman,
		ProtectFirstAssistant: cfg.ProtectedTurns.FirstGPT,
		ProtectFirstTool:      cfg.ProtectedTurns.FirstTool,
	}
}

// Compressor builds the record path of a config: the summarizer (the LLM
// client, its estimator in a dry run, the batch exporter when given, or
// the deterministic one), the image rule ([ImageRule]: its note, if any,
// goes to imageNote unless nil, for the caller to show when the run finds
// an image) and the Compressor. client is nil unless the LLM client is in
// use.
func Compressor(cfg config.Config, counter tokenize.Counter, dryRun bool, groupBy string, export *llm.Exporter, imageNote io.Writer) (*pipeline.Compressor, *llm.Client, error) {
	var summ summary.Summarizer
	var client *llm.Client
	var err error
	if export != nil {
		summ = export
	} else if cfg.Summarization.Method == "llm" {
		if summ, client, err = newLLM(cfg, counter, dryRun); err != nil {
			return nil, nil, err
		}
	} else {
		summ = summary.Deterministic{Counter: counter}
	}
	opts := pipeline.Options{
		Budget: BudgetOf(cfg),
		Counting: pipeline.Counting{
			Schema:       SchemaOf(cfg),
			Counter:      counter,
			TurnOverhead: cfg.Tokenizer.TurnOverhead,
			ToolsKey:     cfg.Input.ToolsKey,
		},
		Summarizing:      pipeline.Summarizing{Summarizer: summ, RecordTimeout: cfg.Processing.Timeout()},
		Placement:        placementOf(cfg),
		PerRecordMetrics: cfg.Metrics.PerTrajectory,
		DryRun:           dryRun,
		GroupBy:          groupBy,
	}
	if cfg.Summarization.OnFailure == "fallback" {
		opts.Summarizing.Fallback = summary.Deterministic{Counter: counter}
	}
	var tc *trainview.Counter // the chat template's counter, when it is one
	if spec, err := Trainer(cfg); err != nil {
		return nil, nil, err
	} else if spec != nil {
		rc, err := TrainerCounter(spec, counter, cfg.Input.ToolsKey)
		if err != nil {
			return nil, nil, usagef("%s: %v", trainerName(spec), err)
		}
		opts.Counting.Template = rc
		if tc, _ = rc.(*trainview.Counter); tc != nil {
			tc.Template.Budget = cfg.Tokenizer.TemplateBudget()
		}
		opts.Trainer = trainerOptions(cfg, spec, rc)
	} else if tmpl, err := trainview.Resolve(cfg.Tokenizer.ChatTemplate, counter); err != nil {
		return nil, nil, usagef("%v", err)
	} else if tmpl != nil {
		tmpl.Budget = cfg.Tokenizer.TemplateBudget()
		tc = &trainview.Counter{Template: tmpl, Tokens: counter}
		opts.Counting.Template = tc
	}
	rule, note, err := ImageRule(cfg.Tokenizer.ImageTokens, counter)
	if err != nil {
		return nil, nil, err
	}
	if note != "" && imageNote != nil {
		fmt.Fprintf(imageNote, "note: %s\n", note)
	}
	opts.Counting.ImageRule = rule
	if tc != nil {
		if tc.Images, err = TemplateImages(tc, counter, rule); err != nil {
			return nil, nil, usagef("tokenizer.chat_template: %v", err)
		}
	}
	if cfg.Redaction.Enabled {
		opts.Redactor = redact.Default()
		if client != nil {
			// The same rules plus the run's own API key: a record that
			// holds it (as an input, or echoed into a summary) is
			// written without it.
			if opts.Redactor, err = client.Redactor(); err != nil {
				return nil, nil, err
			}
		}
	}
	switch c := cfg.Compression; {
	case c.Prepass:
		opts.Prepass = &prepass.Config{DropOldImages: true}
	case c.DropOldImages:
		opts.Prepass = &prepass.Config{DropOldImages: true, ImagesOnly: true}
	}
	comp, err := pipeline.NewCompressor(opts)
	if err != nil {
		return nil, nil, UsageError{Err: err}
	}
	return comp, client, nil
}

// trainerOptions is what the trainer of spec, counting by rc, does to a
// row under cfg: its rule at its limit, and its repairs unless
// tokenizer.no_repair.
func trainerOptions(cfg config.Config, spec *trainercfg.Spec, rc trainview.RecordCounter) pipeline.Trainer {
	limit := spec.Limit
	if spec.Source == "" {
		limit = cfg.Compression.TargetMaxTokens // --trainer without a config: the target is its limit
	}
	t := pipeline.Trainer{Fate: TrainerRule(spec, rc, limit)}
	if lf, ok := rc.(*LlamaFactoryCounter); ok && !cfg.Tokenizer.NoRepair {
		t.Repair = lf.Repair
		t.Unrepaired = func(int, func() (trainview.View, error)) metrics.TrainerFate {
			return metrics.TrainerFate{Action: "skip"} // a row it repairs is one LLaMA-Factory skips
		}
	}
	if spec.Kind == trainercfg.Axolotl && !cfg.Tokenizer.NoRepair {
		t.Repair = AxolotlRepair(AxolotlRules(spec))
	}
	return t
}

// placementOf is where the config's output section puts the summary, and
// the notice of it.
func placementOf(cfg config.Config) pipeline.Placement {
	return pipeline.Placement{
		Role:       traj.Role(cfg.Output.SummaryRole),
		Alternate:  cfg.Output.Alternation,
		AddNotice:  cfg.Output.AddSummaryNotice,
		NoticeText: cfg.Output.SummaryNoticeText,
	}
}

// SchemaOf is the record schema the config's input section names
// (dialect, renamed keys).
func SchemaOf(cfg config.Config) traj.Schema {
	return traj.Schema{Dialect: traj.Dialect(cfg.Input.Format), TurnsKey: cfg.Input.TurnsKey, RoleKey: cfg.Input.RoleKey, ContentKey: cfg.Input.ContentKey}
}

// InputOptions are the options an input is opened with (format.Open)
// under cfg.
func InputOptions(cfg config.Config) format.Options {
	var o format.Options
	if cfg.Metrics.PerTrajectory {
		o.JSONText = []string{metrics.TrajectoryKey} // written as text by earlier versions
	}
	return o
}
