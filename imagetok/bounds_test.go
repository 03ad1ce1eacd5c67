package imagetok

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// The numbers of a preprocessor_config.json are range-checked at load,
// each refusal naming the field, so that no config can make counting
// divide by zero (patch_size × merge_size overflowing to a multiple of
// 2^64 made MaxTokens panic) or make an image's count wrap negative
// (max_pixels near 2^63 with a huge image). The table is the one in
// docs/images.md.
func TestParseQwenBounds(t *testing.T) {
	const head = `{"image_processor_type": "Qwen2VLImageProcessor"`
	cases := []struct {
		fields string
		err    string // "" accepted
	}{
		{``, ``}, // transformers' defaults
		{`, "patch_size": 16, "merge_size": 2, "size": {"shortest_edge": 65536, "longest_edge": 16777216}`, ``}, // Qwen3-VL
		{`, "patch_size": 65536, "merge_size": 65536`, `patch_size is 65536: want a whole number from 1 to 1024`},
		{`, "patch_size": 1, "merge_size": 4294967296`, `merge_size is 4294967296: want a whole number from 1 to 64`},
		{`, "patch_size": 4294967296`, `patch_size is 4294967296`},
		{`, "merge_size": 0`, `merge_size is 0`},
		{`, "temporal_patch_size": -1`, `temporal_patch_size is -1`},
		{`, "max_pixels": 9223372036854775807`, `max_pixels (size.longest_edge) is 9223372036854775807: want a whole number from 1 to 68719476736`},
		{`, "min_pixels": -5`, `min_pixels (size.shortest_edge) is -5`},
		{`, "min_pixels": 100, "max_pixels": 50`, `max_pixels (size.longest_edge) 50 is below min_pixels (size.shortest_edge) 100`},
		{`, "patch_size": 1, "merge_size": 1, "max_pixels": 68719476736`, `is 68719476736 tokens for one image, over the limit of 16777216`},
		{`, "patch_size": 1, "merge_size": 1, "min_pixels": 1, "max_pixels": 16777216`, ``}, // the most one image may cost
	}
	for _, c := range cases {
		q, err := ParseQwen([]byte(head + c.fields + `}`))
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.fields, err)
				continue
			}
			if n := q.MaxTokens(); n < 1 || n > 2*MaxImageTokens {
				t.Errorf("%s: MaxTokens %d", c.fields, n)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line containing %q", c.fields, err, c.err)
		}
	}
}

// At the extremes a config may have, every image size a header can
// declare counts between 1 and MaxTokens, itself under twice
// MaxImageTokens: no product wraps, and MaxTokens (what an image of
// unknown size counts) is the most an image can cost.
func TestQwenTokensAtTheExtremes(t *testing.T) {
	configs := []Qwen{
		{PatchSize: 1, MergeSize: 1, TemporalPatchSize: 1, MinPixels: 1, MaxPixels: MaxImageTokens, Wrap: 2},
		{PatchSize: 1, MergeSize: 1, TemporalPatchSize: 1, MinPixels: MaxImageTokens, MaxPixels: MaxImageTokens, Wrap: 2},
		{PatchSize: MaxPatchSize, MergeSize: MaxMergeSize, TemporalPatchSize: MaxMergeSize, MinPixels: 1, MaxPixels: MaxImagePixels, Wrap: 2},
		{PatchSize: MaxPatchSize, MergeSize: MaxMergeSize, TemporalPatchSize: 1, MinPixels: MaxImagePixels, MaxPixels: MaxImagePixels, Wrap: 2},
		{PatchSize: 14, MergeSize: 2, TemporalPatchSize: 2, MinPixels: 3136, MaxPixels: 12845056, Wrap: 2},
	}
	sides := []int{1, 2, 199, 200, 201, 1 << 15, 1<<16 - 1, 1 << 24, 1<<31 - 1}
	for _, q := range configs {
		if err := q.check(); err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		for _, w := range sides {
			for _, h := range sides {
				r := q.Rule()
				n, exact := r.Tokens(Image{Width: w, Height: h})
				if n < 1 || n > q.MaxTokens() || n > 2*MaxImageTokens {
					t.Errorf("%s %dx%d: %d tokens (exact %v), max %d", r, w, h, n, exact, q.MaxTokens())
				}
			}
		}
	}
	if n := OpenAITokens(math.MaxInt32, math.MaxInt32, "high"); n != OpenAILow+4*OpenAITile {
		t.Errorf("OpenAI, 2^31-1 squared: %d", n)
	}
}

// FuzzParseQwen: on any bytes ParseQwen never panics; a config it accepts
// is within the bounds, and counts any header size between 1 and its
// MaxTokens.
func FuzzParseQwen(f *testing.F) {
	f.Add([]byte(`{"image_processor_type": "Qwen2VLImageProcessor"}`), 1920, 1080)
	f.Add([]byte(`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 65536, "merge_size": 65536}`), 7, 7)
	f.Add([]byte(`{"image_processor_type": "Qwen2VLImageProcessorFast", "size": {"shortest_edge": 1, "longest_edge": 9223372036854775807}}`), math.MaxInt32, math.MaxInt32)
	f.Add([]byte(`{"processor_class": "Qwen2_5_VLProcessor", "min_pixels": 1e3, "max_pixels": 1.5}`), 1, 1)
	f.Fuzz(func(t *testing.T, b []byte, w, h int) {
		q, err := ParseQwen(b)
		if err != nil {
			return
		}
		if err := q.check(); err != nil {
			t.Fatalf("accepted out of bounds: %v", err)
		}
		max := q.MaxTokens()
		if max < 1 || max > 2*MaxImageTokens {
			t.Fatalf("%+v: MaxTokens %d", q, max)
		}
		if w <= 0 || h <= 0 || w > math.MaxInt32 || h > math.MaxInt32 {
			return // headers hold 31 bits at most (PNG), 16 (JPEG, GIF) or 24 (WebP)
		}
		n, _ := q.Rule().Tokens(Image{Width: w, Height: h})
		if n < 1 || n > max {
			t.Fatalf("%+v, %dx%d: %d tokens, max %d", q, w, h, n, max)
		}
	})
}

// ExampleParseQwen shows a refusal: one line naming the field.
func ExampleParseQwen() {
	_, err := ParseQwen([]byte(`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 65536}`))
	fmt.Println(err)
	// Output: patch_size is 65536: want a whole number from 1 to 1024
}
