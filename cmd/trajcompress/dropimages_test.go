package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// TestDropOldImagesTwice: --drop-old-images on the image records of the
// drop_old_images golden case (OpenAI parts, Anthropic blocks,
// LLaMA-Factory markers with their images list beside the file, images
// only in the head and tail) writes valid JSON; the records that fit by
// the step alone are compressed with no region summarised; the
// LLaMA-Factory record keeps its markers and list paired (two markers
// removed by the step, the region then summarised, still over the target
// by the two images it keeps at 85 tokens each); a second run on the
// output changes nothing.
func TestDropOldImagesTwice(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	src := filepath.Join(root, "fixtures", "cases", "drop_old_images")
	input, err := os.ReadFile(filepath.Join(src, "input.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(input, []byte("\n"))
	tmp := t.TempDir()
	if err := os.CopyFS(filepath.Join(tmp, "shots"), os.DirFS(filepath.Join(src, "shots"))); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(tmp, "in.jsonl")
	if err := os.WriteFile(in, bytes.Join(lines[:4], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	compress := func(in, out string) []map[string]any {
		t.Helper()
		return pairRun(t, in, out, false, "--target-max-tokens", "300", "--summary-target-tokens", "80", "--protect-last-n", "2", "--drop-old-images",
			"--image-tokens", "flat:85") // the case is sized for 85 tokens an image
	}
	out1 := filepath.Join(tmp, "out1.jsonl")
	first := compress(in, out1)
	b1, _ := os.ReadFile(out1)
	for i, l := range bytes.Split(bytes.TrimSpace(b1), []byte("\n")) {
		if !jsonx.Valid(l) {
			t.Errorf("record %d: invalid JSON", i+1)
		}
	}
	for i, want := range []struct {
		outcome string
		removed float64
		region  bool
	}{{"compressed", 2, false}, {"compressed", 2, false}, {"compressed_over_limit", 2, true}, {"uncompressible", 0, false}} {
		o := first[i]
		removed, _ := o["images_removed"].(float64)
		if o["outcome"] != want.outcome || removed != want.removed || (o["region"] != nil) != want.region {
			t.Errorf("record %d: %v", i+1, o)
		}
	}
	recs := bytes.Split(b1, []byte("\n"))
	if bytes.Contains(recs[0], []byte("CONTEXT SUMMARY")) || bytes.Contains(recs[1], []byte("CONTEXT SUMMARY")) {
		t.Errorf("a summary written where the step sufficed")
	}
	if !bytes.Contains(recs[2], []byte(`"images": ["shots/s1.png", "shots/s4.png"]`)) || bytes.Count(recs[2], []byte("<image>")) != 2 {
		t.Errorf("markers and images list not paired:\n%s", recs[2])
	}
	if got := recs[3]; !bytes.Equal(got, bytes.TrimSuffix(lines[3], []byte("\n"))) {
		t.Errorf("images only in the head and tail: the record changed")
	}
	out2 := filepath.Join(tmp, "out2.jsonl")
	second := compress(out1, out2)
	if b2, _ := os.ReadFile(out2); !bytes.Equal(b1, b2) {
		t.Errorf("a second run changed the output")
	}
	for i, o := range second {
		if _, ok := o["images_removed"]; ok {
			t.Errorf("second run, record %d: %v", i+1, o)
		}
	}
}
