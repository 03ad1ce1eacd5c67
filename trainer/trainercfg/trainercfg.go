// Package trainercfg reads a user's training config as the trainer reads
// it, for what decides the length of a row: which trainer, the model (its
// tokenizer), the template it renders with, the limit it compares the row
// with, and what it does to a row over that limit.
//
// Three files are read as they are (the commits each rule comes from are in
// docs/trainers.md):
//
//   - a LLaMA-Factory YAML (llamafactory-cli train): model_name_or_path,
//     template, cutoff_len (default 2048; one less with packing or
//     neat_packing, as DataArguments.__post_init__ does), tool_format,
//     default_system, enable_thinking (default true), mask_history,
//     train_on_prompt, packing, neat_packing;
//   - an axolotl YAML: base_model (tokenizer_config when given),
//     chat_template (default tokenizer_default) and chat_template_jinja,
//     sequence_len (default 512), excess_length_strategy (drop, truncate,
//     raise; default drop), sample_packing, train_on_inputs, eot_tokens,
//     and per dataset its type, field_messages, field_tools,
//     message_property_mappings (and the older message_field_role /
//     message_field_content), roles, message_field_training,
//     message_field_training_detail, roles_to_train (default
//     [assistant]), train_on_eos (default turn), train_on_eot,
//     drop_system_message, split_thinking, chat_template and
//     chat_template_jinja;
//   - a TRL `trl sft --config` YAML: model_name_or_path, max_length
//     (default 1024; null is no limit), truncation_mode (keep_start,
//     keep_end), assistant_only_loss, chat_template_path, packing,
//     packing_strategy (bfd, bfd_split, wrapped; default bfd).
//
// Which trainer a file is for is told by its keys (cutoff_len or template:
// LLaMA-Factory; base_model, sequence_len or datasets: axolotl; max_length
// or assistant_only_loss: TRL), or given (Parse's kind). Keys that do not
// change a row's length are accepted and ignored; keys the trainer does not
// know are listed in Spec.Unknown (the caller warns once); a value of the
// wrong type is an error naming the file, the line and the key.
//
// Contract: pure; Parse reads the bytes it is given and nothing else. It
// imports no package of this module.
package trainercfg

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind is a trainer.
type Kind string

// The trainers.
const (
	LlamaFactory Kind = "llamafactory"
	Axolotl      Kind = "axolotl"
	TRL          Kind = "trl"
	// HF is transformers' apply_chat_template with no trainer's rules: the
	// count of --chat-template.
	HF Kind = "hf"
)

// Kinds lists the trainers, for help and errors.
var Kinds = []Kind{LlamaFactory, Axolotl, TRL, HF}

// ParseKind checks a --trainer value.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if slices.Contains(Kinds, k) {
		return k, nil
	}
	return "", fmt.Errorf("unknown trainer %q: want one of llamafactory, axolotl, trl, hf", s)
}

// What a trainer does to a row over its limit.
const (
	// OverCut: LLaMA-Factory's supervised processor cuts each (prompt,
	// response) pair by infer_seqlen so the row fits.
	OverCut = "cut"
	// OverDrop: axolotl's default (excess_length_strategy drop).
	OverDrop = "drop"
	// OverTruncate: the row is cut at the end to the limit (axolotl's
	// excess_length_strategy truncate; TRL's keep_start), and TRL drops a
	// row left with no trained token.
	OverTruncate = "truncate"
	// OverTruncateStart: TRL's truncation_mode keep_end (the start is cut).
	OverTruncateStart = "truncate_start"
	// OverRaise: axolotl's excess_length_strategy raise (the run stops).
	OverRaise = "raise"
	// OverSplit: TRL's packing_strategy bfd_split or wrapped: the row is
	// trained as pieces of the limit, no token lost but the context before
	// each cut.
	OverSplit = "split"
)

