package imagetok_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"

	"github.com/trajcompress/trajcompress/imagetok"
)

// pngDataURL returns a data: URL of a blank PNG of the given size.
func pngDataURL(width, height int) string {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, width, height))); err != nil {
		panic(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// Find the images of a record's turns (their content values, raw JSON) and
// count each under three rules: a flat 85 tokens, OpenAI's tiles, and
// Qwen2.5-VL's processor (its preprocessor_config.json). A link is never
// downloaded: its size is unknown, and a rule counts it as the most one
// image can cost under it, saying it is not exact.
func ExampleFinder_Record() {
	turns := [][]byte{
		[]byte(`"What do these show?"`),
		[]byte(`[{"type": "text", "text": "a screenshot"}, {"type": "image_url", "image_url": {"url": "` + pngDataURL(1024, 768) + `", "detail": "high"}}]`),
		[]byte(`[{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]`),
	}
	var f imagetok.Finder
	images, err := f.Record(turns, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	qwen, err := imagetok.LoadQwen("testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	rules := []imagetok.Rule{imagetok.Flat(85), imagetok.OpenAI(), qwen.Rule()}
	for _, im := range images {
		fmt.Printf("turn %d: %s from %s, %q %dx%d\n", im.Turn, im.Kind, im.Source, im.Format, im.Width, im.Height)
		for _, r := range rules {
			n, exact := r.Tokens(im)
			fmt.Printf("  %s: %d tokens (exact %v)\n", r, n, exact)
		}
	}
	// Output:
	// turn 1: image_url from inline, "png" 1024x768
	//   flat:85: 85 tokens (exact true)
	//   openai: 765 tokens (exact true)
	//   qwen(patch=14,merge=2,min_pixels=3136,max_pixels=12845056): 1001 tokens (exact true)
	// turn 2: image_url from link, "" 0x0
	//   flat:85: 85 tokens (exact true)
	//   openai: 1445 tokens (exact false)
	//   qwen(patch=14,merge=2,min_pixels=3136,max_pixels=12845056): 16386 tokens (exact false)
}

// OpenAI's published rule: an image is scaled to fit 2048×2048, then its
// short side to 768, and costs 85 tokens plus 170 per 512-pixel tile; "low"
// detail is 85 whatever the size.
func ExampleOpenAITokens() {
	fmt.Println(imagetok.OpenAITokens(1024, 768, "high"))
	fmt.Println(imagetok.OpenAITokens(4096, 2048, "auto"))
	fmt.Println(imagetok.OpenAITokens(4096, 2048, "low"))
	// Output:
	// 765
	// 1105
	// 85
}

// Qwen2-VL's processor resizes an image to multiples of its factor (patch
// size × merge size, 28) within its pixel bounds; each 28×28 cell of the
// resized image is one <|image_pad|> token, and the chat template wraps
// them in two vision tokens.
func ExampleQwen_Tokens() {
	qwen, err := imagetok.LoadQwen("testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, gh, _ := qwen.Grid(1024, 768)
	pads, _ := qwen.Pads(1024, 768)
	n, _ := qwen.Tokens(1024, 768)
	fmt.Println(qwen.Factor(), gw, gh, pads, n)
	// Output:
	// 28 74 54 999 1001
}

// The --image-tokens grammar of the command line.
func ExampleParseRule() {
	for _, s := range []string{"flat:85", "openai", "flat:-1", "qwen"} {
		r, err := imagetok.ParseRule(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(r, r.Unknown())
	}
	// Output:
	// flat:85 85
	// openai 1445
	// error: image token rule "flat:-1": flat:N needs a whole number N from 0 to 1000000
	// error: image token rule "qwen": want openai or flat:N
}
