// Package config reads the peer's trajectory_compression.yaml, as is, plus
// trajcompress's own additions, into one [Config].
//
// Every section and key of the peer (docs/peer.md §2) is accepted with the same
// meaning and default; a key that is absent keeps its default, and a null
// value keeps the default (as the peer does). Unlike the peer, an unknown
// key, a value of the wrong type, an out-of-range value, or a config file
// that was named but cannot be read is an error naming the file, the line
// and the key. Keys the peer accepts but ignores are honoured here
// (processing.num_workers, processing.per_trajectory_timeout), or refused
// with a reason when honouring them would lose rows
// (processing.save_over_limit: false, processing.skip_under_target: false).
// The command-line flags that override settings are declared here too,
// once, in option groups ([Group]: tokenizer, template, trainer, images,
// records, budget, prepass, placement, output format, summarizer,
// workers) that a command adds to its flag set ([AddFlags]) and applies
// over the file ([Flags.Apply]); compress, validate and the Beam main
// register the groups they honour. Names owned elsewhere are checked by
// their owners: the output formats by package format, the image rule by
// imagetok.ParseRule, the trainer by trainercfg.
// The package does no I/O beyond reading the named file.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/traj"
)

// Config mirrors the YAML file. Field comments give the YAML key; keys
// marked "ours" are trajcompress additions.
type Config struct {
	Tokenizer      Tokenizer      `yaml:"tokenizer" json:"tokenizer"`
	Compression    Compression    `yaml:"compression" json:"compression"`
	ProtectedTurns ProtectedTurns `yaml:"protected_turns" json:"protected_turns"`
	Summarization  Summarization  `yaml:"summarization" json:"summarization"`
	Output         Output         `yaml:"output" json:"output"`
	Processing     Processing     `yaml:"processing" json:"processing"`
	Metrics        Metrics        `yaml:"metrics" json:"metrics"`
	Input          Input          `yaml:"input" json:"input"`
	Redaction      Redaction      `yaml:"redaction" json:"redaction"` // ours
}

// Tokenizer is the tokenizer section.
type Tokenizer struct {
	Name            string `yaml:"name" json:"name"`                             // o200k_base, cl100k_base, chars4, a tokenizer.json/tiktoken.model path, a model directory, or a Hugging Face model id (local cache)
	Revision        string `yaml:"revision,omitempty" json:"revision,omitempty"` // ours: Hugging Face revision for a model id; "" is main
	TrustRemoteCode bool   `yaml:"trust_remote_code" json:"trust_remote_code"`   // accepted for compatibility; nothing remote is ever loaded
	TurnOverhead    int    `yaml:"turn_overhead" json:"turn_overhead"`           // ours: tokens added per turn for chat-template framing
	// ChatTemplate (ours) is how a record is counted: "auto" (the
	// tokenizer's own chat template), "none" (turn by turn, with
	// turn_overhead), or the path of a .jinja or tokenizer_config.json;
	// "" is auto when the tokenizer has a template, none otherwise
	// (trainview.Resolve).
	ChatTemplate string `yaml:"chat_template,omitempty" json:"chat_template,omitempty"`
	// ImageTokens (ours) is how an image counts: "auto" (the model's
	// preprocessor_config.json beside the tokenizer's file gives the
	// Qwen2-VL family's rule; otherwise OpenAI's), "openai" (OpenAI's tile
	// rule), or "flat:N" (every image N tokens, N ≤ imagetok.MaxFlat); "" is auto
	// (jobcore.ImageRule).
	ImageTokens string `yaml:"image_tokens,omitempty" json:"image_tokens,omitempty"`
	// TrainerConfig (ours) is the path of the training config the rows are
	// for (LLaMA-Factory's, axolotl's or TRL's YAML, package trainercfg):
	// records are counted, and fitted, as that trainer counts them; its
	// model and length limit replace tokenizer.name and
	// compression.target_max_tokens (the --tokenizer and
	// --target-max-tokens flags still override them).
	TrainerConfig string `yaml:"trainer_config,omitempty" json:"trainer_config,omitempty"`
	// Trainer (ours) names the trainer without a config file
	// (llamafactory, axolotl, trl, hf), or the trainer of a TrainerConfig
	// whose keys do not tell it; Template is then LLaMA-Factory's template
	// name, or for the others a chat template path.
	Trainer  string `yaml:"trainer,omitempty" json:"trainer,omitempty"`
	Template string `yaml:"template,omitempty" json:"template,omitempty"`
	// NoRepair (ours) leaves the rows a trainer would skip for their shape
	// as they are (only reported); by default they are repaired where that
	// loses nothing the trainer trains on (jobcore.LlamaFactoryCounter.Repair).
	NoRepair bool `yaml:"no_repair,omitempty" json:"no_repair,omitempty"`
	// ChatTemplateMaxSteps and ChatTemplateMaxBytes (ours) bound each
	// render of the chat template (chattemplate.Budget: evaluation steps;
	// bytes of the strings, lists and output it makes); a record whose
	// render goes over is refused as the template's (uncompressible,
	// chat_template). 0 sizes them from the record: 2,000,000 + 4 steps
	// and 64 MiB + 16 bytes per byte of its messages' and tools' JSON.
	ChatTemplateMaxSteps int `yaml:"chat_template_max_steps,omitempty" json:"chat_template_max_steps,omitempty"`
	ChatTemplateMaxBytes int `yaml:"chat_template_max_bytes,omitempty" json:"chat_template_max_bytes,omitempty"`
}

