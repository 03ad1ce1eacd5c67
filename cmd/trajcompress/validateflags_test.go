package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate takes compress's settings from the same option groups, and
// honours them as compress does: the render bound of the chat template
// (a record whose render takes more steps is refused as the template's),
// and the checks of config (a bad --image-tokens, a --template without a
// trainer) are usage errors naming the flag.
func TestValidateSharedSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{% for m in messages %}{% for i in range(100) %}{{ m.content }}{% endfor %}{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	validate := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"validate", "--tokenizer", "o200k_base", "--chat-template", tmpl}, args...), nil, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, _, stderr := validate("--max-length", "100000", in); code != exitOK {
		t.Fatalf("without a bound: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := validate("--max-length", "100000", "--chat-template-max-steps", "50", in)
	if code != exitError || !strings.Contains(stdout, "template exceeded 50 steps") || !strings.Contains(stderr, "1 refused by the template") {
		t.Errorf("--chat-template-max-steps 50: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--max-length", "10", "--image-tokens", "flat:-1"}, []string{"--image-tokens", "flat:N needs a whole number"}},
		{[]string{"--max-length", "10", "--template", "qwen3"}, []string{"--template", "--trainer"}},
	} {
		code, _, stderr := validate(append(tc.args, in)...)
		for _, w := range tc.want {
			if code != exitUsage || !strings.Contains(stderr, w) {
				t.Errorf("%v: exit %d, want %d and %q: %s", tc.args, code, exitUsage, w, stderr)
			}
		}
	}
}

// A trainer whose config names no model (--trainer alone, or a config
// without one) needs --tokenizer: validate does not judge its rows by the
// default tokenizer's counts, which are no model's.
func TestValidateTrainerNeedsTokenizer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"validate", "--trainer", "llamafactory", "--template", "qwen3", "--max-length", "100", in}, nil, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "--trainer needs --tokenizer") {
		t.Errorf("--trainer without --tokenizer: exit %d, want %d: %s%s", code, exitUsage, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"validate", "--trainer", "llamafactory", "--template", "qwen3", "--tokenizer", "o200k_base", "--max-length", "100", in}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Errorf("with --tokenizer: exit %d: %s%s", code, stdout.String(), stderr.String())
	}
}
