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

// validate --max-length lists the records over N tokens once the chat
// template renders them (with their tools), with their count.
func TestValidateMaxLength(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte(`{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}{% if tools %}{{ tools | tojson }}{% endif %}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	long := strings.Repeat("word ", 40)
	recs := []string{
		`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`,
		`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "` + long + `"}]}`,
		`{"conversations": [{"from": "human", "value": "hi"}], "tools": "[{\"name\": \"` + strings.Repeat("f", 200) + `\"}]"}`,
	}
	if err := os.WriteFile(in, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"validate", "--tokenizer", "o200k_base", "--chat-template", tmpl, "--max-length", "30", in}, nil, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitError, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], in+":2: ") || !strings.HasPrefix(lines[1], in+":3: ") ||
		!strings.Contains(lines[0], "tokens once templated, over --max-length 30 by") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "3 records: 1 accepted, 2 would be rejected (2 over --max-length 30 once templated by "+tmpl+")") {
		t.Errorf("stderr: %s", stderr.String())
	}

	// auto with a tokenizer that has no template is a usage error.
	stderr.Reset()
	code = run(context.Background(), []string{"validate", "--tokenizer", "o200k_base", "--max-length", "30", in}, nil, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "has no chat template") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
}

// compress --chat-template PATH counts records templated, names the
// template and its SHA-256 in the run block, and check refuses to compare
// it with a run counted otherwise.
func TestCompressChatTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte(`{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	compress := func(name string, extra ...string) map[string]any {
		var stderr bytes.Buffer
		args := append([]string{"compress", "--quiet", "--input", in, "--output", filepath.Join(dir, name+".jsonl"), "--metrics", filepath.Join(dir, name+"_metrics.json")}, extra...)
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, name+"_metrics.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := compress("plain")
	tm := compress("tmpl", "--chat-template", tmpl)
	run0 := tm["run"].(map[string]any)
	if run0["chat_template"] != tmpl || len(run0["chat_template_sha256"].(string)) != 64 {
		t.Errorf("run block: chat_template %v, sha256 %v", run0["chat_template"], run0["chat_template_sha256"])
	}
	if _, ok := plain["run"].(map[string]any)["chat_template"]; ok {
		t.Errorf("a run without a template names one")
	}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"check", "--baseline", filepath.Join(dir, "plain_metrics.json"), filepath.Join(dir, "tmpl_metrics.json")}, nil, &bytes.Buffer{}, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "run.chat_template_sha256") {
		t.Errorf("check compared runs counted with and without a template: exit %d, %s", code, stderr.String())
	}
}

