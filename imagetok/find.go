package imagetok

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Kind is the shape an image was found in.
type Kind uint8

// The shapes.
const (
	// KindImageURL: OpenAI Chat Completions {"type": "image_url",
	// "image_url": {"url": …, "detail": …}} (or "image_url" a string).
	KindImageURL Kind = iota + 1
	// KindInputImage: OpenAI Responses {"type": "input_image",
	// "image_url": "…" | "file_id": "…", "detail": …}, and the computer-use
	// tool's {"type": "computer_screenshot", "image_url": "…"}.
	KindInputImage
	// KindAnthropic: {"type": "image", "source": {"type": "base64",
	// "media_type": …, "data": …} | {"type": "url", "url": …} |
	// {"type": "file", "file_id": …}}, also inside a tool_result's content.
	KindAnthropic
	// KindImagePart: {"type": "image", "image": "path | URL | data: URL"}
	// (Qwen's chat format, qwen-vl-utils) or "image" a datasets Image.
	KindImagePart
	// KindDatasets: a Hugging Face datasets Image value {"bytes": …,
	// "path": …} (bytes as base64, as format/parquet and format/arrow
	// write binary in JSON), as a record's images entry.
	KindDatasets
	// KindMarker: an "<image>" marker in a turn's text, paired in order
	// with the record's images list (LLaMA-Factory, ShareGPT4V).
	KindMarker
	// KindListed: an entry of the record's images list that no marker
	// claims (LLaMA-Factory refuses such a record; it is still counted).
	KindListed
)

var kindNames = [...]string{"", "image_url", "input_image", "anthropic", "image", "datasets", "marker", "listed"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + fmt.Sprint(int(k)) + ")"
}

// Source is where an image's bytes are.
type Source uint8

// The sources.
const (
	SourceNone   Source = iota // nothing to read (an empty or null value)
	SourceInline               // in the record: a data: URL, base64 data, datasets bytes
	SourceLink                 // a URL: never downloaded, so of unknown size
	SourceFile                 // a local path, relative to the dataset file's directory
	SourceFileID               // a provider's file id: of unknown size
)

var sourceNames = [...]string{"none", "inline", "link", "file", "file_id"}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "source(" + fmt.Sprint(int(s)) + ")"
}

// An Image is one image found in a record.
type Image struct {
	Turn int // index of the turn holding it; -1 for a [KindListed] entry
	// Part is the index of the content part in the turn's content list
	// (for an image nested in a tool_result, the tool_result's index); -1
	// for a marker or a listed entry.
	Part int
	// Span is the byte span of the image's part object within the turn's
	// content value (for a marker, the span of the whole content string;
	// for a listed entry, of the entry within the images value).
	Span [2]int
	// Marker is the byte offset of "<image>" in the turn's decoded text,
	// -1 when the image is not a marker.
	Marker int
	// Index is the image's index in the record's images list, -1 when it
	// is not from that list.
	Index  int
	Kind   Kind
	Source Source
	Detail string // OpenAI detail: "low", "high", "auto"; "" when absent
	// Ref is the link, path or file id as written ("" for inline data).
	Ref string
	// Format is the header's format ("png", "jpeg", "gif", "webp"), ""
	// when the size is unknown.
	Format        string
	Width, Height int // 0 when unknown
}

// Known reports whether im's size was read from its header.
func (im Image) Known() bool { return im.Width > 0 && im.Height > 0 }

// Marker is the text a LLaMA-Factory / ShareGPT4V dataset writes where an
// image of its images list goes.
const Marker = "<image>"

// ErrMarkerCount is returned with the images of a record whose number of
// "<image>" markers differs from the length of its images list.
var ErrMarkerCount = errors.New("imagetok: the number of <image> markers differs from the images list")

// A Finder finds the images of records and reads their sizes. The zero
// Finder reads sizes, resolving relative paths against the working
// directory.
type Finder struct {
	// Dir is the directory relative image paths are resolved against: the
	// directory of the dataset file (LLaMA-Factory's images paths, a
	// datasets Image's path).
	Dir string
	// Open opens a local image file for its header; nil opens the file
	// when it is a regular file (a FIFO, device or directory is of unknown
	// size, never read; only the first [MaxHeader] bytes are read). Tests
	// and callers that must not touch the file system set it.
	Open OpenFunc
	// NoSize skips reading sizes: images are found, all of unknown size.
	NoSize bool
	// Memo makes the Finder remember each local file's header as read
	// (by resolved path), so that finding a record's images again (after
	// the prepass, for the summary, for the template's count) opens no
	// file twice. A Finder with Memo set is for one goroutine; its memory
	// grows with the files it reads, so give it one record's images.
	Memo bool

	files map[string]fileHeader // Memo: by resolved path
}

// fileHeader is what [Finder.fileConfig] read of one file.
type fileHeader struct {
	format string
	w, h   int
	ok     bool
}

