package pipeline

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// imageState is the record's images as read and what each counts, written
// by countImages (nil when it has none), and the finder every search of
// them uses.
type imageState struct {
	images []imagetok.Image
	tok    []int // per image, by Options.Counting.ImageRule
	// listed is what the images-list entries that no marker claims count
	// (part of measured.adj without a template)
	listed int
	find   *imagetok.Finder // made once per record, on first use (finder)
}

// countImages finds the images of the record as read (package imagetok:
// the image parts of every turn's content list, and the "<image>" markers
// of its texts paired in order with the record's images list, whose
// relative paths name files beside the record's input file) and counts
// each by the run's rule into its turn's Extra; the images-list entries no
// marker claims count for the whole record (r.img.listed). A record without a
// content list and without an images value costs one look at each turn's
// first content byte.
func (c *Compressor) countImages(r *record) {
	key, images := prepass.ImagesField(r.rec)
	lists := false
	for _, t := range r.rec.Turns {
		if v := t.Content(); len(v) > 0 && v[0] == '[' {
			lists = true
			break
		}
	}
	if !lists && images == nil {
		return
	}
	found := c.recordImages(r, r.rec.Turns, key, images)
	if len(found) == 0 {
		return
	}
	r.img.images, r.img.tok = found, make([]int, len(found))
	for k, im := range found {
		n, _ := c.opts.Counting.ImageRule.Tokens(im)
		r.img.tok[k] = n
		if !im.Known() {
			r.obs.ImagesUnknownSize++
		}
		if im.Turn < 0 {
			r.img.listed += n
		} else {
			r.rec.Turns[im.Turn].Extra += n
		}
	}
	r.obs.Images = len(found)
}

// madeImageTokens is what the images of turn i count once the prepass
// has made t of it: the image parts of a content list are found again
// (an image part gone is no longer counted; a {"type": "image"} part
// counts as the entry it was paired with); of the turn's "<image>"
// markers as read, as many as t's text still holds count as they did
// (its first ones), and a marker beyond them by the rule's fallback.
func (c *Compressor) madeImageTokens(r *record, i int, t traj.Turn) int {
	if r.img.images == nil {
		return 0
	}
	v := t.Content()
	if len(v) > 0 && v[0] == '[' {
		// A {"type": "image"} part found again counts as the list entry
		// it was paired with as read (imagetok.Finder.Paired), in order.
		var paired []int
		for k, im := range r.img.images {
			if im.Turn == i && im.Kind == imagetok.KindImagePart && im.Index >= 0 {
				paired = append(paired, r.img.tok[k])
			}
		}
		f := c.finder(r)
		n := 0
		for _, im := range f.Content(v, i) {
			if im.Placeholder() && len(paired) > 0 {
				n += paired[0]
				paired = paired[1:]
				continue
			}
			k, _ := c.opts.Counting.ImageRule.Tokens(im)
			n += k
		}
		return n
	}
	markers := strings.Count(t.Text, imagetok.Marker)
	n := 0
	for k, im := range r.img.images {
		if markers == 0 {
			break
		}
		if im.Turn == i && im.Kind == imagetok.KindMarker {
			n += r.img.tok[k]
			markers--
		}
	}
	return n + markers*c.opts.Counting.ImageRule.Unknown()
}

// recordImages finds the images of turns, with images the value of the
// record's images field key ([prepass.ImagesField]; nil when none), as
// countImages counts them: without an images value, the image parts of the
// content lists; with one, also the markers and placeholders paired with
// its entries (imagetok.Finder.Paired).
func (c *Compressor) recordImages(r *record, turns []traj.Turn, key string, images []byte) []imagetok.Image {
	f := c.finder(r)
	var found []imagetok.Image
	if images == nil {
		for i, t := range turns {
			if v := t.Content(); len(v) > 0 && v[0] == '[' {
				found = append(found, f.Content(v, i)...)
			}
		}
	} else {
		contents := make([][]byte, len(turns))
		for i, t := range turns {
			contents[i] = t.Content()
		}
		// Markers and placeholders are paired with the list's entries
		// (imagetok.Finder.Paired); a count that differs from the list's
		// length is counted as found (markers without an entry are of
		// unknown size).
		found, _ = f.Paired(contents, images)
		if key == "image" {
			// A single "image" value no marker claims is not taken for an
			// image: datasets use the key for other things (a container
			// image), and LLaVA's always has its marker.
			k := 0
			for _, im := range found {
				if im.Kind != imagetok.KindListed {
					found[k] = im
					k++
				}
			}
			found = found[:k]
		}
	}
	return found
}

// imageDrift is what the images of the assembled record (turns, written
// with fields) count as the output is read again, less what the count of
// the assembled record gives them (the turns' Extra and r.img.listed): the
// markers or placeholders that pair with other entries once some are gone
// while the list is left as it is (it did not pair as read), or an entry
// no marker claims any more. 0 for a record without an images value.
func (c *Compressor) imageDrift(r *record, turns []traj.Turn, fields []traj.Field) int {
	key, list := prepass.ImagesField(r.rec)
	if r.img.images == nil || list == nil {
		// Without an images value every image is a part of its turn,
		// counted in its Extra as the output holds it (madeImageTokens).
		return 0
	}
	for _, f := range fields {
		if key != "" && f.Key == key {
			list = f.Value
			if string(list) == "null" {
				list = nil
			}
		}
	}
	counted := r.img.listed
	for _, t := range turns {
		counted += t.Extra
	}
	n := 0
	for _, im := range c.recordImages(r, turns, key, list) {
		k, _ := c.opts.Counting.ImageRule.Tokens(im)
		n += k
	}
	return n - counted
}

// finder finds the images of r's record: relative paths name files beside
// its input file. Every search of the record's images (counting, the
// image step, the summary's, the templated count) uses it; it is made once
// per record.
func (c *Compressor) finder(r *record) *imagetok.Finder {
	if r.img.find == nil {
		r.img.find = &imagetok.Finder{Memo: true} // one record's, in one goroutine
		if r.in.pos.File != "" {
			r.img.find.Dir = filepath.Dir(r.in.pos.File)
		}
	}
	return r.img.find
}

// regionImages are the images of the planned region's turns, for the
// summary; nil when it holds none.
func (c *Compressor) regionImages(r *record) []imagetok.Image {
	// Markers pair with the list over the whole record.
	all, _ := prepass.FindImages(c.finder(r), r.m.turns, imagesList(r))
	var out []imagetok.Image
	for _, im := range all {
		if im.Turn >= r.plan.Start && im.Turn < r.plan.End {
			out = append(out, im)
		}
	}
	return out
}

// imagesList is the record's images list as the prepass left it (nil
// when none), paired with the markers of r.m.turns.
func imagesList(r *record) []byte {
	if f, ok := prepass.ImagesListWithout(r.rec, r.m.dropped); ok {
		return f.Value
	}
	_, list := prepass.ImagesField(r.rec)
	return list
}

// imagesField is the images list to write with the assembled record, when
// it changes: without the entries of the markers the prepass removed and
// of those in the summarised region [p.Start, p.End), so that the markers
// left and the list stay paired.
func imagesField(r *record, p snap.Plan) (traj.Field, bool) {
	dropped := r.m.dropped
	if p.Start < p.End {
		if region := prepass.RegionMarkers(r.rec, p.Start, p.End); len(region) > 0 {
			dropped = append(slices.Clip(dropped), region...)
			slices.Sort(dropped)
			dropped = slices.Compact(dropped)
		}
	}
	return prepass.ImagesListWithout(r.rec, dropped)
}
