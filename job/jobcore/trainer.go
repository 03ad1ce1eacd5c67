package jobcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
	"github.com/trajcompress/trajcompress/trainer/llamafactory"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainer/trl"
	"github.com/trajcompress/trajcompress/trainview"
)

// Trainer reads the trainer cfg names (tokenizer.trainer_config, read as
// the trainer reads it; or tokenizer.trainer with tokenizer.template), or
// nil for none. An unreadable file is a usage error naming it.
func Trainer(cfg config.Config) (*trainercfg.Spec, error) {
	t := cfg.Tokenizer
	var kind trainercfg.Kind
	if t.Trainer != "" {
		k, err := trainercfg.ParseKind(t.Trainer)
		if err != nil {
			return nil, usagef("tokenizer.trainer: %v", err)
		}
		kind = k
	}
	if t.TrainerConfig == "" {
		if kind == "" {
			return nil, nil
		}
		s := trainercfg.Defaults(kind, "", t.Template)
		if kind == trainercfg.LlamaFactory && s.Template == "" {
			return nil, usagef("--trainer llamafactory needs --template NAME (LLaMA-Factory's template: %s)", strings.Join(llamafactory.Names(), ", "))
		}
		return &s, nil
	}
	b, err := os.ReadFile(t.TrainerConfig)
	if err != nil {
		return nil, usagef("tokenizer.trainer_config: %v", err)
	}
	s, err := trainercfg.Parse(t.TrainerConfig, b, kind)
	if err != nil {
		return nil, usagef("tokenizer.trainer_config: %v", err)
	}
	if s.Kind == trainercfg.LlamaFactory && len(s.Datasets) > 0 {
		a, err := datasetInfo(t.TrainerConfig, s)
		if err != nil {
			return nil, usagef("tokenizer.trainer_config: %v", err)
		}
		s.Attr = a
	}
	if t.Template != "" {
		if s.Kind == trainercfg.LlamaFactory {
			s.Template = t.Template
		} else {
			s.Template, s.TemplateJinja = "jinja", t.Template
		}
	}
	return &s, nil
}

// Effective is the config a command line asks for: the config file at
// path (the defaults when ""), then the flags of f that were given, checked
// (config.Config.Validate), then the trainer's settings (ApplyTrainer: a
// trainer config's model and limit unless --tokenizer and
// --target-max-tokens were given), checked again. notes are the warnings
// to show once. Every error is a UsageError. `trajcompress compress` and
// the Beam main both take their config from here.
func Effective(path string, f *config.Flags) (cfg config.Config, notes []string, err error) {
	cfg = config.Default()
	if path != "" {
		if cfg, err = config.Load(path); err != nil {
			return cfg, nil, UsageError{Err: err}
		}
	}
	f.Apply(&cfg)
	if err := cfg.Validate(); err != nil {
		return cfg, nil, usagef("flags: %w", err)
	}
	ts, err := Trainer(cfg)
	if err != nil {
		return cfg, nil, err
	}
	notes = ApplyTrainer(&cfg, ts, f.Set("tokenizer"), f.Set("target-max-tokens"))
	if ts != nil {
		if err := cfg.Validate(); err != nil {
			return cfg, nil, usagef("with the trainer's settings: %w", err)
		}
	}
	return cfg, notes, nil
}

// ApplyTrainer makes cfg the run s describes: a trainer config's model is
// the tokenizer and its limit the target, unless the flags gave them
// (tokenizerSet, targetSet); LLaMA-Factory's alternation rules turn the
// alternation placement on. It returns the notes to show once: the keys
// of the trainer's config it does not know.
func ApplyTrainer(cfg *config.Config, s *trainercfg.Spec, tokenizerSet, targetSet bool) []string {
	if s == nil {
		return nil
	}
	var notes []string
	if s.Source != "" {
		if s.Model != "" && !tokenizerSet {
			cfg.Tokenizer.Name = s.Model
		}
		if s.Limit > 0 && !targetSet {
			cfg.Compression.TargetMaxTokens = s.Limit
		}
		if len(s.Unknown) > 0 {
			notes = append(notes, fmt.Sprintf("warning: %s: keys %s does not know, ignored: %s", s.Source, s.Kind, strings.Join(s.Unknown, ", ")))
		}
	}
	if s.Kind == trainercfg.LlamaFactory {
		cfg.Output.Alternation = true
	}
	if s.Kind == trainercfg.Axolotl {
		applyAxolotlFields(&cfg.Input, s.Dataset)
	}
	return notes
}