// TemplateBudget is the chat template's render budget the tokenizer
// section sets.
func (t Tokenizer) TemplateBudget() chattemplate.Budget {
	return chattemplate.Budget{Steps: int64(t.ChatTemplateMaxSteps), Bytes: int64(t.ChatTemplateMaxBytes)}
}

// Compression is the compression section.
type Compression struct {
	TargetMaxTokens     int `yaml:"target_max_tokens" json:"target_max_tokens"`
	SummaryTargetTokens int `yaml:"summary_target_tokens" json:"summary_target_tokens"`
	// Prepass (ours) digests the compressible middle before any region is
	// summarised: duplicate tool results, large old tool results, oversized
	// tool-call arguments (package prepass). Off by default.
	Prepass bool `yaml:"prepass" json:"prepass"`
	// DropOldImages (ours) replaces, within the compressible middle of a
	// record over target, each image older than the newest image-bearing
	// turn with a short text ("[image removed: 1920x1080 png]") before any
	// region is summarised (package prepass, its image step). Off by
	// default; Prepass includes it.
	DropOldImages bool `yaml:"drop_old_images,omitempty" json:"drop_old_images,omitempty"`
}

// ProtectedTurns is the protected_turns section.
type ProtectedTurns struct {
	FirstSystem bool `yaml:"first_system" json:"first_system"`
	FirstHuman  bool `yaml:"first_human" json:"first_human"`
	FirstGPT    bool `yaml:"first_gpt" json:"first_gpt"`
	FirstTool   bool `yaml:"first_tool" json:"first_tool"`
	LastNTurns  int  `yaml:"last_n_turns" json:"last_n_turns"`
}

// Summarization is the summarization section.
type Summarization struct {
	Method      string  `yaml:"method" json:"method"` // ours: deterministic (default) or llm
	Model       string  `yaml:"model" json:"model"`
	BaseURL     string  `yaml:"base_url" json:"base_url"`
	APIKeyEnv   string  `yaml:"api_key_env" json:"api_key_env"`
	Temperature float64 `yaml:"temperature" json:"temperature"`
	MaxRetries  int     `yaml:"max_retries" json:"max_retries"`
	RetryDelay  float64 `yaml:"retry_delay" json:"retry_delay"` // seconds
	OnFailure   string  `yaml:"on_failure" json:"on_failure"`   // ours: skip (default: summary_failed, written unchanged) or fallback
	CacheDir    string  `yaml:"cache_dir" json:"cache_dir"`     // ours
	RPM         int     `yaml:"rpm" json:"rpm"`                 // ours
	TPM         int     `yaml:"tpm" json:"tpm"`                 // ours
	// RequestTimeout (ours) bounds one HTTP request to the endpoint, its
	// reply included, in seconds; 0 means 120. The record's own bound is
	// processing.per_trajectory_timeout.
	RequestTimeout float64 `yaml:"request_timeout" json:"request_timeout,omitempty"`
}

