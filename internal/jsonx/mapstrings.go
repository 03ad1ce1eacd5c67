package jsonx

// MapStrings returns the valid JSON value v with every string value (at
// any depth; object keys excluded) for which f returns a new string and
// true replaced by that string, encoded as [AppendString] does. Every other
// byte is kept. changed is false (and v is returned) when f changed
// nothing. It is meant for rewriting texts wherever they sit in a record,
// such as redacting secrets.
func MapStrings(v []byte, f func(string) (string, bool)) (out []byte, changed bool) {
	return MapMembers(v, func(_, _, s string) (string, bool) { return f(s) })
}

// MapMembers is [MapStrings] with, for a string that is the value of an
// object member, the member's key (decoded) and the bytes between the
// key's closing quote and the value's opening one (sep: the colon and any
// white space, as written) passed along; both "" for a string that is an
// array element or the whole value. A secret is often known by its key
// ({"db_password": "…"}) rather than by its value alone.
func MapMembers(v []byte, f func(key, sep, s string) (string, bool)) (out []byte, changed bool) {
	return mapMembers(v, f, false)
}

func mapMembers(v []byte, f func(key, sep, s string) (string, bool), keepImages bool) (out []byte, changed bool) {
	type splice struct {
		start, end int
		value      []byte
	}
	var splices []splice
	text := func(start, end int, key, sep string) {
		if s, ok := Unquote(v[start:end]); ok {
			if ns, ok := f(key, sep, s); ok && ns != s {
				splices = append(splices, splice{start, end, AppendString(nil, ns)})
			}
		}
	}
	var image func(start, end int)
	if keepImages {
		image = func(int, int) {}
	}
	if !walkStrings(v, text, image) || len(splices) == 0 {
		return v, false
	}
	n := len(v)
	for _, s := range splices {
		n += len(s.value) - (s.end - s.start)
	}
	out = make([]byte, 0, n)
	pos := 0
	for _, s := range splices {
		out = append(out, v[pos:s.start]...)
		out = append(out, s.value...)
		pos = s.end
	}
	return append(out, v[pos:]...), true
}

// walkStrings calls text with the span (quotes included), the member's key
// and sep (as [MapMembers] describes them) of every string value of the
// valid JSON value v, in order; when image is not nil, the strings that
// hold an image inline ([InlineImages]: the shape and the payload checked)
// go to image instead. text nil skips the other strings (and the keys are
// not decoded). It reports false when v is only white space.
func walkStrings(v []byte, text func(start, end int, key, sep string), image func(start, end int)) bool {
	var walk func(i int, key, sep string) int
	walk = func(i int, key, sep string) int {
		i = SkipSpace(v, i)
		switch v[i] {
		case '"':
			end := SkipString(v, i)
			switch {
			case image != nil && isImageDataURLBase64(v[i:end]):
				image(i, end)
			case text != nil:
				text(i, end, key, sep)
			}
			return end
		case '{':
			ms, close, err := Members(v, i)
			if err != nil {
				return SkipValue(v, i)
			}
			img := -1
			if image != nil {
				img = ImageMember(v, ms)
			}
			for k, m := range ms {
				switch {
				case k == img && isMediaBase64(v[m.Start:m.End], 1):
					image(m.Start, m.End)
				case text == nil:
					walk(m.Start, "", "")
				default:
					key, _ := Unquote(m.Key)
					walk(m.Start, key, string(v[m.KeyStart+len(m.Key):m.Start]))
				}
			}
			return close + 1
		case '[':
			els := Elements(v, i)
			for _, el := range els {
				walk(el[0], "", "")
			}
			return SkipValue(v, i)
		}
		return SkipValue(v, i)
	}
	if len(v[SkipSpace(v, 0):]) == 0 {
		return false
	}
	walk(0, "", "")
	return true
}
