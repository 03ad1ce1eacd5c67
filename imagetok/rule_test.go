package imagetok

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The published values of the model families (preprocessor_config.json),
// as testdata/gen_smart_resize.py names them.
var refConfigs = map[string]Qwen{
	"qwen2.5-vl":       {PatchSize: 14, MergeSize: 2, TemporalPatchSize: 2, MinPixels: 3136, MaxPixels: 12845056, Wrap: 2},
	"qwen2-vl-default": {PatchSize: 14, MergeSize: 2, TemporalPatchSize: 2, MinPixels: 56 * 56, MaxPixels: 28 * 28 * 1280, Wrap: 2},
	"qwen3-vl":         {PatchSize: 16, MergeSize: 2, TemporalPatchSize: 2, MinPixels: 65536, MaxPixels: 16777216, Wrap: 2},
	// max_pixels 128·28·28, as users pass to the processor: the floor
	// branch then takes max(factor, …) for the thin side of 28×5000.
	"qwen2.5-vl-max128": {PatchSize: 14, MergeSize: 2, TemporalPatchSize: 2, MinPixels: 3136, MaxPixels: 128 * 28 * 28, Wrap: 2},
}

// TestSmartResizeReference checks SmartResize and Qwen.Pads against the
// numbers transformers' own smart_resize computes
// (testdata/gen_smart_resize.py → testdata/smart_resize.tsv), including
// the round-half-to-even rows (1000×70: 70/28 = 2.5 rounds to 2; 14×2000:
// 14/28 = 0.5 rounds to 0 and takes the min_pixels branch), both beta
// branches, the floor branch's max(factor, …), the extreme aspect ratios
// and 1×1.
func TestSmartResizeReference(t *testing.T) {
	f, err := os.Open("testdata/smart_resize.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	rows := 0
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		q, ok := refConfigs[c[0]]
		if !ok {
			t.Fatalf("unknown config %q", c[0])
		}
		w, _ := strconv.Atoi(c[1])
		h, _ := strconv.Atoi(c[2])
		rh, rw, err := SmartResize(h, w, q.Factor(), q.MinPixels, q.MaxPixels)
		pads, perr := q.Pads(w, h)
		rows++
		if c[3] == "error" {
			if err == nil || perr == nil {
				t.Errorf("%s %dx%d: got %dx%d, want the aspect-ratio error", c[0], w, h, rw, rh)
			}
			continue
		}
		want := func(i int) int { v, _ := strconv.Atoi(c[i]); return v }
		if err != nil || rh != want(3) || rw != want(4) {
			t.Errorf("%s %dx%d: SmartResize = h %d, w %d, %v; transformers: h %d, w %d", c[0], w, h, rh, rw, err, want(3), want(4))
		}
		gw, gh, _ := q.Grid(w, h)
		if gh != want(5) || gw != want(6) || pads != want(7) {
			t.Errorf("%s %dx%d: grid %dx%d, %d pads; transformers: grid h %d w %d, %d pads", c[0], w, h, gw, gh, pads, want(5), want(6), want(7))
		}
		if tok, _ := q.Tokens(w, h); tok != want(7)+2 {
			t.Errorf("%s %dx%d: Tokens = %d, want pads %d + 2", c[0], w, h, tok, want(7))
		}
	}
	if rows < 40 {
		t.Fatalf("only %d reference rows", rows)
	}
}

// TestOpenAIPublished checks OpenAI's published examples and what follows
// from the same rule.
func TestOpenAIPublished(t *testing.T) {
	tests := []struct {
		w, h   int
		detail string
		want   int
	}{
		{1024, 1024, "high", 765},  // published: 768×768, 4 tiles
		{2048, 4096, "high", 1105}, // published: 1024×2048 → 768×1536, 6 tiles
		{4096, 8192, "low", 85},    // published
		{1920, 1080, "high", 1105}, // 1365×768: 3×2 tiles
		{1920, 1080, "auto", 1105}, // auto counts as high
		{1920, 1080, "", 1105},
		{1920, 1080, "LOW", 85},
		{512, 512, "high", 255}, // no upscaling: 1 tile
		{100, 100, "high", 255},
		{768, 2048, "high", OpenAIMaxHigh}, // 2×4 tiles, the maximum
		{1280, 720, "high", 1105},          // 3×2 tiles, not scaled
		{513, 512, "high", 425},            // 2×1 tiles
	}
	for _, tt := range tests {
		if got := OpenAITokens(tt.w, tt.h, tt.detail); got != tt.want {
			t.Errorf("OpenAITokens(%d, %d, %q) = %d, want %d", tt.w, tt.h, tt.detail, got, tt.want)
		}
	}
	if OpenAIMaxHigh != 1445 {
		t.Errorf("OpenAIMaxHigh = %d", OpenAIMaxHigh)
	}
}