// Output is the output section.
type Output struct {
	AddSummaryNotice  bool   `yaml:"add_summary_notice" json:"add_summary_notice"`
	SummaryNoticeText string `yaml:"summary_notice_text" json:"summary_notice_text"`
	OutputSuffix      string `yaml:"output_suffix" json:"output_suffix"`
	SummaryRole       string `yaml:"summary_role" json:"summary_role"` // ours: user (default), assistant or system
	Alternation       bool   `yaml:"alternation" json:"alternation"`   // ours: keep strict user/assistant alternation
	Format            string `yaml:"format" json:"format"`             // ours: jsonl, json (one array), parquet or arrow; "" = as the input
}

// Processing is the processing section.
type Processing struct {
	NumWorkers            int     `yaml:"num_workers" json:"num_workers"` // honoured (the peer ignores it); 0 = all cores
	MaxConcurrentRequests int     `yaml:"max_concurrent_requests" json:"max_concurrent_requests"`
	SkipUnderTarget       bool    `yaml:"skip_under_target" json:"skip_under_target"`
	SaveOverLimit         bool    `yaml:"save_over_limit" json:"save_over_limit"`
	PerTrajectoryTimeout  float64 `yaml:"per_trajectory_timeout" json:"per_trajectory_timeout"` // seconds; honoured (the peer cannot read it)
}

// Metrics is the metrics section.
type Metrics struct {
	Enabled       bool   `yaml:"enabled" json:"enabled"`
	PerTrajectory bool   `yaml:"per_trajectory" json:"per_trajectory"`
	OutputFile    string `yaml:"output_file" json:"output_file"`
}

// Input is ours: how records are read.
type Input struct {
	Format     string `yaml:"format" json:"format"`           // sharegpt, openai, or empty to detect per record
	TurnsKey   string `yaml:"turns_key" json:"turns_key"`     // for datasets that rename "conversations"/"messages"
	RoleKey    string `yaml:"role_key" json:"role_key"`       // … "from"/"role"
	ContentKey string `yaml:"content_key" json:"content_key"` // … "value"/"content"
	// ToolsKey (ours) is the record field holding its tool schemas, counted
	// once per record (trainview); "" is "tools".
	ToolsKey string `yaml:"tools_key,omitempty" json:"tools_key,omitempty"`
}

// Redaction is ours: secrets (cloud, VCS, chat and LLM provider keys,
// private key blocks, JWTs, passwords in URLs, secret-named assignments)
// are replaced with typed markers, "[REDACTED:kind]", in every output
// record and so in every text sent to a summarization endpoint (package
// redact). On by default.
type Redaction struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
}

// Default returns the peer's dataclass defaults, except the tokenizer:
// ours is exact tiktoken o200k_base, offline. The peer's default
// (moonshotai/Kimi-K2-Thinking, a Hugging Face tokenizer) cannot be loaded
// offline.
func Default() Config {
	return Config{
		Tokenizer:      Tokenizer{Name: "o200k_base", TrustRemoteCode: true},
		Compression:    Compression{TargetMaxTokens: 15250, SummaryTargetTokens: 750},
		ProtectedTurns: ProtectedTurns{FirstSystem: true, FirstHuman: true, FirstGPT: true, FirstTool: true, LastNTurns: 4},
		Summarization: Summarization{
			Method:      "deterministic",
			Model:       "google/gemini-3-flash-preview",
			BaseURL:     "https://openrouter.ai/api/v1",
			APIKeyEnv:   "OPENROUTER_API_KEY",
			Temperature: 0.3,
			MaxRetries:  3,
			RetryDelay:  2,
			OnFailure:   "skip",
		},
		Output: Output{
			AddSummaryNotice:  true,
			SummaryNoticeText: "\n\nSome of your previous tool responses may be summarized to preserve context.",
			OutputSuffix:      "_compressed",
			SummaryRole:       "user",
		},
		Processing: Processing{MaxConcurrentRequests: 50, SkipUnderTarget: true, SaveOverLimit: true, PerTrajectoryTimeout: 300},
		Metrics:    Metrics{Enabled: true, PerTrajectory: true, OutputFile: "compression_metrics.json"},
		Redaction:  Redaction{Enabled: true},
	}
}

// Load reads path over the defaults and validates the result.
func Load(path string) (Config, error) {
	b, err := readfile.Read(path, "config file", readfile.SmallLimit)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return Parse(b, path)
}

