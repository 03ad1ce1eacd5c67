package pipeline

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/traj"
)

// pngOf encodes a w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every shape an image takes is counted by the rule into the record's
// tokens (word counter: the texts below are 2 words per turn): an OpenAI
// data: URL part of 1024×768 at auto detail (765 under openai), an
// Anthropic base64 block of 512×512 (one tile: 255), a part at low detail
// (85), a link (unknown size: 1 445), "<image>" markers with the images
// list resolved against the record file's directory (1024×768 again), an
// images-list entry no marker claims (counted for the record), {"type":
// "image"} parts paired with the list, and datasets Image values.
func TestImagesCountedByRule(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), pngOf(t, 1024, 768), 0o644); err != nil {
		t.Fatal(err)
	}
	big := base64.StdEncoding.EncodeToString(pngOf(t, 1024, 768))
	small := base64.StdEncoding.EncodeToString(pngOf(t, 512, 512))
	parts := `{"messages": [{"role": "user", "content": [{"type": "text", "text": "look here"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,` + big + `"}}]},` +
		`{"role": "assistant", "content": [{"type": "text", "text": "I see"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + small + `"}}]},` +
		`{"role": "tool", "tool_call_id": "x", "content": [{"type": "text", "text": "two shots"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,` + big + `", "detail": "low"}}, {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}`
	markers := `{"messages": [{"role": "user", "content": "<image> look"}, {"role": "assistant", "content": "I see"}], "images": ["shot.png", "shot.png"]}`
	// transformers' / TRL's layout: {"type": "image"} parts and the images
	// list: one image each, with the entry's size.
	// Hugging Face datasets Image values, as the Parquet and Arrow readers
	// give them in JSON (bytes in base64): in a part, and as the images
	// list's entries with their markers; a null bytes with a path is read
	// from the file.
	datasets := `{"messages": [{"role": "user", "content": [{"type": "image", "image": {"bytes": "` + small + `", "path": null}}, {"type": "text", "text": "look here"}]},` +
		`{"role": "assistant", "content": "<image> <image>"}], "images": [{"bytes": "` + big + `", "path": "x.png"}, {"bytes": null, "path": "shot.png"}]}`
	holders := `{"messages": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "look here"}]}, {"role": "assistant", "content": "I see"}], "images": ["shot.png"]}`
	for _, tc := range []struct {
		name, line   string
		rule         imagetok.Rule
		want         int // tokens before
		images, unkn int
	}{
		{"parts openai", parts, imagetok.OpenAI(), 6 + 765 + 255 + 85 + 1445, 4, 1},
		{"parts flat:85", parts, imagetok.Flat(85), 6 + 4*85, 4, 1},
		{"parts zero rule is openai", parts, nil, 6 + 765 + 255 + 85 + 1445, 4, 1},
		{"markers openai", markers, imagetok.OpenAI(), 4 + 765 + 765, 2, 0},
		{"placeholders openai", holders, imagetok.OpenAI(), 4 + 765, 1, 0},
		{"datasets openai", datasets, imagetok.OpenAI(), 4 + 255 + 765 + 765, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newComp(t, func(o *Options) { o.Counting.ImageRule = tc.rule; o.Budget.Target = 100000 })
			res, err := c.Compress(context.Background(), []byte(tc.line), traj.Pos{File: filepath.Join(dir, "in.jsonl"), Line: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Obs.TokensBefore != tc.want || res.Obs.Images != tc.images || res.Obs.ImagesUnknownSize != tc.unkn {
				t.Errorf("tokens before %d, images %d, unknown %d; want %d, %d, %d", res.Obs.TokensBefore, res.Obs.Images, res.Obs.ImagesUnknownSize, tc.want, tc.images, tc.unkn)
			}
		})
	}

	// A record's single "image" value that no marker claims is not an
	// image (a container image, say); with its marker it is one.
	c := newComp(t, func(o *Options) { o.Budget.Target = 100000 })
	for _, tc := range []struct {
		line   string
		images int
	}{
		{`{"messages": [{"role": "user", "content": "run it"}], "image": "ubuntu:22.04"}`, 0},
		{`{"messages": [{"role": "user", "content": "<image> run it"}], "image": "shot.png"}`, 1},
	} {
		res, err := c.Compress(context.Background(), []byte(tc.line), traj.Pos{File: filepath.Join(dir, "in.jsonl"), Line: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Obs.Images != tc.images {
			t.Errorf("%s: %d images, want %d", tc.line, res.Obs.Images, tc.images)
		}
	}
}

// A turn the prepass remade is counted again: one whose content became a
// string (a digest) no longer holds its image parts; one whose tool-call
// arguments were shrunk keeps them; a marker still in the text counts as
// it did.
func TestMadeTurnImages(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), pngOf(t, 1024, 768), 0o644); err != nil {
		t.Fatal(err)
	}
	big := base64.StdEncoding.EncodeToString(pngOf(t, 1024, 768))
	line := `{"messages": [{"role": "user", "content": "<image> and <image>"},` +
		`{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,` + big + `"}}], "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}],` +
		` "images": ["shot.png", "missing.png"]}`
	c := newComp(t, nil)
	r := record{in: input{raw: []byte(line), pos: traj.Pos{File: filepath.Join(dir, "in.jsonl")}}}
	if rej := c.decode(&r); rej != nil {
		t.Fatal(rej)
	}
	c.countImages(&r)
	turns := r.rec.Turns
	if turns[0].Extra != 765+1445 || turns[1].Extra != 765 {
		t.Fatalf("as read: %d, %d; want 765 + 1445, 765", turns[0].Extra, turns[1].Extra)
	}
	args, ok := r.rec.SetCallArguments(turns[1], 0, []byte(`"{}"`))
	if !ok {
		t.Fatal("no call arguments")
	}
	for _, tc := range []struct {
		name string
		i    int
		t    traj.Turn
		want int
	}{
		{"arguments shrunk", 1, args, 765},
		{"content a digest", 1, r.rec.SetContent(turns[1], "digest"), 0},
		{"one marker left", 0, r.rec.SetContent(turns[0], "<image> gone"), 765},
		{"no marker left", 0, r.rec.SetContent(turns[0], "gone"), 0},
	} {
		if got := c.madeImageTokens(&r, tc.i, tc.t); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A {"type": "image"} part paired with the images list keeps the entry's
// count when the prepass remakes its turn with the part still there.
func TestMadeTurnPlaceholder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), pngOf(t, 1024, 768), 0o644); err != nil {
		t.Fatal(err)
	}
	line := `{"messages": [{"role": "assistant", "content": [{"type": "image"}, {"type": "text", "text": "a"}], "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}], "images": ["shot.png"]}`
	c := newComp(t, nil)
	r := record{in: input{raw: []byte(line), pos: traj.Pos{File: filepath.Join(dir, "in.jsonl")}}}
	if rej := c.decode(&r); rej != nil {
		t.Fatal(rej)
	}
	c.countImages(&r)
	if got := r.rec.Turns[0].Extra; got != 765 {
		t.Fatalf("as read: %d, want 765", got)
	}
	args, ok := r.rec.SetCallArguments(r.rec.Turns[0], 0, []byte(`"{}"`))
	if !ok {
		t.Fatal("no call arguments")
	}
	if got := c.madeImageTokens(&r, 0, args); got != 765 {
		t.Errorf("remade: %d, want 765", got)
	}
}
