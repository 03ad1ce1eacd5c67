package prepass

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// RemovedImage is the text that replaces an image the image step removes:
// "[image removed: 1920x1080 png]", or "[image removed]" when its size is
// unknown.
func RemovedImage(im imagetok.Image) string {
	if !im.Known() || im.Format == "" {
		return "[image removed]"
	}
	return fmt.Sprintf("[image removed: %dx%d %s]", im.Width, im.Height, im.Format)
}

// ImagesField returns the key and value of the record's images list as
// [imagetok.RecordImages] reads it ("images", else "image"); "" and nil
// when there is none.
func ImagesField(rec *traj.Record) (string, []byte) {
	for _, k := range []string{"images", "image"} {
		if v, ok := rec.Field(k); ok && len(v) > 0 && v[0] != 'n' {
			return k, v
		}
	}
	return "", nil
}

// FindImages returns the images of turns, the turns of rec, as f finds
// them: the image parts of their content lists and, paired with list
// (the record's images value, as [ImagesField] returns it, or its
// replacement from [Report.Fields]) by [imagetok.Finder.Paired], their
// "<image>" markers and their {"type": "image"} placeholder parts. The
// error is [imagetok.ErrMarkerCount]'s when markers and placeholders do
// not pair with the list's entries.
func FindImages(f *imagetok.Finder, turns []traj.Turn, list []byte) ([]imagetok.Image, error) {
	contents := make([][]byte, len(turns))
	for i, t := range turns {
		contents[i] = t.Content()
	}
	return f.Paired(contents, list)
}

// dropImages is the image step: within out[lo:hi], every image of a turn
// older than the newest image-bearing turn of the record becomes
// [RemovedImage]'s text, oldest turn first; change is called with each
// changed turn and reports whether the record now fits (the step stops
// then). It returns the images list entries of the removed markers and
// placeholders (ascending; nil when none was removed) and whether the
// record fits.
func dropImages(rec *traj.Record, out []traj.Turn, lo, hi int, cfg Config, change func(i int, nt traj.Turn, n int) bool) ([]int, bool) {
	f := cfg.Finder
	if f == nil {
		f = &imagetok.Finder{}
	}
	_, list := ImagesField(rec)
	ims, err := FindImages(f, out, list)
	// Markers and the placeholder parts paired with an entry are removed
	// only when they pair with the entries of the images value: the value
	// then loses the entries of those removed ([ImagesListWithout]), so
	// that they and the list stay paired.
	markers := err == nil && list != nil
	newest := -1
	for _, im := range ims {
		newest = max(newest, im.Turn)
	}
	byTurn := map[int][]imagetok.Image{}
	for _, im := range ims {
		bound := im.Kind == imagetok.KindMarker || im.Index >= 0
		if im.Turn < lo || im.Turn >= min(hi, newest) || bound && (!markers || im.Index < 0) {
			continue
		}
		byTurn[im.Turn] = append(byTurn[im.Turn], im)
	}
	if len(byTurn) == 0 {
		return nil, false
	}
	var dropped []int // list entries of removed markers and placeholders
	fits := false
	for i := lo; i < min(hi, newest) && !fits; i++ {
		if len(byTurn[i]) == 0 {
			continue
		}
		nt, ok := removeImages(rec, out[i], byTurn[i])
		if !ok {
			continue
		}
		for _, im := range byTurn[i] {
			if im.Index >= 0 {
				dropped = append(dropped, im.Index)
			}
		}
		fits = change(i, nt, len(byTurn[i]))
	}
	slices.Sort(dropped)
	return dropped, fits
}

// ImagesListWithout returns the top-level field that writes rec's images
// list ([ImagesField]) without the entries dropped (indices into it); a
// single value (ShareGPT4V's "image") whose entry 0 is dropped becomes
// null. ok is false when there is nothing to write: no list, or nothing
// dropped.
func ImagesListWithout(rec *traj.Record, dropped []int) (traj.Field, bool) {
	key, list := ImagesField(rec)
	if key == "" || len(dropped) == 0 {
		return traj.Field{}, false
	}
	if list[0] != '[' {
		if dropped[0] != 0 {
			return traj.Field{}, false
		}
		return traj.Field{Key: key, Value: []byte("null")}, true
	}
	return rec.ListWithout(key, func(i int) bool { _, found := slices.BinarySearch(dropped, i); return found })
}