// Parse reads YAML over the defaults and validates the result; name is
// used in errors.
func Parse(b []byte, name string) (Config, error) {
	c := Default()
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("config %s: %s", name, yamlMessage(err))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err == nil && len(doc.Content) == 1 {
		if err := wholeNumbers(doc.Content[0], reflect.TypeOf(c), ""); err != nil {
			return Config{}, fmt.Errorf("config %s: %w", name, err)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", name, err)
	}
	return c, nil
}

// Validate reports every value out of range, naming its key.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	// The settings that a library type owns are checked there, once.
	budget := snap.Budget{Target: c.Compression.TargetMaxTokens, SummaryTokens: c.Compression.SummaryTargetTokens, LastN: c.ProtectedTurns.LastNTurns}
	if err := budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := snap.ValidateSettings(c.Tokenizer.TurnOverhead, traj.Role(c.Output.SummaryRole), c.Output.Alternation); err != nil {
		errs = append(errs, err)
	}
	if err := (traj.Schema{Dialect: traj.Dialect(c.Input.Format)}).Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Tokenizer.TemplateBudget().Check(); err != nil {
		bad("tokenizer.chat_template_max_steps and chat_template_max_bytes (--chat-template-max-steps, --chat-template-max-bytes): %v", err)
	}
	if v := c.Tokenizer.ImageTokens; v != "" && v != "auto" {
		if _, err := imagetok.ParseRule(v); err != nil { // the grammar is imagetok's
			bad("tokenizer.image_tokens (--image-tokens) is auto or a rule: %v", err)
		}
	}
	if v := c.Tokenizer.Trainer; v != "" {
		if _, err := trainercfg.ParseKind(v); err != nil {
			bad("tokenizer.trainer (--trainer): %v", err)
		}
	}
	if c.Tokenizer.Template != "" && c.Tokenizer.Trainer == "" && c.Tokenizer.TrainerConfig == "" {
		bad("tokenizer.template (--template) names a trainer's template: give tokenizer.trainer (--trainer) or tokenizer.trainer_config (--trainer-config) too")
	}
	if (c.Tokenizer.Trainer != "" || c.Tokenizer.TrainerConfig != "") && c.Tokenizer.ChatTemplate != "" {
		bad("tokenizer.chat_template (--chat-template) with a trainer: the trainer's config says the template (for hf, axolotl and trl give its path as tokenizer.template, --template)")
	}
	c.checkSummarization(bad)
	if f := c.Output.Format; f != "" {
		if err := format.CheckName(f); err != nil {
			bad("output.format %v", err)
		}
	}
	c.checkProcessing(bad)
	c.checkNames(bad)
	return errors.Join(errs...)
}

// checkSummarization checks the summarization section (for Validate).
func (c Config) checkSummarization(bad func(string, ...any)) {
	switch c.Summarization.Method {
	case "deterministic", "llm":
	default:
		bad("summarization.method must be deterministic or llm, got %q", c.Summarization.Method)
	}
	switch c.Summarization.OnFailure {
	case "skip", "fallback":
	default:
		bad("summarization.on_failure must be skip or fallback, got %q", c.Summarization.OnFailure)
	}
	if c.Summarization.MaxRetries < 1 || c.Summarization.MaxRetries > MaxRetries {
		bad("summarization.max_retries must be in [1, %d], got %d", MaxRetries, c.Summarization.MaxRetries)
	}
	if !seconds(c.Summarization.RetryDelay) {
		bad("summarization.retry_delay must be in [0, 1e6] seconds, got %v", c.Summarization.RetryDelay)
	}
	if c.Summarization.RPM < 0 || c.Summarization.TPM < 0 {
		bad("summarization.rpm and tpm must be >= 0")
	}
	if !seconds(c.Summarization.RequestTimeout) {
		bad("summarization.request_timeout must be in [0, 1e6] seconds (0: 120), got %v", c.Summarization.RequestTimeout)
	}
}

// checkProcessing checks the processing section (for Validate).
func (c Config) checkProcessing(bad func(string, ...any)) {
	if c.Processing.NumWorkers < 0 {
		bad("processing.num_workers must be >= 0, got %d", c.Processing.NumWorkers)
	}
	if c.Processing.MaxConcurrentRequests < 1 {
		bad("processing.max_concurrent_requests must be >= 1, got %d", c.Processing.MaxConcurrentRequests)
	}
	if !seconds(c.Processing.PerTrajectoryTimeout) {
		bad("processing.per_trajectory_timeout must be in [0, 1e6] seconds (0: none), got %v", c.Processing.PerTrajectoryTimeout)
	}
	if !c.Processing.SkipUnderTarget {
		bad("processing.skip_under_target: false is not supported: a trajectory under target is never changed")
	}
	if !c.Processing.SaveOverLimit {
		bad("processing.save_over_limit: false is not supported: trajcompress never drops a row; trajectories still over limit are written and counted as failed_to_fit")
	}
}

