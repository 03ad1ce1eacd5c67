// Package trl holds what TRL's SFTTrainer does to a chat template before it
// trains with assistant_only_loss: it swaps a template it knows, byte for
// byte, for its training variant (trl/chat_template_utils.py,
// get_training_chat_template, at commit f2cd5771). Only Qwen3's pair is
// held (templates/, copied from TRL with its licence named in the README
// beside them); any other template without {% generation %} markers is one
// TRL refuses to train with assistant_only_loss.
//
// Contract: pure (the templates are embedded); it imports no package of
// this module.
package trl

import (
	_ "embed" // the templates
	"errors"
	"regexp"
)

//go:embed templates/qwen3.jinja
var qwen3 string

//go:embed templates/qwen3_training.jinja
var qwen3Training string

// ErrNoTrainingTemplate is TRL's refusal of a template it cannot patch.
var ErrNoTrainingTemplate = errors.New("TRL: the chat template is not training-compatible (missing prefix-preservation or `{% generation %}` markers) and patching is not supported for this template")

// generation matches a {% generation %} tag.
var generation = regexp.MustCompile(`\{%-?\s*generation\s*-?%\}`)

// TrainingTemplate returns the template TRL renders with under
// assistant_only_loss for a model whose template is source: source itself
// when it already marks the trained part ({% generation %}), TRL's
// training variant when source is one TRL knows (named by name), or
// ErrNoTrainingTemplate.
func TrainingTemplate(source string) (training, name string, err error) {
	if generation.MatchString(source) {
		return source, "", nil
	}
	if source == qwen3 {
		return qwen3Training, "trl/chat_templates/qwen3_training.jinja", nil
	}
	return "", "", ErrNoTrainingTemplate
}
