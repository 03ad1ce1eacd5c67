package jobcore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
)

// ImageTokensAuto is the tokenizer.image_tokens (--image-tokens) value
// that takes the rule from the tokenizer's model; "" means it too.
const ImageTokensAuto = "auto"

// preprocessorConfig is the file of a Hugging Face model that says how its
// processor prepares images.
const preprocessorConfig = "preprocessor_config.json"

// ImageRule is the rule images are counted by under spec
// (tokenizer.image_tokens) in a run counting text with tok:
//
//   - "openai" or "flat:N": that rule (imagetok.ParseRule);
//   - "" or "auto": the model's own rule (imagetok.LoadAuto: the first of
//     imagetok.Loaders that reads it, the Qwen2-VL family's) when the
//     directory of tok's model files (tokenize.ModelDir, where
//     --chat-template auto finds tokenizer_config.json) holds a
//     preprocessor_config.json a loader reads; OpenAI's rule otherwise.
//     For the built-in encodings (tiktoken's, OpenAI's models, and
//     chars4) that is the model's own rule and goes without a note; for a
//     model's tokenizer without a preprocessor_config.json (a text-only
//     model) or with one no loader reads, note says that images are
//     counted by OpenAI's rule and how to choose another.
//
// A preprocessor_config.json that cannot be read or parsed is an error.
func ImageRule(spec string, tok tokenize.Counter) (rule imagetok.Rule, note string, err error) {
	if spec != "" && spec != ImageTokensAuto {
		rule, err := imagetok.ParseRule(spec)
		if err != nil {
			return nil, "", usagef("tokenizer.image_tokens (--image-tokens): %v", err)
		}
		return rule, "", nil
	}
	dir := tokenize.ModelDir(tok)
	if dir == "" {
		return imagetok.OpenAI(), "", nil
	}
	path := filepath.Join(dir, preprocessorConfig)
	rule, err = imagetok.LoadAuto(path)
	switch {
	case err == nil:
		return rule, "", nil
	case errors.Is(err, fs.ErrNotExist):
		return imagetok.OpenAI(), fmt.Sprintf("--image-tokens auto: %s has no %s (a text-only model?): images are counted by OpenAI's rule (openai); pass --image-tokens flat:N or openai to choose", dir, preprocessorConfig), nil
	case errors.Is(err, imagetok.ErrUnknownProcessor):
		return imagetok.OpenAI(), fmt.Sprintf("--image-tokens auto: %v, whose rule trajcompress does not know: images are counted by OpenAI's rule (openai); pass --image-tokens flat:N or openai to choose", err), nil
	}
	return nil, "", usagef("tokenizer.image_tokens auto: %v (pass --image-tokens openai or flat:N to count images otherwise)", err)
}

// TemplateImages is how the chat template of c counts images under rule
// (trainview.ImagesOf): the image pad token is the model's
// (tokenizer_config.json beside its tokenizer.json, trainview.ImageToken),
// the template's placeholder's own when it has none. nil when the template does not mention
// images; package pipeline then adds the rule's tokens of each image to
// the templated count.
func TemplateImages(c *trainview.Counter, tok tokenize.Counter, rule imagetok.Rule) (*trainview.Images, error) {
	token := ""
	if dir := tokenize.ModelDir(tok); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
			token = trainview.ImageToken(b)
		}
	}
	return trainview.ImagesOf(c.Template, c.Tokens, rule, token)
}
