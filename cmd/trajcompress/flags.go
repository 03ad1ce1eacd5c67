package main

import (
	"flag"
	"fmt"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job"
)

// configFlag is a flag that overrides one config setting: field returns
// that setting in a config (a *string, *int or *bool).
type configFlag struct {
	name, usage string
	field       func(c *config.Config) any
}

// configFlags maps every flag that overrides a config setting, in one
// table: it defines the flags and applies the ones given.
var configFlags = []configFlag{
	{"tokenizer", "o200k_base (default), cl100k_base, chars4 (code points / 4, the peer's fallback), a tokenizer.json or tiktoken.model path, a model directory, or a Hugging Face model id found in the local HF cache (never downloaded)", func(c *config.Config) any { return &c.Tokenizer.Name }},
	{"tokenizer-revision", "Hugging Face revision (branch, tag or commit) of a --tokenizer model id (config tokenizer.revision; default main)", func(c *config.Config) any { return &c.Tokenizer.Revision }},
	{"turn-overhead", "tokens added per turn for chat-template framing, when records are counted turn by turn (--chat-template none)", func(c *config.Config) any { return &c.Tokenizer.TurnOverhead }},
	{"chat-template", "count each record as the trainer sees it, rendered by the model's chat template with its tools: auto (the --tokenizer's chat_template.jinja or tokenizer_config.json), none (turn by turn), or a .jinja / tokenizer_config.json path (config tokenizer.chat_template; default: auto when the tokenizer has a template, else none)", func(c *config.Config) any { return &c.Tokenizer.ChatTemplate }},
	{"trainer-config", "count, and fit, each record as the trainer of this training config will: a LLaMA-Factory YAML (model_name_or_path, template, cutoff_len, tool_format, default_system, enable_thinking, mask_history, packing), an axolotl YAML (base_model, chat_template/chat_template_jinja, sequence_len, excess_length_strategy, datasets) or a TRL `trl sft --config` YAML (model_name_or_path, max_length, assistant_only_loss); its model is the tokenizer and its limit the target unless --tokenizer / --target-max-tokens are given; a LLaMA-Factory config turns --alternation on (config tokenizer.trainer_config; see docs/trainers.md)", func(c *config.Config) any { return &c.Tokenizer.TrainerConfig }},
	{"trainer", "the trainer without a config file (llamafactory, axolotl, trl or hf), its limit the target, or the trainer of a --trainer-config whose keys do not tell it (config tokenizer.trainer)", func(c *config.Config) any { return &c.Tokenizer.Trainer }},
	{"template", "with --trainer: LLaMA-Factory's template name (qwen3, qwen3_nothink, qwen, llama3, mistral, glm4, deepseek3, gemma3, chatml, default), or for axolotl, trl and hf a chat template path (default: the tokenizer's) (config tokenizer.template)", func(c *config.Config) any { return &c.Tokenizer.Template }},
	{"no-repair", "with a LLaMA-Factory trainer: leave the rows it would skip for their shape as they are, only reported (default: consecutive turns of the same role merged, a trailing turn with no answer dropped, where LLaMA-Factory then accepts the row; the outcome lines name each repair) (config tokenizer.no_repair)", func(c *config.Config) any { return &c.Tokenizer.NoRepair }},
	{"chat-template-max-steps", "the most evaluation steps one render of the chat template may take (nodes, loop iterations, calls; one per KiB scanned); a record whose render takes more is refused as the template's, \"template exceeded N steps\" (config tokenizer.chat_template_max_steps; default 2,000,000 + 4 per byte of the record's messages and tools)", func(c *config.Config) any { return &c.Tokenizer.ChatTemplateMaxSteps }},
	{"chat-template-max-bytes", "the most bytes of strings, lists and output one render of the chat template may make, checked before each is made; a record whose render makes more is refused as the template's, \"template output over N bytes\" (config tokenizer.chat_template_max_bytes; default 64 MiB + 16 per byte of the record's messages and tools)", func(c *config.Config) any { return &c.Tokenizer.ChatTemplateMaxBytes }},
	{"image-tokens", "how each image (OpenAI, Anthropic and datasets image parts; <image> markers with the record's images list, paths relative to the input file) counts: auto (the --tokenizer's preprocessor_config.json → the Qwen2-VL family's rule; OpenAI's rule for the tiktoken encodings, and with a note for a tokenizer without one), openai (OpenAI's tiles: 85 + 170 per 512-pixel tile), or flat:N (every image N tokens, 0 ≤ N ≤ 1000000; flat:85 was the old count); an image whose size its header does not give (a link, a missing file) counts the most the rule allows (config tokenizer.image_tokens; default auto)", func(c *config.Config) any { return &c.Tokenizer.ImageTokens }},
	{"tools-key", "record field holding the tool schemas (a list, or a JSON string as LLaMA-Factory stores them), counted once per record (config input.tools_key; default tools)", func(c *config.Config) any { return &c.Input.ToolsKey }},
	{"target-max-tokens", "token budget per trajectory (config compression.target_max_tokens, default 15250)", func(c *config.Config) any { return &c.Compression.TargetMaxTokens }},
	{"summary-target-tokens", "token budget of the summary turn (default 750)", func(c *config.Config) any { return &c.Compression.SummaryTargetTokens }},
	{"prepass", "before summarising, digest the compressible middle: old images become short texts (as --drop-old-images), duplicate tool results become back-references, large old ones one-line digests, oversized tool-call arguments are shrunk, until the record fits; no turn is removed (config compression.prepass)", func(c *config.Config) any { return &c.Compression.Prepass }},
	{"drop-old-images", "before summarising, replace each image of the compressible middle older than the newest image-bearing turn with a short text such as [image removed: 1920x1080 png], oldest first, until the record fits; the newest image-bearing turn, the head and the tail keep theirs (config compression.drop_old_images; part of --prepass)", func(c *config.Config) any { return &c.Compression.DropOldImages }},
	{"protect-last-n", "number of final turns never compressed (default 4)", func(c *config.Config) any { return &c.ProtectedTurns.LastNTurns }},
	{"workers", "CPU workers (default: all cores; more than the cores are capped, with a note)", func(c *config.Config) any { return &c.Processing.NumWorkers }},
	{"summarizer", "deterministic (default: offline, extractive) or llm (summarization.* settings)", func(c *config.Config) any { return &c.Summarization.Method }},
	{"on-summary-failure", "skip (default: record written unchanged as summary_failed) or fallback (deterministic summary)", func(c *config.Config) any { return &c.Summarization.OnFailure }},
	{"summary-role", "role of the summary turn: user (default), assistant or system", func(c *config.Config) any { return &c.Output.SummaryRole }},
	{"format", "record dialect: sharegpt or openai (default: detected per record)", func(c *config.Config) any { return &c.Input.Format }},
	{"output-format", "jsonl, json (one JSON array of records, as LLaMA-Factory's datasets), parquet or arrow (default: the input's format)", func(c *config.Config) any { return &c.Output.Format }},
	{"alternation", "keep strict user/assistant alternation (LLaMA-Factory, Mistral templates): merge the summary into the adjacent user-side turn instead of inserting one; see trajcompress validate", func(c *config.Config) any { return &c.Output.Alternation }},
	{"model", "LLM summarizer: model (summarization.model)", func(c *config.Config) any { return &c.Summarization.Model }},
	{"base-url", "LLM summarizer: OpenAI-compatible base URL; POST {base-url}/chat/completions (summarization.base_url)", func(c *config.Config) any { return &c.Summarization.BaseURL }},
	{"cache-dir", "LLM summarizer: summary cache directory, \"-\" to disable (default: user cache dir/trajcompress/summaries)", func(c *config.Config) any { return &c.Summarization.CacheDir }},
	{"max-concurrent-requests", "LLM summarizer: requests in flight (processing.max_concurrent_requests, default 50)", func(c *config.Config) any { return &c.Processing.MaxConcurrentRequests }},
	{"rpm", "LLM summarizer: client-side requests-per-minute limit (0: none)", func(c *config.Config) any { return &c.Summarization.RPM }},
	{"tpm", "LLM summarizer: client-side tokens-per-minute limit (0: none)", func(c *config.Config) any { return &c.Summarization.TPM }},
}

