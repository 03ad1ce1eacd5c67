package trainview

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok"
)

// webvoyagerDir is the real multimodal set: 8 WebVoyager runs in
// LLaMA-Factory's layout (string contents with <image> markers, an images
// list of 1024×768 PNG screenshots).
const webvoyagerDir = "../fixtures/multimodal/webvoyager"

// madeSizes are images made by the test, beyond the screenshots' one size:
// a full-HD screen, a small icon, a very tall strip (aspect 178.6, under the
// processor's limit of 200), and one over max_pixels (resized down). None
// has a side at a multiple of 14 plus a half, where transformers.js'
// smart_resize (Math.round) and Python's (round half to even) differ.
var madeSizes = [][2]int{{1920, 1080}, {100, 100}, {28, 5000}, {4500, 3000}}

// imageModels are the Qwen2-VL family configurations of the reference: the
// template (chattemplate/testdata/templates), the npm tokenizer package and
// the preprocessor_config.json (imagetok/testdata). Qwen2.5-VL's
// tokenizer.json is Qwen2.5's (same vocabulary and added tokens, the
// vision ones included); Qwen3-VL's preprocessor (patch 16) is paired with
// Qwen3's tokenizer and the Qwen2-VL template, whose image placeholder is
// Qwen3-VL's too: it checks the expansion with another grid.
var imageModels = []struct{ name, pkg, jinja, preproc string }{
	{"qwen2_5_vl", "tokenizer-qwen2_5", "qwen2_vl.jinja", "qwen2.5-vl-7b-instruct.preprocessor_config.json"},
	{"qwen3_vl_grid", "tokenizer-qwen3", "qwen2_vl.jinja", "qwen3-vl-8b-instruct.preprocessor_config.json"},
}

// imgCase is one record with images: the line a dataset holds, the
// directory its relative image paths resolve against, and what the
// reference processor gets (the image files in placeholder order, and
// whether the messages hold LLaMA-Factory markers).
type imgCase struct {
	name    string
	line    []byte
	dir     string
	files   []string
	markers bool
}

// imageCases builds the records: each WebVoyager run in four forms (as
// stored, with <image> markers; OpenAI image_url parts with data: URLs;
// Anthropic base64 image blocks; {"type": "image", "image": PATH} parts),
// and records of the made images (one each as an OpenAI part, all four in
// one message as image parts between text, and a ShareGPT record with
// markers).
func imageCases(t *testing.T) []imgCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(webvoyagerDir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wv, err := filepath.Abs(webvoyagerDir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []imgCase
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			ID       string `json:"id"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Images []string `json:"images"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		files := make([]string, len(r.Images))
		for i, p := range r.Images {
			files[i] = filepath.Join(wv, p)
		}
		name := strings.TrimPrefix(r.ID, "webvoyager/")
		cases = append(cases, imgCase{name: name + " markers", line: line, dir: wv, files: files, markers: true})
		for _, form := range []string{"image_url", "anthropic", "image"} {
			var msgs []map[string]any
			k := 0
			for _, m := range r.Messages {
				if !strings.Contains(m.Content, imagetok.Marker) {
					msgs = append(msgs, map[string]any{"role": m.Role, "content": m.Content})
					continue
				}
				var parts []any
				for i, s := range strings.Split(m.Content, imagetok.Marker) {
					if i > 0 {
						parts = append(parts, imagePart(t, form, r.Images[k], files[k]))
						k++
					}
					if s != "" {
						parts = append(parts, map[string]any{"type": "text", "text": s})
					}
				}
				msgs = append(msgs, map[string]any{"role": m.Role, "content": parts})
			}
			b, _ := json.Marshal(map[string]any{"id": r.ID, "messages": msgs})
			cases = append(cases, imgCase{name: name + " " + form, line: b, dir: wv, files: files})
		}
	}

	dir := t.TempDir()
	var made []string
	for _, s := range madeSizes {
		p := filepath.Join(dir, fmt.Sprintf("made-%dx%d.png", s[0], s[1]))
		writePNG(t, p, s[0], s[1])
		made = append(made, p)
		b, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is in this picture?"},
				imagePart(t, "image_url", "", p),
			}},
			map[string]any{"role": "assistant", "content": "A test pattern."},
		}})
		cases = append(cases, imgCase{name: fmt.Sprintf("made %dx%d image_url", s[0], s[1]), line: b, dir: dir, files: []string{p}})
	}
	var parts []any
	for i, p := range made {
		parts = append(parts, map[string]any{"type": "text", "text": fmt.Sprintf("Image %d:", i+1)}, imagePart(t, "image", filepath.Base(p), p))
	}
	b, _ := json.Marshal(map[string]any{"messages": []any{
		map[string]any{"role": "system", "content": "Compare the images."},
		map[string]any{"role": "user", "content": parts},
		map[string]any{"role": "assistant", "content": "They differ in size."},
	}})
	cases = append(cases, imgCase{name: "made all image parts", line: b, dir: dir, files: made})
	rel := make([]string, len(made))
	for i, p := range made {
		rel[i] = filepath.Base(p)
	}
	b, _ = json.Marshal(map[string]any{
		"conversations": []any{
			map[string]any{"from": "human", "value": "<image>First, then <image> and <image>."},
			map[string]any{"from": "gpt", "value": "Seen."},
			map[string]any{"from": "human", "value": "And this one?\n<image>"},
			map[string]any{"from": "gpt", "value": "Tall."},
		},
		"images": rel,
	})
	cases = append(cases, imgCase{name: "made sharegpt markers", line: b, dir: dir, files: made, markers: true})
	// transformers' and TRL's layout: {"type": "image"} placeholder parts,
	// the images in the record's images list, paired in order.
	var holders []any
	for i := range made {
		holders = append(holders, map[string]any{"type": "text", "text": fmt.Sprintf("Image %d:", i+1)}, map[string]any{"type": "image"})
	}
	b, _ = json.Marshal(map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": holders[:4]},
			map[string]any{"role": "assistant", "content": "Two."},
			map[string]any{"role": "user", "content": holders[4:]},
			map[string]any{"role": "assistant", "content": "The rest."},
		},
		"images": rel,
	})
	cases = append(cases, imgCase{name: "made placeholders images list", line: b, dir: dir, files: made})
	return cases
}