// Content returns the images of one turn's content value (raw JSON, as
// written in the record): the image parts of a content list, or nothing
// for a string (markers are found by [Finder.Record], which pairs them
// with the images list). turn is copied into each Image.
func (f *Finder) Content(content []byte, turn int) []Image {
	i := jsonx.SkipSpace(content, 0)
	if i >= len(content) || content[i] != '[' {
		return nil
	}
	var out []Image
	for p, el := range jsonx.Elements(content, i) {
		out = f.part(content, el, turn, p, out)
	}
	return out
}

// part appends the image(s) of the part object at content[el[0]:el[1]].
func (f *Finder) part(content []byte, el [2]int, turn, p int, out []Image) []Image {
	ms, _, err := jsonx.Members(content[:el[1]], el[0])
	if err != nil {
		return out
	}
	str := func(ms []jsonx.Member, k string) ([]byte, bool) {
		m, ok := jsonx.Find(ms, k)
		if ok && content[m.Start] == '"' {
			return content[m.Start:m.End], true
		}
		return nil, false
	}
	text := func(ms []jsonx.Member, k string) string {
		if v, ok := str(ms, k); ok {
			s, _ := jsonx.Unquote(v)
			return s
		}
		return ""
	}
	typ := text(ms, "type")
	im := Image{Turn: turn, Part: p, Span: el, Marker: -1, Index: -1}
	switch typ {
	case "image_url":
		im.Kind = KindImageURL
		m, ok := jsonx.Find(ms, "image_url")
		if !ok {
			break
		}
		v := content[m.Start:m.End]
		if v[0] == '"' {
			f.url(&im, v)
			break
		}
		ims, _, err := jsonx.Members(content[:m.End], m.Start)
		if err != nil {
			break
		}
		im.Detail = text(ims, "detail")
		if u, ok := str(ims, "url"); ok {
			f.url(&im, u)
		}
	case "input_image", "computer_screenshot":
		im.Kind = KindInputImage
		im.Detail = text(ms, "detail")
		if u, ok := str(ms, "image_url"); ok {
			f.url(&im, u)
		} else if id := text(ms, "file_id"); id != "" {
			im.Source, im.Ref = SourceFileID, id
		}
	case "image":
		if m, ok := jsonx.Find(ms, "source"); ok && content[m.Start] == '{' {
			im.Kind = KindAnthropic
			sms, _, err := jsonx.Members(content[:m.End], m.Start)
			if err != nil {
				break
			}
			switch text(sms, "type") {
			case "base64":
				if d, ok := str(sms, "data"); ok {
					im.Source = SourceInline
					f.inline(&im, d, 1)
				}
			case "url":
				if u, ok := str(sms, "url"); ok {
					f.url(&im, u)
				}
			case "file":
				im.Source, im.Ref = SourceFileID, text(sms, "file_id")
			}
			break
		}
		im.Kind = KindImagePart
		m, ok := jsonx.Find(ms, "image")
		if !ok {
			// {"type": "image"} alone: a placeholder whose image is
			// elsewhere (transformers' chat format with images passed
			// separately). Found, of unknown size.
			break
		}
		f.value(&im, content[m.Start:m.End])
	case "tool_result":
		// Anthropic: images inside a tool result's content list.
		if m, ok := jsonx.Find(ms, "content"); ok && content[m.Start] == '[' {
			for _, sub := range jsonx.Elements(content[:m.End], m.Start) {
				n := len(out)
				out = f.part(content, sub, turn, p, out)
				for k := n; k < len(out); k++ {
					out[k].Part = p
				}
			}
		}
		return out
	default:
		return out
	}
	return append(out, im)
}

// value reads an image given as a JSON value: a string (data: URL, link or
// path) or a datasets Image object {"bytes", "path"}.
func (f *Finder) value(im *Image, v []byte) {
	switch v[0] {
	case '"':
		f.url(im, v)
	case '{':
		ms, _, err := jsonx.Members(v, 0)
		if err != nil {
			return
		}
		if m, ok := jsonx.Find(ms, "bytes"); ok && v[m.Start] == '"' {
			im.Source = SourceInline
			if p, ok := jsonx.Find(ms, "path"); ok && v[p.Start] == '"' {
				im.Ref, _ = jsonx.Unquote(v[p.Start:p.End])
			}
			f.inline(im, v[m.Start:m.End], 1)
			return
		}
		if m, ok := jsonx.Find(ms, "path"); ok && v[m.Start] == '"' {
			f.url(im, v[m.Start:m.End])
		}
	}
}

// url reads an image given as a string: a data: URL, a link or a path.
func (f *Finder) url(im *Image, s []byte) {
	if isDataURL(s) {
		im.Source = SourceInline
		if _, b64, at, ok := jsonx.DataURL(s); ok && b64 {
			f.inline(im, s, at)
		}
		return
	}
	ref, _ := jsonx.Unquote(s)
	ref = strings.Clone(ref)
	im.Ref = ref
	switch {
	case ref == "":
		im.Source = SourceNone
	case hasScheme(ref):
		im.Source = SourceLink
		if path, ok := fileURLPath(ref); ok {
			im.Source = SourceFile
			if !f.NoSize {
				im.Format, im.Width, im.Height, _ = f.fileConfig(path)
			}
		}
	default:
		im.Source = SourceFile
		if !f.NoSize {
			im.Format, im.Width, im.Height, _ = f.fileConfig(ref)
		}
	}
}

