package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/summary"
)

// textSummarizer is the deterministic summarizer, keeping the texts it
// wrote.
type textSummarizer struct {
	mu    sync.Mutex
	texts []string
}

func (s *textSummarizer) Remote() bool { return false }

func (s *textSummarizer) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	res, err := summary.Deterministic{Counter: wordCounter{}}.Summarize(ctx, req)
	s.mu.Lock()
	s.texts = append(s.texts, res.Text)
	s.mu.Unlock()
	return res, err
}

// markerRecord writes PNG files of widths 40, 50, 60, 70 (height 30) into
// a new directory and returns the path of an input file there and a
// LLaMA-Factory record of it: see markerRecordOf.
func markerRecord(t *testing.T) (string, string) {
	return markerRecordOf(t, [][2]int{{40, 30}, {50, 30}, {60, 30}, {70, 30}})
}

// markerRecordOf writes PNG files s0.png… of the four sizes (width,
// height) into a new directory and returns the path of an input file there
// and a LLaMA-Factory record of it: markers in turns 1 (head), 3, 5 and 7
// (the newest image-bearing turn), the images list naming the files.
func markerRecordOf(t *testing.T, sizes [][2]int) (string, string) {
	dir := t.TempDir()
	var paths []string
	for i, s := range sizes {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, s[0], s[1]))); err != nil {
			t.Fatal(err)
		}
		p := "s" + string(rune('0'+i)) + ".png"
		if err := os.WriteFile(filepath.Join(dir, p), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	msgs := []map[string]string{{"role": "system", "content": "browse"}}
	for i := 1; i < 10; i++ {
		role, text := "assistant", words(60, "act")
		if i%2 == 1 {
			role, text = "user", words(60, "obs")
			if i < 8 {
				text = "<image> " + text
			}
		}
		msgs = append(msgs, map[string]string{"role": role, "content": text})
	}
	b, _ := json.Marshal(map[string]any{"messages": msgs, "images": paths})
	return filepath.Join(dir, "in.jsonl"), string(b)
}

// TestDropOldImagesMarkers: the image step removes the markers of the
// middle older than the newest image-bearing turn (never the head's) and
// their list entries; the region then summarised holds the newest marker,
// which the summary sizes by the rewritten list.
func TestDropOldImagesMarkers(t *testing.T) {
	in, line := markerRecord(t)
	p := pos
	p.File = in
	ts := &textSummarizer{}
	c := newComp(t, func(o *Options) {
		o.Prepass = &prepass.Config{DropOldImages: true, ImagesOnly: true}
		o.Summarizing.Summarizer = ts
		o.Budget.Target, o.Budget.LastN = 300, 2
		o.Counting.ImageRule = imagetok.Flat(0) // the images cost nothing: the summary must make the fit
	})
	res, err := c.Compress(context.Background(), []byte(line), p)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Obs
	if o.Outcome != outcome.Compressed || o.Region == nil || o.ImagesRemoved != 2 || !o.Prepass.Ran {
		t.Fatalf("outcome %s region %v removed %d prepass %+v", o.Outcome, o.Region, o.ImagesRemoved, o.Prepass)
	}
	// The newest marker went with the region it was in, the two older ones
	// with the image step: the list keeps the head's entry only.
	out := string(res.Out)
	if !strings.Contains(out, `"images":["s0.png"]`) || !strings.HasPrefix(mustDecode(t, out).Turns[1].Text, "<image> obs") {
		t.Fatalf("images list or head marker:\n%s", out)
	}
	if len(ts.texts) != 1 || !strings.Contains(ts.texts[0], "Images: 1 (70x30 png ×1)") {
		t.Fatalf("summary: %q", ts.texts)
	}
	// Without the step, the region's summary counts the markers it held.
	ts = &textSummarizer{}
	plain := newComp(t, func(o *Options) {
		o.Summarizing.Summarizer = ts
		o.Budget.Target, o.Budget.LastN = 300, 2
		o.Counting.ImageRule = imagetok.Flat(0)
	})
	res, _ = plain.Compress(context.Background(), []byte(line), p)
	if res.Obs.ImagesRemoved != 0 || len(ts.texts) != 1 || !strings.Contains(ts.texts[0], "Images: 3 (50x30 png ×1, 60x30 png ×1, 70x30 png ×1)") {
		t.Fatalf("removed %d, summary %q", res.Obs.ImagesRemoved, ts.texts)
	}
}

