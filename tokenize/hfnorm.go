package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dlclark/regexp2"
)

// This file holds the normalizers of a tokenizer.json: each is a pure
// rewrite of one segment of text (the text between two added tokens that
// are matched before normalization), applied in order, as Hugging Face
// tokenizers' NormalizedString does. Offsets are not tracked; the one
// place where tokenizers' offsets change ids (Metaspace's prepend_scheme
// "first", which asks whether a piece starts at original offset 0) is
// handled by refusing, at load, normalizers that may delete a segment's
// first character in front of it (normSteps.dropsLead).

// A normStep appends the normalized form of s to dst; changed is false
// (and dst untouched) when the step leaves s as it is.
type normStep struct {
	name  string
	apply func(dst []byte, s string) (out []byte, changed bool)
	// dropsLead: the step may delete a segment's first character.
	dropsLead bool
}

// hfNormJSON is one normalizer object of a tokenizer.json; fields are
// pointers where absence differs from a zero value.
type hfNormJSON struct {
	Type        *string           `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
	Pattern     *hfPattern        `json:"pattern"`
	Content     *string           `json:"content"`
	Prepend     *string           `json:"prepend"`
	StripLeft   *bool             `json:"strip_left"`
	StripRight  *bool             `json:"strip_right"`
}

// hfPattern is the pattern of a Split pre-tokenizer or a Replace
// normalizer: a literal String or a Regex.
type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// hfRefuse is the error for an unsupported or malformed field at a JSON
// path of the tokenizer.json.
func hfRefuse(path, format string, a ...any) error {
	return fmt.Errorf("tokenize: tokenizer.json: %s: %s", path, fmt.Sprintf(format, a...))
}

// parseNormalizers appends the steps of the normalizer raw (at JSON path
// path) to t.norms.
func (t *HFTokenizer) parseNormalizers(raw json.RawMessage, path string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var c hfNormJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return hfRefuse(path, "malformed normalizer: %v", err)
	}
	if c.Type == nil {
		return hfRefuse(path+".type", "normalizer without a type")
	}
	switch typ := *c.Type; typ {
	case "Sequence":
		if c.Normalizers == nil {
			return hfRefuse(path+".normalizers", "Sequence without normalizers")
		}
		for k, n := range c.Normalizers {
			if err := t.parseNormalizers(n, fmt.Sprintf("%s.normalizers[%d]", path, k)); err != nil {
				return err
			}
		}
	case "NFC", "NFD", "NFKC", "NFKD":
		f := unicodeForm(typ)
		t.norms = append(t.norms, normStep{name: typ, apply: func(dst []byte, s string) ([]byte, bool) {
			return normalize9(f, dst, s)
		}})
	case "Lowercase":
		t.norms = append(t.norms, normStep{name: typ, apply: appendLower})
	case "StripAccents":
		t.norms = append(t.norms, normStep{name: typ, apply: appendStripAccents, dropsLead: true})
	case "Strip":
		left, right := c.StripLeft != nil && *c.StripLeft, c.StripRight != nil && *c.StripRight
		t.norms = append(t.norms, normStep{name: typ, dropsLead: left, apply: func(dst []byte, s string) ([]byte, bool) {
			out := s
			if left {
				out = strings.TrimLeftFunc(out, unicode.IsSpace)
			}
			if right {
				out = strings.TrimRightFunc(out, unicode.IsSpace)
			}
			if len(out) == len(s) {
				return dst, false
			}
			return append(dst, out...), true
		}})
	case "Prepend":
		if c.Prepend == nil {
			return hfRefuse(path+".prepend", "Prepend without a prepend string")
		}
		p := *c.Prepend
		t.norms = append(t.norms, normStep{name: typ, apply: func(dst []byte, s string) ([]byte, bool) {
			if s == "" || p == "" {
				return dst, false
			}
			return append(append(dst, p...), s...), true
		}})
	case "Replace":
		st, err := replaceStep(c, path)
		if err != nil {
			return err
		}
		t.norms = append(t.norms, st)
	default:
		return hfRefuse(path+".type", "normalizer %s is not supported (supported: %s)", typ, supportedNormalizers)
	}
	return nil
}

const supportedNormalizers = "NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, Prepend, Sequence"

// replaceStep builds a Replace normalizer: every non-overlapping match of
// the pattern, leftmost first, becomes the content.
func replaceStep(c hfNormJSON, path string) (normStep, error) {
	if c.Content == nil {
		return normStep{}, hfRefuse(path+".content", "Replace without a content")
	}
	content := *c.Content
	p := c.Pattern
	switch {
	case p == nil || p.String == nil && p.Regex == nil:
		return normStep{}, hfRefuse(path+".pattern", "Replace without a String or Regex pattern")
	case p.String != nil:
		old := *p.String
		if old == "" {
			return normStep{}, hfRefuse(path+".pattern.String", "an empty Replace pattern is not supported")
		}
		return normStep{name: "Replace", dropsLead: content == "", apply: func(dst []byte, s string) ([]byte, bool) {
			k := strings.Index(s, old)
			if k < 0 {
				return dst, false
			}
			for k >= 0 {
				dst = append(append(dst, s[:k]...), content...)
				s = s[k+len(old):]
				k = strings.Index(s, old)
			}
			return append(dst, s...), true
		}}, nil
	default:
		re, err := regexp2.Compile(*p.Regex, regexp2.None)
		if err != nil {
			return normStep{}, hfRefuse(path+".pattern.Regex", "Replace pattern: %v", err)
		}
		if m, _ := re.MatchString(""); m {
			// tokenizers 0.23.2 panics replacing an empty match.
			return normStep{}, hfRefuse(path+".pattern.Regex", "a Replace pattern that matches the empty string is not supported")
		}
		return normStep{name: "Replace(regex)", dropsLead: true, apply: func(dst []byte, s string) ([]byte, bool) {
			changed := false
			last := 0
			regexSpans(re, s, func(a, b int, match bool) {
				if !match {
					return
				}
				changed = true
				dst = append(append(dst, s[last:a]...), content...)
				last = b
			})
			if !changed {
				return dst, false
			}
			return append(dst, s[last:]...), true
		}}, nil
	}
}

// normalize applies t's normalizers to s. The result may live in *buf
// (a pooled buffer the caller owns), so it is valid until *buf is reused.
func (t *HFTokenizer) normalize(s string, buf *[]byte) string {
	if t.nfc && len(t.norms) == 0 {
		return nfc9(s)
	}
	var other []byte
	for _, st := range t.norms {
		out, changed := st.apply(other[:0], s)
		if !changed {
			continue
		}
		// out is a new buffer (other's storage): swap so that s, which
		// may point into *buf, is not overwritten by the next step.
		other, *buf = *buf, out
		s = unsafe.String(unsafe.SliceData(out), len(out))
	}
	return s
}

// appendLower is Rust's char::to_lowercase applied to every character, as
// tokenizers' Lowercase does: simple lower-case mappings plus the one
// unconditional multi-character mapping (U+0130 İ → "i̇"); no final-sigma
// rule (that is str::to_lowercase, not char's).
func appendLower(dst []byte, s string) ([]byte, bool) {
	k := 0
	for k < len(s) {
		c := s[k]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				break
			}
			k++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[k:])
		if lowerRune(r) != r || r == 0x130 {
			break
		}
		k += w
	}
	if k == len(s) {
		return dst, false
	}
	dst = append(dst, s[:k]...)
	for _, r := range s[k:] {
		switch {
		case r < utf8.RuneSelf:
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
		case r == 0x130:
			dst = append(dst, "i\u0307"...)
		default:
			dst = utf8.AppendRune(dst, lowerRune(r))
		}
	}
	return dst, true
}

// lowerRune is the simple lower-case mapping of r in Unicode 17.0 (Rust's
// standard library in the build of npm tokenizers 0.23.2; Go's unicode
// package is at 15.0).
func lowerRune(r rune) rune {
	lo, hi := 0, len(u17Lower)/2
	for lo < hi {
		m := (lo + hi) / 2
		switch c := rune(u17Lower[2*m]); {
		case r < c:
			hi = m
		case r > c:
			lo = m + 1
		default:
			return rune(u17Lower[2*m+1])
		}
	}
	return r
}

// appendStripAccents deletes combining marks (Mn, Mc, Me of Unicode 9.0,
// the data of the unicode-normalization crate tokenizers uses), as
// tokenizers' StripAccents does.
func appendStripAccents(dst []byte, s string) ([]byte, bool) {
	changed := false
	last := 0
	for i, r := range s {
		if r < 0x300 || !isMark9(r) {
			continue
		}
		dst = append(dst, s[last:i]...)
		last = i + utf8.RuneLen(r)
		changed = true
	}
	if !changed {
		return dst, false
	}
	return append(dst, s[last:]...), true
}

// isMark9 reports whether r is a combining mark in Unicode 9.0.
func isMark9(r rune) bool { return inRanges(u9M, uint32(r)) }