// flagValues holds the parsed values of the config flags, in a config of
// their own (zero unless given).
type flagValues struct {
	c     config.Config
	notes []string // effective: what the trainer's config says once (its unknown keys)
}

// defineConfigFlags defines every config flag on fs; each stores into a
// scratch config, so that only the flags given are applied.
func defineConfigFlags(fs *flag.FlagSet) *flagValues {
	v := &flagValues{}
	for _, cf := range configFlags {
		switch p := cf.field(&v.c).(type) {
		case *string:
			fs.StringVar(p, cf.name, "", cf.usage)
		case *int:
			fs.IntVar(p, cf.name, 0, cf.usage)
		case *bool:
			fs.BoolVar(p, cf.name, false, cf.usage)
		default:
			panic(fmt.Sprintf("config flag %s: unsupported type %T", cf.name, p))
		}
	}
	return v
}

// effective loads the config file (if named; else the defaults), applies
// the flags that were given (set), and validates the result.
func (v *flagValues) effective(path string, set map[string]bool) (config.Config, error) {
	cfg := config.Default()
	if path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return cfg, usageError{err}
		}
	}
	for _, cf := range configFlags {
		if !set[cf.name] {
			continue
		}
		switch dst := cf.field(&cfg).(type) {
		case *string:
			*dst = *cf.field(&v.c).(*string)
		case *int:
			*dst = *cf.field(&v.c).(*int)
		case *bool:
			*dst = *cf.field(&v.c).(*bool)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{fmt.Errorf("flags: %w", err)}
	}
	ts, err := job.Trainer(cfg)
	if err != nil {
		return cfg, err
	}
	v.notes = job.ApplyTrainer(&cfg, ts, set["tokenizer"], set["target-max-tokens"])
	if ts != nil {
		if err := cfg.Validate(); err != nil {
			return cfg, usageError{fmt.Errorf("with the trainer's settings: %w", err)}
		}
	}
	return cfg, nil
}