// TestDropOldImagesLeavesUnsaved: a record whose images cost nothing by the
// rule (flat:0, so the step's replacement text only adds tokens) and whose
// region cannot be summarised is left as it came, not written bigger.
func TestDropOldImagesLeavesUnsaved(t *testing.T) {
	in, line := markerRecord(t)
	p := pos
	p.File = in
	c := newComp(t, func(o *Options) {
		o.Prepass = &prepass.Config{DropOldImages: true, ImagesOnly: true}
		o.Counting.ImageRule = imagetok.Flat(0)
		// The middle is turn 3 alone, too small for a summary to save
		// anything.
		o.Budget.Target, o.Budget.LastN, o.Budget.SummaryTokens = 300, 6, 100
	})
	res, err := c.Compress(context.Background(), []byte(line), p)
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Obs; o.ImageTokensSaved > 0 || o.Outcome != outcome.Uncompressible || o.ImagesRemoved != 0 || string(res.Out) != line {
		t.Fatalf("outcome %s %s, removed %d saved %d", o.Outcome, o.Reason, o.ImagesRemoved, o.ImageTokensSaved)
	}
}

// TestPrepassTextStepsKeepImages: under the whole prepass, the text steps
// (duplicates, digests, arguments) leave a tool result holding an image
// whole; only the image step removes an image, and never the newest
// (a bug once: the digest step digested the newest
// screenshot's tool result, its <image> marker went while the images list
// kept its entry; with image_url parts both images went).
func TestPrepassTextStepsKeepImages(t *testing.T) {
	in, _ := markerRecord(t)
	dir := filepath.Dir(in)
	p := pos
	p.File = in
	for _, parts := range []bool{false, true} {
		msgs := []any{map[string]any{"role": "system", "content": "sys"}, map[string]any{"role": "user", "content": "do the task"}}
		for k := range 5 {
			id := "c" + string(rune('0'+k))
			body := words(600, "out"+id)
			var content any = body
			if k == 1 || k == 2 { // turns 5 and 7
				if parts {
					content = []any{map[string]any{"type": "text", "text": body},
						map[string]any{"type": "image_url", "image_url": map[string]any{"url": "s" + string(rune('0'+k)) + ".png"}}}
				} else {
					content = "<image>" + body
				}
			}
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
					"function": map[string]any{"name": "screenshot", "arguments": "{}"}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": content})
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": "done"})
		rec := map[string]any{"messages": msgs}
		if !parts {
			rec["images"] = []string{"s1.png", "s2.png"}
		}
		line, _ := json.Marshal(rec)
		c := newComp(t, func(o *Options) {
			o.Prepass = &prepass.Config{DropOldImages: true}
			o.Summarizing.Summarizer = &textSummarizer{}
			o.Budget.Target, o.Budget.LastN = 2300, 2
			o.Counting.ImageRule = imagetok.OpenAI()
		})
		res, err := c.Compress(context.Background(), line, p)
		if err != nil {
			t.Fatal(err)
		}
		o := res.Obs
		if o.Outcome != outcome.Compressed || o.Region != nil || !o.Prepass.Fit || o.ImagesRemoved != 1 || o.Prepass.Saved[prepass.Digests] == 0 {
			t.Fatalf("parts %v: outcome %s region %v removed %d prepass %+v, tokens %d", parts, o.Outcome, o.Region, o.ImagesRemoved, o.Prepass, o.TokensBefore)
		}
		out := mustDecode(t, string(res.Out))
		_, list := prepass.ImagesField(out)
		ims, err := prepass.FindImages(&imagetok.Finder{Dir: dir}, out.Turns, list)
		if err != nil || len(ims) != 1 || ims[0].Turn != 7 || !ims[0].Known() {
			t.Errorf("parts %v: images left %+v, %v; want the newest, in turn 7", parts, ims, err)
		}
		if !parts && string(list) != `["s2.png"]` {
			t.Errorf("images list %s, want [\"s2.png\"]", list)
		}
		if !strings.Contains(out.Turns[7].Text, words(600, "outc2")) {
			t.Errorf("parts %v: turn 7 changed: %.80q", parts, out.Turns[7].Text)
		}
	}
}
