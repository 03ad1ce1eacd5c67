package pipeline

import (
	"path/filepath"
	"strings"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/traj"
)

// countImages finds the images of the record as read (package imagetok:
// the image parts of every turn's content list, and the "<image>" markers
// of its texts paired in order with the record's images list, whose
// relative paths name files beside the record's input file) and counts
// each by the run's rule into its turn's Extra; the images-list entries no
// marker claims count for the whole record (j.listed). A record without a
// content list and without an images value costs one look at each turn's
// first content byte.
func (c *Compressor) countImages(j *job) {
	images, key := recordImages(j.rec)
	lists := false
	for _, t := range j.rec.Turns {
		if v := t.Content(); len(v) > 0 && v[0] == '[' {
			lists = true
			break
		}
	}
	if !lists && images == nil {
		return
	}
	f := imagetok.Finder{Dir: filepath.Dir(j.pos.File)}
	var found []imagetok.Image
	if images == nil {
		for i, t := range j.rec.Turns {
			if v := t.Content(); len(v) > 0 && v[0] == '[' {
				found = append(found, f.Content(v, i)...)
			}
		}
	} else {
		contents := make([][]byte, len(j.rec.Turns))
		for i, t := range j.rec.Turns {
			contents[i] = t.Content()
		}
		// A marker count that differs from the list's length is counted
		// as found (markers without an entry are of unknown size).
		found, _ = f.Record(contents, images)
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
	if len(found) == 0 {
		return
	}
	j.images, j.imageTok = found, make([]int, len(found))
	for k, im := range found {
		n, _ := c.opts.ImageRule.Tokens(im)
		j.imageTok[k] = n
		if !im.Known() {
			j.obs.ImagesUnknownSize++
		}
		if im.Turn < 0 {
			j.listed += n
		} else {
			j.rec.Turns[im.Turn].Extra += n
		}
	}
	j.obs.Images = len(found)
}

// recordImages is the record's images value and its key: "images", else
// ShareGPT4V's and LLaVA's single "image" (as imagetok.RecordImages, from
// the members the record was decoded with); nil when neither is present
// or it is null.
func recordImages(r *traj.Record) ([]byte, string) {
	for _, k := range []string{"images", "image"} {
		if v, ok := r.Field(k); ok && len(v) > 0 && v[0] != 'n' {
			return v, k
		}
	}
	return nil, ""
}

// madeImageTokens is what the images of turn i count once the prepass
// has made t of it: the image parts of a content list are found again
// (an image part gone is no longer counted); of the turn's "<image>"
// markers as read, as many as t's text still holds count as they did
// (its first ones), and a marker beyond them by the rule's fallback.
func (c *Compressor) madeImageTokens(j *job, i int, t traj.Turn) int {
	if j.images == nil {
		return 0
	}
	v := t.Content()
	if len(v) > 0 && v[0] == '[' {
		f := imagetok.Finder{Dir: filepath.Dir(j.pos.File)}
		n := 0
		for _, im := range f.Content(v, i) {
			k, _ := c.opts.ImageRule.Tokens(im)
			n += k
		}
		return n
	}
	markers := strings.Count(t.Text, imagetok.Marker)
	n := 0
	for k, im := range j.images {
		if markers == 0 {
			break
		}
		if im.Turn == i && im.Kind == imagetok.KindMarker {
			n += j.imageTok[k]
			markers--
		}
	}
	return n + markers*c.opts.ImageRule.Unknown()
}