func TestParseQwen(t *testing.T) {
	q25, err := LoadQwen("testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if q25 != refConfigs["qwen2.5-vl"] {
		t.Errorf("Qwen2.5-VL config = %+v", q25)
	}
	q3, err := LoadQwen("testdata/qwen3-vl-8b-instruct.preprocessor_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if q3 != refConfigs["qwen3-vl"] {
		t.Errorf("Qwen3-VL config = %+v", q3)
	}
	tests := []struct {
		in   string
		want Qwen
		err  string
	}{
		{`{"image_processor_type": "Qwen2VLImageProcessor"}`, refConfigs["qwen2-vl-default"], ""},
		{`{"image_processor_type": "Qwen2VLImageProcessorFast", "size": {"shortest_edge": 100, "longest_edge": 1000}, "max_pixels": 5000}`, Qwen{14, 2, 2, 100, 5000, 2}, ""},
		// No image_processor_type: a Qwen2-VL family processor_class names it.
		{`{"processor_class": "Qwen2_5_VLProcessor", "min_pixels": 10, "max_pixels": 20, "patch_size": 16, "merge_size": 4}`, Qwen{16, 4, 2, 10, 20, 2}, ""},
		{`{"processor_class": "Qwen3VLProcessor"}`, refConfigs["qwen2-vl-default"], ""},
		{`{"image_processor_type": "CLIPImageProcessor"}`, Qwen{}, "not a Qwen2-VL"},
		{`{"image_processor_type": "Qwen2VLImageProcessorSlow"}`, Qwen{}, "not a Qwen2-VL"},
		{`{"image_processor_type": "Glm4vImageProcessor", "processor_class": "Qwen2VLProcessor"}`, Qwen{}, "not a Qwen2-VL"},
		// No image processor named: not taken as Qwen.
		{`{}`, Qwen{}, "no image_processor_type"},
		{`{"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 80, "sampling_rate": 16000, "processor_class": "WhisperProcessor"}`, Qwen{}, "feature_extractor_type WhisperFeatureExtractor"},
		{`{"feature_extractor_type": "CLIPFeatureExtractor", "size": 224, "crop_size": 224}`, Qwen{}, "not a Qwen2-VL"},
		{`{"processor_class": "LlavaProcessor", "min_pixels": 10, "max_pixels": 20}`, Qwen{}, "processor_class LlavaProcessor"},
		{`{"image_processor_type": "Qwen2VLImageProcessor", "size": {"height": 336, "width": 336}}`, Qwen{}, "shortest_edge"},
		{`{"image_processor_type": "Qwen2VLImageProcessor", "size": {"longest_edge": 5000}, "max_pixels": 6000}`, Qwen{}, "shortest_edge"},
		// An older saved config: size keyed by min/max_pixels, with both beside it.
		{`{"image_processor_type": "Qwen2VLImageProcessor", "size": {"min_pixels": 3136, "max_pixels": 12845056}, "min_pixels": 3136, "max_pixels": 12845056}`, refConfigs["qwen2.5-vl"], ""},
		{`{"image_processor_type": "Qwen2VLImageProcessor", "min_pixels": 100, "max_pixels": 10}`, Qwen{}, "is below min_pixels"},
		{`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 0}`, Qwen{}, "patch_size is 0: want a whole number from 1"},
		{`[`, Qwen{}, "unexpected end"},
	}
	for _, tt := range tests {
		q, err := ParseQwen([]byte(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseQwen(%s) = %+v, %v; want error %q", tt.in, q, err, tt.err)
			}
			continue
		}
		if err != nil || q != tt.want {
			t.Errorf("ParseQwen(%s) = %+v, %v; want %+v", tt.in, q, err, tt.want)
		}
	}
	for _, in := range []string{`{"image_processor_type": "SiglipImageProcessor"}`, `{"feature_extractor_type": "WhisperFeatureExtractor"}`} {
		if _, err := ParseQwen([]byte(in)); !errors.Is(err, ErrNotQwen) {
			t.Errorf("not a Qwen config %s: %v", in, err)
		}
	}
	if _, err := LoadQwen("testdata/missing.json"); err == nil {
		t.Error("LoadQwen of a missing file: no error")
	}
}

func TestRuleTokens(t *testing.T) {
	q25 := refConfigs["qwen2.5-vl"].Rule()
	fhd := Image{Width: 1920, Height: 1080}
	unknown := Image{}
	tests := []struct {
		r     Rule
		im    Image
		want  int
		exact bool
	}{
		{Flat(85), fhd, 85, true},
		{Flat(85), unknown, 85, true},
		{OpenAI(), fhd, 1105, true},
		{OpenAI(), unknown, 1445, false},
		{OpenAI(), Image{Detail: "low"}, 85, true},
		{WithUnknown(OpenAI(), 765), unknown, 765, false},
		{q25, fhd, 2691 + 2, true},
		{q25, unknown, 12845056/(28*28) + 2, false},
		{q25, Image{Width: 1, Height: 500}, 16384 + 2, false}, // aspect ratio 500: refused by the processor
		{refConfigs["qwen3-vl"].Rule(), fhd, 2040 + 2, true},
	}
	for _, tt := range tests {
		n, exact := tt.r.Tokens(tt.im)
		if n != tt.want || exact != tt.exact {
			t.Errorf("%s.Tokens(%dx%d %q) = %d, %v; want %d, %v", tt.r, tt.im.Width, tt.im.Height, tt.im.Detail, n, exact, tt.want, tt.exact)
		}
	}
	for _, s := range []string{"flat:0", "flat:85", "flat:1000000", "openai"} {
		r, err := ParseRule(s)
		if err != nil || r.String() != s {
			t.Errorf("ParseRule(%q) = %s, %v", s, r, err)
		}
	}
	for _, s := range []string{"flat:", "flat:-1", "flat:x", "auto", "qwen", "", "flat:1000001", "flat:2000000000000000000", "flat:99999999999999999999"} {
		if _, err := ParseRule(s); err == nil {
			t.Errorf("ParseRule(%q): no error", s)
		}
	}
}
