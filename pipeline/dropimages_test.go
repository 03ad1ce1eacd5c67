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
		o.Summarizer = ts
		o.Budget.Target, o.Budget.LastN = 300, 2
		o.ImageRule = imagetok.Flat(0) // the images cost nothing: the summary must make the fit
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
		o.Summarizer = ts
		o.Budget.Target, o.Budget.LastN = 300, 2
		o.ImageRule = imagetok.Flat(0)
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
		o.ImageRule = imagetok.Flat(0)
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
