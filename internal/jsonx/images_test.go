package jsonx

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// Real images' base64: a 1×1 PNG and a 1×1 GIF.
const (
	pngB64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	gifB64 = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
)

func TestDataURL(t *testing.T) {
	cases := []struct {
		s     string
		media string
		b64   bool
		at    int
		ok    bool
	}{
		{`"data:image/png;base64,iVBOR"`, "image/png", true, 23, true},
		{`"DATA:Image/JPEG ; charset=x; Base64 ,/9j/"`, "image/jpeg", true, 38, true},
		{`"data:image\/png;base64,iVBOR"`, "image/png", true, 24, true},
		{`"\u0064ata:image/png;base64,iVBOR"`, "image/png", true, 28, true},
		{`"data:text/plain,hello"`, "text/plain", false, 17, true},
		{`"data:,x"`, "", false, 7, true},
		{`"data:image/png;base64"`, "", false, 0, false},    // no comma
		{`"dat,a:image/png;base64,x"`, "", false, 0, false}, // comma before "data:" ends
		{`"https://x/data:image/png;base64,"`, "", false, 0, false},
		{`"data:image/p\u00e9ng;base64,x"`, "", false, 0, false}, // a non-ASCII escape
		{`"data:` + strings.Repeat("a", 250) + `,x"`, strings.Repeat("a", 250), false, 257, true},
		{`"data:` + strings.Repeat("a", 251) + `,x"`, "", false, 0, false}, // header over 256 characters
		{`""`, "", false, 0, false},
		{`x`, "", false, 0, false},
	}
	for _, c := range cases {
		media, b64, at, ok := DataURL([]byte(c.s))
		if media != c.media || b64 != c.b64 || at != c.at || ok != c.ok {
			t.Errorf("DataURL(%.60s) = %q %v %d %v, want %q %v %d %v", c.s, media, b64, at, ok, c.media, c.b64, c.at, c.ok)
		}
		want := c.ok && c.b64 && strings.HasPrefix(c.media, "image/")
		if got := IsImageDataURL([]byte(c.s)); got != want {
			t.Errorf("IsImageDataURL(%.60s) = %v, want %v", c.s, got, want)
		}
	}
}

