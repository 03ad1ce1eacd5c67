package tokenize

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// unicodeForm maps a tokenizer.json normalizer type to its form.
func unicodeForm(typ string) norm.Form {
	switch typ {
	case "NFD":
		return norm.NFD
	case "NFKC":
		return norm.NFKC
	case "NFKD":
		return norm.NFKD
	}
	return norm.NFC
}

// nfc9 is Hugging Face's NFC normalizer (see normalize9).
func nfc9(s string) string {
	out, changed := normalize9(norm.NFC, nil, s)
	if !changed {
		return s
	}
	return string(out)
}

// normalize9 appends to dst Hugging Face's NFC, NFD, NFKC or NFKD of s
// (form f); changed is false, and dst untouched, when s is already
// normal. Hugging Face's normalizers use Unicode 9.0 data (the
// unicode-normalization-alignments crate): code points assigned since are,
// for them, unassigned starters that neither decompose, compose nor
// reorder. golang.org/x/text has newer data, so the text is cut at each
// such code point and the parts between normalized on their own; for code
// points assigned by 9.0 the two agree (Unicode's normalization stability
// policy: decompositions and combining classes never change once
// assigned). Code points from U+30000 up are cut too: none decomposes,
// composes or has a combining class in any version, and x/text v0.16.0
// wrongly composes some (U+E0059 U+0301 became "Ý"). Text that x/text
// finds already normal is returned as is: cutting only adds blocking, so
// it is normal for 9.0 too.
func normalize9(f norm.Form, dst []byte, s string) ([]byte, bool) {
	if f.IsNormalString(s) {
		return dst, false
	}
	start := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r >= 0x30000 || inRanges(u16Post9, uint32(r)) {
			// Not AppendString: it would normalize across the cut.
			dst = append(dst, f.String(s[start:i])...)
			dst = append(dst, s[i:i+w]...)
			start = i + w
		}
		i += w
	}
	if start == 0 && len(dst) == 0 {
		return f.AppendString(dst, s), true
	}
	return append(dst, f.String(s[start:])...), true
}
