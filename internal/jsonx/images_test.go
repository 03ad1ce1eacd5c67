package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
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
		{`"\u0064ata:image/png;base64,AAAA"`, "image/png", true, 28, true},
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
	s := []byte(`"data:image/png;base64,` + strings.Repeat("A", 1000) + `"`)
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
	const img = `"data:image/png;base64,AAAA"`
	cases := []struct {
		v    string
		want []string // the spans' bytes
	}{
		{`{"a": ` + img + `, "b": "text"}`, []string{img}},
		{`[` + img + `, "data:text/plain;base64,AAAA", "data:image/svg+xml,<svg/>"]`, []string{img}},
		{`{"source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}`, []string{`"QUJD"`}},
		{`{"source": {"data": "QUJD", "media_type": " IMAGE/webp", "type": "base64"}}`, []string{`"QUJD"`}},
		{`{"source": {"type": "base64", "media_type": "application/pdf", "data": "QUJD"}}`, nil},
		{`{"source": {"type": "text", "media_type": "image/png", "data": "QUJD"}}`, nil},
		{`{"source": {"type": "base64", "data": "QUJD"}}`, nil},
		{`{"images": [{"bytes": "QUJD", "path": "a.png"}, {"path": null, "bytes": "REVG"}]}`, []string{`"QUJD"`, `"REVG"`}},
		{`{"bytes": "QUJD", "path": "a.png", "size": 3}`, nil},
		{`{"bytes": null, "path": "a.png"}`, nil},
		{`{"bytes": "QUJD", "path": 1}`, nil},
		{`{"b\u0079tes": "QUJD", "path": "a"}`, []string{`"QUJD"`}},
		{`{"args": "{\"url\": \"data:image/png;base64,AAAA\"}"}`, nil}, // JSON in a string: not looked into
		{`"text"`, nil},
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
		`{"url": "data:image/png;base64,AAAA", "t": "x"}`,
		`{"source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}, "k": ["a"]}`,
		`[{"bytes": "QUJD", "path": null}, "y"]`,
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
