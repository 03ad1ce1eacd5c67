package config

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
)

// An Option is one command-line flag that overrides one setting of the
// config: field returns that setting in a Config (a *string, *int or
// *bool).
type Option struct {
	Name, Usage string
	field       func(c *Config) any
}

// A Group is the options of one concern, added to a command's flag set
// together, in the way restic's option structs add their own flags: each
// command (compress, validate, the Beam main) registers the groups it
// honours, so that a setting is declared, and described, once.
type Group struct {
	Name    string
	Options []Option
}

// The option groups. Their flags carry the config key they set in their
// text; a flag given overrides the config file, which overrides the
// defaults ([Flags.Apply]).
var (
	// TokenizerGroup is the tokenizer the records are counted with.
	TokenizerGroup = Group{"tokenizer", []Option{
		{"tokenizer", "o200k_base (default), cl100k_base, chars4 (code points / 4, the peer's fallback), a tokenizer.json or tiktoken.model path, a model directory, or a Hugging Face model id found in the local HF cache (never downloaded)", func(c *Config) any { return &c.Tokenizer.Name }},
		{"tokenizer-revision", "Hugging Face revision (branch, tag or commit) of a --tokenizer model id (config tokenizer.revision; default main)", func(c *Config) any { return &c.Tokenizer.Revision }},
	}}
	// TemplateGroup is the chat template a record is rendered with to be
	// counted, and the bounds of one render.
	TemplateGroup = Group{"template", []Option{
		{"chat-template", "count each record as the trainer sees it, rendered by the model's chat template with its tools: auto (the --tokenizer's chat_template.jinja or tokenizer_config.json), none (turn by turn), or a .jinja / tokenizer_config.json path (config tokenizer.chat_template; default: auto when the tokenizer has a template, else none)", func(c *Config) any { return &c.Tokenizer.ChatTemplate }},
		{"chat-template-max-steps", "the most evaluation steps one render of the chat template may take (nodes, loop iterations, calls; one per KiB scanned); a record whose render takes more is refused as the template's, \"template exceeded N steps\" (config tokenizer.chat_template_max_steps; default 2,000,000 + 4 per byte of the record's messages and tools)", func(c *Config) any { return &c.Tokenizer.ChatTemplateMaxSteps }},
		{"chat-template-max-bytes", "the most bytes of strings, lists and output one render of the chat template may make, checked before each is made; a record whose render makes more is refused as the template's, \"template output over N bytes\" (config tokenizer.chat_template_max_bytes; default 64 MiB + 16 per byte of the record's messages and tools)", func(c *Config) any { return &c.Tokenizer.ChatTemplateMaxBytes }},
	}}
	// TrainerGroup is the trainer the rows are for: its config file, or
	// its name and template.
	TrainerGroup = Group{"trainer", []Option{
		{"trainer-config", "count, and fit, each record as the trainer of this training config will: a LLaMA-Factory YAML (model_name_or_path, template, cutoff_len, tool_format, default_system, enable_thinking, mask_history, packing), an axolotl YAML (base_model, chat_template/chat_template_jinja, sequence_len, excess_length_strategy, datasets) or a TRL \"trl sft --config\" YAML (model_name_or_path, max_length, assistant_only_loss); its model is the tokenizer and its limit the target unless --tokenizer / --target-max-tokens are given; a LLaMA-Factory config turns --alternation on (config tokenizer.trainer_config; see docs/trainers.md)", func(c *Config) any { return &c.Tokenizer.TrainerConfig }},
		{"trainer", "the trainer without a config file (llamafactory, axolotl, trl or hf), its limit the target, or the trainer of a --trainer-config whose keys do not tell it (config tokenizer.trainer)", func(c *Config) any { return &c.Tokenizer.Trainer }},
		{"template", "with --trainer: LLaMA-Factory's template name (qwen3, qwen3_nothink, qwen, llama3, mistral, glm4, deepseek3, gemma3, chatml, default), or for axolotl, trl and hf a chat template path (default: the tokenizer's) (config tokenizer.template)", func(c *Config) any { return &c.Tokenizer.Template }},
	}}
	// RepairGroup says whether the rows a trainer would skip for their
	// shape are repaired.
	RepairGroup = Group{"repair", []Option{
		{"no-repair", "with a LLaMA-Factory or axolotl trainer: leave the rows it would skip or misread for their shape as they are, only reported (default: for LLaMA-Factory, consecutive turns of the same role merged and a trailing turn with no answer dropped, where LLaMA-Factory then accepts the row; for axolotl, ShareGPT roles its mapping lacks renamed (observation, function, ipython to tool; function_call to gpt); the outcome lines name each repair) (config tokenizer.no_repair)", func(c *Config) any { return &c.Tokenizer.NoRepair }},
	}}
	// ImageGroup is how an image is counted.
	ImageGroup = Group{"images", []Option{
		{"image-tokens", "how each image (OpenAI, Anthropic and datasets image parts; <image> markers with the record's images list, paths relative to the input file) counts: auto (the --tokenizer's preprocessor_config.json → the Qwen2-VL family's rule; OpenAI's rule for the tiktoken encodings, and with a note for a tokenizer without one), openai (OpenAI's tiles: 85 + 170 per 512-pixel tile), or flat:N (every image N tokens, 0 ≤ N ≤ 1000000; flat:85 was the old count); an image whose size its header does not give (a link, a missing file) counts the most the rule allows (config tokenizer.image_tokens; default auto)", func(c *Config) any { return &c.Tokenizer.ImageTokens }},
	}}
	// RecordGroup is how a record is read: its dialect and its tools
	// field.
	RecordGroup = Group{"records", []Option{
		{"format", "record dialect: sharegpt or openai (default: detected per record)", func(c *Config) any { return &c.Input.Format }},
		{"tools-key", "record field holding the tool schemas (a list, or a JSON string as LLaMA-Factory stores them), counted once per record (config input.tools_key; default tools)", func(c *Config) any { return &c.Input.ToolsKey }},
	}}
	// BudgetGroup is what a record must fit and what is never compressed.
	BudgetGroup = Group{"budget", []Option{
		{"target-max-tokens", "token budget per trajectory (config compression.target_max_tokens, default 15250)", func(c *Config) any { return &c.Compression.TargetMaxTokens }},
		{"summary-target-tokens", "token budget of the summary turn (default 750)", func(c *Config) any { return &c.Compression.SummaryTargetTokens }},
		{"protect-last-n", "number of final turns never compressed (default 4)", func(c *Config) any { return &c.ProtectedTurns.LastNTurns }},
		{"turn-overhead", "tokens added per turn for chat-template framing, when records are counted turn by turn (--chat-template none)", func(c *Config) any { return &c.Tokenizer.TurnOverhead }},
	}}
	// PrepassGroup is what is digested before any region is summarised.
	PrepassGroup = Group{"prepass", []Option{
		{"prepass", "before summarising, digest the compressible middle: old images become short texts (as --drop-old-images), duplicate tool results become back-references, large old ones one-line digests, oversized tool-call arguments are shrunk, until the record fits; no turn is removed (config compression.prepass)", func(c *Config) any { return &c.Compression.Prepass }},
		{"drop-old-images", "before summarising, replace each image of the compressible middle older than the newest image-bearing turn with a short text such as [image removed: 1920x1080 png], oldest first, until the record fits; the newest image-bearing turn, the head and the tail keep theirs (config compression.drop_old_images; part of --prepass)", func(c *Config) any { return &c.Compression.DropOldImages }},
	}}
	// PlacementGroup is where the summary goes in a record.
	PlacementGroup = Group{"placement", []Option{
		{"summary-role", "role of the summary turn: user (default), assistant or system", func(c *Config) any { return &c.Output.SummaryRole }},
		{"alternation", "keep strict user/assistant alternation (LLaMA-Factory, Mistral templates): merge the summary into the adjacent user-side turn instead of inserting one; see trajcompress validate", func(c *Config) any { return &c.Output.Alternation }},
	}}
	// OutputFormatGroup is the format the records are written in.
	OutputFormatGroup = Group{"output format", []Option{
		{"output-format", "jsonl, json (one JSON array of records, as LLaMA-Factory's datasets), parquet or arrow (default: the input's format)", func(c *Config) any { return &c.Output.Format }},
	}}
	// SummarizerGroup is the summarizer and the LLM endpoint it may call.
	SummarizerGroup = Group{"summarizer", []Option{
		{"summarizer", "deterministic (default: offline, extractive) or llm (summarization.* settings)", func(c *Config) any { return &c.Summarization.Method }},
		{"on-summary-failure", "skip (default: record written unchanged as summary_failed) or fallback (deterministic summary)", func(c *Config) any { return &c.Summarization.OnFailure }},
		{"model", "LLM summarizer: model (summarization.model)", func(c *Config) any { return &c.Summarization.Model }},
		{"base-url", "LLM summarizer: OpenAI-compatible base URL; POST {base-url}/chat/completions (summarization.base_url)", func(c *Config) any { return &c.Summarization.BaseURL }},
		{"cache-dir", "LLM summarizer: summary cache directory, \"-\" to disable (default: user cache dir/trajcompress/summaries)", func(c *Config) any { return &c.Summarization.CacheDir }},
		{"max-concurrent-requests", "LLM summarizer: requests in flight (processing.max_concurrent_requests, default 50)", func(c *Config) any { return &c.Processing.MaxConcurrentRequests }},
		{"rpm", "LLM summarizer: client-side requests-per-minute limit (0: none)", func(c *Config) any { return &c.Summarization.RPM }},
		{"tpm", "LLM summarizer: client-side tokens-per-minute limit (0: none)", func(c *Config) any { return &c.Summarization.TPM }},
	}}
	// WorkersGroup is the CPU parallelism of a run in one process.
	WorkersGroup = Group{"workers", []Option{
		{"workers", "CPU workers (default: all cores; more than the cores are capped, with a note)", func(c *Config) any { return &c.Processing.NumWorkers }},
	}}
)

