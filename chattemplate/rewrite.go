package chattemplate

import "strings"

// hfToJSON is the name tojson filters are renamed to before compiling.
// ardanlabs/jinja looks a filter up among its builtins first and in the render
// data only when no builtin has the name, and its builtin tojson differs from
// transformers' (floats as Go's %g so 1.0 prints 1, and indent goes through
// encoding/json, which sorts keys and escapes <, >, &). Renaming the filter in
// the template's tags makes the engine find transformers' tojson, passed in
// the render data under this name.
const hfToJSON = "__hf_tojson"

// renameToJSON rewrites "| tojson" (any spacing) inside {{ }} and {% %} tags,
// outside string literals, to "| __hf_tojson". Text outside tags, comments,
// string literals and {% raw %} blocks are left as they are.
func renameToJSON(src string) string {
	var b strings.Builder
	b.Grow(len(src) + 64)
	i := 0
	for i < len(src) {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 || i+j+1 >= len(src) {
			b.WriteString(src[i:])
			break
		}
		j += i
		b.WriteString(src[i:j])
		var end string
		switch src[j+1] {
		case '{':
			end = "}}"
		case '%':
			end = "%}"
		case '#':
			k := strings.Index(src[j+2:], "#}")
			if k < 0 {
				b.WriteString(src[j:])
				return b.String()
			}
			b.WriteString(src[j : j+2+k+2])
			i = j + 2 + k + 2
			continue
		default:
			b.WriteByte('{')
			i = j + 1
			continue
		}
		// Inside a tag: copy up to its end, renaming the filter outside quotes.
		b.WriteString(src[j : j+2])
		k := j + 2
		var quote byte
		for k < len(src) {
			c := src[k]
			if quote != 0 {
				b.WriteByte(c)
				if c == '\\' && k+1 < len(src) {
					b.WriteByte(src[k+1])
					k += 2
					continue
				}
				if c == quote {
					quote = 0
				}
				k++
				continue
			}
			if strings.HasPrefix(src[k:], end) {
				break
			}
			switch c {
			case '"', '\'':
				quote = c
			case '|':
				p := k + 1
				for p < len(src) && (src[p] == ' ' || src[p] == '\t' || src[p] == '\n') {
					p++
				}
				if strings.HasPrefix(src[p:], "tojson") && !isIdent(src, p+len("tojson")) {
					b.WriteString(src[k:p])
					b.WriteString(hfToJSON)
					k = p + len("tojson")
					continue
				}
			}
			b.WriteByte(c)
			k++
		}
		if k < len(src) {
			b.WriteString(end)
			k += len(end)
		}
		i = k
		if end == "%}" && tagWord(src[j+2:max(j+2, k-2)]) == "raw" {
			// {% raw %}…{% endraw %} is output as it stands.
			r := endRaw(src, i)
			b.WriteString(src[i:r])
			i = r
		}
	}
	return b.String()
}

// tagWord is a {% %} tag's content without its whitespace-control marks and
// spaces.
func tagWord(inner string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(inner), "-+"))
}

// endRaw returns where the {% endraw %} tag after from starts (len(src) if
// none).
func endRaw(src string, from int) int {
	for i := from; ; {
		j := strings.Index(src[i:], "{%")
		if j < 0 {
			return len(src)
		}
		j += i
		k := strings.Index(src[j+2:], "%}")
		if k < 0 {
			return len(src)
		}
		if tagWord(src[j+2:j+2+k]) == "endraw" {
			return j
		}
		i = j + 2
	}
}

func isIdent(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