// imagePart is an image content part of the given form for the image file
// at path (ref: the path as the record writes it).
func imagePart(t *testing.T, form, ref, path string) map[string]any {
	t.Helper()
	switch form {
	case "image":
		return map[string]any{"type": "image", "image": ref}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(raw)
	if form == "anthropic" {
		return map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64}}
	}
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + b64}}
}

// writePNG writes a w×h grey PNG with a gradient (its size is what counts).
func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 251)
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// imageCounter is the counter of model m with its image expansion.
func imageCounter(t *testing.T, dir, jinja, preproc string) Counter {
	t.Helper()
	c := testCounter(t, dir, jinja)
	q, err := imagetok.LoadQwen(filepath.Join("..", "imagetok", "testdata", preproc))
	if err != nil {
		t.Fatal(err)
	}
	im, err := NewImages(c.Template, c.Tokens, q.Rule(), "")
	if err != nil {
		t.Fatal(err)
	}
	if im == nil {
		t.Fatalf("%s: NewImages found no image placeholder", jinja)
	}
	c.Images = im
	return c
}

// TestImageCountsMatchTransformersJS counts records with images with the
// Qwen2-VL chat template and its image expansion, and compares with
// testdata/images/NAME.tsv: the input_ids length of transformers.js
// 4.3.1's Qwen2VLProcessor (a Qwen2VLImageProcessor of the model's
// preprocessor_config.json) on apply_chat_template's text and the record's
// images (chattemplate/testdata/ref/processor.mjs). Regenerate with
// -update (node and chattemplate/testdata/ref/setup.sh); comparing needs
// only the tokenizer.json files that setup.sh installs.
func TestImageCountsMatchTransformersJS(t *testing.T) {
	cases := imageCases(t)
	for _, m := range imageModels {
		t.Run(m.name, func(t *testing.T) {
			dir := needModel(t, m.pkg)
			golden := filepath.Join("testdata", "images", m.name+".tsv")
			if *update {
				regenerateImages(t, dir, m.jinja, m.preproc, cases, golden)
			}
			want := readImageCounts(t, golden)
			c := imageCounter(t, dir, m.jinja, m.preproc)
			plain := testCounter(t, dir, m.jinja)
			q, err := imagetok.LoadQwen(filepath.Join("..", "imagetok", "testdata", m.preproc))
			if err != nil {
				t.Fatal(err)
			}
			equal, jsDiverges := 0, 0
			for _, ic := range cases {
				ref, ok := want[ic.name]
				if !ok {
					t.Errorf("%s: not in %s: regenerate with -update", ic.name, golden)
					continue
				}
				w := ref.tokens
				v, err := Mapper{}.Record(ic.line)
				if err != nil {
					t.Fatalf("%s: %v", ic.name, err)
				}
				c.Images.Finder = &imagetok.Finder{Dir: ic.dir}
				got, err := c.CountCached(v, &Stretches{})
				if err != nil {
					t.Errorf("%s: %v", ic.name, err)
					continue
				}
				flat, _ := plain.Count(v)
				if strconv.Itoa(got) != w {
					if jsUpscales(t, q, ic, ref.grids, got, w) {
						jsDiverges++
						t.Logf("%-42s %6d tokens; transformers.js %s: it upscales a side under %d first", ic.name, got, w, q.Factor())
						continue
					}
					t.Errorf("%s: %d tokens, transformers.js %s (without the expansion: %d)", ic.name, got, w, flat)
					continue
				}
				equal++
				t.Logf("%-42s %6d tokens (placeholders as written: %d)", ic.name, got, flat)
			}
			t.Logf("%s: %d/%d records with images counted equal to transformers.js' processor + template; %d where transformers.js' smart_resize differs from Python's (an image side under patch×merge) and the count equals the text's tokens plus Python's grids",
				m.name, equal, len(cases), jsDiverges)
		})
	}
}

