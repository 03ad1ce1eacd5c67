package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pairCases writes, into dir, screenshots shots/a.png (1920×1080) and
// shots/b.png (800×600) and an input of records whose images pair (or do
// not) with an images value: {"type": "image"} placeholder parts with an
// images list (transformers' and TRL's layout), LLaMA-Factory markers
// with a matching list, with more entries than markers and with fewer,
// and ShareGPT4V's single "image" value whose marker is in an old turn.
// It returns the input's path.
func pairCases(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "shots"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string][2]int{"a": {1920, 1080}, "b": {800, 600}} {
		var buf bytes.Buffer
		img := image.NewGray(image.Rect(0, 0, s[0], s[1]))
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "shots", name+".png"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("lorem ipsum dolor sit amet ", 60)
	var recs []map[string]any

	msgs := []any{map[string]any{"role": "system", "content": "sys"}}
	var imgs []string
	for i := range 12 {
		if i%2 == 0 {
			msgs = append(msgs, map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "image"}, map[string]any{"type": "text", "text": fmt.Sprintf("obs %d %s", i, long)}}})
			imgs = append(imgs, map[bool]string{true: "shots/a.png", false: "shots/b.png"}[i%4 == 0])
		} else {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "act " + long})
		}
	}
	recs = append(recs, map[string]any{"id": "placeholders", "messages": msgs, "images": imgs})

	conv := []any{map[string]any{"from": "system", "value": "sys"}}
	var marked []string
	for i := range 12 {
		if i%2 == 0 {
			conv = append(conv, map[string]any{"from": "human", "value": fmt.Sprintf("<image>obs %d %s", i, long)})
			marked = append(marked, "shots/a.png")
		} else {
			conv = append(conv, map[string]any{"from": "gpt", "value": "act " + long})
		}
	}
	recs = append(recs,
		map[string]any{"id": "markers", "conversations": conv, "images": marked},
		map[string]any{"id": "fewer-markers", "conversations": conv, "images": append(append([]string{}, marked...), "shots/b.png", "shots/b.png")},
		map[string]any{"id": "more-markers", "conversations": conv, "images": marked[:4]})

	single := []any{map[string]any{"from": "system", "value": "sys"}, map[string]any{"from": "human", "value": "start " + long}}
	for i := range 18 {
		text := fmt.Sprintf("turn %d %s", i, long)
		if i == 5 {
			text = "<image> look " + text
		}
		single = append(single, map[string]any{"from": map[bool]string{true: "gpt", false: "human"}[i%2 == 0], "value": text})
	}
	recs = append(recs, map[string]any{"id": "single", "conversations": single, "image": "shots/a.png"})

	var in bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	path := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pairRun runs compress on in with args (dry when dry), its output in
// out, and returns the outcome lines.
func pairRun(t *testing.T, in, out string, dry bool, args ...string) []map[string]any {
	t.Helper()
	oc := out + ".outcomes"
	full := append([]string{"compress", "--quiet", "--input", in, "--output", out, "--outcomes", oc}, args...)
	if dry {
		full = append(full, "--dry-run")
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), full, nil, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("%v: exit %d: %s", full, code, stderr.String())
	}
	b, err := os.ReadFile(oc)
	if err != nil {
		t.Fatal(err)
	}
	var res []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var o map[string]any
		if err := json.Unmarshal(l, &o); err != nil {
			t.Fatal(err)
		}
		res = append(res, o)
	}
	return res
}

// pairHolders is what one output record holds: its "<image>" markers,
// its {"type": "image"} parts naming no image, its images value's entries
// (-1 when it has none) and its removed-image texts (in its parts or in a
// summary).
type pairHolders struct {
	markers, holders, entries int
	removed                   []string
}