// Spec is what a training config says about the length of a row.
type Spec struct {
	Kind   Kind
	Source string // the file read, or "" for --trainer
	// Model is the model whose tokenizer counts: a local directory or a
	// Hugging Face model id (found in the local cache).
	Model string
	// Template is LLaMA-Factory's template name, or axolotl's chat_template
	// (tokenizer_default, jinja, or a name of its own registry).
	Template string
	// TemplateJinja is a chat template given as text or as a path to a
	// .jinja (axolotl's chat_template_jinja, TRL's chat_template_path).
	TemplateJinja string
	// Limit is the length the trainer compares a row with (cutoff_len,
	// sequence_len, max_length); 0 is none.
	Limit int
	// Over is what the trainer does to a row over Limit (Over* constants).
	Over string

	// LLaMA-Factory (DataArguments).
	ToolFormat     string
	DefaultSystem  *string
	EnableThinking bool
	MaskHistory    bool
	TrainOnPrompt  bool
	Packing        bool

	// Datasets and DatasetDir are LLaMA-Factory's dataset (split at
	// commas) and dataset_dir (default "data"): the dataset_info.json there
	// names each dataset's formatting, columns and tags (ParseDatasetInfo).
	Datasets   []string
	DatasetDir string
	// Attr is the first dataset's dataset_info.json entry, when the caller
	// found it (nil: LLaMA-Factory's defaults for the record's dialect).
	Attr *DatasetAttr

	// axolotl: the first chat_template dataset's mapping.
	Dataset Dataset

	// TRL (SFTConfig).
	AssistantOnlyLoss bool
	// PackingStrategy is TRL's packing_strategy under packing: bfd (the
	// default), bfd_split or wrapped.
	PackingStrategy string

	// SamplePacking is axolotl's sample_packing: the rows with no trained
	// token are then dropped (process_datasets_for_packing).
	SamplePacking bool
	// EOTTokens is axolotl's eot_tokens (nil: the tokenizer's eos token).
	EOTTokens []string

	// Unknown lists the top-level keys the trainer does not read, sorted.
	Unknown []string
}

// Dataset is an axolotl dataset entry's mapping of a row's messages and
// of which of its tokens are trained.
type Dataset struct {
	Type          string            // chat_template, or another prompt strategy
	FieldMessages string            // default "messages"
	FieldTools    string            // default "tools"
	Mappings      map[string]string // message_property_mappings: role, content → the row's keys
	// Roles is the dataset's roles: each role the template is given, with
	// the row's roles mapped to it (nil: axolotl's default mapping).
	Roles map[string][]string
	// FieldTraining and FieldTrainingDetail are message_field_training
	// (a per-message training flag) and message_field_training_detail
	// (per-message character ranges trained or not).
	FieldTraining, FieldTrainingDetail string
	RolesToTrain                       []string // default [assistant]
	// TrainOnEOS and TrainOnEOT are train_on_eos (default turn) and
	// train_on_eot (default: train_on_eos's): turn, all, last or none.
	TrainOnEOS, TrainOnEOT string
	DropSystemMessage      bool
	SplitThinking          bool   // split_thinking
	TemplateName           string // the dataset's own chat_template, if any
	TemplateJinja          string // the dataset's own chat_template_jinja, if any
	// TrainOnInputs is the config's train_on_inputs (a top-level key,
	// which axolotl passes to every dataset's strategy).
	TrainOnInputs bool
}

// Defaults returns the spec of a trainer given with --trainer (no file):
// its own defaults, with template as LLaMA-Factory's template name or, for
// the others, a chat template path ("" or auto: the tokenizer's).
func Defaults(kind Kind, model, template string) Spec {
	s := Spec{Kind: kind, Model: model}
	switch kind {
	case LlamaFactory:
		s.Template, s.Limit, s.Over, s.EnableThinking = template, 2048, OverCut, true
	case Axolotl:
		s.Template, s.Limit, s.Over = "tokenizer_default", 512, OverDrop
		if template != "" && template != "auto" {
			s.Template, s.TemplateJinja = "jinja", template
		}
		s.Dataset = Dataset{Type: "chat_template", FieldMessages: "messages", FieldTools: "tools", RolesToTrain: []string{"assistant"}, TrainOnEOS: "turn", TrainOnEOT: "turn"}
	case TRL:
		s.Limit, s.Over, s.PackingStrategy = 1024, OverTruncate, "bfd"
		if template != "auto" {
			s.TemplateJinja = template
		}
	case HF:
		if template != "auto" {
			s.TemplateJinja = template
		}
	}
	return s
}