// applyAxolotlFields reads records under the keys an axolotl dataset maps
// (field_messages, message_property_mappings, field_tools) where the input
// section does not name them and they are not the standard ones (which
// records are read by anyway).
func applyAxolotlFields(in *config.Input, d trainercfg.Dataset) {
	std := func(v string, names ...string) bool {
		if v == "" {
			return true
		}
		for _, n := range names {
			if v == n {
				return true
			}
		}
		return false
	}
	if in.TurnsKey == "" && !std(d.FieldMessages, "messages", "conversations") {
		in.TurnsKey = d.FieldMessages
	}
	if in.RoleKey == "" && !std(d.Mappings["role"], "role", "from") {
		in.RoleKey = d.Mappings["role"]
	}
	if in.ContentKey == "" && !std(d.Mappings["content"], "content", "value") {
		in.ContentKey = d.Mappings["content"]
	}
	if in.ToolsKey == "" && !std(d.FieldTools, "tools") {
		in.ToolsKey = d.FieldTools
	}
}

// TrainerCounter is the counter of rows as trainer s counts them with tok:
// LLaMA-Factory's own templates (package llamafactory); or the model's
// chat template as axolotl (tool-call arguments parsed into objects
// first) and TRL (its training template under assistant_only_loss)
// render it, or as transformers does (hf). toolsKey is the records' tools
// field ("": tools).
func TrainerCounter(s *trainercfg.Spec, tok tokenize.Counter, toolsKey string) (trainview.RecordCounter, error) {
	switch s.Kind {
	case trainercfg.LlamaFactory:
		think := s.EnableThinking
		o := llamafactory.Options{Template: s.Template, ToolFormat: s.ToolFormat,
			DefaultSystem: s.DefaultSystem, EnableThinking: &think, MaskHistory: s.MaskHistory, TrainOnPrompt: s.TrainOnPrompt, ToolsKey: toolsKey}
		if a := s.Attr; a != nil {
			if a.Formatting != "sharegpt" && a.Formatting != "openai" {
				return nil, fmt.Errorf("dataset %s: formatting %s is not a conversation (sharegpt or openai)", a.Name, a.Formatting)
			}
			o.Formatting = a.Formatting
			o.Tags = datasetTags(a)
			if a.Tool != "" && toolsKey == "" {
				o.ToolsKey = a.Tool
			}
		}
		r, err := llamafactory.New(o)
		if err != nil {
			return nil, err
		}
		return &LlamaFactoryCounter{R: r, Tokens: llamafactory.Tokens{Counter: tok, HasBOS: hasBOS(tok)}, Spec: *s, opts: o}, nil
	case trainercfg.Axolotl:
		t, err := axolotlTemplate(s, tok)
		if err != nil {
			return nil, err
		}
		r := AxolotlRules(s)
		return &trainview.Counter{Template: t, Tokens: tok, ParseArguments: true, Axolotl: &r}, nil
	case trainercfg.TRL, trainercfg.HF:
		spec := s.TemplateJinja
		if spec == "" {
			spec = trainview.TemplateAuto
		}
		t, err := loadTemplate(spec, tok)
		if err != nil {
			return nil, err
		}
		if s.Kind == trainercfg.TRL && s.AssistantOnlyLoss {
			src, name, err := trl.TrainingTemplate(t.Source(true))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Path, err)
			}
			if name != "" {
				if t, err = chattemplate.Parse(name, src, t.Special); err != nil {
					return nil, err
				}
				sum := sha256.Sum256([]byte(src))
				t.Hash = hex.EncodeToString(sum[:])
			}
		}
		return &trainview.Counter{Template: t, Tokens: tok}, nil
	}
	return nil, fmt.Errorf("unknown trainer %q", s.Kind)
}

