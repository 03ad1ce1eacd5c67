package trainercfg

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLlamaFactory(t *testing.T) {
	// The shape of LLaMA-Factory's examples/train_lora/qwen3_lora_sft.yaml.
	y := `### model
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
trust_remote_code: true

### method
stage: sft
do_train: true
finetuning_type: lora
lora_rank: 8
lora_target: all

### dataset
dataset: identity,alpaca_en_demo
template: qwen3_nothink
cutoff_len: 4096
max_samples: 1000
preprocessing_num_workers: 16
tool_format: qwen
enable_thinking: false
mask_history: true
packing: true
my_own_key: 1

### output
output_dir: saves/qwen3-4b/lora/sft
learning_rate: 1.0e-4
`
	s, err := Parse("lf.yaml", []byte(y), "")
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Kind: LlamaFactory, Source: "lf.yaml", Model: "Qwen/Qwen3-4B-Instruct-2507", Template: "qwen3_nothink",
		Limit: 4095, Over: OverCut, ToolFormat: "qwen", MaskHistory: true, Packing: true, Unknown: []string{"my_own_key"},
		Datasets: []string{"identity", "alpaca_en_demo"}, DatasetDir: "data"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
}

func TestParseAxolotl(t *testing.T) {
	y := `base_model: Qwen/Qwen3-8B
chat_template: qwen3
sequence_len: 8192
excess_length_strategy: truncate
sample_packing: true
train_on_inputs: true
eot_tokens: ["<|im_end|>"]
datasets:
  - path: data/agent.jsonl
    type: chat_template
    field_messages: conversations
    message_property_mappings:
      role: from
      content: value
    roles:
      user: [human]
      assistant: [gpt, bot]
    message_field_training: train
    message_field_training_detail: train_detail
    roles_to_train: [gpt]
    train_on_eos: last
    train_on_inputs: false
    split_thinking: true
`
	s, err := Parse("ax.yml", []byte(y), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != Axolotl || s.Model != "Qwen/Qwen3-8B" || s.Template != "qwen3" || s.Limit != 8192 || s.Over != OverTruncate || len(s.Unknown) != 0 {
		t.Errorf("got %+v", s)
	}
	d := s.Dataset
	if d.Type != "chat_template" || d.FieldMessages != "conversations" || d.Mappings["role"] != "from" || d.Mappings["content"] != "value" ||
		d.FieldTraining != "train" || !reflect.DeepEqual(d.RolesToTrain, []string{"gpt"}) || d.FieldTools != "tools" || !d.SplitThinking {
		t.Errorf("dataset %+v", d)
	}
	// train_on_inputs is the config's (axolotl passes cfg.train_on_inputs
	// to every dataset's strategy), train_on_eot follows train_on_eos.
	if !s.SamplePacking || !reflect.DeepEqual(s.EOTTokens, []string{"<|im_end|>"}) || !d.TrainOnInputs || d.FieldTrainingDetail != "train_detail" ||
		d.TrainOnEOS != "last" || d.TrainOnEOT != "last" || !reflect.DeepEqual(d.Roles, map[string][]string{"user": {"human"}, "assistant": {"gpt", "bot"}}) {
		t.Errorf("training keys %+v %+v", s, d)
	}
	// Defaults: sequence_len 512, drop, roles_to_train [assistant],
	// train_on_eos turn.
	s, err = Parse("ax.yml", []byte("base_model: m\n"), "")
	if err != nil || s.Limit != 512 || s.Over != OverDrop || s.Template != "tokenizer_default" ||
		!reflect.DeepEqual(s.Dataset.RolesToTrain, []string{"assistant"}) || s.Dataset.TrainOnEOS != "turn" || s.Dataset.TrainOnEOT != "turn" || s.SamplePacking {
		t.Errorf("defaults: %+v %v", s, err)
	}
}

func TestParseTRL(t *testing.T) {
	s, err := Parse("trl.yaml", []byte("model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: x\nassistant_only_loss: true\nlearning_rate: 2.0e-5\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != TRL || s.Limit != 1024 || !s.AssistantOnlyLoss || s.Over != OverTruncate || len(s.Unknown) != 0 {
		t.Errorf("got %+v", s)
	}
	s, err = Parse("trl.yaml", []byte("model_name_or_path: m\nmax_length: null\ntruncation_mode: keep_end\n"), TRL)
	if err != nil || s.Limit != 0 || s.Over != OverTruncateStart || s.PackingStrategy != "bfd" {
		t.Errorf("null max_length: %+v %v", s, err)
	}
	// packing_strategy; bfd-requeue is bfd_split's old name.
	for in, want := range map[string]string{"bfd_split": "bfd_split", "wrapped": "wrapped", "bfd-requeue": "bfd_split"} {
		s, err = Parse("trl.yaml", []byte("max_length: 10\npacking: true\npacking_strategy: "+in+"\n"), "")
		if err != nil || !s.Packing || s.PackingStrategy != want {
			t.Errorf("packing_strategy %s: %+v %v", in, s, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ y, want string }{
		{"template: qwen3\ncutoff_len: long\n", "f.yaml:2: cutoff_len: \"long\" is not a whole number"},
		{"template: qwen3\nenable_thinking: maybe\n", "f.yaml:2: enable_thinking"},
		{"cutoff_len: 10\n", "template: LLaMA-Factory needs a template"},
		{"base_model: m\nexcess_length_strategy: keep\n", "excess_length_strategy"},
		{"max_length: 10\npacking_strategy: ffd\n", "f.yaml:2: packing_strategy: \"ffd\" is not bfd, bfd_split or wrapped"},
		{"base_model: m\neot_tokens: x\n", "f.yaml:2: eot_tokens: want a list of strings"},
		{"learning_rate: 1\n", "cannot tell the trainer"},
		{"- a\n", "a mapping"},
		{"template: [a]\n", "f.yaml:1: template: want a single value"},
		{"template: qwen3\nmask_history: true\ntrain_on_prompt: true\n", "incompatible"},
		// axolotl dataset keys of the wrong type, as its schema refuses them.
		{"base_model: m\ndatasets:\n  - path: x\n    roles: 5\n", "f.yaml:3: datasets: entry 0: roles: want a mapping of role to a list of names"},
		{"base_model: m\ndatasets:\n  - path: x\n    roles: {assistant: gpt}\n", "entry 0: roles: want a mapping"},
		{"base_model: m\ndatasets:\n  - path: x\n    roles_to_train: gpt\n", "entry 0: roles_to_train: want a list of roles"},
		{"base_model: m\ndatasets:\n  - path: x\n    drop_system_message: maybe\n", "drop_system_message: want true or false"},
		{"base_model: m\ndatasets:\n  - path: x\n    train_on_eos: maybe\n", "train_on_eos: want all, turn, last or none"},
		{"base_model: m\ndatasets:\n  - path: x\n    message_property_mappings: {role: [from]}\n", "message_property_mappings: want a mapping"},
		{"base_model: m\ndatasets:\n  - path: x\n    field_messages: [a]\n", "field_messages: want a string"},
	} {
		_, err := Parse("f.yaml", []byte(tc.y), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.y, err, tc.want)
		}
	}
}

func TestKeyListsHoldTheKeysRead(t *testing.T) {
	for _, tc := range []struct {
		list []string
		keys []string
	}{
		{llamafactoryKeys, []string{"model_name_or_path", "template", "cutoff_len", "tool_format", "default_system", "enable_thinking", "mask_history", "train_on_prompt", "packing", "neat_packing"}},
		{axolotlKeys, []string{"base_model", "tokenizer_config", "chat_template", "chat_template_jinja", "sequence_len", "excess_length_strategy", "datasets"}},
		{trlKeys, []string{"model_name_or_path", "max_length", "truncation_mode", "assistant_only_loss", "chat_template_path", "packing"}},
	} {
		for _, k := range tc.keys {
			found := false
			for _, l := range tc.list {
				found = found || l == k
			}
			if !found {
				t.Errorf("%s missing from its key list", k)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("template: qwen3\ncutoff_len: 10\n"))
	f.Add([]byte("base_model: m\ndatasets:\n  - type: chat_template\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("f", b, "")
		if err == nil && s.Kind == "" {
			t.Fatal("no kind")
		}
	})
}

func TestParseDatasetInfo(t *testing.T) {
	b := []byte(`{"hermes": {"file_name": "h.jsonl", "formatting": "sharegpt", "columns": {"messages": "conversations", "tools": "tools"},
	  "tags": {"observation_tag": "tool"}}, "alp": {"file_name": "a.json"}}`)
	a, err := ParseDatasetInfo("dataset_info.json", b, "hermes")
	if err != nil || a.Formatting != "sharegpt" || a.Observation != "tool" || a.Tool != "tools" || a.Messages != "conversations" || a.User != "" {
		t.Errorf("%+v %v", a, err)
	}
	if a, err := ParseDatasetInfo("dataset_info.json", b, "alp"); err != nil || a.Formatting != "alpaca" {
		t.Errorf("alpaca default: %+v %v", a, err)
	}
	if _, err := ParseDatasetInfo("dataset_info.json", b, "nope"); err == nil {
		t.Error("missing dataset: no error")
	}
}

// TestAxolotlLaxBools: drop_system_message as pydantic's lax mode reads a
// bool, so a config axolotl accepts is read the same.
func TestAxolotlLaxBools(t *testing.T) {
	for y, want := range map[string]bool{"true": true, "\"yes\"": true, "1": true, "\"off\"": false, "false": false} {
		s, err := Parse("f.yaml", []byte("base_model: m\ndatasets:\n  - path: x\n    drop_system_message: "+y+"\n"), "")
		if err != nil || s.Dataset.DropSystemMessage != want {
			t.Errorf("drop_system_message: %s: got %v, %v; want %v", y, s.Dataset.DropSystemMessage, err, want)
		}
	}
}