// Parse reads a training config's bytes (file names it in errors). kind ""
// tells the trainer from the keys.
func Parse(file string, b []byte, kind Kind) (Spec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return Spec{}, fmt.Errorf("%s: empty training config", file)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Spec{}, fmt.Errorf("%s:%d: a training config is a mapping of keys to values", file, root.Line)
	}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys[root.Content[i].Value] = root.Content[i+1]
	}
	if kind == "" {
		kind = detect(keys)
		if kind == "" {
			return Spec{}, fmt.Errorf("%s: cannot tell the trainer from its keys (no cutoff_len or template: LLaMA-Factory; no base_model, sequence_len or datasets: axolotl; no max_length or assistant_only_loss: TRL): give --trainer", file)
		}
	}
	r := reader{file: file, keys: keys}
	s := Defaults(kind, "", "")
	s.Source = file
	var known []string
	switch kind {
	case LlamaFactory:
		known = llamafactoryKeys
		s.Model = r.str("model_name_or_path", "")
		s.Template = r.str("template", "")
		s.Limit = r.int("cutoff_len", 2048)
		s.ToolFormat = r.str("tool_format", "")
		if n := keys["default_system"]; n != nil && n.Tag != "!!null" {
			v := r.str("default_system", "")
			s.DefaultSystem = &v
		}
		s.EnableThinking = r.bool("enable_thinking", true)
		s.MaskHistory = r.bool("mask_history", false)
		s.TrainOnPrompt = r.bool("train_on_prompt", false)
		s.Packing = r.bool("packing", false) || r.bool("neat_packing", false)
		for _, d := range strings.Split(r.str("dataset", ""), ",") {
			if d = strings.TrimSpace(d); d != "" {
				s.Datasets = append(s.Datasets, d)
			}
		}
		s.DatasetDir = r.str("dataset_dir", "data")
		if s.Packing {
			s.Limit-- // DataArguments.__post_init__: "avoid pad_to_multiple_of"
		}
		if s.MaskHistory && s.TrainOnPrompt && r.err == nil {
			r.err = fmt.Errorf("%s: mask_history is incompatible with train_on_prompt (LLaMA-Factory refuses the config)", file)
		}
		if s.Template == "" && r.err == nil {
			r.err = fmt.Errorf("%s: template: LLaMA-Factory needs a template name to train with (template: qwen3, llama3, …)", file)
		}
	case Axolotl:
		known = axolotlKeys
		s.Model = r.str("tokenizer_config", r.str("base_model", ""))
		s.Template = r.str("chat_template", "tokenizer_default")
		s.TemplateJinja = r.str("chat_template_jinja", "")
		if s.TemplateJinja != "" && keys["chat_template"] == nil {
			s.Template = "jinja"
		}
		s.Limit = r.int("sequence_len", 512)
		switch ex := strings.ToLower(r.str("excess_length_strategy", "drop")); ex {
		case "drop":
			s.Over = OverDrop
		case "truncate":
			s.Over = OverTruncate
		case "raise":
			s.Over = OverRaise
		default:
			r.fail("excess_length_strategy", fmt.Sprintf("%q is not drop, truncate or raise", ex))
		}
		s.SamplePacking = r.bool("sample_packing", false)
		s.EOTTokens = r.strs("eot_tokens")
		s.Dataset = r.dataset(s.Dataset)
		s.Dataset.TrainOnInputs = r.bool("train_on_inputs", false)
		if s.Dataset.TemplateName != "" {
			s.Template = s.Dataset.TemplateName
		}
		if s.Dataset.TemplateJinja != "" {
			s.Template, s.TemplateJinja = "jinja", s.Dataset.TemplateJinja
		}
	case TRL:
		known = trlKeys
		s.Model = r.str("model_name_or_path", "")
		if n := keys["max_length"]; n != nil && n.Tag == "!!null" {
			s.Limit = 0
		} else {
			s.Limit = r.int("max_length", 1024)
		}
		switch tm := r.str("truncation_mode", "keep_start"); tm {
		case "keep_start":
			s.Over = OverTruncate
		case "keep_end":
			s.Over = OverTruncateStart
		default:
			r.fail("truncation_mode", fmt.Sprintf("%q is not keep_start or keep_end", tm))
		}
		s.AssistantOnlyLoss = r.bool("assistant_only_loss", false)
		s.TemplateJinja = r.str("chat_template_path", "")
		s.Packing = r.bool("packing", false)
		switch ps := r.str("packing_strategy", "bfd"); ps {
		case "bfd", "bfd_split", "wrapped":
			s.PackingStrategy = ps
		case "bfd-requeue": // SFTConfig.__post_init__: renamed bfd_split
			s.PackingStrategy = "bfd_split"
		default:
			r.fail("packing_strategy", fmt.Sprintf("%q is not bfd, bfd_split or wrapped", ps))
		}
	case HF:
		return Spec{}, fmt.Errorf("%s: a training config is LLaMA-Factory's, axolotl's or TRL's, not hf (use --trainer hf without a config)", file)
	}
	if r.err != nil {
		return Spec{}, r.err
	}
	for k := range keys {
		if !slices.Contains(known, k) {
			s.Unknown = append(s.Unknown, k)
		}
	}
	sort.Strings(s.Unknown)
	if s.Limit < 0 {
		return Spec{}, fmt.Errorf("%s: the length limit must be > 0, got %d", file, s.Limit)
	}
	return s, nil
}

