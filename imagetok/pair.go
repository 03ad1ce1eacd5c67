package imagetok

import "fmt"

// Paired returns the images of a record as [Finder.Record] finds them,
// with the images-list entries no marker claimed given, in order, to the
// {"type": "image"} parts that name no image (transformers' and TRL's
// layout: the parts say where, the list holds the images, paired in order
// as transformers' processor pairs them): such a part and its entry are one
// image, with the part's turn and span and the entry's index, reference
// and size; the entry is no longer returned on its own. It is the one
// pairing of markers and placeholders with list entries that counting,
// the image step, the summary and the template expansion share.
//
// The error is [ErrMarkerCount]'s when images is not nil and, after
// pairing, an entry, a marker or a placeholder is left without its other
// half (the pairing is then unknown; the images are returned as paired).
func (f *Finder) Paired(turns [][]byte, images []byte) ([]Image, error) {
	found, _ := f.Record(turns, images)
	if images == nil {
		return found, nil
	}
	var holders, listed []int
	markers, unpaired := 0, 0
	for k, im := range found {
		switch {
		case im.Placeholder():
			holders = append(holders, k)
		case im.Kind == KindListed:
			listed = append(listed, k)
		case im.Kind == KindMarker:
			markers++
			if im.Index < 0 {
				unpaired++
			}
		}
	}
	n := min(len(holders), len(listed))
	var err error
	if len(holders) != len(listed) || unpaired > 0 {
		err = fmt.Errorf("%w: %d markers, %d image placeholders, %d images", ErrMarkerCount, markers, len(holders), len(listEntries(images)))
	}
	if n == 0 {
		return found, err
	}
	drop := make(map[int]bool, n)
	for p := range n {
		h, e := &found[holders[p]], found[listed[p]]
		h.Index, h.Source, h.Ref, h.Format, h.Width, h.Height = e.Index, e.Source, e.Ref, e.Format, e.Width, e.Height
		drop[listed[p]] = true
	}
	out := found[:0]
	for k, im := range found {
		if !drop[k] {
			out = append(out, im)
		}
	}
	return out, err
}

// Placeholder reports whether im is a {"type": "image"} part that names no
// image (its image is the record's images-list entry [Finder.Paired]
// gives it).
func (im Image) Placeholder() bool {
	return im.Kind == KindImagePart && im.Source == SourceNone && im.Ref == "" && im.Index < 0
}
