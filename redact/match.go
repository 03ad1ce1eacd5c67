package redact

// Matching: finding the secrets of a text with the compiled rules and
// replacing them.

import (
	"math"
	"regexp/syntax"
	"sort"
	"strings"
	"unsafe"
)

// finding is one secret found: text[start:end] is replaced by rule's marker.
type finding struct {
	start, end int
	rule       int32
}

type span struct{ start, end int }

type scratch struct {
	spans    [][]span // per rule
	used     []int32  // rules with spans
	findings []finding
}

// Redact replaces each secret in text with "[REDACTED:<kind>]" and counts
// the replacements per kind. When nothing is found — the common case — it
// returns text itself and nil counts, without allocating. Otherwise it
// appends the redacted text to dst[:0] and returns it; text is never
// modified. text is any UTF-8 or binary content: a decoded JSON string (a
// turn's text, a tool call's arguments, which may themselves be JSON with
// escapes); the markers need no JSON escaping.
func (r *Redactor) Redact(dst, text []byte) ([]byte, Counts) {
	if len(text) == 0 {
		return text, nil
	}
	out, counts := r.redact(dst[:0], unsafe.String(unsafe.SliceData(text), len(text)))
	if counts == nil {
		return text, nil
	}
	return out, counts
}

// RedactString is [Redactor.Redact] for a string: it returns s itself and
// nil counts when nothing is found.
func (r *Redactor) RedactString(s string) (string, Counts) {
	out, counts := r.redact(nil, s)
	if counts == nil {
		return s, nil
	}
	return string(out), counts
}

// Func returns a function that redacts one string and adds what it
// redacted to counts (not nil), reporting whether it changed the string:
// the shape jsonx.MapStrings and traj.Record.MapTurnStrings take, to redact
// every string of a turn or field in place.
func (r *Redactor) Func(counts Counts) func(string) (string, bool) {
	return func(s string) (string, bool) {
		out, c := r.RedactString(s)
		if c == nil {
			return s, false
		}
		counts.Add(c)
		return out, true
	}
}

// redact appends s redacted to dst; nil counts when nothing was found.
func (r *Redactor) redact(dst []byte, s string) ([]byte, Counts) {
	f, sc := r.find(s)
	if sc == nil {
		return nil, nil
	}
	defer r.scratch.Put(sc)
	if f, _ = narrow(s, f); len(f) == 0 {
		return nil, nil
	}
	return r.apply(dst, s, f)
}

// Contains reports whether text holds a secret some rule would redact.
func (r *Redactor) Contains(s string) bool {
	f, sc := r.find(s)
	r.release(sc)
	return len(f) > 0
}

func (r *Redactor) apply(dst []byte, s string, f []finding) ([]byte, Counts) {
	counts := Counts{}
	last := 0
	for _, x := range f {
		dst = append(dst, s[last:x.start]...)
		ru := &r.rules[x.rule]
		dst = append(dst, ru.marker...)
		counts[Kind(ru.id)]++
		last = x.end
	}
	dst = append(dst, s[last:]...)
	return dst, counts
}

// find returns the non-overlapping findings in s, in order, and the
// scratch holding them (nil when no keyword matched, in which case nothing
// was allocated).
func (r *Redactor) find(s string) ([]finding, *scratch) {
	var sc *scratch // taken from the pool at the first keyword
	begin := func() {
		if sc != nil {
			return
		}
		sc, _ = r.scratch.Get().(*scratch)
		if sc == nil {
			sc = &scratch{spans: make([][]span, len(r.rules))}
		}
		for _, i := range sc.used {
			sc.spans[i] = sc.spans[i][:0]
		}
		sc.used = sc.used[:0]
		sc.findings = sc.findings[:0]
	}
	addSpan := func(ri int32, start, end int) {
		start, end = max(start, 0), min(end, len(s))
		sp := sc.spans[ri]
		if len(sp) == 0 {
			sc.used = append(sc.used, ri)
		} else if last := &sp[len(sp)-1]; start >= last.start && start <= last.end {
			last.end = max(last.end, end)
			return
		}
		sc.spans[ri] = append(sp, span{start, end})
	}
	if len(r.always) > 0 {
		begin()
		for _, ri := range r.always {
			addSpan(ri, 0, len(s))
		}
	}
	r.kw.scan(s, func(w int32, end int) {
		begin()
		start := end - len(r.kw.words[w])
		for _, ri := range r.kwRules[w] {
			ru := &r.rules[ri]
			if ru.locate != nil {
				if at := ru.locate(s, start); at >= 0 && ru.anchored != nil {
					r.matchAnchored(sc, ru, ri, s, at)
				}
				continue
			}
			if ru.anchored != nil {
				r.matchAnchored(sc, ru, ri, s, start)
				continue
			}
			addSpan(ri, start-ru.window, end+ru.window)
		}
	})
	if sc == nil {
		return nil, nil
	}
	for _, ri := range sc.used {
		ru := &r.rules[ri]
		for _, sp := range sc.spans[ri] {
			start, end := widen(s, sp.start, sp.end)
			r.match(sc, ru, ri, s, start, end)
		}
	}
	sc.findings = r.resolve(sc.findings)
	return sc.findings, sc
}