// detect tells the trainer from the keys a config holds.
func detect(keys map[string]*yaml.Node) Kind {
	has := func(ks ...string) bool {
		for _, k := range ks {
			if keys[k] != nil {
				return true
			}
		}
		return false
	}
	switch {
	case has("cutoff_len", "template", "stage", "finetuning_type"):
		return LlamaFactory
	case has("base_model", "sequence_len", "datasets"):
		return Axolotl
	case has("max_length", "assistant_only_loss", "dataset_name", "completion_only_loss"):
		return TRL
	}
	return ""
}

// reader reads typed values, keeping the first error.
type reader struct {
	file string
	keys map[string]*yaml.Node
	err  error
}

func (r *reader) fail(key string, msg string) {
	if r.err == nil {
		line := 0
		if n := r.keys[key]; n != nil {
			line = n.Line
		}
		r.err = fmt.Errorf("%s:%d: %s: %s", r.file, line, key, msg)
	}
}

func (r *reader) scalar(key string) (*yaml.Node, bool) {
	n := r.keys[key]
	if n == nil || n.Tag == "!!null" {
		return nil, false
	}
	if n.Kind != yaml.ScalarNode {
		r.fail(key, "want a single value")
		return nil, false
	}
	return n, true
}

func (r *reader) str(key, def string) string {
	n, ok := r.scalar(key)
	if !ok {
		return def
	}
	return n.Value
}

