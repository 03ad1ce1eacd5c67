package imagetok

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black}), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpBytes builds the header of a lossless (VP8L) WebP of w×h followed by
// filler: DecodeConfig reads only the header.
func webpBytes(w, h int) []byte {
	var vp8l [5]byte
	vp8l[0] = 0x2f
	bits := uint32(w-1) | uint32(h-1)<<14
	binary.LittleEndian.PutUint32(vp8l[1:], bits)
	body := append([]byte("WEBPVP8L"), 0, 0, 0, 0)
	payload := append(vp8l[:], make([]byte, 27)...)
	binary.LittleEndian.PutUint32(body[8:], uint32(len(payload)))
	body = append(body, payload...)
	out := append([]byte("RIFF"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(body)))
	return append(out, body...)
}

// jpegWithApp returns a JPEG of w×h with n APP1 segments of the largest
// size (65533 payload bytes each) before its frame header.
func jpegWithApp(t testing.TB, w, h, n int) []byte {
	j := jpegBytes(t, w, h)
	var app []byte
	for range n {
		app = append(app, 0xff, 0xe1, 0xff, 0xff)
		app = append(app, make([]byte, 0xffff-2)...)
	}
	return append(append(append([]byte{}, j[:2]...), app...), j[2:]...)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestConfigFormats(t *testing.T) {
	tests := []struct {
		name   string
		b      []byte
		format string
		w, h   int
	}{
		{"png", pngBytes(t, 1920, 1080), "png", 1920, 1080},
		{"jpeg", jpegBytes(t, 1280, 720), "jpeg", 1280, 720},
		{"gif", gifBytes(t, 33, 17), "gif", 33, 17},
		{"webp", webpBytes(3840, 2160), "webp", 3840, 2160},
	}
	for _, tt := range tests {
		cr := &countingReader{r: bytes.NewReader(tt.b)}
		f, w, h, ok := Config(cr)
		if !ok || f != tt.format || w != tt.w || h != tt.h {
			t.Errorf("%s: Config = %q %dx%d %v; want %q %dx%d", tt.name, f, w, h, ok, tt.format, tt.w, tt.h)
		}
		if cr.n > MaxHeader {
			t.Errorf("%s: read %d bytes", tt.name, cr.n)
		}
	}
	// One maximal APP segment before the frame header is within the bound;
	// two are past it: unknown size, and still no more than MaxHeader read.
	one := jpegWithApp(t, 640, 480, 1)
	if len(one) <= 65535 {
		t.Fatalf("APP segment too small: %d", len(one))
	}
	if _, w, h, ok := Config(bytes.NewReader(one)); !ok || w != 640 || h != 480 {
		t.Errorf("jpeg after one 64 KiB APP1 segment: %dx%d %v, want 640x480", w, h, ok)
	}
	cr := &countingReader{r: bytes.NewReader(jpegWithApp(t, 640, 480, 2))}
	if _, _, _, ok := Config(cr); ok || cr.n > MaxHeader {
		t.Errorf("jpeg after two APP1 segments: ok %v after %d bytes; want unknown within %d", ok, cr.n, MaxHeader)
	}
	for _, bad := range [][]byte{nil, []byte("GIF89a"), []byte("\x89PNG\r\n\x1a\nxxxx"), []byte("<svg/>")} {
		if f, w, h, ok := Config(bytes.NewReader(bad)); ok {
			t.Errorf("Config(%q) = %s %dx%d, want unknown", bad, f, w, h)
		}
	}
}

// TestBase64HeaderOnly: a data URL of a large image is decoded only as far
// as its header: a few KB, however long the string.
func TestBase64HeaderOnly(t *testing.T) {
	img := pngBytes(t, 1920, 1080)
	huge := append(img, bytes.Repeat([]byte{0x55}, 8<<20)...) // 8 MB more after the PNG
	s := `"data:image/png;base64,` + base64.StdEncoding.EncodeToString(huge) + `"`
	media, b64, at, ok := jsonx.DataURL([]byte(s))
	if !ok || !b64 || media != "image/png" || at != len(`"data:image/png;base64,`) {
		t.Fatalf("dataURL = %q %v %d %v", media, b64, at, ok)
	}
	f, w, h, used, ok := base64Config([]byte(s), at)
	if !ok || f != "png" || w != 1920 || h != 1080 {
		t.Fatalf("base64Config = %s %dx%d %v", f, w, h, ok)
	}
	if used > 8<<10 {
		t.Errorf("read %d base64 bytes of %d for a PNG header", used, len(s))
	}
	// A JPEG whose frame header is past MaxHeader: unknown, and the read
	// stays within the bound's base64 length plus the decoder's buffer.
	far := jpegWithApp(t, 64, 64, 2)
	s = `"` + base64.StdEncoding.EncodeToString(far) + `"`
	if _, _, _, used, ok := base64Config([]byte(s), 1); ok || used > 4*MaxHeader/3+4096 {
		t.Errorf("far JPEG header: ok %v, used %d", ok, used)
	}
}

func TestFindContent(t *testing.T) {
	p := base64.StdEncoding.EncodeToString(pngBytes(t, 1920, 1080))
	j := base64.StdEncoding.EncodeToString(jpegBytes(t, 1280, 720))
	w := base64.StdEncoding.EncodeToString(webpBytes(800, 600))
	g := base64.StdEncoding.EncodeToString(gifBytes(t, 10, 20))
	// \/ escapes and \u002b in base64 (PHP and some JSON writers escape them).
	esc := strings.ReplaceAll(strings.ReplaceAll(p, "/", `\/`), "+", `\u002b`)
	content := `[
 {"type": "text", "text": "look"},
 {"type": "image_url", "image_url": {"url": "data:image/png;base64,` + p + `", "detail": "high"}},
 {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
 {"type": "image_url", "image_url": "data:image/jpeg;base64,` + j + `"},
 {"type": "input_image", "image_url": "data:image/webp;base64,` + w + `", "detail": "auto"},
 {"type": "input_image", "file_id": "file-123"},
 {"type": "computer_screenshot", "image_url": "data:image/gif;base64,` + g + `"},
 {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "` + g + `"}},
 {"type": "image", "source": {"type": "url", "url": "https://x.test/b.jpg"}},
 {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + esc + `"}}]},
 {"type": "image", "image": "data:image/png;base64,` + p + `"},
 {"type": "image", "image": {"bytes": "` + j + `", "path": "shot.jpg"}},
 {"type": "image"},
 {"type": "image_url", "image_url": {"url": "data:image/svg+xml,<svg/>"}}
]`
	var f Finder
	ims := f.Content([]byte(content), 3)
	type want struct {
		part   int
		kind   Kind
		src    Source
		detail string
		ref    string
		format string
		w, h   int
	}
	wants := []want{
		{1, KindImageURL, SourceInline, "high", "", "png", 1920, 1080},
		{2, KindImageURL, SourceLink, "low", "https://example.com/a.png", "", 0, 0},
		{3, KindImageURL, SourceInline, "", "", "jpeg", 1280, 720},
		{4, KindInputImage, SourceInline, "auto", "", "webp", 800, 600},
		{5, KindInputImage, SourceFileID, "", "file-123", "", 0, 0},
		{6, KindInputImage, SourceInline, "", "", "gif", 10, 20},
		{7, KindAnthropic, SourceInline, "", "", "gif", 10, 20},
		{8, KindAnthropic, SourceLink, "", "https://x.test/b.jpg", "", 0, 0},
		{9, KindAnthropic, SourceInline, "", "", "png", 1920, 1080},
		{10, KindImagePart, SourceInline, "", "", "png", 1920, 1080},
		{11, KindImagePart, SourceInline, "", "shot.jpg", "jpeg", 1280, 720},
		{12, KindImagePart, SourceNone, "", "", "", 0, 0},
		{13, KindImageURL, SourceInline, "", "", "", 0, 0},
	}
	if len(ims) != len(wants) {
		t.Fatalf("found %d images, want %d: %+v", len(ims), len(wants), ims)
	}
	for i, im := range ims {
		wt := wants[i]
		got := want{im.Part, im.Kind, im.Source, im.Detail, im.Ref, im.Format, im.Width, im.Height}
		if got != wt || im.Turn != 3 || im.Marker != -1 || im.Index != -1 {
			t.Errorf("image %d = %+v (turn %d), want %+v", i, got, im.Turn, wt)
		}
		part := content[im.Span[0]:im.Span[1]]
		if !strings.HasPrefix(part, "{") || !strings.HasSuffix(part, "}") || !strings.Contains(part, "image") {
			t.Errorf("image %d: span %v is %.60q", i, im.Span, part)
		}
	}
	// A string content has no parts; a list without images has none.
	if ims := f.Content([]byte(`"<image> hi"`), 0); ims != nil {
		t.Errorf("string content: %+v", ims)
	}
	if ims := f.Content([]byte(`[{"type":"text","text":"x"}]`), 0); ims != nil {
		t.Errorf("text parts: %+v", ims)
	}
}

// TestFindNeverOpensLinks: links and file ids are never opened (and never
// downloaded: the package has no network code); local paths are opened
// through Finder.Open, resolved against Dir.
func TestFindNeverOpensLinks(t *testing.T) {
	var opened []string
	f := Finder{Dir: "/data/set", Open: func(p string) (io.ReadCloser, error) {
		opened = append(opened, p)
		return io.NopCloser(bytes.NewReader(pngBytes(t, 7, 9))), nil
	}}
	// A file: URL naming an absolute local path is that file, never
	// relative to Dir; one naming another
	// host, a relative path or a malformed escape, is a link.
	content := `[{"type":"image_url","image_url":{"url":"http://h/x.png"}},{"type":"image","image":"file://h/etc/x.png"},{"type":"image","image":"s3://b/x.png"},{"type":"image","image":"file:imgs/x.png"},{"type":"image","image":"file:///bad%zz.png"},` +
		`{"type":"image","image":"file:///etc/x.png"},{"type":"image","image":"FILE://localhost/srv/a%20b.png"},{"type":"image","image":"imgs/a.png"},{"type":"image","image":"/abs/b.png"},{"type":"image","image":"C:\\x.png"}]`
	ims := f.Content([]byte(content), 0)
	want := []string{"/etc/x.png", "/srv/a b.png", filepath.Join("/data/set", "imgs/a.png"), "/abs/b.png", filepath.Join("/data/set", `C:\x.png`)}
	if runtime.GOOS == "windows" {
		t.Skip("the paths of file: URLs differ on Windows")
	}
	if strings.Join(opened, "|") != strings.Join(want, "|") {
		t.Errorf("opened %q, want %q", opened, want)
	}
	for i, im := range ims {
		link := i < 5
		if (im.Source == SourceLink) != link || link == im.Known() {
			t.Errorf("image %d: %s known %v", i, im.Source, im.Known())
		}
	}
}

func TestRecordMarkers(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "shots"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shots/1.png"), pngBytes(t, 1920, 1080), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shots/2.jpg"), jpegBytes(t, 1280, 720), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shots/bad.png"), []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := Finder{Dir: dir}
	turns := [][]byte{
		[]byte(`"<image>Open the settings. <image>"`),
		[]byte(`"Clicked."`),
		[]byte(`"\u003cimage\u003e next"`), // Go's encoding/json escapes < and >
		[]byte(`"<image>"`),
	}
	images := []byte(`["shots/1.png", "shots/2.jpg", "shots/missing.png", "shots/bad.png"]`)
	ims, err := f.Record(turns, images)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		turn, marker, index int
		w, h                int
	}
	wants := []want{{0, 0, 0, 1920, 1080}, {0, 26, 1, 1280, 720}, {2, 0, 2, 0, 0}, {3, 0, 3, 0, 0}}
	if len(ims) != len(wants) {
		t.Fatalf("got %d images: %+v", len(ims), ims)
	}
	for i, im := range ims {
		got := want{im.Turn, im.Marker, im.Index, im.Width, im.Height}
		if got != wants[i] || im.Kind != KindMarker || im.Source != SourceFile || im.Part != -1 {
			t.Errorf("image %d = %+v %s %s, want %+v", i, got, im.Kind, im.Source, wants[i])
		}
	}
	// More entries than markers: the rest are listed, with the error.
	ims, err = f.Record(turns[:1], images)
	if !errors.Is(err, ErrMarkerCount) || len(ims) != 4 || ims[2].Kind != KindListed || ims[2].Turn != -1 || ims[3].Index != 3 {
		t.Errorf("fewer markers: %v, %+v", err, ims)
	}
	// More markers than entries: the extra marker is of unknown size.
	ims, err = f.Record(turns, []byte(`["shots/1.png"]`))
	if !errors.Is(err, ErrMarkerCount) || len(ims) != 4 || ims[1].Index != -1 || ims[1].Source != SourceNone || !ims[0].Known() {
		t.Errorf("more markers: %v, %+v", err, ims)
	}
	// No images value: markers are text, not images.
	if ims, err := f.Record(turns, nil); err != nil || len(ims) != 0 {
		t.Errorf("no images list: %v, %+v", err, ims)
	}
	// datasets Image structs (as format/parquet and format/arrow render
	// them: bytes in base64), a null bytes with a path, ShareGPT4V's single
	// "image" string, and content parts mixed with markers.
	b := base64.StdEncoding.EncodeToString(gifBytes(t, 5, 6))
	rec := []byte(`{"images": [{"bytes": "` + b + `", "path": null}, {"bytes": null, "path": "shots/2.jpg"}], "messages": []}`)
	ims, err = f.Record([][]byte{[]byte(`"<image><image>"`), []byte(`[{"type":"image_url","image_url":{"url":"https://h/x.png"}}]`)}, RecordImages(rec))
	if err != nil || len(ims) != 3 || ims[0].Format != "gif" || ims[0].Source != SourceInline || ims[1].Width != 1280 || ims[2].Source != SourceLink || ims[2].Turn != 1 {
		t.Errorf("datasets Images: %v, %+v", err, ims)
	}
	rec = []byte(`{"id": "x", "image": "shots/1.png", "conversations": [{"from": "human", "value": "<image>\nWhat is shown?"}]}`)
	ims, err = f.Record([][]byte{[]byte(`"<image>\nWhat is shown?"`)}, RecordImages(rec))
	if err != nil || len(ims) != 1 || ims[0].Width != 1920 {
		t.Errorf("ShareGPT4V image: %v, %+v", err, ims)
	}
	if RecordImages([]byte(`{"images": null}`)) != nil || RecordImages([]byte(`{"a": 1}`)) != nil {
		t.Error("RecordImages of a null or absent list")
	}
}

func TestNoSize(t *testing.T) {
	f := Finder{NoSize: true, Open: func(string) (io.ReadCloser, error) { t.Fatal("opened a file with NoSize"); return nil, nil }}
	p := base64.StdEncoding.EncodeToString(pngBytes(t, 4, 4))
	ims := f.Content([]byte(`[{"type":"image_url","image_url":{"url":"data:image/png;base64,`+p+`"}},{"type":"image","image":"a.png"}]`), 0)
	if len(ims) != 2 || ims[0].Known() || ims[1].Known() || ims[1].Source != SourceFile {
		t.Errorf("NoSize: %+v", ims)
	}
}

// A Finder with Memo opens each file once however often a record's images
// are found again, and finds them as one without Memo does (a missing
// file's unknown size included); without Memo every find opens again.
func TestFinderMemo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), pngBytes(t, 640, 480), 0o644); err != nil {
		t.Fatal(err)
	}
	turns := [][]byte{[]byte(`"<image> and <image>"`), []byte(`"<image>"`)}
	images := []byte(`["a.png", "a.png", "missing.png"]`)
	for _, memo := range []bool{false, true} {
		opens := map[string]int{}
		f := Finder{Dir: dir, Memo: memo, Open: func(p string) (io.ReadCloser, error) {
			opens[p]++
			return openRegular(p)
		}}
		var first []Image
		for i := range 3 {
			ims, err := f.Record(turns, images)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = ims
			} else if !reflect.DeepEqual(ims, first) {
				t.Fatalf("memo %v, find %d: %+v, first %+v", memo, i, ims, first)
			}
		}
		if first[0].Width != 640 || first[1].Height != 480 || first[2].Known() {
			t.Errorf("memo %v: sizes %+v", memo, first)
		}
		want := 1
		if !memo {
			want = 6 // a.png twice per find, three finds
		}
		if n := opens[filepath.Join(dir, "a.png")]; n != want {
			t.Errorf("memo %v: a.png opened %d times, want %d", memo, n, want)
		}
		if n := opens[filepath.Join(dir, "missing.png")]; memo && n != 1 {
			t.Errorf("memo: missing.png opened %d times, want 1", n)
		}
	}
}
