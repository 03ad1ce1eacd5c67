package trainview

import (
	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/tokenize"
)

// Counter counts a view as a trainer's tokenizer does:
// len(apply_chat_template(messages, tools=tools, tokenize=True,
// add_generation_prompt=False)), the rendered text tokenized with
// add_special_tokens=False and the special tokens in it as one token each
// (tokenize's tokenizer.json counters do both).
type Counter struct {
	Template *chattemplate.Template
	Tokens   tokenize.Counter
}

// Count renders v and counts the text's tokens; an error is the
// template's (its raise_exception message, wrapped in
// chattemplate.ErrTemplate) or a view it could not read.
func (c Counter) Count(v View) (int, error) {
	text, err := c.Template.Render(v.Messages, v.Tools)
	if err != nil {
		return 0, err
	}
	return c.Tokens.Count(text), nil
}
