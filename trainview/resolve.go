package trainview

import (
	"fmt"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/tokenize"
)

// The values of tokenizer.chat_template (--chat-template) besides a path.
const (
	TemplateAuto = "auto" // the tokenizer's own template
	TemplateNone = "none" // count turns one by one (tokenizer.turn_overhead)
)

// Resolve returns the chat template that spec (tokenizer.chat_template)
// names for a run counting with tok, or nil for none:
//
//   - "none": none;
//   - "" (the default): the template of tok's model directory when it has
//     one (chattemplate.Find: chat_template.jinja beside tokenizer.json,
//     else tokenizer_config.json's chat_template), else none, as for the
//     tiktoken encodings;
//   - "auto": the same, but a tokenizer without a template is an error;
//   - a path: that .jinja or tokenizer_config.json (a .jinja without a
//     tokenizer_config.json beside it takes the special tokens of tok's).
func Resolve(spec string, tok tokenize.Counter) (*chattemplate.Template, error) {
	info := tokenize.Describe(tok)
	dir := tokenize.ModelDir(tok)
	switch spec {
	case TemplateNone:
		return nil, nil
	case "", TemplateAuto:
		if dir == "" {
			if spec == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("tokenizer.chat_template auto: tokenizer %s is not a Hugging Face model's and has no chat template: give a .jinja or tokenizer_config.json path, or none", info.Name)
		}
		path, err := chattemplate.Find(dir)
		if err != nil {
			return nil, fmt.Errorf("tokenizer.chat_template %s: %w", TemplateAuto, err)
		}
		if path == "" {
			if spec == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("tokenizer.chat_template auto: %s holds neither chat_template.jinja nor a tokenizer_config.json with a chat_template: give a path, or none", dir)
		}
		t, err := chattemplate.LoadFor(path, dir)
		if err != nil {
			return nil, fmt.Errorf("tokenizer.chat_template: %w", err)
		}
		return t, nil
	}
	t, err := chattemplate.LoadFor(spec, dir)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.chat_template %s: %w", spec, err)
	}
	return t, nil
}