// regenerateImages runs processor.mjs on cases into path.
func regenerateImages(t *testing.T, dir, jinja, preproc string, cases []imgCase, path string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("-update needs node: %v", err)
	}
	var in bytes.Buffer
	for _, ic := range cases {
		v, err := Mapper{}.Record(ic.line)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(map[string]any{"name": ic.name, "messages": v.Messages, "tools": v.Tools, "images": ic.files, "markers": ic.markers})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	casesPath := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(casesPath, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	args := []string{"processor.mjs", abs(dir), abs(filepath.Join("..", "imagetok", "testdata", preproc)),
		abs(filepath.Join("..", "chattemplate", "testdata", "templates", jinja)), casesPath}
	cmd := exec.Command("node", args...)
	cmd.Dir = refDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
	var b strings.Builder
	b.WriteString("# transformers.js 4.3.1 Qwen2VLProcessor input_ids length, by chattemplate/testdata/ref/processor.mjs\n")
	var lines []string
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r struct {
			Name   string   `json:"name"`
			Tokens *int     `json:"tokens"`
			Grids  [][3]int `json:"grids"`
			Error  *string  `json:"error"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != nil || r.Tokens == nil {
			t.Fatalf("%s: transformers.js: %s", r.Name, l)
		}
		grids := make([]string, len(r.Grids))
		for i, g := range r.Grids {
			grids[i] = fmt.Sprintf("%dx%dx%d", g[0], g[1], g[2])
		}
		lines = append(lines, fmt.Sprintf("%s\t%d\t%s\n", r.Name, *r.Tokens, strings.Join(grids, " ")))
	}
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsUpscales reports whether a count got that differs from transformers.js'
// want is explained by the one known difference of its smart_resize
// (image_processors_utils.js): an image with a side under the factor
// (patch_size × merge_size) is first scaled up so that its short side is
// the factor, where Python's transformers (imagetok.SmartResize, commit
// 9feaf6f) rounds it as it is. It holds when every image whose grid
// differs from Python's has such a side, and the counts differ by exactly
// the pads of those grids: the text, template and other images are equal.
func jsUpscales(t *testing.T, q imagetok.Qwen, ic imgCase, jsGrids [][3]int, got int, want string) bool {
	t.Helper()
	w, err := strconv.Atoi(want)
	if err != nil || len(jsGrids) != len(ic.files) {
		return false
	}
	diff := 0
	for i, p := range ic.files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, iw, ih, ok := imagetok.Config(f)
		f.Close()
		if !ok {
			return false
		}
		gw, gh, err := q.Grid(iw, ih)
		if err != nil {
			return false
		}
		js := jsGrids[i]
		if js[1] == gh && js[2] == gw {
			continue
		}
		if min(iw, ih) >= q.Factor() {
			return false
		}
		m2 := q.MergeSize * q.MergeSize
		diff += js[0]*js[1]*js[2]/m2 - gw*gh/m2
	}
	return diff != 0 && got+diff == w
}

// imageRef is a reference line: the token count and each image's grid.
type imageRef struct {
	tokens string
	grids  [][3]int
}

// readImageCounts reads NAME<TAB>TOKENS<TAB>GRIDS lines (after # comments),
// GRIDS being T×H×W per image, space-separated.
func readImageCounts(t *testing.T, path string) map[string]imageRef {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: regenerate with -update", err)
	}
	out := map[string]imageRef{}
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			t.Fatalf("%s:%d: not NAME<TAB>TOKENS<TAB>GRIDS", path, i+1)
		}
		r := imageRef{tokens: f[1]}
		for _, g := range strings.Fields(f[2]) {
			var x [3]int
			if _, err := fmt.Sscanf(g, "%dx%dx%d", &x[0], &x[1], &x[2]); err != nil {
				t.Fatalf("%s:%d: grid %q: %v", path, i+1, g, err)
			}
			r.grids = append(r.grids, x)
		}
		out[f[0]] = r
	}
	return out
}