// inline reads the size of base64 data starting at raw offset at of the
// JSON string s.
func (f *Finder) inline(im *Image, s []byte, at int) {
	if f.NoSize {
		return
	}
	im.Format, im.Width, im.Height, _, _ = base64Config(s, at)
}

// fileURLPath returns the local path of a file: URL naming an absolute
// path on this machine ("file:///shots/1.png", "file://localhost/…"),
// percent-escapes decoded; false for any other URL (another host, a
// relative "file:shots/1.png", a malformed escape).
func fileURLPath(ref string) (string, bool) {
	if len(ref) < 7 || !strings.EqualFold(ref[:7], "file://") {
		return "", false
	}
	rest := ref[7:]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return "", false
	}
	if host := rest[:slash]; host != "" && !strings.EqualFold(host, "localhost") {
		return "", false
	}
	p, ok := unescapePath(rest[slash:])
	if !ok {
		return "", false
	}
	// file:///C:/shots/1.png names C:/shots/1.png on Windows.
	if runtime.GOOS == "windows" && len(p) >= 3 && p[2] == ':' && ('a' <= p[1]|0x20 && p[1]|0x20 <= 'z') {
		p = p[1:]
	}
	return p, true
}

// unescapePath decodes the %XX escapes of a URL path; false when one is
// malformed.
func unescapePath(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, lo := unhex(s[i+1]), unhex(s[i+2])
		if hi < 0 || lo < 0 {
			return "", false
		}
		b = append(b, byte(hi<<4|lo))
		i += 2
	}
	return string(b), true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

// hasScheme reports whether ref starts with a URL scheme other than a
// Windows drive letter ("https://…", "file:…", "s3://…").
func hasScheme(ref string) bool {
	i := strings.IndexByte(ref, ':')
	if i < 2 {
		return false
	}
	for j := 0; j < i; j++ {
		c := ref[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// Record returns every image of a record, in order: for each turn, the
// images of its content list ([Finder.Content]) and, when the record has
// an images value, the "<image>" markers of its text, then the entries of images no marker claimed (as
// [KindListed]). turns are the turns' content values (raw JSON); images
// is the record's images value (the "images" list, or ShareGPT4V's single
// "image"; nil when absent), whose entries are paths, links, data: URLs
// or datasets Image objects. The n-th marker of the record takes the n-th
// entry, as LLaMA-Factory pairs them. When the counts differ the images
// are returned with [ErrMarkerCount]: markers without an entry are of
// unknown size.
func (f *Finder) Record(turns [][]byte, images []byte) ([]Image, error) {
	entries := listEntries(images)
	var out []Image
	next := 0
	for t, c := range turns {
		out = append(out, f.Content(c, t)...)
		i := jsonx.SkipSpace(c, 0)
		if images == nil || i >= len(c) || c[i] != '"' || !containsMarker(c[i:]) {
			continue
		}
		end := jsonx.SkipString(c, i)
		s, _ := jsonx.Unquote(c[i:end])
		for off := 0; ; {
			k := strings.Index(s[off:], Marker)
			if k < 0 {
				break
			}
			im := Image{Turn: t, Part: -1, Span: [2]int{i, end}, Marker: off + k, Index: -1, Kind: KindMarker}
			if next < len(entries) {
				e := entries[next]
				im.Index = next
				f.value(&im, images[e[0]:e[1]])
			}
			next++
			out = append(out, im)
			off += k + len(Marker)
		}
	}
	for k := next; k < len(entries); k++ {
		e := entries[k]
		im := Image{Turn: -1, Part: -1, Span: e, Marker: -1, Index: k, Kind: KindListed}
		f.value(&im, images[e[0]:e[1]])
		out = append(out, im)
	}
	if next != len(entries) {
		return out, fmt.Errorf("%w: %d markers, %d images", ErrMarkerCount, next, len(entries))
	}
	return out, nil
}

// listEntries returns the spans of the entries of an images value: each
// element of a list, or the value itself when it is a string or object.
func listEntries(v []byte) [][2]int {
	i := jsonx.SkipSpace(v, 0)
	if i >= len(v) {
		return nil
	}
	switch v[i] {
	case '[':
		return jsonx.Elements(v, i)
	case '"', '{':
		return [][2]int{{i, jsonx.SkipValue(v, i)}}
	}
	return nil
}

// containsMarker reports whether the raw JSON string s may hold a marker:
// "<image>" as written, or with '<' or '>' escaped (\u003c, as Go's
// encoding/json writes it).
func containsMarker(s []byte) bool {
	return bytes.Contains(s, []byte("image>")) || bytes.Contains(s, []byte(`image\u003e`)) || bytes.Contains(s, []byte(`image\u003E`))
}

// RecordImages returns the record's images value: the "images" member of
// the record object, or else "image" (ShareGPT4V, LLaVA); nil when
// neither is present or the value is null.
func RecordImages(record []byte) []byte {
	for _, k := range []string{"images", "image"} {
		if v, ok := jsonx.Lookup(record, k); ok && len(v) > 0 && v[0] != 'n' {
			return v
		}
	}
	return nil
}
