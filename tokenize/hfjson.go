package tokenize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// hfFile is the part of a Hugging Face tokenizer.json that counting needs.
// The model's vocab and merges (nearly all of the file) are kept raw and
// parsed by hand (parseVocabJSON, eachMergeJSON), which is several times
// faster than decoding them into Go maps and slices.
type hfFile struct {
	AddedTokens []hfAddedToken  `json:"added_tokens"`
	Normalizer  json.RawMessage `json:"normalizer"`
	PreTok      json.RawMessage `json:"pre_tokenizer"`
	Model       hfModelJSON     `json:"model"`
}

// hfModelJSON is the model section of a tokenizer.json.
type hfModelJSON struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	FuseUnk                 bool            `json:"fuse_unk"`
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// splitModelJSON returns a copy of data with the model's "vocab" and
// "merges" values replaced by null, and those two values raw. encoding/json then
// decodes the small remainder; the two big values (nearly all of a
// tokenizer.json) are scanned once, by hand, instead of being validated,
// skipped and copied by encoding/json too.
func splitModelJSON(data []byte) (rest, vocab, merges []byte, err error) {
	s := &jsonScanner{b: data}
	var cut [][2]int // spans of the values to replace by null
	if err := s.expect('{'); err != nil {
		return nil, nil, nil, err
	}
	for s.peek() != '}' {
		key, err := s.str()
		if err != nil {
			return nil, nil, nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, nil, nil, err
		}
		if string(key) == "model" && s.peek() == '{' {
			s.i++
			for s.peek() != '}' {
				k, err := s.str()
				if err != nil {
					return nil, nil, nil, err
				}
				isVocab, isMerges := string(k) == "vocab", string(k) == "merges"
				if err := s.expect(':'); err != nil {
					return nil, nil, nil, err
				}
				s.ws()
				start := s.i
				if err := s.skip(); err != nil {
					return nil, nil, nil, err
				}
				if isVocab || isMerges {
					raw := data[start:s.i]
					if isVocab {
						vocab = raw
					} else {
						merges = raw
					}
					cut = append(cut, [2]int{start, s.i})
				}
				if s.peek() == ',' {
					s.i++
				}
			}
			s.i++
		} else if err := s.skip(); err != nil {
			return nil, nil, nil, err
		}
		if s.peek() == ',' {
			s.i++
		}
	}
	last := 0
	for _, c := range cut {
		rest = append(append(rest, data[last:c[0]]...), "null"...)
		last = c[1]
	}
	return append(rest, data[last:]...), vocab, merges, nil
}

// skip moves past one JSON value (assumed well-formed; encoding/json
// validates everything but the vocab and merges afterwards, and those are
// parsed strictly).
func (s *jsonScanner) skip() error {
	s.ws()
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			for {
				k := bytes.IndexAny(s.b[s.i:], "\\\"")
				if k < 0 {
					return s.errf("unterminated string")
				}
				s.i += k
				if s.b[s.i] == '"' {
					s.i++
					break
				}
				s.i += 2
			}
		case c == '{' || c == '[':
			depth++
			s.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return nil // the end of the enclosing value
			}
			depth--
			s.i++
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return nil
		default:
			s.i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return nil
		}
	}
	if depth != 0 {
		return s.errf("unterminated value")
	}
	return nil
}

// jsonScanner reads the vocab object and merges array of a tokenizer.json.
type jsonScanner struct {
	b     []byte
	i     int
	buf   []byte
	field string // the JSON path scanned, for errors ("model.vocab")
}

func (s *jsonScanner) errf(format string, a ...any) error {
	field := s.field
	if field == "" {
		field = "model"
	}
	return fmt.Errorf("tokenize: tokenizer.json: %s: byte %d: %s", field, s.i, fmt.Sprintf(format, a...))
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// expect skips white space and consumes c.
func (s *jsonScanner) expect(c byte) error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != c {
		return s.errf("want %q", c)
	}
	s.i++
	return nil
}

// peek skips white space and returns the next byte (0 at the end).
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// str reads a JSON string. The result aliases the input when the string
// has no escapes, and s.buf otherwise (valid until the next call).
func (s *jsonScanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.i
	k := bytes.IndexByte(s.b[s.i:], '"')
	if k < 0 {
		return nil, s.errf("unterminated string")
	}
	if bytes.IndexByte(s.b[s.i:s.i+k], '\\') < 0 {
		s.i += k + 1
		return s.b[start : start+k], nil
	}
	s.buf = s.buf[:0]
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.buf, nil
		case c != '\\':
			s.buf = append(s.buf, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					lo, ok := s.hex4()
					if !ok {
						return nil, s.errf("bad \\u escape")
					}
					r2 = utf16.DecodeRune(r, lo)
				}
				r = r2
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return nil, s.errf("bad escape \\%c", e)
		}
	}
	return nil, s.errf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 32)
	s.i += 4
	return rune(v), err == nil
}

// uint reads a non-negative JSON integer.
func (s *jsonScanner) uint() (int, error) {
	s.ws()
	start, v := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && v < 1<<31 {
		v = v*10 + int(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || v >= 1<<31 {
		return 0, s.errf("want a token id")
	}
	return v, nil
}

// eachVocab calls fn for each "token": id pair of the vocab object.
func eachVocab(raw []byte, fn func(tok []byte, id int) error) error {
	s := &jsonScanner{b: raw, field: "model.vocab"}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		return nil
	}
	for {
		tok, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		id, err := s.uint()
		if err != nil {
			return err
		}
		if err := fn(tok, id); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			return nil
		default:
			return s.errf("want ',' or '}' in vocab")
		}
	}
}

// eachMerge calls fn for each merge, in order, with its index in the
// list. Merges are written either as ["a", "b"] pairs or as "a b" strings,
// which, as in tokenizers (convert_merges_to_hashmap), must hold exactly
// one space; a string starting "#version" is skipped.
func eachMerge(raw []byte, fn func(k int, a, b []byte) error) error {
	s := &jsonScanner{b: raw, field: "model.merges"}
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		return nil
	}
	var a []byte
	for k := 0; ; k++ {
		switch s.peek() {
		case '"':
			m, err := s.str()
			if err != nil {
				return err
			}
			if bytes.HasPrefix(m, []byte("#version")) {
				break
			}
			sp := bytes.IndexByte(m, ' ')
			if sp < 0 || bytes.IndexByte(m[sp+1:], ' ') >= 0 {
				return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: %q is not two tokens separated by one space", k, m)
			}
			if err := fn(k, m[:sp], m[sp+1:]); err != nil {
				return err
			}
		case '[':
			s.i++
			m, err := s.str()
			if err != nil {
				return err
			}
			a = append(a[:0], m...)
			if err := s.expect(','); err != nil {
				return err
			}
			b, err := s.str()
			if err != nil {
				return err
			}
			if err := s.expect(']'); err != nil {
				return err
			}
			if err := fn(k, a, b); err != nil {
				return err
			}
		default:
			return fmt.Errorf("tokenize: tokenizer.json: model.merges[%d]: want a string or a pair of strings", k)
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			return nil
		default:
			return s.errf("want ',' or ']' in merges")
		}
	}
}
