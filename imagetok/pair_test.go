package imagetok

import (
	"errors"
	"testing"
)

// TestPaired: {"type": "image"} placeholders take, in order, the list's
// entries no marker claimed; a count that differs is ErrMarkerCount's,
// with the images paired as far as they go.
func TestPaired(t *testing.T) {
	f := &Finder{NoSize: true}
	holder := []byte(`[{"type": "image"}, {"type": "text", "text": "x"}]`)
	named := []byte(`[{"type": "image", "image": "c.png"}]`)
	for _, c := range []struct {
		name    string
		turns   [][]byte
		list    string
		indices []int // Index of each image returned, in order
		kinds   []Kind
		err     bool
	}{
		{"placeholders", [][]byte{holder, []byte(`"a"`), holder}, `["a.png", "b.png"]`, []int{0, 1}, []Kind{KindImagePart, KindImagePart}, false},
		{"named part not paired", [][]byte{named, holder}, `["a.png"]`, []int{-1, 0}, []Kind{KindImagePart, KindImagePart}, false},
		{"markers first", [][]byte{[]byte(`"<image> x"`), holder}, `["a.png", "b.png"]`, []int{0, 1}, []Kind{KindMarker, KindImagePart}, false},
		{"more entries", [][]byte{holder}, `["a.png", "b.png"]`, []int{0, 1}, []Kind{KindImagePart, KindListed}, true},
		{"more placeholders", [][]byte{holder, holder}, `["a.png"]`, []int{0, -1}, []Kind{KindImagePart, KindImagePart}, true},
		{"more markers", [][]byte{[]byte(`"<image><image>"`)}, `["a.png"]`, []int{0, -1}, []Kind{KindMarker, KindMarker}, true},
		{"no list", [][]byte{holder}, ``, []int{-1}, []Kind{KindImagePart}, false},
	} {
		var list []byte
		if c.list != "" {
			list = []byte(c.list)
		}
		got, err := f.Paired(c.turns, list)
		if errors.Is(err, ErrMarkerCount) != c.err || err != nil && !c.err {
			t.Errorf("%s: error %v, want one: %v", c.name, err, c.err)
		}
		if len(got) != len(c.indices) {
			t.Errorf("%s: %d images %+v, want %d", c.name, len(got), got, len(c.indices))
			continue
		}
		for k, im := range got {
			if im.Index != c.indices[k] || im.Kind != c.kinds[k] {
				t.Errorf("%s: image %d: index %d kind %v, want %d %v", c.name, k, im.Index, im.Kind, c.indices[k], c.kinds[k])
			}
			if im.Kind == KindImagePart && im.Index >= 0 && (im.Ref == "" || im.Placeholder()) {
				t.Errorf("%s: image %d paired without its entry's ref: %+v", c.name, k, im)
			}
		}
	}
}