func (r *reader) int(key string, def int) int {
	n, ok := r.scalar(key)
	if !ok {
		return def
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || n.Tag != "!!int" {
		r.fail(key, fmt.Sprintf("%q is not a whole number", n.Value))
		return def
	}
	return v
}

// strs reads a list of strings (nil when absent).
func (r *reader) strs(key string) []string {
	n := r.keys[key]
	if n == nil || n.Tag == "!!null" {
		return nil
	}
	var v []string
	if n.Kind != yaml.SequenceNode || n.Decode(&v) != nil {
		r.fail(key, "want a list of strings")
		return nil
	}
	return v
}

func (r *reader) bool(key string, def bool) bool {
	n, ok := r.scalar(key)
	if !ok {
		return def
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		r.fail(key, fmt.Sprintf("%q is not true or false", n.Value))
		return def
	}
	return v
}

// dataset reads the first datasets entry of type chat_template (or the
// first entry) over def.
func (r *reader) dataset(def Dataset) Dataset {
	n := r.keys["datasets"]
	if n == nil || n.Tag == "!!null" {
		return def
	}
	if n.Kind != yaml.SequenceNode {
		r.fail("datasets", "want a list of datasets")
		return def
	}
	var entries []map[string]any
	if err := n.Decode(&entries); err != nil {
		r.fail("datasets", err.Error())
		return def
	}
	pick := -1
	for i, e := range entries {
		if t, _ := e["type"].(string); t == "chat_template" || (t == "" && pick < 0) {
			pick = i
			if t == "chat_template" {
				break
			}
		}
	}
	if pick < 0 {
		if len(entries) == 0 {
			return def
		}
		pick = 0
	}
	e := entries[pick]
	if msg := checkDataset(e); msg != "" {
		r.fail("datasets", fmt.Sprintf("entry %d: %s", pick, msg))
		return def
	}
	d := def
	get := func(k string) string {
		s, _ := e[k].(string)
		return s
	}
	if t := get("type"); t != "" {
		d.Type = t
	}
	if v := get("field_messages"); v != "" {
		d.FieldMessages = v
	}
	if v := get("field_tools"); v != "" {
		d.FieldTools = v
	}
	d.Mappings = map[string]string{}
	if v := get("message_field_role"); v != "" {
		d.Mappings["role"] = v
	}
	if v := get("message_field_content"); v != "" {
		d.Mappings["content"] = v
	}
	if m, ok := e["message_property_mappings"].(map[string]any); ok {
		for k, v := range m {
			if s, ok := v.(string); ok {
				d.Mappings[k] = s
			}
		}
	}
	d.FieldTraining = get("message_field_training")
	d.FieldTrainingDetail = get("message_field_training_detail")
	if l, ok := e["roles_to_train"].([]any); ok {
		d.RolesToTrain = stringList(l)
	}
	if m, ok := e["roles"].(map[string]any); ok {
		d.Roles = map[string][]string{}
		for k, v := range m {
			if l, ok := v.([]any); ok {
				d.Roles[k] = stringList(l)
			}
		}
	}
	// train_on_eos / train_on_eot: all, turn, last or none (null is the
	// default: axolotl drops the config's None values).
	eos := func(k, def string) string {
		if v, ok := e[k].(string); ok {
			return v
		}
		return def
	}
	d.TrainOnEOS = eos("train_on_eos", "turn")
	d.TrainOnEOT = eos("train_on_eot", d.TrainOnEOS)
	d.DropSystemMessage, _ = pyBool(e["drop_system_message"])
	d.SplitThinking, _ = pyBool(e["split_thinking"])
	d.TemplateName = get("chat_template")
	d.TemplateJinja = get("chat_template_jinja")
	return d
}

// checkDataset says what is wrong with the types of a dataset entry's keys
// that change a count ("" when nothing), with the types axolotl's config
// schema gives them (src/axolotl/utils/schemas/datasets.py, SFTDataset,
// at commit 067b021c): strings, a mapping of strings, a list of strings, a
// mapping of role to a list of names, a boolean (a string pydantic reads
// as one, such as "true" or "no", too: drop_system_message reads it), and
// train_on_eos / train_on_eot one of all, turn, last (the schema's) or
// none (which chat_template.py's labelling also handles). A key given as
// null is absent. Without this a mistyped roles mapping was ignored and
// every turn it named was counted as a role the template does not render.
func checkDataset(e map[string]any) string {
	for _, k := range []string{"type", "field_messages", "field_tools", "message_field_role", "message_field_content",
		"message_field_training", "message_field_training_detail", "chat_template", "chat_template_jinja"} {
		if v, ok := e[k]; ok && v != nil {
			if _, ok := v.(string); !ok {
				return fmt.Sprintf("%s: want a string, got %v", k, v)
			}
		}
	}
	isStrings := func(v any) bool {
		l, ok := v.([]any)
		for _, x := range l {
			if _, s := x.(string); !s {
				return false
			}
		}
		return ok
	}
	if v, ok := e["roles_to_train"]; ok && v != nil && !isStrings(v) {
		return fmt.Sprintf("roles_to_train: want a list of roles, got %v", v)
	}
	if v, ok := e["message_property_mappings"]; ok && v != nil {
		m, ok := v.(map[string]any)
		for _, x := range m {
			if _, s := x.(string); !s {
				ok = false
			}
		}
		if !ok {
			return fmt.Sprintf("message_property_mappings: want a mapping of property to field name, got %v", v)
		}
	}
	if v, ok := e["roles"]; ok && v != nil {
		m, ok := v.(map[string]any)
		for _, x := range m {
			if !isStrings(x) {
				ok = false
			}
		}
		if !ok {
			return fmt.Sprintf("roles: want a mapping of role to a list of names (assistant: [gpt, model]), got %v", v)
		}
	}
	for _, k := range []string{"drop_system_message", "split_thinking"} {
		if v, ok := e[k]; ok && v != nil {
			if _, ok := pyBool(v); !ok {
				return fmt.Sprintf("%s: want true or false, got %v", k, v)
			}
		}
	}
	for _, k := range []string{"train_on_eos", "train_on_eot"} {
		if v, ok := e[k]; ok && v != nil {
			switch v {
			case "all", "turn", "last", "none":
			default:
				return fmt.Sprintf("%s: want all, turn, last or none, got %v", k, v)
			}
		}
	}
	return ""
}

// pyBool is v as pydantic's lax mode reads a bool: true, false, 0, 1 or
// one of its strings (case aside).
func pyBool(v any) (b, ok bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case int:
		return v == 1, v == 0 || v == 1
	case string:
		switch strings.ToLower(v) {
		case "1", "on", "t", "true", "y", "yes":
			return true, true
		case "0", "off", "f", "false", "n", "no":
			return false, true
		}
	}
	return false, false
}