// resolve keeps non-overlapping findings, in order: earliest first; on
// the same bytes a specific rule's finding replaces a generic one, else the
// first one stays (extended by an overlapping one of the same kind of rule
// that ends later); a known secret's finding (ruleSpec.Known) and one it
// overlaps become one finding of the known kind, covering both. f is
// reordered in place.
func (r *Redactor) resolve(f []finding) []finding {
	if len(f) < 2 {
		return f
	}
	// Keep non-overlapping findings: earliest first; on the same start,
	// specific rules before generic ones, then the longer one.
	sort.Slice(f, func(i, j int) bool {
		if f[i].start != f[j].start {
			return f[i].start < f[j].start
		}
		gi, gj := r.rules[f[i].rule].generic, r.rules[f[j].rule].generic
		if gi != gj {
			return gj
		}
		return f[i].end > f[j].end
	})
	out := f[:1]
	for _, x := range f[1:] {
		prev := &out[len(out)-1]
		if x.start < prev.end && (r.rules[prev.rule].known || r.rules[x.rule].known) {
			// A known secret: the two findings become one, of its
			// kind, so that none of its bytes is left.
			if !r.rules[prev.rule].known {
				prev.rule = x.rule
			}
			prev.end = max(prev.end, x.end)
			continue
		}
		if x.start < prev.end {
			// Overlap: a specific rule's finding replaces a generic one
			// covering the same bytes; otherwise the first one stays.
			if r.rules[prev.rule].generic && !r.rules[x.rule].generic {
				*prev = x
			} else if x.end > prev.end && r.rules[prev.rule].generic == r.rules[x.rule].generic {
				prev.end = x.end
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// widen moves start back to a line start and end forward to a line end,
// each by at most lineSlack bytes.
func widen(s string, start, end int) (int, int) {
	lo := max(start-lineSlack, 0)
	if i := strings.LastIndexByte(s[lo:start], '\n'); i >= 0 {
		start = lo + i + 1
	} else {
		start = lo
	}
	hi := min(end+lineSlack, len(s))
	if i := strings.IndexByte(s[end:hi], '\n'); i >= 0 {
		end += i
	} else {
		end = hi
	}
	return start, end
}

// matchAnchored runs a template rule's anchored expression at a keyword
// occurring at s[at:]. The match is taken to start where the identifier
// run holding the keyword starts (at most 50 bytes back), as the
// unanchored expression's lazy prefix would.
func (r *Redactor) matchAnchored(sc *scratch, ru *rule, ri int32, s string, at int) {
	if ru.wordStart && at > 0 && isWordByte(s[at-1]) {
		return
	}
	if ru.prefixes != nil && !hasAnyPrefix(s[at:], ru.prefixes) {
		return
	}
	if ru.pre != nil && !ru.pre(s, at) {
		return
	}
	if ru.follows != nil {
		ok := false
		for i := range ru.follows {
			if ru.follows[i].admits(s[at:]) {
				ok = true
				break
			}
		}
		if !ok {
			return
		}
	}
	if ru.template {
		op := templateTail(s, at, ru.reach, ru.minValue, ru.secret)
		if op < 0 || ru.allowRun != nil && secretsAllowed(s, op, ru.secret, ru.allowRun) {
			return
		}
	}
	end := min(len(s), at+ru.window)
	if ru.within != nil && !holdsAny(s[at:end], ru.within) {
		return
	}
	m := ru.anchored.FindStringSubmatchIndex(s[at:end])
	if m != nil && m[1] == end-at && end < len(s) {
		end = min(len(s), at+maxWindow)
		m = ru.anchored.FindStringSubmatchIndex(s[at:end])
	}
	if m == nil {
		return
	}
	back := 0
	for ru.template && back < 50 && at-back > 0 && isIdent(s[at-back-1]) {
		back++
	}
	r.accept(sc, ru, ri, s, at, s[at:end], m, -back)
}

// templateTail is a necessary condition of gitleaks' keyword template
// after a keyword at s[at:]: identifier bytes and blanks (the rest of the
// keyword and up to 20 more), up to 5 quotes, blanks or backslashes, then
// an assignment operator, before reach bytes from the keyword's start,
// then after up to 7 quotes, blanks, '=' or backslashes, minValue bytes
// that are neither blanks nor quotes; and, when the secret's bytes are
// known (secret), a run of them of minValue bytes at least that ends where
// what may follow a secret (templateEnd) does: the secret is a part of
// that run and nothing but its end can be followed by templateEnd. It
// returns the position of the operator's first byte, or -1 when the
// condition does not hold.
func templateTail(s string, at, reach, minValue int, secret *[256]bool) int {
	i, end := at, min(len(s), at+reach)
	for i < end && tailClass[s[i]]&identBlank != 0 {
		i++
	}
	for n := 0; n < 5 && i < end && tailClass[s[i]]&quoteSpace != 0; n++ {
		i++
	}
	if i >= end || tailClass[s[i]]&operator == 0 {
		return -1
	}
	op := i
	i++
	v0 := i
	for n := 0; n < 8 && i < len(s) && tailClass[s[i]]&afterOp != 0; n++ {
		i++
	}
	if secret != nil {
		// The run holding the secret: back over skipped bytes that a
		// secret may hold too ('='), forward to its end.
		v := i
		for v > v0 && secret[s[v-1]] {
			v--
		}
		e := i
		for e < len(s) && secret[s[e]] {
			e++
		}
		if e-v < max(minValue, 1) || e < len(s) && !isTemplateEnd(s[e]) {
			return -1
		}
	}
	n := 0
	for ; n < minValue && i+n < len(s); n++ {
		if tailClass[s[i+n]]&valueEnd != 0 {
			break
		}
	}
	if n < max(minValue, 1) {
		return -1
	}
	return op
}

// The byte classes templateTail reads (tailClass).
const (
	identBlank = 1 << iota // isIdent, ' ', '\t'
	quoteSpace             // isQuoteSpace
	operator               // the first byte of an assignment operator: "=>:|?,"
	afterOp                // what may follow it before the value: quoteSpace, "=`:>|"
	valueEnd               // a byte a value cannot hold: "`'\" \t\n\r"
)

var tailClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if isIdent(b) || b == ' ' || b == '\t' {
			t[c] |= identBlank
		}
		if isQuoteSpace(b) {
			t[c] |= quoteSpace | afterOp
		}
	}
	for _, b := range []byte("=>:|?,") {
		t[b] |= operator
	}
	for _, b := range []byte("=`:>|") {
		t[b] |= afterOp
	}
	for _, b := range []byte("`'\" \t\n\r") {
		t[b] |= valueEnd
	}
	return t
}()

// secretsAllowed reports whether every secret a template rule's match
// could hold after the operator at s[op] is made of the bytes allow marks
// only, so that the rule's allowlist (allowRun) would drop its finding.
// The secret is a run of secret bytes ending where the run does (the
// template ends with it, then a byte that cannot be in it, or the text's
// end) and starting at most 11 bytes after op (the rest of the operator,
// up to 3 bytes, then up to 7 quotes, blanks, '=' or backslashes): so
// every run that starts within those bytes is checked to its end.
func secretsAllowed(s string, op int, secret, allow *[256]bool) bool {
	if secret == nil {
		return false
	}
	for p := op + 1; p <= op+11 && p < len(s); p++ {
		for ; p < len(s) && secret[s[p]]; p++ {
			if !allow[s[p]] {
				return false
			}
		}
	}
	return true
}

// firstGroup is the first capturing group of re, or nil.
func firstGroup(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCapture {
		return re
	}
	for _, sub := range re.Sub {
		if g := firstGroup(sub); g != nil {
			return g
		}
	}
	return nil
}

// isTemplateEnd reports whether b is what templateEnd accepts after a
// secret: a backtick, a quote, a blank, ';' or a backslash.
func isTemplateEnd(b byte) bool {
	switch b {
	case '`', '\'', '"', ' ', '\t', '\n', '\r', '\f', '\v', ';', '\\':
		return true
	}
	return false
}

func isQuoteSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v' || b == '\'' || b == '"' || b == '\\'
}

func holdsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func isIdent(b byte) bool {
	return b == '_' || b == '.' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

func (r *Redactor) match(sc *scratch, ru *rule, ri int32, s string, start, end int) {
	window := s[start:end]
	ms := ru.re.FindAllStringSubmatchIndex(window, -1)
	if n := len(ms); n > 0 && ms[n-1][1] == len(window) && end < len(s) {
		// The last match reaches the window's end: it may be cut short.
		end = min(len(s), end+maxWindow)
		window = s[start:end]
		ms = ru.re.FindAllStringSubmatchIndex(window, -1)
	}
	for _, m := range ms {
		r.accept(sc, ru, ri, s, start, window, m, 0)
	}
}

// accept checks one match m of ru in window (which starts at s[start:]):
// secret group, entropy, allowlists; matchFrom moves the match's start
// (for the anchored form, whose match lacks the identifier prefix).
func (r *Redactor) accept(sc *scratch, ru *rule, ri int32, s string, start int, window string, m []int, matchFrom int) {
	{
		ms, me := m[0], m[1]
		// gitleaks trims newlines around a match.
		for ms < me && window[ms] == '\n' {
			ms++
		}
		for me > ms && window[me-1] == '\n' {
			me--
		}
		ss, se := ms, me
		if ru.group > 0 {
			if 2*ru.group+1 >= len(m) || m[2*ru.group] < 0 {
				return
			}
			ss, se = m[2*ru.group], m[2*ru.group+1]
		} else {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && m[g+1] > m[g] {
					ss, se = m[g], m[g+1]
					break
				}
			}
		}
		if se <= ss {
			return
		}
		secret := window[ss:se]
		if ru.entropy != 0 && shannon(secret) <= ru.entropy {
			return
		}
		match := s[start+ms+matchFrom : start+me]
		line := lineRef{s: s, start: start + ms, end: start + me}
		if ru.known {
			sc.findings = append(sc.findings, finding{start: start + ss, end: start + se, rule: ri})
			return
		}
		if r.global.allows(secret, match, &line) || r.ours.allows(secret, match, &line) {
			return
		}
		allowed := false
		for i := range ru.allow {
			if ru.allow[i].allows(secret, match, &line) {
				allowed = true
				break
			}
		}
		if allowed {
			return
		}
		sc.findings = append(sc.findings, finding{start: start + ss, end: start + se, rule: ri})
	}
}

func lineOf(s string, start, end int) string {
	if i := strings.LastIndexByte(s[:start], '\n'); i >= 0 {
		start = i + 1
	} else {
		start = 0
	}
	if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(s)
	}
	return s[start:end]
}

// lineRef is the line of a match, found only if an allowlist asks for it.
type lineRef struct {
	s          string
	start, end int
	line       string
	found      bool
}

func (l *lineRef) get() string {
	if !l.found {
		l.line, l.found = lineOf(l.s, l.start, l.end), true
	}
	return l.line
}

func (a *allowList) allows(secret, match string, line *lineRef) bool {
	if a.never {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line.get()
	}
	reOK := a.re != nil && target != "" && a.re.MatchString(target)
	stopOK := false
	if len(a.stop) > 0 && secret != "" {
		low := strings.ToLower(secret)
		for _, w := range a.stop {
			if strings.Contains(low, w) {
				stopOK = true
				break
			}
		}
	}
	if a.and {
		ok := a.re != nil || len(a.stop) > 0
		if a.re != nil {
			ok = ok && reOK
		}
		if len(a.stop) > 0 {
			ok = ok && stopOK
		}
		return ok
	}
	return reOK || stopOK
}

// shannon is the Shannon entropy of s in bits per byte, as gitleaks
// computes it.
func shannon(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	n := float64(len(s))
	e := 0.0
	for _, c := range freq {
		if c > 0 {
			p := float64(c) / n
			e -= p * math.Log2(p)
		}
	}
	return e
}
