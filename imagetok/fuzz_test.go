package imagetok

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
)

// FuzzConfig: on any bytes, Config neither panics nor reads more than
// MaxHeader bytes; a size it reports is positive; and the same bytes in
// base64 inside a JSON string (a data: URL, Anthropic data, datasets bytes)
// give the same answer while consuming no more base64 than the bound's
// encoding plus the decoder's buffer.
func FuzzConfig(f *testing.F) {
	f.Add(pngBytes(f, 3, 2))
	f.Add(jpegBytes(f, 5, 4))
	f.Add(gifBytes(f, 1, 1))
	f.Add(webpBytes(16383, 2))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8X"))
	f.Add([]byte("\xff\xd8\xff\xe1\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cr := &countingReader{r: bytes.NewReader(b)}
		format, w, h, ok := Config(cr)
		if cr.n > MaxHeader {
			t.Fatalf("read %d bytes", cr.n)
		}
		if ok && (w <= 0 || h <= 0 || format == "") {
			t.Fatalf("ok with %q %dx%d", format, w, h)
		}
		s := []byte(`"` + base64.StdEncoding.EncodeToString(b) + `"`)
		f2, w2, h2, used, ok2 := base64Config(s, 1)
		if ok2 != ok || f2 != format || w2 != w || h2 != h {
			t.Fatalf("base64: %q %dx%d %v; raw: %q %dx%d %v", f2, w2, h2, ok2, format, w, h, ok)
		}
		if used > 4*MaxHeader/3+4096 {
			t.Fatalf("consumed %d base64 bytes", used)
		}
	})
}

// FuzzFind: on any valid JSON content value and images value, Content and
// Record neither panic nor open a link; every file opened is read through
// a reader that fails the test past MaxHeader bytes; every span lies
// within its value; sizes are positive or zero together.
func FuzzFind(f *testing.F) {
	p := base64.StdEncoding.EncodeToString(pngBytes(f, 9, 7))
	f.Add(`[{"type":"image_url","image_url":{"url":"data:image/png;base64,`+p+`","detail":"low"}}]`, `null`)
	f.Add(`"<image>a<image>"`, `["a.png", {"bytes": "`+p+`", "path": "b.png"}, "https://x/y.png"]`)
	f.Add(`[{"type":"tool_result","content":[{"type":"image","source":{"type":"base64","data":"`+p+`"}}]}]`, `"c.png"`)
	f.Add(`[{"type":"input_image","image_url":"data:,x"},{"type":"image","image":{"bytes":null,"path":"d.png"}}]`, `[]`)
	f.Add(`"\u003cimage\u003e"`, `[{"path": "e.png"}]`)
	f.Fuzz(func(t *testing.T, content, images string) {
		if !json.Valid([]byte(content)) || !json.Valid([]byte(images)) {
			return
		}
		opened := map[string]bool{}
		fi := Finder{Dir: "d", Open: func(path string) (io.ReadCloser, error) {
			opened[path] = true
			return io.NopCloser(&boundedReader{t: t, r: bytes.NewReader(pngBytes(t, 3, 3))}), nil
		}}
		var imgs []byte
		if images != "null" {
			imgs = []byte(images)
		}
		ims, _ := fi.Record([][]byte{[]byte(content)}, imgs)
		for _, im := range ims {
			var v string
			switch im.Kind {
			case KindListed:
				v = images
			default:
				v = content
			}
			if im.Span[0] < 0 || im.Span[1] > len(v) || im.Span[0] > im.Span[1] {
				t.Fatalf("span %v outside %d bytes", im.Span, len(v))
			}
			if (im.Width > 0) != (im.Height > 0) || im.Known() != (im.Format != "") {
				t.Fatalf("size %dx%d format %q", im.Width, im.Height, im.Format)
			}
			if im.Source == SourceLink && (im.Known() || opened[filepath.Join("d", im.Ref)]) {
				t.Fatalf("a link opened or with a size: %+v", im)
			}
		}
	})
}

// boundedReader fails the test when more than MaxHeader bytes are read.
type boundedReader struct {
	t *testing.T
	r io.Reader
	n int
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += n
	if b.n > MaxHeader {
		b.t.Fatalf("read %d bytes of a file", b.n)
	}
	return n, err
}
