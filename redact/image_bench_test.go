package redact

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

// pngBase64 returns the base64 of a real w×h PNG followed by n bytes of
// noise (trailing data a decoder ignores after IEND), so that its text is
// as random as a screenshot's compressed pixels.
func pngBase64(tb testing.TB, w, h, n int) string {
	tb.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, n)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	buf.Write(noise)
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// plantB64 puts secret into the base64 text b64 at about offset at,
// between a '/' and a '+' (base64 characters that are not word characters,
// so a rule's \b holds at both ends), keeping its length a multiple of 4.
func plantB64(b64, secret string, at int) string {
	ins := "/" + secret + "+"
	ins += strings.Repeat("A", (4-len(ins)%4)%4)
	at -= at % 4
	return b64[:at] + ins + b64[at+len(ins):]
}

// BenchmarkRedactLineImage: RedactLine on a record holding a 20 MB base64
// screenshot as an OpenAI data URL: with no finding, with a chance match
// inside the base64 (an AWS key id), with that match plus a real secret
// in the text part beside it, and with no finding but the base64's '/'
// escaped.
func BenchmarkRedactLineImage(b *testing.B) {
	b64 := pngBase64(b, 64, 64, 15<<20)
	line := func(data, text string) []byte {
		return []byte(`{"messages": [{"role": "user", "content": [{"type": "text", "text": "` + text +
			`"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,` + data + `"}}]}]}`)
	}
	chance := plantB64(b64, testAWS, len(b64)/2)
	cases := []struct {
		name string
		line []byte
	}{
		{"clean", line(b64, "what is on the screen?")},
		{"chance", line(chance, "what is on the screen?")},
		{"chance+text", line(chance, "my key is "+testAWS)},
		// Every '/' written "\/" (PHP's json_encode): no finding, but the
		// escape sends the line to the string-by-string pass.
		{"clean-escaped", line(strings.ReplaceAll(b64, "/", `\/`), "what is on the screen?")},
	}
	r := Default()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			b.ReportAllocs()
			for b.Loop() {
				r.RedactLine(c.line)
			}
		})
	}
}
