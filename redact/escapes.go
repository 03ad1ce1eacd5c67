package redact

import (
	"strings"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// A replacement never makes JSON invalid. A text is often JSON,
// or holds JSON inside its strings at any depth (a tool call's arguments,
// a command that echoes a config), and the rules tolerate backslashes
// around a value, so a match may reach into an escape: gitleaks' JWT rule
// takes backslashes into its last segment, so in arguments such as
// {"command": "curl -H \"Authorization: Bearer <JWT>\" …"} it ate the
// backslash of \" and left a bare quote. Two guards make the property
// hold: keepEscapes narrows every replaced span so that no escape, at any
// depth, is split or eaten at its edges; and a string that holds JSON
// whose shape a replacement would still change (a private key block run
// across two strings) is redacted string by string instead
// ([Redactor.memberFunc]).

// keepEscapes narrows s[start:end], a span to replace, so that none of its
// edges lies inside or next to an escape sequence of s at any depth of
// JSON nested in strings: it starts after any escaped character (one
// preceded by a backslash, whatever the backslashes before that: at some
// depth it is escaped) and after a \uXXXX it would start inside, and it
// ends before any backslash, escape or partial \uXXXX at its end. What
// lies strictly inside is replaced whole. It returns start >= end when
// nothing is left.
func keepEscapes(s string, start, end int) (int, int) {
	for start < end {
		switch {
		case start > 0 && s[start-1] == '\\':
			// s[start] is escaped (at this depth or a deeper one).
			if s[start] == 'u' {
				start += 1 + hexRun(s, start+1, 4)
			} else {
				start++
			}
		case s[start] == '\\':
			start++
		default:
			if q := partialU(s, start); q >= 0 {
				// Past the escape's hex digits; at least one byte on
				// (a \u that no hex digit follows is no escape).
				start = max(start+1, q+2+hexRun(s, q+2, 4))
				continue
			}
			goto head
		}
	}
head:
	for end > start {
		switch {
		case s[end-1] == '\\':
			end--
		case end-2 >= start && s[end-2] == '\\':
			end -= 2 // a whole escape \X at the end
		default:
			// A \u in the last 6 bytes: a whole or partial \uXXXX at the
			// end (or a \u that is no escape, cut all the same).
			from := max(start, end-6)
			if q := strings.LastIndex(s[from:end], `\u`); q >= 0 {
				end = from + q
				continue
			}
			return start, end
		}
	}
	return start, end
}

// partialU returns the position q of a \u escape that p lies inside
// (q+2 <= p < q+6, hex digits from q+2 to p), or -1.
func partialU(s string, p int) int {
	for q := max(p-5, 0); q+2 <= p; q++ {
		if s[q] == '\\' && s[q+1] == 'u' && hexRun(s, q+2, p-q-2) == p-q-2 {
			return q
		}
	}
	return -1
}

// hexRun is how many of the (at most n) bytes of s from i on are hex
// digits, in a row.
func hexRun(s string, i, n int) int {
	k := 0
	for ; k < n && i+k < len(s); k++ {
		c := s[i+k]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			break
		}
	}
	return k
}

// narrow applies keepEscapes to every finding of s, in place, dropping
// those left empty; dropped reports whether any was.
func narrow(s string, f []finding) (kept []finding, dropped bool) {
	kept = f[:0]
	for _, x := range f {
		x.start, x.end = keepEscapes(s, x.start, x.end)
		if x.start >= x.end {
			dropped = true
			continue
		}
		kept = append(kept, x)
	}
	return kept, dropped
}

// holdsJSON reports whether s is a JSON text whose shape redaction keeps:
// an object, an array or a string. (A string that is a whole number or
// literal may be a secret itself, a numeric password, and is redacted as
// text.)
func holdsJSON(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return t != "" && (t[0] == '{' || t[0] == '[' || t[0] == '"') &&
		jsonx.Valid(unsafe.Slice(unsafe.StringData(s), len(s))) // read only
}

// sameShape reports whether b is JSON of a's shape, a being valid JSON:
// the same types, keys (in order) and array lengths at every level, and
// every string of a that holds JSON (holdsJSON) holding JSON of the same
// shape in b, recursively.
func sameShape(a, b []byte) bool {
	return jsonx.Valid(b) && sameValue(a, jsonx.SkipSpace(a, 0), b, jsonx.SkipSpace(b, 0))
}

func sameValue(a []byte, i int, b []byte, j int) bool {
	i, j = jsonx.SkipSpace(a, i), jsonx.SkipSpace(b, j)
	switch a[i] {
	case '{':
		if b[j] != '{' {
			return false
		}
		ma, _, _ := jsonx.Members(a, i)
		mb, _, _ := jsonx.Members(b, j)
		if len(ma) != len(mb) {
			return false
		}
		for k := range ma {
			ka, _ := jsonx.Unquote(ma[k].Key)
			kb, _ := jsonx.Unquote(mb[k].Key)
			if ka != kb || !sameValue(a, ma[k].Start, b, mb[k].Start) {
				return false
			}
		}
		return true
	case '[':
		if b[j] != '[' {
			return false
		}
		ea, eb := jsonx.Elements(a, i), jsonx.Elements(b, j)
		if len(ea) != len(eb) {
			return false
		}
		for k := range ea {
			if !sameValue(a, ea[k][0], b, eb[k][0]) {
				return false
			}
		}
		return true
	case '"':
		if b[j] != '"' {
			return false
		}
		sa, _ := jsonx.Unquote(a[i:jsonx.SkipString(a, i)])
		sb, _ := jsonx.Unquote(b[j:jsonx.SkipString(b, j)])
		if sa == sb || !holdsJSON(sa) {
			return true
		}
		return sameShape([]byte(sa), []byte(sb))
	case 't', 'f', 'n':
		return a[i] == b[j]
	}
	return b[j] == '-' || '0' <= b[j] && b[j] <= '9' // a number
}
