package summary

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/traj"
)

func pngURL(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// regionImages finds the images of r's turns as the pipeline does.
func regionImages(t *testing.T, r *traj.Record) []imagetok.Image {
	contents := make([][]byte, len(r.Turns))
	for i, tu := range r.Turns {
		contents[i] = tu.Content()
	}
	ims, err := (&imagetok.Finder{}).Record(contents, imagetok.RecordImages(r.Raw()))
	if err != nil {
		t.Fatal(err)
	}
	return ims
}

// summarizeImages is the deterministic summary (runeCounter, 400 tokens) of
// the turns of the record line, numbered from start, with their images
// when withImages.
func summarizeImages(t *testing.T, line string, start int, withImages bool) string {
	t.Helper()
	r, err := traj.Decode([]byte(line), traj.Pos{File: "t", Line: 1}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Turns: r.Turns, Start: start, TargetTokens: 400}
	if withImages {
		req.Images = regionImages(t, r)
	}
	res, _ := Deterministic{Counter: runeCounter{}}.Summarize(context.Background(), req)
	return res.Text
}

// TestDeterministicImages: a region holding images says how many and
// their sizes, in order of first sight, on the line after the head; a
// summary of that summary and more images adds them up (golden).
func TestDeterministicImages(t *testing.T) {
	big, small := pngURL(t, 1024, 768), pngURL(t, 64, 32)
	part := func(u string) string { return `{"type": "image_url", "image_url": {"url": "` + u + `"}}` }
	line := `{"messages": [` +
		`{"role": "user", "content": [{"type": "text", "text": "Find the cheapest flight"}, ` + part(big) + `]},` +
		`{"role": "assistant", "content": "Click [3]"},` +
		`{"role": "user", "content": [` + part(big) + `, ` + part(small) + `, {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},` +
		`{"role": "assistant", "content": "Scroll down"},` +
		`{"role": "user", "content": [` + part(big) + `]}]}`
	want := Prefix + " 5 turns (1–5) condensed.\n" +
		"Images: 5 (1024x768 png ×3, 64x32 png ×1, size unknown ×1)\n" +
		"[1 user] Find the cheapest flight\n" +
		"[2 assistant] Click [3]\n" +
		"[4 assistant] Scroll down"
	// Summarised again with one more image: one line, the counts added up,
	// the earlier summary's sizes first.
	again := `{"messages": [{"role": "user", "content": ` + quote(want) + `}, {"role": "user", "content": [` + part(small) + `, ` + part(pngURL(t, 8, 8)) + `]}]}`
	for _, tc := range []struct{ line, want string }{
		{line, want},
		{again, Prefix + " 2 turns (1–2) condensed.\n" +
			"Images: 7 (1024x768 png ×3, 64x32 png ×2, size unknown ×1, 8x8 png ×1)\n" +
			"[earlier user] Find the cheapest flight\n" +
			"[earlier assistant] Click [3]\n" +
			"[earlier assistant] Scroll down"},
	} {
		if got := summarizeImages(t, tc.line, 1, true); got != tc.want {
			t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
		}
	}
	// Without images, no line.
	if got := summarizeImages(t, line, 1, false); strings.Contains(got, "Images:") {
		t.Fatalf("images line without images:\n%s", got)
	}
}

// TestDeterministicNoMarkers: a quoted "<image>" marker is written
// "[image]", so that the summary holds no marker of its own.
func TestDeterministicNoMarkers(t *testing.T) {
	line := `{"messages": [{"role": "user", "content": "Observation: <image> the results <image>"}, {"role": "assistant", "content": "Click <image>"}], "images": ["a.png", "b.png", "c.png"]}`
	got := summarizeImages(t, line, 0, true)
	if want := Prefix + " 2 turns (0–1) condensed.\nImages: 3 (size unknown ×3)\n[0 user] Observation: [image] the results [image]\n[1 assistant] Click [image]"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