// axolotlTemplate is the chat template axolotl renders with
// (get_chat_template, src/axolotl/utils/chat_templates/base.py at commit
// 067b021c): the tokenizer's (tokenizer_default; tokenizer_default_fallback_NAME
// falls back to the named one when the tokenizer has none), a jinja file
// or text (jinja with chat_template_jinja), or one of axolotl's named
// templates (package axolotl holds a subset), with the tokenizer's special
// tokens.
func axolotlTemplate(s *trainercfg.Spec, tok tokenize.Counter) (*chattemplate.Template, error) {
	name := s.Template
	switch {
	case name == "tokenizer_default":
		return loadTemplate(trainview.TemplateAuto, tok)
	case strings.HasPrefix(name, "tokenizer_default_fallback_"):
		if t, err := trainview.Resolve("", tok); err != nil || t != nil {
			return t, err
		}
		name = strings.TrimPrefix(name, "tokenizer_default_fallback_")
	case name == "jinja":
		if st, err := os.Stat(s.TemplateJinja); err == nil && !st.IsDir() {
			return loadTemplate(s.TemplateJinja, tok)
		}
		if !strings.Contains(s.TemplateJinja, "{{") && !strings.Contains(s.TemplateJinja, "{%") {
			return loadTemplate(s.TemplateJinja, tok) // names the missing file
		}
		return parseWithSpecial("chat_template_jinja", s.TemplateJinja, tok)
	}
	src, ok := axolotl.Template(name)
	if !ok {
		return nil, fmt.Errorf("axolotl chat_template %q: not one of axolotl's named templates held here (%s): give chat_template: tokenizer_default (the model's) or chat_template_jinja", name, strings.Join(axolotl.Templates(), ", "))
	}
	return parseWithSpecial("axolotl chat_templates/"+name+".jinja", src, tok)
}

// parseWithSpecial parses a template given as text, with the special
// tokens of tok's model directory.
func parseWithSpecial(name, src string, tok tokenize.Counter) (*chattemplate.Template, error) {
	special, err := chattemplate.SpecialTokens(tokenize.ModelDir(tok))
	if err != nil {
		return nil, err
	}
	t, err := chattemplate.Parse(name, src, special)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(src))
	t.Hash = hex.EncodeToString(sum[:])
	return t, nil
}

// AxolotlRules are the message rules of s's chat_template dataset.
func AxolotlRules(s *trainercfg.Spec) axolotl.Rules {
	d := s.Dataset
	r := axolotl.NewRules(d.Roles, d.RolesToTrain, d.TrainOnInputs, d.FieldTraining, d.FieldTrainingDetail, d.TrainOnEOS, d.TrainOnEOT, d.DropSystemMessage)
	r.SplitThinking = d.SplitThinking
	return r
}

// AxolotlLabeler is the labeler of the rows counter c counts for axolotl
// config s: the tokenizer's eos token, and eot_tokens (default: the eos
// token; a token the template does not hold is left out, as
// _validate_eot_and_eos_tokens does, and only a token that is one id is
// looked for). ok is false when c's tokenizer gives no token ids.
func AxolotlLabeler(s *trainercfg.Spec, c *trainview.Counter) (trainview.AxolotlLabeler, bool) {
	enc := tokenize.EncoderOf(c.Tokens)
	if enc == nil || c.Axolotl == nil {
		return trainview.AxolotlLabeler{}, false
	}
	l := trainview.AxolotlLabeler{Counter: c, Rules: *c.Axolotl, Encode: enc, EOS: -1,
		Mistral: strings.Contains(strings.ToLower(s.Model), "mistral")}
	eos := c.Template.Special["eos_token"]
	if eos != "" {
		if ids := enc(eos); len(ids) == 1 {
			l.EOS = ids[0]
		}
	}
	eot := s.EOTTokens
	src := c.Template.Source(true) + c.Template.Source(false)
	if eot == nil {
		eot = []string{eos}
	} else if !(len(eot) == 1 && eot[0] == eos) {
		var kept []string
		for _, t := range eot {
			if strings.Contains(src, t) {
				kept = append(kept, t)
			}
		}
		eot = kept
	}
	for _, t := range eot {
		if t == "" {
			continue
		}
		if ids := enc(t); len(ids) == 1 {
			l.EOT = append(l.EOT, ids[0])
		}
	}
	return l, true
}

// loadTemplate resolves a chat template spec (auto or a path) for tok.
func loadTemplate(spec string, tok tokenize.Counter) (*chattemplate.Template, error) {
	t, err := trainview.Resolve(spec, tok)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("tokenizer %s has no chat template: give one", tokenize.Describe(tok).Name)
	}
	return t, nil
}

// hasBOS says whether tok's model has a bos token (tokenizer_config.json's
// bos_token not null), which LLaMA-Factory's {"bos_token"} slot writes.
func hasBOS(tok tokenize.Counter) bool {
	dir := tokenize.ModelDir(tok)
	if dir == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return false
	}
	var c struct {
		BOS json.RawMessage `json:"bos_token"`
	}
	if json.Unmarshal(b, &c) != nil {
		return false
	}
	return len(c.BOS) > 0 && string(c.BOS) != "null" && string(c.BOS) != `""`
}