// RegionMarkers returns the images list entries (ascending) of the
// "<image>" markers and placeholder parts in turns[start:end] of rec as
// read ([FindImages]), for a caller that replaces those turns by a summary
// and must drop their entries too, so that markers and list stay paired.
// It returns nil when rec has no list, or when its markers and
// placeholders do not pair with the list (the pairing is unknown: the
// list is then left as it is).
func RegionMarkers(rec *traj.Record, start, end int) []int {
	_, list := ImagesField(rec)
	if list == nil || start >= end {
		return nil
	}
	ims, err := FindImages(&imagetok.Finder{NoSize: true}, rec.Turns, list)
	if err != nil {
		return nil
	}
	var out []int
	for _, im := range ims {
		if im.Index >= 0 && im.Turn >= start && im.Turn < end {
			out = append(out, im.Index)
		}
	}
	return out
}

// removeImages returns t with the images ims (all of t, all in a content
// list or all markers of its string content) replaced by their text.
func removeImages(rec *traj.Record, t traj.Turn, ims []imagetok.Image) (traj.Turn, bool) {
	content := t.Content()
	if ims[0].Kind == imagetok.KindMarker {
		// The markers of a string content, replaced from the last so that
		// earlier offsets stay valid.
		s, ok := jsonx.Unquote(content[ims[0].Span[0]:ims[0].Span[1]])
		if !ok {
			return t, false
		}
		for k := len(ims) - 1; k >= 0; k-- {
			at := ims[k].Marker
			if at < 0 || !strings.HasPrefix(s[at:], imagetok.Marker) {
				return t, false
			}
			s = s[:at] + RemovedImage(ims[k]) + s[at+len(imagetok.Marker):]
		}
		return rec.SetContentJSON(t, jsonx.AppendString(nil, s))
	}
	// Parts of a content list: each image part (by its span, also inside a
	// tool_result) becomes a text part in the same position, written with
	// the separators of the part it replaces. The image's bytes are not
	// copied.
	spans := make([][2]int, 0, len(ims))
	for _, im := range ims {
		spans = append(spans, im.Span)
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	value := make([]byte, 0, 256)
	at := 0
	for k, sp := range spans {
		if sp[0] < at || k > 0 && sp == spans[k-1] {
			return t, false // overlapping spans: not a list of parts
		}
		value = append(value, content[at:sp[0]]...)
		value = textPart(value, content[sp[0]:sp[1]], RemovedImage(ims[imageAt(ims, sp)]))
		at = sp[1]
	}
	value = append(value, content[at:]...)
	return rec.SetContentJSON(t, value)
}

// imageAt is the index in ims of the image whose span is sp.
func imageAt(ims []imagetok.Image, sp [2]int) int {
	for k, im := range ims {
		if im.Span == sp {
			return k
		}
	}
	return 0
}

// textPart appends {"type": "text", "text": text} to dst, with the key and
// value separators of part, the image part it replaces.
func textPart(dst, part []byte, text string) []byte {
	keySep, valSep := []byte(": "), []byte(", ")
	if ms, _, err := jsonx.Members(part, 0); err == nil && len(ms) > 0 {
		keySep = part[ms[0].KeyStart+len(ms[0].Key) : ms[0].Start]
		if len(ms) > 1 {
			valSep = part[ms[0].End:ms[1].KeyStart]
		}
	}
	dst = append(dst, '{')
	dst = jsonx.AppendString(dst, "type")
	dst = append(dst, keySep...)
	dst = jsonx.AppendString(dst, "text")
	dst = append(dst, valSep...)
	dst = jsonx.AppendString(dst, "text")
	dst = append(dst, keySep...)
	dst = jsonx.AppendString(dst, text)
	return append(dst, '}')
}