// CompressGroups are the groups `trajcompress compress` registers: every
// one.
var CompressGroups = []Group{TokenizerGroup, TemplateGroup, TrainerGroup, RepairGroup, ImageGroup, RecordGroup,
	BudgetGroup, PrepassGroup, PlacementGroup, OutputFormatGroup, SummarizerGroup, WorkersGroup}

// ValidateGroups are the groups `trajcompress validate` registers: what
// says how a record is read and counted (validate --max-length judges a
// record by the count compress fits it to), each option's text as it
// applies to validate (forValidate).
var ValidateGroups = forValidate(TokenizerGroup, TemplateGroup, TrainerGroup, ImageGroup, RecordGroup)

// validateUsage is validate's text of the shared options that work
// otherwise there: validate fits nothing, its limit is --max-length, and
// it places no summary (--alternation is compress's).
var validateUsage = map[string]string{
	"chat-template":  "count each record as the trainer sees it, rendered by the model's chat template with its tools: auto (the --tokenizer's chat_template.jinja or tokenizer_config.json), none (turn by turn), or a .jinja / tokenizer_config.json path (default auto)",
	"trainer-config": "count each record as the trainer of this training config will, and say what it does to a row over its limit: a LLaMA-Factory YAML (model_name_or_path, template, cutoff_len, tool_format, default_system, enable_thinking, mask_history, packing), an axolotl YAML (base_model, chat_template/chat_template_jinja, sequence_len, excess_length_strategy, datasets) or a TRL \"trl sft --config\" YAML (model_name_or_path, max_length, assistant_only_loss); its model is the tokenizer and its limit the --max-length unless --tokenizer / --max-length are given (see docs/trainers.md)",
	"trainer":        "the trainer without a config file (llamafactory, axolotl, trl or hf), its limit the --max-length, or the trainer of a --trainer-config whose keys do not tell it",
}

