package chattemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Find returns the chat template of the model directory dir (the one
// holding its tokenizer.json) as transformers finds it: chat_template.jinja
// if there is one, else tokenizer_config.json when its chat_template is set.
// It returns "" (and no error) when the directory has neither; an
// unreadable or invalid tokenizer_config.json is an error naming it.
func Find(dir string) (string, error) {
	p := filepath.Join(dir, "chat_template.jinja")
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p, nil
	}
	p = filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if raw := bytes.TrimSpace(cfg.ChatTemplate); len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	return p, nil
}
