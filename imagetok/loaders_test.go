package imagetok

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// otherProcessors are preprocessor_config.json shapes of families no
// loader reads (abridged to the fields that name them): each must be
// refused as an ErrUnknownProcessor, so that auto falls back with a note
// instead of failing the run.
var otherProcessors = map[string]string{
	"gemma3":   `{"image_processor_type": "Gemma3ImageProcessor", "processor_class": "Gemma3Processor", "size": {"height": 896, "width": 896}}`,
	"siglip":   `{"image_processor_type": "SiglipImageProcessor", "size": {"height": 384, "width": 384}}`,
	"llava":    `{"image_processor_type": "CLIPImageProcessor", "processor_class": "LlavaProcessor", "crop_size": {"height": 336, "width": 336}}`,
	"whisper":  `{"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 80}`,
	"internvl": `{"processor_class": "InternVLProcessor"}`,
	"empty":    `{}`,
}

// TestLoadersRefuseOthers: every loader refuses the configs of the other
// families as an ErrUnknownProcessor (a loader that fails them otherwise
// would end ParseAuto's search before the loader that reads them), and
// reads its own family's files.
func TestLoadersRefuseOthers(t *testing.T) {
	own := map[string][]string{"Qwen2-VL": {"testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json", "testdata/qwen3-vl-8b-instruct.preprocessor_config.json"}}
	for _, l := range Loaders() {
		files, ok := own[l.Name]
		if !ok {
			t.Errorf("loader %s: no preprocessor_config.json of its own in this test: add its files to own", l.Name)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if r, err := l.Parse(b); err != nil || r == nil {
				t.Errorf("loader %s on %s: %v, %v", l.Name, f, r, err)
			}
		}
		for name, cfg := range otherProcessors {
			if _, err := l.Parse([]byte(cfg)); !errors.Is(err, ErrUnknownProcessor) {
				t.Errorf("loader %s on a %s config: %v; want an ErrUnknownProcessor", l.Name, name, err)
			}
		}
	}
}

// TestParseAuto: the first loader that reads a config gives the rule (the
// Qwen2-VL family's a Processor with its placeholder); a config no loader
// reads is an ErrUnknownProcessor; a config of a known family with a
// field out of range is that family's error, not a fallback.
func TestParseAuto(t *testing.T) {
	r, err := LoadAuto("testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := r.(Processor)
	if !ok || p.Placeholder() != QwenPlaceholder() || r.String() != "qwen(patch=14,merge=2,min_pixels=3136,max_pixels=12845056)" {
		t.Errorf("LoadAuto(Qwen2.5-VL) = %s (processor %v); want the Qwen rule with its placeholder", r, ok)
	}
	for name, cfg := range otherProcessors {
		if _, err := ParseAuto([]byte(cfg)); !errors.Is(err, ErrUnknownProcessor) || !errors.Is(err, ErrNotQwen) {
			t.Errorf("%s: %v; want an ErrUnknownProcessor (ErrNotQwen's text)", name, err)
		}
	}
	_, err = ParseAuto([]byte(`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 0}`))
	if err == nil || errors.Is(err, ErrUnknownProcessor) || !strings.Contains(err.Error(), "patch_size") {
		t.Errorf("a Qwen config with patch_size 0: %v; want its range error", err)
	}
	if _, err := LoadAuto("testdata/missing.json"); err == nil || errors.Is(err, ErrUnknownProcessor) {
		t.Errorf("a missing file: %v; want a read error", err)
	}
}

// TestWithUnknown: the unknown count changes, nothing else does: exact
// counts, the name, and a processor's placeholder.
func TestWithUnknown(t *testing.T) {
	q := refConfigs["qwen2.5-vl"].Rule()
	fhd := Image{Width: 1920, Height: 1080}
	for _, r := range []Rule{Flat(85), OpenAI(), q} {
		u := WithUnknown(WithUnknown(r, 7), 9)
		want, _ := r.Tokens(fhd)
		if n, exact := u.Tokens(fhd); n != want || !exact {
			t.Errorf("%s: a known image counts %d, %v; want %d", r, n, exact, want)
		}
		if n, _ := u.Tokens(Image{}); u.Unknown() != 9 || (n != 9 && n != 85) {
			t.Errorf("%s: unknown %d, an unknown image %d; want 9", r, u.Unknown(), n)
		}
		if u.String() != r.String() {
			t.Errorf("%s: named %s", r, u)
		}
		_, was := r.(Processor)
		if p, is := u.(Processor); was != is || is && p.Placeholder() != r.(Processor).Placeholder() {
			t.Errorf("%s: processor %v after WithUnknown, %v before", r, is, was)
		}
	}
}
