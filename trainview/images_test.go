package trainview

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/testenv"
)

// specialCounter counts a text as a tokenizer with added tokens "<|…|>"
// does in shape: each "<|…|>" one token, every other rune one token.
type specialCounter struct{}

func (specialCounter) Count(s string) int {
	n := 0
	for s != "" {
		if strings.HasPrefix(s, "<|") {
			if end := strings.Index(s, "|>"); end > 0 {
				n++
				s = s[end+2:]
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		n++
	}
	return n
}

// qwenVL is the Qwen2.5-VL image processing (imagetok/testdata).
func qwenVL(t *testing.T) imagetok.Qwen {
	t.Helper()
	q, err := imagetok.LoadQwen(filepath.Join("..", "imagetok", "testdata", "qwen2.5-vl-7b-instruct.preprocessor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// vlCounters are the Qwen2-VL template's counters without and with the
// image expansion, counting with specialCounter.
func vlCounters(t *testing.T, dir string) (plain, expand Counter) {
	t.Helper()
	tmpl, err := chattemplate.Load(filepath.Join("..", "chattemplate", "testdata", "templates", "qwen2_vl.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	q := qwenVL(t)
	im, err := NewImages(tmpl, specialCounter{}, q.Rule(), "")
	if err != nil || im == nil {
		t.Fatalf("NewImages: %v, %v", im, err)
	}
	im.Finder = &imagetok.Finder{Dir: dir}
	plain = Counter{Template: tmpl, Tokens: specialCounter{}}
	expand = plain
	expand.Images = im
	return plain, expand
}

func dataURL(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(raw)
}

func mustCount(t *testing.T, c Counter, line string) int {
	t.Helper()
	v, err := Mapper{}.Record([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(v)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return n
}

func pads(t *testing.T, q imagetok.Qwen, w, h int) int {
	t.Helper()
	p, err := q.Pads(w, h)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImagesExpandParts: each image part the template renders adds its
// grid's pads less the one placeholder; an image of unknown size (a link)
// counts Rule.Unknown's pads; parts the template does not render (an image
// inside an Anthropic tool_result) add nothing.
func TestImagesExpandParts(t *testing.T) {
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big.png"), filepath.Join(dir, "small.png")
	writePNG(t, big, 1920, 1080)
	writePNG(t, small, 100, 100)
	plain, expand := vlCounters(t, dir)
	q := qwenVL(t)
	msgs := []any{
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Two screens:"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL(t, big)}},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": strings.TrimPrefix(dataURL(t, small), "data:image/png;base64,")}},
			map[string]any{"type": "image", "image": "small.png"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/x.png"}},
		}},
		map[string]any{"role": "assistant", "content": "Seen."},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": []any{
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": strings.TrimPrefix(dataURL(t, big), "data:image/png;base64,")}},
			}},
		}},
	}
	line, _ := json.Marshal(map[string]any{"messages": msgs})
	got, want := mustCount(t, expand, string(line)), mustCount(t, plain, string(line))
	unknown := q.Rule().Unknown() - q.Wrap
	want += pads(t, q, 1920, 1080) - 1 + 2*(pads(t, q, 100, 100)-1) + unknown - 1
	if got != want {
		t.Errorf("counted %d, want %d (1920x1080: %d pads, 100x100: %d, unknown: %d)", got, want, pads(t, q, 1920, 1080), pads(t, q, 100, 100), unknown)
	}

	// WithUnknown changes what the link counts.
	expand.Images.Rule = imagetok.WithUnknown(q.Rule(), 100+q.Wrap)
	if got2 := mustCount(t, expand, string(line)); got2 != want-unknown+100 {
		t.Errorf("with unknown = 100 pads: counted %d, want %d", got2, want-unknown+100)
	}
}

// TestImagesExpandMarkers: a LLaMA-Factory record's <image> markers count
// as LLaMA-Factory's Qwen2VLPlugin writes them (vision start, the image's
// pads, vision end), paired in order with its images list; a marker beyond
// the list counts as an image of unknown size.
func TestImagesExpandMarkers(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 1920, 1080)
	writePNG(t, filepath.Join(dir, "b.png"), 28, 5000)
	plain, expand := vlCounters(t, dir)
	q := qwenVL(t)
	rec := func(images string, first, second string) string {
		return `{"conversations":[{"from":"human","value":"` + first + `"},{"from":"gpt","value":"ok"},{"from":"human","value":"` + second + `"}]` + images + `}`
	}
	vision := VisionStart + ImagePad + VisionEnd
	got := mustCount(t, expand, rec(`,"images":["a.png","b.png"]`, `Look <image> here`, `<image>\nand?`))
	want := mustCount(t, plain, rec("", `Look `+vision+` here`, vision+`\nand?`)) + pads(t, q, 1920, 1080) - 1 + pads(t, q, 28, 5000) - 1
	if got != want {
		t.Errorf("markers: counted %d, want %d", got, want)
	}

	got = mustCount(t, expand, rec(`,"images":["a.png"]`, `Look <image> here`, `<image>\nand?`))
	want = mustCount(t, plain, rec("", `Look `+vision+` here`, vision+`\nand?`)) + pads(t, q, 1920, 1080) - 1 + q.Rule().Unknown() - q.Wrap - 1
	if got != want {
		t.Errorf("marker without an entry: counted %d, want %d", got, want)
	}

	// Without an images list, "<image>" is text, as LLaMA-Factory reads it.
	line := rec("", `Look <image> here`, `plain`)
	if g, w := mustCount(t, expand, line), mustCount(t, plain, line); g != w {
		t.Errorf("no images list: counted %d, want %d", g, w)
	}
}

// TestImagesNoImages: records without images count as without Images.
func TestImagesNoImages(t *testing.T) {
	plain, expand := vlCounters(t, t.TempDir())
	for _, line := range []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"an image? no"}]}]}`,
		`{"conversations":[{"from":"human","value":"what is an <image> tag?"},{"from":"gpt","value":"HTML has none"}]}`,
	} {
		if g, w := mustCount(t, expand, line), mustCount(t, plain, line); g != w {
			t.Errorf("%s: counted %d, want %d", line, g, w)
		}
	}
}

// TestNewImages: which templates get an expansion, and the refusals.
func TestNewImages(t *testing.T) {
	q := qwenVL(t)
	vl, err := chattemplate.Load(filepath.Join("..", "chattemplate", "testdata", "templates", "qwen2_vl.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewImages(vl, specialCounter{}, nil, ""); err == nil || !strings.Contains(err.Error(), "qwen2_vl.jinja") {
		t.Errorf("Qwen2-VL template without the preprocessor config: %v, want an error naming the template", err)
	}
	if _, err := NewImages(vl, runeCounter{}, q.Rule(), ""); err == nil || !strings.Contains(err.Error(), "13 tokens") {
		t.Errorf("a tokenizer splitting <|image_pad|>: %v, want an error", err)
	}

	text, err := chattemplate.Parse("text.jinja", `{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if im, err := NewImages(text, specialCounter{}, q.Rule(), ""); im != nil || err != nil {
		t.Errorf("a text template: %v, %v; want nil, nil", im, err)
	}

	// Another family's placeholder (Gemma 3's): records with images are
	// refused, naming the template; records without count as before.
	gemma, err := chattemplate.Parse("gemma3.jinja", `{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'image' %}<start_of_image>{% elif p.type == 'text' %}{{ p.text }}{% endif %}{% endfor %}{% endif %}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	im, err := NewImages(gemma, specialCounter{}, q.Rule(), "")
	if err != nil || im == nil {
		t.Fatalf("gemma: %v, %v", im, err)
	}
	c := Counter{Template: gemma, Tokens: specialCounter{}, Images: im}
	v, _ := Mapper{}.Record([]byte(`{"messages":[{"role":"user","content":[{"type":"image","image":"x.png"},{"type":"text","text":"hi"}]}]}`))
	if _, err := c.Count(v); !errors.Is(err, ErrImagePlaceholder) || !strings.Contains(err.Error(), "gemma3.jinja") {
		t.Errorf("gemma with an image: %v, want ErrImagePlaceholder naming the template", err)
	}
	v, _ = Mapper{}.Record([]byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	if n, err := c.Count(v); err != nil || n != 2 {
		t.Errorf("gemma without images: %d, %v; want 2, nil", n, err)
	}
}

// runeCounter counts every rune as a token: a tokenizer without the
// vision tokens.
type runeCounter struct{}

func (runeCounter) Count(s string) int { return utf8.RuneCountInString(s) }

// TestImageToken: the tokenizer's image_token, else "" (the placeholder's
// own).
func TestImageToken(t *testing.T) {
	for cfg, want := range map[string]string{
		`{}`:                            "",
		`{"image_token": "<|imgpad|>"}`: "<|imgpad|>",
		`{"extra_special_tokens": {"image_token": "<|imgpad|>"}}`: "<|imgpad|>",
		`{"extra_special_tokens": {"video_token": "<|v|>"}}`:      "",
		`{"image_token": null}`:                                   "",
	} {
		if got := ImageToken([]byte(cfg)); got != want {
			t.Errorf("%s: %q, want %q", cfg, got, want)
		}
	}
}

// BenchmarkCountNoImages counts real records (which hold no images) with
// the Qwen2-VL template, without and with the image expansion: what
// Images costs a record without images ("prepare-only": nothing for a
// record without content lists or images list, else a scan of its
// messages for "image").
func BenchmarkCountNoImages(b *testing.B) {
	dir, why := modelDir("tokenizer-qwen2_5")
	if why != "" {
		b.Skip(why)
	}
	lines, err := testenv.RealLines(1<<20, 40, nil)
	if err != nil || len(lines) == 0 {
		b.Skipf("no real data: %v", err)
	}
	var views []View
	for _, line := range lines {
		if v, err := (Mapper{}).Record(line); err == nil {
			views = append(views, v)
		}
	}
	plain := testCounter(b, dir, "qwen2_vl.jinja")
	q, err := imagetok.LoadQwen(filepath.Join("..", "imagetok", "testdata", "qwen2.5-vl-7b-instruct.preprocessor_config.json"))
	if err != nil {
		b.Fatal(err)
	}
	im, err := NewImages(plain.Template, plain.Tokens, q.Rule(), "")
	if err != nil {
		b.Fatal(err)
	}
	expand := plain
	expand.Images = im
	withWord := 0
	for _, v := range views {
		if strings.Contains(string(v.Messages), "image") {
			withWord++
		}
	}
	b.Logf("%d real records, %d with the word \"image\"", len(views), withWord)
	b.Run("prepare-only", func(b *testing.B) {
		for b.Loop() {
			for _, v := range views {
				if _, _, err := im.prepare(v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	for _, c := range []struct {
		name string
		c    Counter
	}{{"without", plain}, {"with", expand}} {
		b.Run(c.name, func(b *testing.B) {
			cache := &Stretches{}
			for b.Loop() {
				for _, v := range views {
					if _, err := c.c.CountCached(v, cache); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestImagesOf: the Images of a template under each kind of rule.
func TestImagesOf(t *testing.T) {
	vl, err := chattemplate.Parse("vl.jinja", `{% for m in messages %}{% for p in m.content %}{% if p.type == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ p.text }}{% endif %}{% endfor %}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := chattemplate.Parse("text.jinja", `{% for m in messages %}{{ m.content }}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := specialCounter{} // "<|image_pad|>" is one token
	q, err := imagetok.ParseQwen([]byte(`{"image_processor_type": "Qwen2VLImageProcessor"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := imagetok.QwenPlaceholder().Marker(); m != VisionStart+ImagePad+VisionEnd {
		t.Errorf("imagetok's Qwen2-VL placeholder %q is not this package's constants'", m)
	}
	if im, err := ImagesOf(vl, one, q.Rule(), ""); err != nil || im == nil || im.Rule != q.Rule() || im.Placeholder != imagetok.QwenPlaceholder() {
		t.Errorf("Qwen rule: %+v, %v; want the Qwen expansion", im, err)
	}
	im, err := ImagesOf(vl, one, imagetok.Flat(85), "")
	if err != nil || im == nil || im.Placeholder.Wrap != 2 || im.Rule != imagetok.Flat(85) {
		t.Fatalf("flat:85: %+v, %v; want the rule with two wrap tokens", im, err)
	}
	// A 100×100 image: 85 in all, the placeholder's three tokens included.
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 100, 100)
	c := Counter{Template: vl, Tokens: one, Images: im}
	im.Finder = &imagetok.Finder{Dir: dir}
	v, _ := Mapper{}.Record([]byte(`{"messages":[{"role":"user","content":[{"type":"image","image":"a.png"},{"type":"text","text":"hi"}]}]}`))
	if n, err := c.Count(v); err != nil || n != 85+2 {
		t.Errorf("flat:85 count %d, %v; want 87 (the image 85, the text 2)", n, err)
	}
	if im, err := ImagesOf(text, one, imagetok.Flat(85), ""); im != nil || err != nil {
		t.Errorf("a template without images: %+v, %v; want nil", im, err)
	}
	// Not the model's tokenizer: nil under flat and OpenAI, an error under Qwen.
	split := runeCounter{}
	if im, err := ImagesOf(vl, split, imagetok.OpenAI(), ""); im != nil || err != nil {
		t.Errorf("a tokenizer splitting the pad under openai: %+v, %v; want nil", im, err)
	}
	if _, err := ImagesOf(vl, split, q.Rule(), ""); err == nil {
		t.Errorf("a tokenizer splitting the pad under the Qwen rule: no error")
	}
}

// fixedRule is a model family this package does not know, added the way a
// new one is (docs/architecture.md, "A new image rule"): a processor that
// spends a fixed number of soft tokens on every image (Gemma 3's 256) and
// whose templates write <|start_image|><|soft_image|><|end_image|>.
type fixedRule struct{ soft int }

func (r fixedRule) Tokens(imagetok.Image) (int, bool) { return r.soft + 2, true }
func (r fixedRule) Unknown() int                      { return r.soft + 2 }
func (r fixedRule) String() string                    { return "fixed" }
func (r fixedRule) Placeholder() imagetok.Placeholder {
	return imagetok.Placeholder{Family: "Fixed", Token: "<|soft_image|>", Start: "<|start_image|>", End: "<|end_image|>", Wrap: 2}
}

// TestImagesOfAnotherFamily: a rule of a family trainview does not name
// expands its own placeholder (parts and "<image>" markers alike), with
// nothing in trainview changed; the same template under a rule that is
// not its processor (the miss: a new family's rule without its
// Placeholder) refuses records with images instead of counting each as
// its placeholder's three tokens.
func TestImagesOfAnotherFamily(t *testing.T) {
	tmpl, err := chattemplate.Parse("fixed.jinja", `{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'image' %}<|start_image|><|soft_image|><|end_image|>{% else %}{{ p.text }}{% endif %}{% endfor %}{% endif %}{% endfor %}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := specialCounter{}
	im, err := ImagesOf(tmpl, one, fixedRule{256}, "")
	if err != nil || im == nil || im.Placeholder.Token != "<|soft_image|>" {
		t.Fatalf("ImagesOf under the family's own rule: %+v, %v; want its placeholder", im, err)
	}
	c := Counter{Template: tmpl, Tokens: one, Images: im}
	for _, tc := range []struct{ name, line string }{
		{"parts", `{"messages":[{"role":"user","content":[{"type":"image","image":"a.png"},{"type":"text","text":"hi"},{"type":"image","image":"b.png"}]}]}`},
		{"markers", `{"messages":[{"role":"user","content":"<image>hi<image>"}],"images":["a.png","b.png"]}`},
	} {
		v, err := Mapper{}.Record([]byte(tc.line))
		if err != nil {
			t.Fatal(err)
		}
		// Two images of 258 tokens each (start, 256 soft tokens, end), and "hi".
		if n, err := c.Count(v); err != nil || n != 2*258+2 {
			t.Errorf("%s: count %d, %v; want %d", tc.name, n, err, 2*258+2)
		}
	}
	miss, err := ImagesOf(tmpl, one, imagetok.Flat(258), "")
	if err != nil || miss == nil {
		t.Fatalf("ImagesOf under flat:258: %+v, %v", miss, err)
	}
	v, _ := Mapper{}.Record([]byte(`{"messages":[{"role":"user","content":[{"type":"image","image":"a.png"}]}]}`))
	if _, err := (Counter{Template: tmpl, Tokens: one, Images: miss}).Count(v); !errors.Is(err, ErrImagePlaceholder) {
		t.Errorf("a placeholder no rule expands: %v; want ErrImagePlaceholder", err)
	}
}