func TestIsImageDataURLNoAlloc(t *testing.T) {
	s := []byte(`"data:image/png;base64,` + pngB64 + `"`)
	text := []byte(`"do this, then that"`)
	if n := testing.AllocsPerRun(100, func() {
		if !IsImageDataURL(s) || IsImageDataURL(text) {
			t.Fatal("wrong")
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestInlineImages(t *testing.T) {
	const img = `"data:image/png;base64,` + pngB64 + `"`
	const png, gif = `"` + pngB64 + `"`, `"` + gifB64 + `"`
	cases := []struct {
		v    string
		want []string // the spans' bytes
	}{
		{`{"a": ` + img + `, "b": "text"}`, []string{img}},
		{`[` + img + `, "data:text/plain;base64,` + pngB64 + `", "data:image/svg+xml,<svg/>"]`, []string{img}},
		{`{"a": "data:image\/gif;base64,R0lGODlh"}`, []string{`"data:image\/gif;base64,R0lGODlh"`}},
		{`{"source": {"type": "base64", "media_type": "image/png", "data": ` + png + `}}`, []string{png}},
		{`{"source": {"data": ` + gif + `, "media_type": " IMAGE/webp", "type": "base64"}}`, []string{gif}},
		{`{"source": {"type": "base64", "media_type": "application/pdf", "data": ` + png + `}}`, nil},
		{`{"source": {"type": "text", "media_type": "image/png", "data": ` + png + `}}`, nil},
		{`{"source": {"type": "base64", "data": ` + png + `}}`, nil},
		{`{"images": [{"bytes": ` + png + `, "path": "a.png"}, {"path": null, "bytes": ` + gif + `}]}`, []string{png, gif}},
		{`{"bytes": ` + png + `, "path": "a.png", "size": 3}`, nil},
		{`{"bytes": null, "path": "a.png"}`, nil},
		{`{"bytes": ` + png + `, "path": 1}`, nil},
		{`{"b\u0079tes": ` + png + `, "path": "a"}`, []string{png}},
		{`{"audio": {"bytes": "UklGRiQIAABXQVZFZm10IBAAAAA=", "path": "a.wav"}}`, []string{`"UklGRiQIAABXQVZFZm10IBAAAAA="`}}, // datasets Audio
		{`{"args": "{\"url\": \"data:image/png;base64,` + pngB64 + `\"}"}`, nil},                                              // JSON in a string: not looked into
		{`"text"`, nil},
		// The shape of an image, but not an image's base64: texts.
		{`{"a": "data:image/png;base64,QUJD"}`, nil},                                                         // base64, no signature
		{`{"a": "data:image/png;base64,` + pngB64[:12] + ` token=x"}`, nil},                                  // a header, then text
		{`{"a": "data:image/png;base64,\nexport TOKEN=x"}`, nil},                                             // an escape
		{`{"a": "data:image/png;base64,"}`, nil},                                                             // empty
		{`{"a": "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="}`, nil}, // a text image
		{`{"source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}`, nil},
		{`{"images": [{"bytes": "token=abc", "path": null}]}`, nil},
		{`{"x": {"path": "notes.txt", "bytes": "` + pngB64[:16] + `\u002f"}}`, nil}, // "\u002f": not "\/"
	}
	for _, c := range cases {
		v := []byte(c.v)
		if !json.Valid(v) {
			t.Fatalf("bad case %s", c.v)
		}
		var got []string
		for _, sp := range InlineImages(v) {
			got = append(got, c.v[sp[0]:sp[1]])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("InlineImages(%s) = %q, want %q", c.v, got, c.want)
		}
		// MapTexts passes every other string to f and keeps the images.
		var seen []string
		out, _ := MapTexts(v, func(_, _, s string) (string, bool) {
			seen = append(seen, s)
			return "X", true
		})
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("MapTexts(%s) = %s: %s not kept", c.v, out, w)
			}
		}
		var all []string
		walkStrings(v, func(start, end int, _, _ string) {
			s, _ := Unquote(v[start:end])
			all = append(all, s)
		}, nil)
		if len(seen) != len(all)-len(c.want) {
			t.Errorf("MapTexts(%s) passed %q to f", c.v, seen)
		}
	}
}

// FuzzMapTexts: on any valid JSON, MapTexts keeps the inline images byte
// for byte and changes every other string as MapMembers does.
func FuzzMapTexts(f *testing.F) {
	for _, s := range []string{
		`{"url": "data:image/png;base64,` + pngB64 + `", "t": "x"}`,
		`{"source": {"type": "base64", "media_type": "image/png", "data": "` + gifB64 + `"}, "k": ["a"]}`,
		`[{"bytes": "` + pngB64 + `", "path": null}, "y"]`,
		`{"url": "data:image/png;base64,QUJD"}`,
		`{"a": "b"}`,
	} {
		f.Add(s)
	}
	mark := func(_, _, s string) (string, bool) { return s + "·", true }
	f.Fuzz(func(t *testing.T, in string) {
		v := []byte(in)
		if !Valid(v) {
			return
		}
		spans := InlineImages(v)
		out, _ := MapTexts(v, mark)
		if !Valid(out) {
			t.Fatalf("MapTexts(%s) = %s: not JSON", in, out)
		}
		// Rebuild the expected output: MapMembers' with the images' spans
		// restored.
		want, _ := MapMembers(v, func(k, sep, s string) (string, bool) { return mark(k, sep, s) })
		if len(spans) == 0 {
			if string(out) != string(want) {
				t.Fatalf("MapTexts(%s) = %s, MapMembers gives %s", in, out, want)
			}
			return
		}
		for _, sp := range spans {
			if !strings.Contains(string(out), in[sp[0]:sp[1]]) {
				t.Fatalf("MapTexts(%s) = %s: image %s not kept", in, out, in[sp[0]:sp[1]])
			}
		}
	})
}

// TestIsMediaBase64: what walkStrings keeps as an image's bytes: strict
// base64 of a file that starts with an image or audio signature.
func TestIsMediaBase64(t *testing.T) {
	tail := "\x00\x01\x02\x03\xfb\xff\xfe\x10 some bytes after the header \xf0\x9f"
	yes := map[string]string{
		"png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"jpeg": "\xff\xd8\xff\xe0\x00\x10JFIF",
		"gif":  "GIF89a\x01\x00\x01\x00",
		"gif7": "GIF87a\x01\x00\x01\x00",
		"webp": "RIFF\x1a\x00\x00\x00WEBPVP8L",
		"bmp":  "BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00",
		"tiff": "II*\x00\x08\x00\x00\x00",
		"tifm": "MM\x00*\x00\x00\x00\x08",
		"avif": "\x00\x00\x00\x1cftypavif\x00\x00",
		"heic": "\x00\x00\x00\x18ftypheic\x00\x00",
		"wav":  "RIFF\x24\x08\x00\x00WAVEfmt ",
		"flac": "fLaC\x00\x00\x00\x22",
		"mp3":  "ID3\x04\x00\x00\x00\x00",
		"ogg":  "OggS\x00\x02\x00\x00",
	}
	no := map[string]string{
		"text":     "token=ghp_abcdef",
		"riff avi": "RIFF\x1a\x00\x00\x00AVI LIST",
		"bmp?":     "BM\x3a\x00\x00\x00\x01\x00\x00\x00\x36\x00", // reserved bytes not zero
		"ftyp big": "\x00\x01\x00\x1cftypavif\x00\x00",           // a 64 KiB ftyp box
		"gif8":     "GIF8xa\x01\x00",
		"png cut":  "\x89PNG\r\n",
		"pdf":      "%PDF-1.7\n%\xe2\xe3",
		"zip":      "PK\x03\x04\x14\x00",
	}
	str := func(b64 string) []byte { return []byte(`"` + b64 + `"`) }
	for name, sig := range yes {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			for _, n := range []int{0, 1, 2, len(tail)} { // every padding
				b64 := enc.EncodeToString([]byte(sig + tail[:n]))
				if !isMediaBase64(str(b64), 1) {
					t.Errorf("%s: %s not kept", name, b64)
				}
				if esc := strings.ReplaceAll(b64, "/", `\/`); esc != b64 && !isMediaBase64(str(esc), 1) {
					t.Errorf("%s: %s (\\/) not kept", name, esc)
				}
				// Anything that is not base64, anywhere, makes it a text.
				for _, bad := range []string{" ", "_", "-", ".", ":", `\n`, `\u0041`, `\\`, "=A", "é"} {
					for _, at := range []int{0, 3, len(b64) / 2, len(b64)} {
						if s := b64[:at] + bad + b64[at:]; isMediaBase64(str(s), 1) {
							t.Errorf("%s: %s kept", name, s)
						}
					}
				}
			}
			b64 := base64.StdEncoding.EncodeToString([]byte(sig + tail))
			for _, s := range []string{b64 + "=", b64 + "===", b64 + "=A="} {
				if isMediaBase64(str(s), 1) {
					t.Errorf("%s: %s (bad padding) kept", name, s)
				}
			}
		}
	}
	for name, sig := range no {
		if b64 := base64.StdEncoding.EncodeToString([]byte(sig + tail)); isMediaBase64(str(b64), 1) {
			t.Errorf("%s: %s kept", name, b64)
		}
	}
	for _, s := range []string{`""`, `"="`, `"=="`, `"iVBORw0KGgo"`[:5]} {
		if isMediaBase64([]byte(s), 1) {
			t.Errorf("%s kept", s)
		}
	}
	// The offset: a data URL's data.
	if s := `"data:image/png;base64,` + pngB64 + `"`; !isMediaBase64([]byte(s), 23) || isMediaBase64([]byte(s), 1) {
		t.Errorf("offset not honoured")
	}
}

// TestIsMediaBase64NoAlloc: the check of a payload allocates nothing.
func TestIsMediaBase64NoAlloc(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\xfb\xff\xbf", 1000)))
	s := []byte(`"data:image/png;base64,` + strings.ReplaceAll(b64, "/", `\/`) + `"`)
	if n := testing.AllocsPerRun(100, func() {
		if !isImageDataURLBase64(s) {
			t.Fatal("wrong")
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// BenchmarkIsMediaBase64: the check of a 20 MB screenshot's base64, as
// written by Python's json (no escape) and with every '/' escaped.
func BenchmarkIsMediaBase64(b *testing.B) {
	raw := make([]byte, 15<<20)
	rng := rand.New(rand.NewPCG(1, 2)) // as random as compressed pixels
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	copy(raw, "\x89PNG\r\n\x1a\n")
	b64 := base64.StdEncoding.EncodeToString(raw)
	for _, c := range []struct{ name, s string }{
		{"plain", `"` + b64 + `"`},
		{"escaped", `"` + strings.ReplaceAll(b64, "/", `\/`) + `"`},
	} {
		s := []byte(c.s)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if !isMediaBase64(s, 1) {
					b.Fatal("not kept")
				}
			}
		})
	}
}

// FuzzIsMediaBase64: isMediaBase64 agrees with a plain reading: "\/"
// unescaped, a regular expression, and encoding/base64 for the head.
func FuzzIsMediaBase64(f *testing.F) {
	for _, s := range []string{pngB64, gifB64, `\/9j\/4AAQSkZJRg==`, "UklGRhoAAABXRUJQVlA4TA", "QUJD", "iVBOR w0KGgo", "=", ""} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
	f.Fuzz(func(t *testing.T, body string) {
		raw := []byte(`"` + body + `"`)
		if !Valid(raw) {
			return
		}
		got := isMediaBase64(raw, 1)
		want := false
		if strings.Count(body, `\`) == strings.Count(body, `\/`) {
			b := strings.ReplaceAll(body, `\/`, "/")
			chars := len(strings.TrimRight(b, "="))
			if re.MatchString(b) && (chars == len(b) || (len(b))%4 == 0) {
				head := strings.TrimRight(b, "=")
				head = head[:min(len(head), headLen/3*4)]
				// Filled with 'A' (zero bits) to whole quanta, then cut
				// to the bytes the characters spell in full.
				dec, err := base64.StdEncoding.DecodeString(head + strings.Repeat("A", (4-len(head)%4)%4))
				if err != nil {
					t.Fatal(err)
				}
				dec = dec[:len(head)*6/8]
				want = mediaSignature(dec)
			}
		}
		if got != want {
			t.Fatalf("isMediaBase64(%q) = %v, want %v", body, got, want)
		}
	})
}
