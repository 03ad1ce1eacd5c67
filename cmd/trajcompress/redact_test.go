package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompressRedactionKeepsArgumentsJSON: with the default settings
// (redaction on), a tool call's arguments that hold a secret inside
// escaped quotes stay valid JSON of the same keys (once the JWT rule
// ate the backslash of \" and the arguments were no longer JSON).
func TestCompressRedactionKeepsArgumentsJSON(t *testing.T) {
	t.Parallel()
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	commands := []string{
		`curl -H "Authorization: Bearer ` + jwt + `" https://api.example.com/v1/me`,
		`TOKEN="` + jwt + `\\"; curl -d "{\"token\": \"` + jwt + `\"}" https://x.io`,
	}
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	var lines bytes.Buffer
	for _, cmd := range commands {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		rec := map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "call the API"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "c1", "type": "function", "function": map[string]any{"name": "bash", "arguments": string(args)}}}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": "{\"status\": 200}"},
			map[string]any{"role": "assistant", "content": "done"},
		}}
		b, _ := json.Marshal(rec)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	if err := os.WriteFile(in, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out}, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var rec struct {
			Messages []struct {
				ToolCalls []struct {
					Function struct{ Arguments string }
				} `json:"tool_calls"`
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d not JSON: %v: %s", n, err, sc.Bytes())
		}
		args := rec.Messages[1].ToolCalls[0].Function.Arguments
		var v map[string]string
		if err := json.Unmarshal([]byte(args), &v); err != nil || len(v) != 1 || v["command"] == "" {
			t.Errorf("line %d: arguments no longer the same JSON (%v): %s", n, err, args)
		}
		if strings.Contains(args, jwt) || !strings.Contains(args, "[REDACTED:jwt]") {
			t.Errorf("line %d: JWT not redacted: %s", n, args)
		}
	}
	if n != len(commands) {
		t.Fatalf("%d lines out, want %d", n, len(commands))
	}
}
