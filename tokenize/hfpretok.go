package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dlclark/regexp2"
)

// This file holds the pre-tokenizers of a tokenizer.json other than the
// hand-written split patterns (hfsplit.go, split.go): how each is read,
// and the general splitting machinery that reproduces tokenizers'
// NormalizedString::split for every SplitDelimiterBehavior and invert.
//
// A pattern cuts a piece into spans, each a match or a gap between
// matches (pattern.find_matches); invert swaps the two; the behavior then
// decides which spans are dropped (Removed drops matches) or merged with a
// neighbour (MergedWithPrevious: a match joins the span before it;
// MergedWithNext: a match joins the span after it; Contiguous: runs of
// matches, and runs of gaps, join); empty pieces are dropped.

// splitBehavior is a Split's SplitDelimiterBehavior.
type splitBehavior uint8

const (
	behIsolated splitBehavior = iota
	behRemoved
	behMergedWithPrevious
	behMergedWithNext
	behContiguous
)

var behaviorNames = map[string]splitBehavior{
	"Isolated":           behIsolated,
	"Removed":            behRemoved,
	"MergedWithPrevious": behMergedWithPrevious,
	"MergedWithNext":     behMergedWithNext,
	"Contiguous":         behContiguous,
}

// stageKind says what a preStage does to a piece before splitting it.
type stageKind uint8

const (
	stageSplit       stageKind = iota // split only
	stageMetaspace                    // spaces become the replacement, which may be prepended; split on it
	stagePrefixSpace                  // ByteLevel's add_prefix_space: a space prepended unless there is one
)

// metaspace holds a Metaspace pre-tokenizer's options.
type metaspace struct {
	repl    string // the replacement character
	prepend prependScheme
	split   bool
}

type prependScheme uint8

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