// LlamaFactoryCounter counts a row as LLaMA-Factory's supervised
// pre-processing does: the sum of its (prompt, response) pairs' tokens
// (plus the final eos under efficient_eos), the length supervised.py
// compares with cutoff_len; a row LLaMA-Factory skips or raises on is
// an error naming its reason.
type LlamaFactoryCounter struct {
	R      *llamafactory.Renderer
	Tokens llamafactory.Tokens
	Spec   trainercfg.Spec
	opts   llamafactory.Options // R's, for SetClock
}

// CountContext is CountCached, unless ctx is done (LLaMA-Factory's
// renderer has no loop a record can make long: it is checked once).
func (c *LlamaFactoryCounter) CountContext(ctx context.Context, v trainview.View, cache *trainview.Stretches) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return c.CountCached(v, cache)
}

// SetClock renders the llama3 tool prompt's "Today Date" (Python's
// datetime.now(), in its local zone, "%d %b %Y") from now: the run's
// recorded time, so that a count does not depend on the day a task runs.
func (c *LlamaFactoryCounter) SetClock(now func() time.Time) {
	if now == nil { // a run directory from before the time was recorded: today's date, as before
		return
	}
	o := c.opts
	o.Date = now().Format("02 Jan 2006")
	if r, err := llamafactory.New(o); err == nil { // the options New accepted before
		c.R, c.opts = r, o
	}
}

// CountCached counts v's record (the cache is not used: LLaMA-Factory
// tokenizes each slot string on its own).
func (c *LlamaFactoryCounter) CountCached(v trainview.View, _ *trainview.Stretches) (int, error) {
	if v.Record == nil {
		return 0, fmt.Errorf("LLaMA-Factory counts records, not hand-built views")
	}
	row := c.R.Encode(v.Record, v.Turns, v.System, c.Tokens)
	if row.Skip != nil {
		if row.Skip.Fatal {
			return 0, fmt.Errorf("LLaMA-Factory raises on the row: %s", row.Skip)
		}
		return 0, fmt.Errorf("LLaMA-Factory skips the row: %s", row.Skip)
	}
	return row.Total(), nil
}

// Row encodes v's record as LLaMA-Factory does.
func (c *LlamaFactoryCounter) Row(v trainview.View) llamafactory.Row {
	return c.R.Encode(v.Record, v.Turns, v.System, c.Tokens)
}

// Name names the trainer and its template.
func (c *LlamaFactoryCounter) Name() string {
	return "LLaMA-Factory template " + c.Spec.Template
}

// Hash identifies the settings that change the count.
func (c *LlamaFactoryCounter) Hash() string {
	b, _ := json.Marshal(struct {
		T, F string
		D    *string
		E, M bool
	}{c.Spec.Template, c.Spec.ToolFormat, c.Spec.DefaultSystem, c.Spec.EnableThinking, c.Spec.MaskHistory})
	sum := sha256.Sum256(append([]byte("llamafactory ff6d4d12 "), b...))
	return hex.EncodeToString(sum[:])
}

// trainerName names a trainer spec in messages: its file, or --trainer.
func trainerName(s *trainercfg.Spec) string {
	if s.Source != "" {
		return "tokenizer.trainer_config " + s.Source
	}
	return "tokenizer.trainer " + string(s.Kind)
}

// datasetInfo finds the dataset_info.json of s's first dataset, as
// LLaMA-Factory does (dataset_dir, relative to the directory it runs in),
// and else relative to the config file's directory; nil when neither has
// one (the dataset's formatting and tags are then LLaMA-Factory's defaults
// for the record's dialect).
func datasetInfo(cfgPath string, s trainercfg.Spec) (*trainercfg.DatasetAttr, error) {
	for _, dir := range []string{s.DatasetDir, filepath.Join(filepath.Dir(cfgPath), s.DatasetDir)} {
		p := filepath.Join(dir, "dataset_info.json")
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		a, err := trainercfg.ParseDatasetInfo(p, b, s.Datasets[0])
		if err != nil {
			return nil, err
		}
		return &a, nil
	}
	return nil, nil
}

// datasetTags are a dataset's tags over DatasetAttr's defaults
// (parser.py), as LLaMA-Factory reads them for both formattings.
func datasetTags(a *trainercfg.DatasetAttr) *llamafactory.Tags {
	t := llamafactory.ShareGPTTags
	for _, f := range []struct {
		dst *string
		v   string
	}{{&t.Role, a.RoleTag}, {&t.Content, a.ContentTag}, {&t.User, a.User}, {&t.Assistant, a.Assistant},
		{&t.Observation, a.Observation}, {&t.Function, a.Function}, {&t.System, a.SystemTag}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return &t
}