// compress with a template that refuses one record as read and another
// once compressed (it will not render a summary turn): both are written
// unchanged, in place, their outcome lines carry the template's message,
// and the metrics count them under uncompressible, reason chat_template;
// the exit code says some records failed to fit, nothing crashed.
func TestCompressTemplateRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte(`{% for m in messages %}{% if m.role == 'user' and 'forbidden' in m.content %}{{ raise_exception('no forbidden words') }}{% endif %}{% if m.content.startswith('[CONTEXT SUMMARY]') %}{{ raise_exception('no summary turns here') }}{% endif %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}`), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("alpha beta gamma delta ", 60)
	var turns []string
	for i := 0; i < 12; i++ {
		role := []string{"user", "assistant"}[i%2]
		turns = append(turns, `{"role": "`+role+`", "content": "turn `+string(rune('a'+i))+` `+long+`"}`)
	}
	compressible := `{"messages": [` + strings.Join(turns, ", ") + `]}`
	recs := []string{
		compressible,
		`{"messages": [{"role": "user", "content": "a forbidden word"}, {"role": "assistant", "content": "ok"}]}`,
		`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`,
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, outcomes, met := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "outcomes.jsonl"), filepath.Join(dir, "m.json")
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out, "--outcomes", outcomes, "--metrics", met,
		"--chat-template", tmpl, "--target-max-tokens", "1500", "--summary-target-tokens", "100"}, nil, &bytes.Buffer{}, &stderr)
	if code != exitOK && code != exitPartial {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.Join(recs, "\n")+"\n" {
		t.Errorf("output is not the input unchanged:\n%s", got)
	}
	ob, err := os.ReadFile(outcomes)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ob)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d outcome lines, want 3:\n%s", len(lines), ob)
	}
	for i, want := range []string{"once compressed: chat template: no summary turns here", "chat template: no forbidden words", ""} {
		var o struct {
			Outcome string  `json:"outcome"`
			Reason  *string `json:"reason"`
			Err     string  `json:"chat_template_error"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &o); err != nil {
			t.Fatal(err)
		}
		if want == "" {
			if o.Outcome != "skipped_under_target" || o.Err != "" {
				t.Errorf("record %d: %s", i+1, lines[i])
			}
			continue
		}
		if o.Outcome != "uncompressible" || o.Reason == nil || *o.Reason != "chat_template" || !strings.Contains(o.Err, want) {
			t.Errorf("record %d: %s; want uncompressible, chat_template, %q", i+1, lines[i], want)
		}
	}
	mb, err := os.ReadFile(met)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Outcomes struct {
			Uncompressible int64 `json:"uncompressible"`
			Reasons        struct {
				ChatTemplate int64 `json:"chat_template"`
			} `json:"uncompressible_reasons"`
			RecordsOut int64 `json:"records_out"`
		} `json:"outcomes"`
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	if o := m.Outcomes; o.Uncompressible != 2 || o.Reasons.ChatTemplate != 2 || o.RecordsOut != 3 {
		t.Errorf("metrics outcomes %+v: want 2 uncompressible, 2 chat_template, 3 out", o)
	}
}

// A run is not joined (a shard, a resume) under a chat template whose file
// changed under the same --chat-template setting: the records would be
// counted by two templates in one output.
func TestShardRefusesChangedChatTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	src := "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
	if err := os.WriteFile(tmpl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	line := `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}` + "\n"
	if err := os.WriteFile(in, []byte(strings.Repeat(line, 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	shard := func(i string) (int, string) {
		var stderr bytes.Buffer
		args := []string{"compress", "--quiet", "--input", in, "--output", filepath.Join(dir, "out.jsonl"), "--chat-template", tmpl,
			"--target-task-size", "1", "--shard", i, "--num-shards", "2"}
		code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr)
		return code, stderr.String()
	}
	if code, stderr := shard("0"); code != exitOK {
		t.Fatalf("shard 0: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(tmpl, []byte(src+"{# changed #}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := shard("1"); code == exitOK || !strings.Contains(stderr, "the chat template differs") {
		t.Fatalf("shard 1 under a changed template: exit %d: %s; want a refusal naming the chat template", code, stderr)
	}
}

// A template using selectattr without a test (which made the engine slice
// past its arguments and panic, crashing compress and validate
// once) renders every record: compress counts them all and writes them,
// validate --max-length measures them. chattemplate's
// TestSelectattrTemplateRenders and testdata/strict.jsonl check the text
// against jinja2; a panic that remains anywhere in the engine is the
// template's error (chattemplate's TestRenderPanicIsTemplateError), which
// TestCompressTemplateRefusals shows reported, counted and written unchanged.
func TestCompressSelectattrTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{%- for m in messages | selectattr('content') %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := []string{
		`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}, {"role": "assistant", "content": "hello"}]}`,
		`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "` + strings.Repeat("word ", 40) + `"}]}`,
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, outcomes := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "outcomes.jsonl")
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out, "--outcomes", outcomes,
		"--metrics", filepath.Join(dir, "m.json"), "--tokenizer", "o200k_base", "--chat-template", tmpl}, nil, &bytes.Buffer{}, &stderr)
	if code != exitOK {
		t.Fatalf("compress: exit %d: %s", code, stderr.String())
	}
	ob, err := os.ReadFile(outcomes)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ob)), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d outcome lines, want %d:\n%s", len(lines), len(recs), ob)
	}
	for i, l := range lines {
		if strings.Contains(l, "chat_template") || !strings.Contains(l, `"outcome":"skipped_under_target"`) {
			t.Errorf("record %d: %s", i+1, l)
		}
	}

	var stdout bytes.Buffer
	stderr.Reset()
	code = run(context.Background(), []string{"validate", "--tokenizer", "o200k_base", "--chat-template", tmpl, "--max-length", "30", in}, nil, &stdout, &stderr)
	if code != exitError || !strings.HasPrefix(stdout.String(), in+":2: ") || strings.Count(stdout.String(), "\n") != 1 {
		t.Fatalf("validate: exit %d, stdout %s, stderr %s", code, stdout.String(), stderr.String())
	}
}