// configKey is an option text's mention of its config key, "(config
// KEY)" or "(config KEY; …", which validate, reading no config file,
// leaves out.
var configKey = regexp.MustCompile(`( \(config [a-z_.]+\))|(\(config [a-z_.]+; )`)

// forValidate returns groups with each option's text as validate gives
// it: validateUsage's where it has one, else the option's own without its
// config key.
func forValidate(groups ...Group) []Group {
	out := make([]Group, len(groups))
	for i, g := range groups {
		out[i] = Group{Name: g.Name, Options: make([]Option, len(g.Options))}
		for k, o := range g.Options {
			if u, ok := validateUsage[o.Name]; ok {
				o.Usage = u
			} else {
				o.Usage = configKey.ReplaceAllStringFunc(o.Usage, func(m string) string {
					if strings.HasSuffix(m, "; ") {
						return "("
					}
					return ""
				})
			}
			out[i].Options[k] = o
		}
	}
	return out
}

// Flags are the options of the groups a command registered on its flag
// set, and the values given for them.
type Flags struct {
	fs     *flag.FlagSet
	given  Config // the values parsed (zero unless given)
	groups []Group
}

// AddFlags defines the flags of groups on fs; each stores into a scratch
// config of its own, so that [Flags.Apply] applies only the ones given.
// A flag of the same name defined twice panics, as the flag package does.
func AddFlags(fs *flag.FlagSet, groups ...Group) *Flags {
	f := &Flags{fs: fs, groups: groups}
	for _, g := range groups {
		for _, o := range g.Options {
			switch p := o.field(&f.given).(type) {
			case *string:
				fs.StringVar(p, o.Name, "", o.Usage)
			case *int:
				fs.IntVar(p, o.Name, 0, o.Usage)
			case *bool:
				fs.BoolVar(p, o.Name, false, o.Usage)
			default:
				panic(fmt.Sprintf("config option %s: unsupported type %T", o.Name, p))
			}
		}
	}
	return f
}

// Set reports whether the flag name was given on the command line (any
// flag of the flag set, not only the groups').
func (f *Flags) Set(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// Apply sets in c the settings whose flags were given.
func (f *Flags) Apply(c *Config) {
	for _, g := range f.groups {
		for _, o := range g.Options {
			if !f.Set(o.Name) {
				continue
			}
			switch dst := o.field(c).(type) {
			case *string:
				*dst = *o.field(&f.given).(*string)
			case *int:
				*dst = *o.field(&f.given).(*int)
			case *bool:
				*dst = *o.field(&f.given).(*bool)
			}
		}
	}
}

// Names are the flag names of groups, in their order.
func Names(groups ...Group) []string {
	var names []string
	for _, g := range groups {
		for _, o := range g.Options {
			names = append(names, o.Name)
		}
	}
	return names
}
