package tokenize

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nfc9 is Hugging Face's NFC normalizer, which uses Unicode 9.0 data:
// code points assigned since are, for it, unassigned starters that neither
// decompose, compose nor reorder. golang.org/x/text has newer data, so the
// text is cut at each such code point and the parts between normalized on
// their own; for code points assigned by 9.0 the two agree (Unicode's
// normalization stability policy). Code points from U+30000 up are cut
// too: none decomposes, composes or has a combining class in any version,
// and x/text v0.16.0 wrongly composes some (U+E0059 U+0301 became "Ý"). Text that x/text finds already normal
// is returned as is: cutting only adds blocking, so it is normal for 9.0
// too.
func nfc9(s string) string {
	if norm.NFC.IsNormalString(s) {
		return s
	}
	var b []byte
	start := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r >= 0x30000 || inRanges(u16Post9, uint32(r)) {
			// Not AppendString: it would normalize across the cut.
			b = append(b, norm.NFC.String(s[start:i])...)
			b = append(b, s[i:i+w]...)
			start = i + w
		}
		i += w
	}
	if start == 0 {
		return norm.NFC.String(s)
	}
	b = append(b, norm.NFC.String(s[start:])...)
	return string(b)
}