// checkNames checks the names the config gives files and its worker
// bound (for Validate).
func (c Config) checkNames(bad func(string, ...any)) {
	if strings.ContainsAny(c.Output.OutputSuffix, `/\`) || strings.Contains(c.Output.OutputSuffix, "..") {
		bad("output.output_suffix %q must be a plain name suffix: no path separator and no \"..\" (it must not write outside the output's directory)", c.Output.OutputSuffix)
	}
	if c.Processing.NumWorkers > MaxWorkers {
		bad("processing.num_workers %d is more than this program can use (at most %d; 0 means one per core)", c.Processing.NumWorkers, MaxWorkers)
	}
	if c.Metrics.OutputFile == "" {
		bad("metrics.output_file must not be empty")
	} else if strings.ContainsAny(c.Metrics.OutputFile, `/\`) || c.Metrics.OutputFile == ".." || c.Metrics.OutputFile == "." {
		bad("metrics.output_file %q must be a file name, written beside the output (use --metrics PATH for another place)", c.Metrics.OutputFile)
	}
}

// MaxSeconds bounds the durations a config gives in seconds (retry_delay,
// request_timeout, per_trajectory_timeout): 11.6 days, far above any real
// setting and far below the ~292 years a time.Duration holds, so that
// converting one can never overflow (1e300 became a negative duration:
// every summary timed out at once).
const MaxSeconds = 1e6

// MaxRetries bounds summarization.max_retries: each retry waits
// retry_delay, so more than this is a run that never ends on a dead
// endpoint.
const MaxRetries = 1000

// seconds reports whether v is a duration in seconds Validate accepts:
// from 0 to MaxSeconds (NaN is not).
func seconds(v float64) bool { return v >= 0 && v <= MaxSeconds }

// MaxWorkers bounds processing.num_workers: the pipeline keeps 32 records
// in flight per worker, so a huge figure would only exhaust memory.
const MaxWorkers = 4096

// Timeout is processing.per_trajectory_timeout as a duration (0: none).
func (p Processing) Timeout() time.Duration {
	return time.Duration(p.PerTrajectoryTimeout * float64(time.Second))
}

// sections maps the Go types of the sections to their YAML names, so
// yaml.v3's "field x not found in type config.Compression" reads as
// "unknown key compression.x".
var sections = map[string]string{
	"config.Config": "", "config.Tokenizer": "tokenizer.", "config.Compression": "compression.",
	"config.ProtectedTurns": "protected_turns.", "config.Summarization": "summarization.",
	"config.Output": "output.", "config.Processing": "processing.", "config.Metrics": "metrics.",
	"config.Input": "input.", "config.Redaction": "redaction.",
}

var notFound = regexp.MustCompile(`field (\S+) not found in type (\S+)`)

func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return notFound.ReplaceAllStringFunc(msg, func(m string) string {
		sub := notFound.FindStringSubmatch(m)
		if prefix, ok := sections[sub[2]]; ok {
			return "unknown key " + prefix + sub[1]
		}
		return m
	})
}

// wholeNumbers refuses a fractional number given for an integer key:
// yaml.v3 would truncate "target_max_tokens: 15250.5" to 15250 without a
// word. n is the YAML mapping decoded into a value of type t.
func wholeNumbers(n *yaml.Node, t reflect.Type, prefix string) error {
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		for j := 0; j < t.NumField(); j++ {
			f := t.Field(j)
			if strings.Split(f.Tag.Get("yaml"), ",")[0] != key {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Struct:
				if err := wholeNumbers(val, f.Type, prefix+key+"."); err != nil {
					return err
				}
			case reflect.Int, reflect.Int64:
				if val.Kind == yaml.ScalarNode && val.Tag == "!!float" {
					if x, err := strconv.ParseFloat(val.Value, 64); err != nil || x != math.Trunc(x) {
						return fmt.Errorf("line %d: %s%s: %s is not a whole number", val.Line, prefix, key, val.Value)
					}
				}
			}
		}
	}
	return nil
}