// hfPreJSON is one pre-tokenizer object of a tokenizer.json.
type hfPreJSON struct {
	Type             *string           `json:"type"`
	PreTokenizers    []json.RawMessage `json:"pretokenizers"`
	Pattern          *hfPattern        `json:"pattern"`
	Behavior         *string           `json:"behavior"`
	Invert           *bool             `json:"invert"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	UseRegex         *bool             `json:"use_regex"`
	IndividualDigits *bool             `json:"individual_digits"`
	Replacement      *string           `json:"replacement"`
	PrependScheme    *string           `json:"prepend_scheme"`
	Split            *bool             `json:"split"`
	Delimiter        *string           `json:"delimiter"`
}

const supportedPreTokenizers = "Sequence, Split, ByteLevel, Digits, Metaspace, Whitespace, WhitespaceSplit, Punctuation, CharDelimiterSplit, BertPreTokenizer"

// parsePipeline reads a tokenizer.json's normalizer and pre_tokenizer
// into t (norms, stages, and the split path in info), and returns how many
// ByteLevel pre-tokenizers it holds.
func (t *HFTokenizer) parsePipeline(normalizer, preTokenizer json.RawMessage) (byteLevel int, err error) {
	if err := t.parseNormalizers(normalizer, "normalizer"); err != nil {
		return 0, err
	}
	t.nfc = len(t.norms) == 1 && t.norms[0].name == "NFC"
	pw := preWalk{t: t, fast: true}
	if err := pw.walk(preTokenizer, "pre_tokenizer"); err != nil {
		return 0, err
	}
	if err := pw.checkFirst(t.norms); err != nil {
		return 0, err
	}
	for _, st := range t.stages {
		if st.name == "deepseek" {
			initPS()
		}
	}
	names := pw.names
	if len(names) == 0 {
		names = append(names, "none")
	}
	t.info.Split = strings.Join(names, "+")
	if !pw.fast {
		t.info.Split += " (slow path)"
	}
	t.info.SlowPath = !pw.fast
	return pw.byteLevel, nil
}

// preWalk walks the pre-tokenizer of a tokenizer.json into t's stages:
// their names, how many ByteLevel components it holds, and whether every
// split has a fast path.
type preWalk struct {
	t         *HFTokenizer
	names     []string
	byteLevel int
	fast      bool
	// metaFirst is the JSON path of a Metaspace with prepend_scheme
	// first, if any.
	metaFirst string
}

func (w *preWalk) add(st preStage) {
	st.byteView = w.byteLevel > 0
	st.simple = st.simple && !st.byteView
	w.t.stages = append(w.t.stages, st)
	w.names = append(w.names, st.name)
}

func (w *preWalk) walk(raw json.RawMessage, path string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var c hfPreJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return hfRefuse(path, "malformed pre-tokenizer: %v", err)
	}
	if c.Type == nil {
		return hfRefuse(path+".type", "pre-tokenizer without a type")
	}
	typ := *c.Type
	if w.byteLevel > 0 && typ != "Sequence" && typ != "Split" && typ != "Digits" && typ != "Punctuation" &&
		typ != "Whitespace" && typ != "WhitespaceSplit" && typ != "CharDelimiterSplit" && typ != "BertPreTokenizer" {
		return hfRefuse(path+".type", "pre-tokenizer %s after ByteLevel is not supported", typ)
	}
	switch typ {
	case "Sequence":
		if c.PreTokenizers == nil {
			return hfRefuse(path+".pretokenizers", "Sequence without pretokenizers")
		}
		for k, p := range c.PreTokenizers {
			if err := w.walk(p, fmt.Sprintf("%s.pretokenizers[%d]", path, k)); err != nil {
				return err
			}
		}
	case "Split":
		return w.split(c, path)
	case "ByteLevel":
		return w.byteLevelStage(c)
	case "Digits":
		individual := c.IndividualDigits != nil && *c.IndividualDigits
		name := "digits"
		if individual {
			name = "digits1"
		}
		w.add(preStage{name: name, next: splitDigits(individual), isMatch: isNumericAt, simple: true})
	case "Metaspace":
		return w.metaspace(c, path)
	case "Whitespace":
		// tokenizers: \w+|[^\w\s]+, inverted, Removed: the matches only.
		w.add(preStage{name: "whitespace", next: splitWordClass, isMatch: notSpaceAt, invert: true, behavior: behRemoved})
	case "WhitespaceSplit":
		w.add(preStage{name: "whitespace-split", next: charSplitter(unicode.IsSpace), isMatch: charMatcher(unicode.IsSpace), behavior: behRemoved})
	case "CharDelimiterSplit":
		if c.Delimiter == nil || utf8.RuneCountInString(*c.Delimiter) != 1 {
			return hfRefuse(path+".delimiter", "CharDelimiterSplit needs a delimiter of one character")
		}
		d, _ := utf8.DecodeRuneInString(*c.Delimiter)
		is := func(r rune) bool { return r == d }
		w.add(preStage{name: "delimiter", next: charSplitter(is), isMatch: charMatcher(is), behavior: behRemoved})
	case "Punctuation":
		beh, err := parseBehavior(c.Behavior, path, behIsolated)
		if err != nil {
			return err
		}
		w.add(preStage{name: "punctuation", next: charSplitter(isPunc), isMatch: charMatcher(isPunc), behavior: beh})
	case "BertPreTokenizer":
		// Whitespace removed, then each punctuation character isolated.
		w.add(preStage{name: "bert-whitespace", next: charSplitter(unicode.IsSpace), isMatch: charMatcher(unicode.IsSpace), behavior: behRemoved})
		w.add(preStage{name: "bert-punctuation", next: charSplitter(isPunc), isMatch: charMatcher(isPunc), behavior: behIsolated})
	default:
		return hfRefuse(path+".type", "pre-tokenizer %s is not supported (supported: %s)", typ, supportedPreTokenizers)
	}
	return nil
}

func parseBehavior(b *string, path string, def splitBehavior) (splitBehavior, error) {
	if b == nil {
		return def, nil
	}
	beh, ok := behaviorNames[*b]
	if !ok {
		return 0, hfRefuse(path+".behavior", "unknown split behavior %q (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)", *b)
	}
	return beh, nil
}

// split adds a Split pre-tokenizer's stage.
func (w *preWalk) split(c hfPreJSON, path string) error {
	if c.Behavior == nil {
		return hfRefuse(path+".behavior", "Split without a behavior")
	}
	beh, err := parseBehavior(c.Behavior, path, behIsolated)
	if err != nil {
		return err
	}
	invert := c.Invert != nil && *c.Invert
	var pat string
	switch p := c.Pattern; {
	case p == nil || p.Regex == nil && p.String == nil:
		return hfRefuse(path+".pattern", "Split without a String or Regex pattern")
	case p.Regex != nil:
		pat = *p.Regex
	default:
		if *p.String == "" {
			return hfRefuse(path+".pattern.String", "an empty Split pattern is not supported")
		}
		lit := *p.String
		w.add(preStage{name: "literal", next: literalSplitter(lit), isMatch: func(s string, i int) bool { return strings.HasPrefix(s[i:], lit) },
			behavior: beh, invert: invert, simple: beh == behIsolated && !invert})
		return nil
	}
	st, known, err := newSplitStage(pat)
	if err != nil {
		return hfRefuse(path+".pattern", "%v", err)
	}
	st.behavior, st.invert = beh, invert
	st.simple = st.next != nil && beh == behIsolated && !invert
	if !st.simple && st.next != nil && !st.covering && st.isMatch == nil {
		// A known pattern without a match test: run it on regexp2.
		re, err := regexp2.Compile(pat, regexp2.None)
		if err != nil {
			return hfRefuse(path+".pattern", "%v", err)
		}
		st = preStage{name: "regexp2", re: re, behavior: beh, invert: invert}
		known = false
	}
	w.fast = w.fast && known
	w.add(st)
	return nil
}

// byteLevelStage counts a ByteLevel pre-tokenizer, and adds the stages it
// makes: the prefix space when add_prefix_space is set, the GPT-2 split
// unless use_regex is false. The pre-tokenizers after it see the
// byte-level spelling of the pieces (preStage.byteView).
func (w *preWalk) byteLevelStage(c hfPreJSON) error {
	if c.AddPrefixSpace != nil && *c.AddPrefixSpace {
		w.add(preStage{name: "prefix-space", kind: stagePrefixSpace})
	}
	if c.UseRegex == nil || *c.UseRegex {
		w.add(preStage{name: "gpt2", next: splitGPT2, covering: true, simple: true})
	}
	w.byteLevel++
	return nil
}

// metaspace adds a Metaspace pre-tokenizer's stage.
func (w *preWalk) metaspace(c hfPreJSON, path string) error {
	if c.Replacement == nil || utf8.RuneCountInString(*c.Replacement) != 1 {
		return hfRefuse(path+".replacement", "Metaspace needs a replacement of one character")
	}
	m := metaspace{repl: *c.Replacement, split: c.Split == nil || *c.Split}
	if c.PrependScheme != nil {
		switch *c.PrependScheme {
		case "always":
		case "first":
			m.prepend = prependFirst
			w.metaFirst = path + ".prepend_scheme"
		case "never":
			m.prepend = prependNever
		default:
			return hfRefuse(path+".prepend_scheme", "unknown prepend_scheme %q (always, first, never)", *c.PrependScheme)
		}
	}
	if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
		// tokenizers' rule for the older add_prefix_space field.
		if m.prepend != prependNever {
			return hfRefuse(path+".add_prefix_space", "add_prefix_space false does not match prepend_scheme")
		}
	}
	w.add(preStage{name: "metaspace", kind: stageMetaspace, meta: m})
	return nil
}

// isPunc is tokenizers' punctuation test (Punctuation and
// BertPreTokenizer): ASCII punctuation or a punctuation category of
// Unicode 8.0 (the unicode_categories crate's data).
func isPunc(r rune) bool {
	if r < utf8.RuneSelf {
		return r > ' ' && r < 0x7f && !(r >= '0' && r <= '9' || r|0x20 >= 'a' && r|0x20 <= 'z')
	}
	return inRanges(u8P, uint32(r))
}

// literalSplitter returns the next function of a String pattern: its
// occurrences, leftmost first and not overlapping, and the text between
// them.
func literalSplitter(lit string) func(s string, i int) int {
	return func(s string, i int) int {
		if strings.HasPrefix(s[i:], lit) {
			return i + len(lit)
		}
		if k := strings.Index(s[i:], lit); k >= 0 {
			return i + k
		}
		return len(s)
	}
}

// charSplitter returns the next function of a character-predicate
// pattern: each character that matches is a span of its own, and the
// characters between them one span.
func charSplitter(is func(rune) bool) func(s string, i int) int {
	return func(s string, i int) int {
		r, w := utf8.DecodeRuneInString(s[i:])
		if is(r) {
			return i + w
		}
		j := i + w
		for j < len(s) {
			r, w := utf8.DecodeRuneInString(s[j:])
			if is(r) {
				break
			}
			j += w
		}
		return j
	}
}

func charMatcher(is func(rune) bool) func(s string, i int) bool {
	return func(s string, i int) bool {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return is(r)
	}
}

// isNumericAt is the Digits pre-tokenizer's match test.
func isNumericAt(s string, i int) bool {
	n, _ := isNumeric(s, i)
	return n
}

// wordKind classifies a character for the Whitespace pre-tokenizer's
// pattern \w+|[^\w\s]+ (Oniguruma's Unicode 16.0 \w: Alphabetic, marks,
// decimal numbers, connector punctuation, Join_Control; \s: White_Space):
// 0 space, 1 word, 2 other.
func wordKind(s string, i int) (int, int) {
	r, w := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsSpace(r):
		return 0, w
	case isWordRune(r):
		return 1, w
	}
	return 2, w
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r >= '0' && r <= '9' || r|0x20 >= 'a' && r|0x20 <= 'z'
	}
	return inRanges(u16Word, uint32(r))
}

// splitWordClass returns the end of the run of characters of the same
// wordKind as the one at i.
func splitWordClass(s string, i int) int {
	k, w := wordKind(s, i)
	j := i + w
	for j < len(s) {
		k2, w2 := wordKind(s, j)
		if k2 != k {
			break
		}
		j += w2
	}
	return j
}

func notSpaceAt(s string, i int) bool {
	k, _ := wordKind(s, i)
	return k != 0
}

// spanState applies a split behavior to the spans of one piece as they
// come, left to right, and passes the resulting pieces on to the next
// stage. off, when set, maps span offsets (in a byte-level spelling) back
// to offsets in the piece.
type spanState struct {
	t     *HFTokenizer
	s     string // the piece whose sub-pieces are passed on
	k     int    // the next stage
	first bool   // the piece starts at original offset 0
	a     *hfAcc
	off   []int32
	beh   splitBehavior

	have      bool // a span is pending
	ps, pe    int  // its bounds
	pm        bool // whether it is a match
	prevMatch bool // whether the last span seen was a match
}

func (z *spanState) emit(from, to int) {
	if z.off != nil {
		from, to = int(z.off[from]), int(z.off[to])
	}
	if to > from && z.a.n <= z.a.max {
		z.t.pretok(z.s[from:to], z.k, z.first && from == 0, z.a)
	}
}

func (z *spanState) flush() {
	if z.have {
		z.emit(z.ps, z.pe)
		z.have = false
	}
}

func (z *spanState) pend(a, b int, match bool) {
	z.flush()
	z.have, z.ps, z.pe, z.pm = true, a, b, match
}

// span takes the next span [a, b) of the piece; match is whether the
// pattern (after invert) matched it.
func (z *spanState) span(a, b int, match bool) {
	switch z.beh {
	case behIsolated:
		z.emit(a, b)
	case behRemoved:
		if !match {
			z.emit(a, b)
		}
	case behContiguous:
		if z.have && match == z.pm {
			z.pe = b
		} else {
			z.pend(a, b, match)
		}
	case behMergedWithPrevious:
		if match && !z.prevMatch && z.have {
			z.pe = b
		} else {
			z.pend(a, b, match)
		}
	case behMergedWithNext:
		if z.have && z.pm && !match {
			z.pe = b
			z.flush()
		} else {
			z.pend(a, b, match)
		}
	}
	z.prevMatch = match
}

// splitGeneral splits s with stage st (any behavior, invert, byte-level
// view) and passes the pieces to stage k+1.
func (t *HFTokenizer) splitGeneral(st *preStage, s string, k int, first bool, a *hfAcc) {
	z := spanState{t: t, s: s, k: k + 1, first: first, a: a, beh: st.behavior}
	view := s
	if st.byteView {
		var b []byte
		b, z.off = byteLevelView(s)
		view = string(b)
	}
	if st.re != nil {
		regexSpans(st.re, view, func(from, to int, match bool) { z.span(from, to, match != st.invert) })
	} else {
		for i := 0; i < len(view) && a.n <= a.max; {
			j := st.next(view, i)
			match := st.covering || st.isMatch == nil || st.isMatch(view, i)
			z.span(i, j, match != st.invert)
			i = j
		}
	}
	z.flush()
}

// byteLevelView returns the byte-level spelling of s (GPT-2's
// bytes_to_unicode of each byte) and, for each of its byte offsets that
// starts a character (and its end), the offset in s.
func byteLevelView(s string) ([]byte, []int32) {
	b := make([]byte, 0, 2*len(s))
	off := make([]int32, 2*len(s)+1)
	for i := 0; i < len(s); i++ {
		off[len(b)] = int32(i)
		b = utf8.AppendRune(b, byteLevelChar[s[i]])
	}
	off[len(b)] = int32(len(s))
	return b, off[:len(b)+1]
}

// transform runs a stage that rewrites each piece (Metaspace, ByteLevel's
// prefix space) and passes the result, split or whole, to stage k+1.
func (t *HFTokenizer) transform(st *preStage, s string, k int, first bool, a *hfAcc) {
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	switch st.kind {
	case stagePrefixSpace:
		if s[0] != ' ' {
			b = append(b, ' ')
		}
		b = append(b, s...)
		*bp = b
		t.pretok(unsafe.String(unsafe.SliceData(b), len(b)), k+1, first, a)
	case stageMetaspace:
		m := &st.meta
		// Spaces become the replacement; then it is prepended unless the
		// piece starts with it (always, or first for the piece at the
		// start of the text).
		starts := s[0] == ' ' || len(s) >= len(m.repl) && s[:len(m.repl)] == m.repl
		if !starts && (m.prepend == prependAlways || m.prepend == prependFirst && first) {
			b = append(b, m.repl...)
		}
		for i := 0; i < len(s); i++ {
			if s[i] == ' ' {
				b = append(b, m.repl...)
			} else {
				b = append(b, s[i])
			}
		}
		*bp = b
		p := unsafe.String(unsafe.SliceData(b), len(b))
		if !m.split {
			t.pretok(p, k+1, first, a)
			break
		}
		// Split on the replacement, MergedWithNext: each replacement
		// starts a piece.
		z := spanState{t: t, s: p, k: k + 1, first: first, a: a, beh: behMergedWithNext}
		for i := 0; i < len(p) && a.n <= a.max; {
			if len(p)-i >= len(m.repl) && p[i:i+len(m.repl)] == m.repl {
				z.span(i, i+len(m.repl), true)
				i += len(m.repl)
				continue
			}
			j := i + 1
			for j < len(p) && !(len(p)-j >= len(m.repl) && p[j:j+len(m.repl)] == m.repl) {
				j++
			}
			z.span(i, j, false)
			i = j
		}
		z.flush()
	}
	bufPool.Put(bp)
}

// regexSpans calls fn with each match of re in s (match true, possibly
// empty) and each gap between matches (match false), in order, as
// tokenizers' find_matches lists them (Oniguruma's find_iter). regexp2
// reports offsets in runes.
func regexSpans(re *regexp2.Regexp, s string, fn func(a, b int, match bool)) {
	if lit := literalOf(re); lit != "" {
		// A literal pattern (a Split String, as Gemma's " "): its
		// leftmost non-overlapping matches, without regexp2's []rune.
		last := 0
		for {
			k := strings.Index(s[last:], lit)
			if k < 0 {
				break
			}
			if k > 0 {
				fn(last, last+k, false)
			}
			fn(last+k, last+k+len(lit), true)
			last += k + len(lit)
		}
		if last < len(s) {
			fn(last, len(s), false)
		}
		return
	}
	runes := []rune(s)
	// byteAt[k] is the byte offset of rune k.
	byteAt := make([]int, len(runes)+1)
	for k, off := 0, 0; k < len(runes); k++ {
		byteAt[k] = off
		off += utf8.RuneLen(runes[k])
		byteAt[k+1] = off
	}
	last, matched := 0, false
	m, _ := re.FindRunesMatch(runes)
	for m != nil {
		a, b := byteAt[m.Index], byteAt[m.Index+m.Length]
		// Oniguruma's iterator (the reference's) skips an empty match
		// right at the end of the previous match; .NET's, regexp2's,
		// reports it.
		if a < b || !matched || a != last {
			if a > last {
				fn(last, a, false)
			}
			fn(a, b, true)
			last, matched = b, true
		}
		m, _ = re.FindNextMatch(m)
	}
	if last < len(s) {
		fn(last, len(s), false)
	}
}

// literals remembers, per compiled pattern, the text it matches when it
// is a literal (regexp2.Escape of some text), else "".
var literals sync.Map // *regexp2.Regexp -> string

func literalOf(re *regexp2.Regexp) string {
	if v, ok := literals.Load(re); ok {
		return v.(string)
	}
	pat := re.String()
	lit, err := regexp2.Unescape(pat)
	if err != nil || lit == "" || regexp2.Escape(lit) != pat {
		lit = ""
	}
	literals.Store(re, lit)
	return lit
}

// checkFirst refuses a Metaspace with prepend_scheme first behind a
// normalizer that may delete the first character of a segment: tokenizers
// then decides "first" from the original offset of the first character
// left, which this package does not track.
func (w *preWalk) checkFirst(norms []normStep) error {
	if w.metaFirst == "" {
		return nil
	}
	for _, n := range norms {
		if n.dropsLead {
			return hfRefuse(w.metaFirst, "Metaspace with prepend_scheme first behind the normalizer %s (which may delete a leading character) is not supported", n.name)
		}
	}
	return nil
}