// stringList keeps the strings of a YAML list.
func stringList(l []any) []string {
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// DatasetAttr is what LLaMA-Factory's dataset_info.json says of one dataset
// that changes how its rows are read (src/llamafactory/data/parser.py,
// DatasetAttr.join, at commit ff6d4d12): its formatting (sharegpt or
// openai; alpaca is not a trajectory), its messages, system and tools
// columns, and its role tags ("" keeps DatasetAttr's default).
type DatasetAttr struct {
	Name, Formatting       string
	Messages, System, Tool string
	RoleTag, ContentTag    string
	User, Assistant        string
	Observation, Function  string
	SystemTag              string
}

// ParseDatasetInfo reads dataset name's entry of a dataset_info.json.
func ParseDatasetInfo(file string, b []byte, name string) (DatasetAttr, error) {
	var info map[string]struct {
		Formatting string            `json:"formatting"`
		Columns    map[string]string `json:"columns"`
		Tags       map[string]string `json:"tags"`
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return DatasetAttr{}, fmt.Errorf("%s: %w", file, err)
	}
	e, ok := info[name]
	if !ok {
		return DatasetAttr{}, fmt.Errorf("%s: no dataset %q", file, name)
	}
	a := DatasetAttr{Name: name, Formatting: e.Formatting}
	if a.Formatting == "" {
		a.Formatting = "alpaca"
	}
	a.Messages, a.System, a.Tool = e.Columns["messages"], e.Columns["system"], e.Columns["tools"]
	t := e.Tags
	a.RoleTag, a.ContentTag, a.User, a.Assistant = t["role_tag"], t["content_tag"], t["user_tag"], t["assistant_tag"]
	a.Observation, a.Function, a.SystemTag = t["observation_tag"], t["function_tag"], t["system_tag"]
	return a, nil
}
