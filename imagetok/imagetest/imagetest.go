// Package imagetest makes trajectories holding a big inline screenshot,
// for the memory benchmarks of images (pipeline's BenchmarkCompressImage,
// cmd/trajcompress's BenchmarkCompressImageFile and bench/imgmem's peak
// RSS of the CLI): one 20 MiB PNG as base64, in an OpenAI image_url data:
// URL or an Anthropic base64 image block. It imports nothing of ours.
package imagetest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"strings"
	"sync"
)

// BigPNG is a real PNG of 20.0 MiB (2560×2731 RGB noise, stored without
// compression: noise does not compress, and screenshots of photos barely
// do), made once and shared: callers must not modify it.
var BigPNG = sync.OnceValue(func() []byte {
	const w, h = 2560, 2731
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(img.Pix); i += 4 {
		v := r.Uint32()
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 0xff
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// ImageLen is the length of BigPNG as base64: the bytes of the image in a
// record (the data: URL's or the block's data string).
func ImageLen() int { return base64.StdEncoding.EncodedLen(len(BigPNG())) }

// smallPNG is a 64×48 grey PNG.
var smallPNG = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 64, 48))); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// The layouts of an image part.
const (
	OpenAI    = "openai"    // {"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}
	Anthropic = "anthropic" // {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "…"}}
)

// Part is a content part holding the PNG p in layout (OpenAI or
// Anthropic).
func Part(p []byte, layout string) map[string]any {
	data := base64.StdEncoding.EncodeToString(p)
	if layout == Anthropic {
		return map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": data}}
	}
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + data}}
}

// Record is an OpenAI-dialect browsing run as one JSON line (no newline),
// id as given: a system turn, then user observations and assistant
// actions alternating, 14 turns in all, each user and assistant text 80
// words (about 80 tokens under o200k_base, 80 under a counter of a token
// per four bytes). With old false, BigPNG is in the last turn (a user
// observation: the protected tail); with old true, it is in turn 3 (the
// middle) and a 64×48 screenshot is in the last turn, so that BigPNG is
// an old image that the image step removes. With layout "" the record is
// the same without its image parts (the text only).
func Record(id, layout string, old bool) []byte {
	text := func(w string) string { return strings.TrimSpace(strings.Repeat(w+" ", 80)) }
	page := map[string]any{"type": "text", "text": text("page")}
	msgs := []map[string]any{{"role": "system", "content": "You browse the web."}}
	for i := 1; i < 14; i++ {
		if i%2 == 0 {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": text("act")})
			continue
		}
		var content any = text("obs")
		switch {
		case layout == "":
		case i == 3 && old:
			content = []any{page, Part(BigPNG(), layout)}
		case i == 13 && old:
			content = []any{page, Part(smallPNG(), layout)}
		case i == 13:
			content = []any{page, Part(BigPNG(), layout)}
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": content})
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"id": id, "messages": msgs}); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// Case is one of the three cases the memory benchmarks run: records of
// Record(id, layout, Old) compressed with Args (flags of trajcompress
// compress, the default o200k_base tokenizer and deterministic
// summarizer), each with outcome Outcome, and the big image removed when
// Old.
type Case struct {
	Name    string
	Old     bool
	Args    []string
	Outcome string
}

// Cases are the benchmarks' cases: under target (written as read); over
// target with the image in the protected tail (a region of the middle
// summarised, the image kept); over target with the image in the middle,
// removed by --drop-old-images (the record then fits with no summary).
// The records count 1 810 tokens (openai rule: 765 for the image), 2 065
// with the small screenshot.
var Cases = []Case{
	{"skipped", false, []string{"--target-max-tokens", "100000"}, "skipped_under_target"},
	{"compressed", false, []string{"--target-max-tokens", "1500", "--summary-target-tokens", "100"}, "compressed"},
	{"dropped", true, []string{"--target-max-tokens", "1500", "--drop-old-images"}, "compressed"},
}

// File is n records of Record in layout, ids r1…rn, as JSON Lines.
func File(layout string, old bool, n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, Record("r"+string(rune('1'+i)), layout, old)...)
		b = append(b, '\n')
	}
	return b
}

// Check reports an error unless outcomes (the lines of an --outcomes
// file) are records lines each of c's outcome, with the big image
// removed when c.Old.
func (c Case) Check(outcomes []byte, records int) error {
	lines := bytes.Split(bytes.TrimSpace(outcomes), []byte("\n"))
	if len(lines) != records {
		return fmt.Errorf("%s: %d outcome lines, want %d", c.Name, len(lines), records)
	}
	for _, l := range lines {
		var o struct {
			Outcome string `json:"outcome"`
			Removed int    `json:"images_removed"`
		}
		if err := json.Unmarshal(l, &o); err != nil {
			return err
		}
		if o.Outcome != c.Outcome || (o.Removed == 1) != c.Old {
			return fmt.Errorf("%s: %s", c.Name, l)
		}
	}
	return nil
}