func holdersOf(t *testing.T, line []byte) pairHolders {
	t.Helper()
	var r struct {
		Messages      []map[string]any `json:"messages"`
		Conversations []map[string]any `json:"conversations"`
		Images        any              `json:"images"`
		Image         any              `json:"image"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	var h pairHolders
	h.entries = -1
	for s := string(line); ; {
		k := strings.Index(s, "[image removed")
		if k < 0 {
			break
		}
		s = s[k:]
		h.removed = append(h.removed, s[:min(len(s), 40)])
		s = s[1:]
	}
	switch v := r.Images.(type) {
	case []any:
		h.entries = len(v)
	case nil:
		if r.Image != nil {
			h.entries = 1
		}
	}
	for _, m := range append(r.Messages, r.Conversations...) {
		c := m["content"]
		if c == nil {
			c = m["value"]
		}
		switch v := c.(type) {
		case string:
			h.markers += strings.Count(v, "<image>")
		case []any:
			for _, p := range v {
				p, _ := p.(map[string]any)
				if p["type"] == "image" && p["image"] == nil {
					h.holders++
				}
			}
		}
	}
	return h
}

// TestImagePairingInvariant: for each record and setting (the openai rule
// at a 6,000-token target, with and without --drop-old-images, flat:85),
// reading the output again with the same settings counts exactly the
// tokens_after the run claimed, and the markers and placeholder parts left
// pair with the images value: the placeholders' list loses the entries of
// the placeholders summarised or removed (input: 6 and 6; it kept all 6
// entries for 3 parts and claimed 5,342 tokens where the output holds
// 7,977), a removed placeholder's text names its entry's size, a list that
// did not pair as read is left as it is (and counted as the output holds
// it: 6 markers and 8 entries claimed 6,640 for 9,955), and a single
// "image" value whose marker is summarised becomes null.
func TestImagePairingInvariant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := pairCases(t, dir)
	ids := []string{"placeholders", "markers", "fewer-markers", "more-markers", "single"}
	for _, set := range [][]string{
		{"--image-tokens", "openai", "--target-max-tokens", "6000"},
		{"--image-tokens", "openai", "--target-max-tokens", "6000", "--drop-old-images"},
		{"--image-tokens", "flat:85", "--target-max-tokens", "4000", "--drop-old-images"},
	} {
		t.Run(strings.Join(set, " "), func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("out-%d.jsonl", len(set)))
			first := pairRun(t, in, out, false, set...)
			again := pairRun(t, out, filepath.Join(dir, "again.jsonl"), true, set...)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
			if len(first) != len(ids) || len(again) != len(ids) || len(lines) != len(ids) {
				t.Fatalf("%d outcomes, %d on re-reading, %d records; want %d", len(first), len(again), len(lines), len(ids))
			}
			for i, id := range ids {
				o := first[i]
				if o["outcome"] == "skipped_under_target" || o["region"] == nil && o["images_removed"] == nil {
					t.Errorf("%s: %v: neither summarised nor an image removed (the case tests nothing)", id, o)
				}
				if o["tokens_after"] != again[i]["tokens_before"] {
					t.Errorf("%s: tokens_after %v, the output read again counts %v", id, o["tokens_after"], again[i]["tokens_before"])
				}
				h := holdersOf(t, lines[i])
				switch id {
				case "fewer-markers":
					if h.entries != 8 {
						t.Errorf("%s: %d entries; want the 8 as read (they did not pair)", id, h.entries)
					}
				case "more-markers":
					if h.entries != 4 {
						t.Errorf("%s: %d entries; want the 4 as read (they did not pair)", id, h.entries)
					}
				case "single":
					if h.markers != 0 || h.entries != -1 {
						t.Errorf("%s: %d markers, %d entries; want the marker summarised and the image null", id, h.markers, h.entries)
					}
				default:
					if h.markers+h.holders != h.entries {
						t.Errorf("%s: %d markers and %d placeholders, %d entries", id, h.markers, h.holders, h.entries)
					}
				}
				for _, s := range h.removed {
					if !strings.HasPrefix(s, "[image removed: 1920x1080 png]") && !strings.HasPrefix(s, "[image removed: 800x600 png]") {
						t.Errorf("%s: removed image text %q; want its entry's size", id, s)
					}
				}
				if id == "placeholders" && strings.Contains(strings.Join(set, " "), "drop") && (len(h.removed) == 0 || o["images_removed"] == nil) {
					t.Errorf("%s: no placeholder removed by --drop-old-images: %v", id, o)
				}
			}
		})
	}
}

// TestImagePlaceholdersTemplate: with the Qwen2-VL template, the
// {"type": "image"} placeholders of the placeholders record count the
// images of its list paired in order (3 × 1920×1080, 3 × 800×600), the
// same as the record naming each image in its part
// ({"type": "image", "image": path}, which the template renders alike);
// before, each counted the rule's maximum (102,006 tokens for ~13.6k).
// Re-reading the compressed output counts its tokens_after.
func TestImagePlaceholdersTemplate(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	model := qwenVLModel(t, root)
	tpl := filepath.Join(root, "chattemplate", "testdata", "templates", "qwen2_vl.jinja")
	dir := t.TempDir()
	in := pairCases(t, dir)
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.SplitN(b, []byte("\n"), 2)[0]
	var r map[string]any
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	imgs := r["images"].([]any)
	k := 0
	for _, m := range r["messages"].([]any) {
		parts, _ := m.(map[string]any)["content"].([]any)
		for _, p := range parts {
			if p := p.(map[string]any); p["type"] == "image" {
				p["image"] = imgs[k]
				k++
			}
		}
	}
	delete(r, "images")
	named, _ := json.Marshal(r)
	both := filepath.Join(dir, "both.jsonl")
	if err := os.WriteFile(both, append(append(append([]byte{}, line...), '\n'), append(named, '\n')...), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--tokenizer", model, "--chat-template", tpl, "--target-max-tokens", "6000"}
	first := pairRun(t, both, filepath.Join(dir, "out.jsonl"), false, args...)
	if len(first) != 2 {
		t.Fatalf("%d outcomes", len(first))
	}
	ph, nm := first[0]["tokens_before"].(float64), first[1]["tokens_before"].(float64)
	if ph != nm || ph > 20000 {
		t.Errorf("placeholders count %v tokens, the same images named in their parts %v", ph, nm)
	}
	again := pairRun(t, filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "again.jsonl"), true, args...)
	for i := range first {
		if first[i]["tokens_after"] != again[i]["tokens_before"] {
			t.Errorf("record %d: tokens_after %v, the output read again counts %v", i+1, first[i]["tokens_after"], again[i]["tokens_before"])
		}
	}
	out, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if h := holdersOf(t, bytes.SplitN(out, []byte("\n"), 2)[0]); h.holders != h.entries {
		t.Errorf("placeholders: %d parts, %d entries", h.holders, h.entries)
	}
}
