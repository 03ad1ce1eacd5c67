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

// imageRun is what one compress run of the image tests reports: the
// tokens_before of each outcome line, the images section and the run
// block's rule, and stderr.
type imageRun struct {
	before           []int
	images, unknown  int
	rule, stderr     string
	metrics          string // the metrics file
	imagesPerRecord  []int
	totalBefore      int
	imagesSectionSet bool
}

// compressImages runs compress on in with args (a target no record
// reaches, so every record is skipped and its tokens_before is its count
// as read) and reads what it reported.
func compressImages(t *testing.T, in string, args ...string) imageRun {
	t.Helper()
	dir := t.TempDir()
	full := append([]string{"compress", "--quiet", "--input", in, "--output", filepath.Join(dir, "out.jsonl"),
		"--metrics", filepath.Join(dir, "m.json"), "--outcomes", filepath.Join(dir, "o.jsonl"), "--target-max-tokens", "1000000", "--summary-target-tokens", "100"}, args...)
	var stderr bytes.Buffer
	if code := run(context.Background(), full, nil, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("%v: exit %d: %s", full, code, stderr.String())
	}
	var r imageRun
	r.stderr, r.metrics = stderr.String(), filepath.Join(dir, "m.json")
	f, err := os.Open(filepath.Join(dir, "o.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var o struct {
			Before int `json:"tokens_before"`
			Images int `json:"images"`
		}
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		r.before = append(r.before, o.Before)
		r.imagesPerRecord = append(r.imagesPerRecord, o.Images)
	}
	b, err := os.ReadFile(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Tokens struct {
			TotalBefore int `json:"total_before"`
		} `json:"tokens"`
		Images *struct {
			Images  int `json:"images"`
			Unknown int `json:"images_unknown_size"`
		} `json:"images"`
		Run struct {
			ImageTokens string `json:"image_tokens"`
		} `json:"run"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	r.totalBefore, r.rule = m.Tokens.TotalBefore, m.Run.ImageTokens
	if m.Images != nil {
		r.imagesSectionSet, r.images, r.unknown = true, m.Images.Images, m.Images.Unknown
	}
	return r
}

// byteLevelTokenizer writes a Hugging Face tokenizer.json into dir: a
// byte-level BPE without merges (one token per byte), enough for a model
// directory whose other files are what a test is about.
func byteLevelTokenizer(t *testing.T, dir string) {
	t.Helper()
	// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the
	// others for U+0100 on.
	vocab := map[string]int{}
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			vocab[string(rune(b))] = b
		} else {
			vocab[string(rune(256+n))] = b
			n++
		}
	}
	tok := map[string]any{
		"version": "1.0", "added_tokens": []any{},
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": []any{}},
	}
	b, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each rule through the CLI on the real multimodal set
// (fixtures/multimodal/webvoyager: 8 records in LLaMA-Factory's layout,
// 3 "<image>" markers each, the images list naming 1024×768 PNG files
// relative to the set's directory), against the same run with flat:0
// (text alone), so the difference per record is its images' tokens:
//
//   - flat:85: 3 × 85 = 255;
//   - openai: a 1024×768 image at auto detail (none given) counts as
//     high: within 2048×2048, shortest side 768 already, ⌈1024/512⌉ ×
//     ⌈768/512⌉ = 4 tiles: 85 + 4 × 170 = 765; 3 × 765 = 2 295;
//   - auto with Qwen2.5-VL's preprocessor_config.json beside the
//     tokenizer (patch 14, merge 2, min_pixels 3 136, max_pixels
//     12 845 056): smart_resize(768, 1024, 28) rounds each side to a
//     multiple of 28: 768/28 = 27.43 → 756, 1024/28 = 36.57 → 1036
//     (756 × 1036 = 783 216, within the bounds); 54 × 74 patches, / 2² =
//     999 image pads, + <|vision_start|> and <|vision_end|> = 1 001;
//     3 × 1 001 = 3 003.
//
// The working directory is elsewhere: the images' paths resolve against
// the dataset file's directory, so every size is read (none unknown).
func TestCompressImageRules(t *testing.T) {
	root := repoRoot(t)
	in := filepath.Join(root, "fixtures", "multimodal", "webvoyager", "records.jsonl")
	t.Chdir(t.TempDir())
	check := func(name string, got, text imageRun, perRecord int) {
		t.Helper()
		if len(got.before) != 8 || len(text.before) != 8 {
			t.Fatalf("%s: %d and %d outcome lines, want 8", name, len(got.before), len(text.before))
		}
		for i := range got.before {
			if d := got.before[i] - text.before[i]; d != perRecord {
				t.Errorf("%s: record %d: images count %d tokens, want %d", name, i+1, d, perRecord)
			}
			if got.imagesPerRecord[i] != 3 {
				t.Errorf("%s: record %d: outcome line says %d images, want 3", name, i+1, got.imagesPerRecord[i])
			}
		}
		if !got.imagesSectionSet || got.images != 24 || got.unknown != 0 {
			t.Errorf("%s: images section %v: %d images, %d of unknown size; want 24, 0", name, got.imagesSectionSet, got.images, got.unknown)
		}
	}
	text := compressImages(t, in, "--image-tokens", "flat:0")
	if text.rule != "flat:0" {
		t.Errorf("run.image_tokens %q, want flat:0", text.rule)
	}
	flat := compressImages(t, in, "--image-tokens", "flat:85")
	check("flat:85", flat, text, 3*85)
	openai := compressImages(t, in, "--image-tokens", "openai")
	check("openai", openai, text, 3*765)
	if openai.rule != "openai" {
		t.Errorf("run.image_tokens %q, want openai", openai.rule)
	}
	// The default for the tiktoken encodings is OpenAI's rule, without a note.
	def := compressImages(t, in)
	check("auto (o200k_base)", def, text, 3*765)
	if def.rule != "openai" || def.stderr != "" {
		t.Errorf("default: rule %q, stderr %q", def.rule, def.stderr)
	}

	// auto: the Qwen2.5-VL rule from the preprocessor_config.json beside
	// the tokenizer.json.
	model := t.TempDir()
	byteLevelTokenizer(t, model)
	pp, err := os.ReadFile(filepath.Join(root, "imagetok", "testdata", "qwen2.5-vl-7b-instruct.preprocessor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(model, "preprocessor_config.json"), pp, 0o644); err != nil {
		t.Fatal(err)
	}
	qtext := compressImages(t, in, "--tokenizer", model, "--chat-template", "none", "--image-tokens", "flat:0")
	qwen := compressImages(t, in, "--tokenizer", model, "--chat-template", "none")
	check("auto (Qwen2.5-VL)", qwen, qtext, 3*1001)
	if want := "qwen(patch=14,merge=2,min_pixels=3136,max_pixels=12845056)"; qwen.rule != want || qwen.stderr != "" {
		t.Errorf("auto with a Qwen preprocessor config: rule %q (want %q), stderr %q", qwen.rule, want, qwen.stderr)
	}

	// The same config, tokenizer file and inputs with another
	// preprocessor_config.json (Qwen3-VL's): auto's rule changed, so check
	// refuses to compare the runs, by run.image_tokens alone.
	pp3, err := os.ReadFile(filepath.Join(root, "imagetok", "testdata", "qwen3-vl-8b-instruct.preprocessor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(model, "preprocessor_config.json"), pp3, 0o644); err != nil {
		t.Fatal(err)
	}
	qwen3 := compressImages(t, in, "--tokenizer", model, "--chat-template", "none")
	check("auto (Qwen3-VL)", qwen3, qtext, 3*770) // 768×1024 → 48×64 patches of 16 → 768 pads + 2
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"check", "--baseline", qwen.metrics, qwen3.metrics}, nil, &bytes.Buffer{}, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "run.image_tokens") || strings.Contains(stderr.String(), "config_fingerprint") {
		t.Errorf("check compared runs counted by two image rules: exit %d, %s", code, stderr.String())
	}

	// A model's tokenizer without a preprocessor_config.json: OpenAI's
	// rule, and a note saying so, once.
	textOnly := t.TempDir()
	byteLevelTokenizer(t, textOnly)
	ttext := compressImages(t, in, "--tokenizer", textOnly, "--chat-template", "none", "--image-tokens", "flat:0")
	tauto := compressImages(t, in, "--tokenizer", textOnly, "--chat-template", "none", "--image-tokens", "auto")
	check("auto (no preprocessor config)", tauto, ttext, 3*765)
	if n := strings.Count(tauto.stderr, "note: --image-tokens auto: "+textOnly+" has no preprocessor_config.json"); n != 1 || tauto.rule != "openai" {
		t.Errorf("auto without a preprocessor config: rule %q, the note %d times in %q", tauto.rule, n, tauto.stderr)
	}
	if ttext.stderr != "" {
		t.Errorf("an explicit rule still notes: %q", ttext.stderr)
	}

	// A preprocessor_config.json naming no image processor (a Whisper
	// feature extractor's): not Qwen's, OpenAI's rule with the note.
	whisper := t.TempDir()
	byteLevelTokenizer(t, whisper)
	if err := os.WriteFile(filepath.Join(whisper, "preprocessor_config.json"),
		[]byte(`{"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 80, "sampling_rate": 16000, "processor_class": "WhisperProcessor"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	twhisper := compressImages(t, in, "--tokenizer", whisper, "--chat-template", "none", "--image-tokens", "auto")
	check("auto (Whisper preprocessor config)", twhisper, ttext, 3*765)
	if twhisper.rule != "openai" || !strings.Contains(twhisper.stderr, "no image_processor_type (feature_extractor_type WhisperFeatureExtractor), whose rule trajcompress does not know") {
		t.Errorf("auto with a Whisper preprocessor config: rule %q, stderr %q", twhisper.rule, twhisper.stderr)
	}
}

// An image whose file is not beside the dataset (records.jsonl copied
// elsewhere) is of unknown size: counted by the rule's fallback (OpenAI's
// most for one image, 85 + 8 × 170 = 1 445) and in images_unknown_size.
// A run without images reports no images section and no rule.
func TestCompressImagesUnknownSize(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "fixtures", "multimodal", "webvoyager", "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The working directory holds the shots: a path resolved against it
	// would be found.
	t.Chdir(filepath.Join(root, "fixtures", "multimodal", "webvoyager"))
	text := compressImages(t, in, "--image-tokens", "flat:0")
	got := compressImages(t, in, "--image-tokens", "openai")
	for i := range got.before {
		if d := got.before[i] - text.before[i]; d != 3*1445 {
			t.Errorf("record %d: images count %d tokens, want 3 × 1445", i+1, d)
		}
	}
	if got.images != 24 || got.unknown != 24 || text.unknown != 24 {
		t.Errorf("images %d, of unknown size %d (flat:0: %d); want 24, 24, 24", got.images, got.unknown, text.unknown)
	}

	plain := filepath.Join(t.TempDir(), "plain.jsonl")
	if err := os.WriteFile(plain, []byte(`{"messages": [{"role": "user", "content": "hi <image>"}, {"role": "assistant", "content": "hello"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := compressImages(t, plain)
	if none.imagesSectionSet || none.rule != "" || none.imagesPerRecord[0] != 0 {
		t.Errorf("a record without images: section %v, rule %q, outcome images %d", none.imagesSectionSet, none.rule, none.imagesPerRecord[0])
	}
}

// A bad --image-tokens is a usage error naming the flag.
func TestCompressImageTokensRefused(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"messages": [{"role": "user", "content": "hi"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"qwen", "flat:", "flat:-3", "openai:high", "flat:1000001", "flat:2000000000000000000"} {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"compress", "--input", in, "--output", in + ".out", "--image-tokens", v}, nil, &bytes.Buffer{}, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "--image-tokens") || !strings.Contains(stderr.String(), "is auto or a rule") || !strings.Contains(stderr.String(), "flat:N") {
			t.Errorf("--image-tokens %s: exit %d, stderr %q", v, code, stderr.String())
		}
	}
}
