package redact

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

//go:generate go run ./internal/rulegen -in gitleaks/gitleaks.toml -out rules_gen.go -commit b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b

// ruleSpec is one rule as written in gitleaks' config (see rules_gen.go).
type ruleSpec struct {
	ID, Regex, Path string
	Entropy         float64
	SecretGroup     int
	Keywords        []string
	Allow           []allowSpec
	// Generic marks a catch-all rule (ours; gitleaks' are named
	// generic-*): on overlapping bytes a specific rule's finding wins.
	Generic bool
}

// allowSpec is one gitleaks allowlist: a finding is allowed when its
// target (the secret, or with Target "match" the whole match, or "line"
// its line) matches one of Regexes, or the secret contains one of
// StopWords; with Condition "AND" all the given kinds of check must agree.
type allowSpec struct {
	Target, Condition         string
	Regexes, StopWords, Paths []string
}

type allowList struct {
	target string
	and    bool
	never  bool           // an AND list with a path condition, which a text cannot meet
	re     *regexp.Regexp // the Regexes as one alternation; nil if none
	stop   []string
}

type rule struct {
	id       string
	marker   string // "[REDACTED:kind]"
	re       *regexp.Regexp
	entropy  float64
	group    int
	generic  bool // a catch-all rule: loses to a specific rule on the same bytes
	allow    []allowList
	window   int // bytes of context needed on each side of a keyword hit
	keywords []string
}

// Redactor finds secrets and replaces them with typed markers. It is safe
// for concurrent use.
type Redactor struct {
	rules  []rule
	global allowList
	kw     *keywordIndex
	// kwRules maps a keyword of kw to the rules that name it.
	kwRules [][]int32
	// always are rules without keywords, run on every text.
	always  []int32
	scratch sync.Pool
}

// Counts is the number of redactions per kind (the marker's kind, e.g.
// "aws_access_token"). It holds no secret.
type Counts map[string]int

// Add adds o's counts to c (c must not be nil unless o is empty).
func (c Counts) Add(o Counts) {
	for k, n := range o {
		c[k] += n
	}
}

// Total is the number of redactions over all kinds.
func (c Counts) Total() int {
	t := 0
	for _, n := range c {
		t += n
	}
	return t
}

// maxWindow bounds the context searched around a keyword for rules whose
// match has no length bound (private key blocks, JWTs): a match longer
// than this is not found whole.
const maxWindow = 16 << 10

// lineSlack is how far a search window is widened to reach a line start
// or end, so that ^, $ and \b see the text as it is.
const lineSlack = 256

var (
	defaultOnce sync.Once
	defaultR    *Redactor
	defaultErr  error
)

// Default returns the redactor with every built-in rule (gitleaks' default
// rules less the ones that need a file path, plus [ExtraRules]), compiled
// once.
func Default() *Redactor {
	defaultOnce.Do(func() { defaultR, defaultErr = New() })
	if defaultErr != nil {
		panic(defaultErr) // the built-in rules are tested to compile
	}
	return defaultR
}

// RuleIDs lists the ids of the built-in rules a Redactor uses, in order.
func RuleIDs() []string {
	var ids []string
	for _, s := range builtinSpecs() {
		ids = append(ids, s.ID)
	}
	return ids
}

// Kind returns the marker kind of a rule id: gitleaks' id with '-' as '_'.
func Kind(ruleID string) string { return strings.ReplaceAll(ruleID, "-", "_") }

// builtinSpecs are the rules in use: gitleaks' rules without a file-path
// condition (we redact texts, not files, so "only in *.tf files" cannot
// be honoured and the rule would fire everywhere), then ExtraRules.
func builtinSpecs() []ruleSpec {
	var out []ruleSpec
	for _, s := range gitleaksRules {
		if s.Path != "" || s.Regex == "" {
			continue
		}
		out = append(out, tuned(s))
	}
	return append(out, extraRules...)
}

// New compiles the built-in rules, less those whose ids are in disabled.
func New(disabled ...string) (*Redactor, error) {
	r := &Redactor{}
	g, err := compileAllow(gitleaksGlobal)
	if err != nil {
		return nil, fmt.Errorf("redact: global allowlist: %w", err)
	}
	r.global = g
	var words []string
	wordIdx := map[string]int32{}
	for _, s := range builtinSpecs() {
		if slices.Contains(disabled, s.ID) {
			continue
		}
		ru, err := compileRule(s)
		if err != nil {
			return nil, fmt.Errorf("redact: rule %s: %w", s.ID, err)
		}
		idx := int32(len(r.rules))
		r.rules = append(r.rules, ru)
		if len(s.Keywords) == 0 {
			r.always = append(r.always, idx)
			continue
		}
		for _, w := range s.Keywords {
			w = strings.ToLower(w)
			wi, ok := wordIdx[w]
			if !ok {
				wi = int32(len(words))
				wordIdx[w] = wi
				words = append(words, w)
				r.kwRules = append(r.kwRules, nil)
			}
			if !slices.Contains(r.kwRules[wi], idx) {
				r.kwRules[wi] = append(r.kwRules[wi], idx)
			}
		}
	}
	r.kw = newKeywordIndex(words)
	return r, nil
}

// jsonTolerant rewrites the pieces of gitleaks' rule templates that
// surround a value (quotes and spaces before it, the terminator after it)
// so they also accept a backslash: inside a JSON document that is itself
// a string (a tool call's arguments, a config echoed by a tool) a value is
// quoted as \"value\" and lines end in \n.
var jsonTolerant = strings.NewReplacer(
	`(?:[\x60'"\s;]|\\[nr]|$)`, `(?:[\x60'"\s;\\]|$)`,
	`[\s'"]{0,3}`, `[\s'"\\]{0,5}`,
	`[\x60'"\s=]{0,5}`, `[\x60'"\s=\\]{0,7}`,
)

func compileRule(s ruleSpec) (rule, error) {
	s.Regex = jsonTolerant.Replace(s.Regex)
	re, err := regexp.Compile(s.Regex)
	if err != nil {
		return rule{}, err
	}
	ru := rule{
		id: s.ID, marker: "[REDACTED:" + Kind(s.ID) + "]", re: re, entropy: s.Entropy,
		group: s.SecretGroup, generic: strings.HasPrefix(s.ID, "generic-") || s.Generic, keywords: s.Keywords,
	}
	syn, err := syntax.Parse(s.Regex, syntax.Perl)
	if err != nil {
		return rule{}, err
	}
	ru.window = maxWidth(syn.Simplify())
	if ru.window < 0 || ru.window > maxWindow {
		ru.window = maxWindow
	}
	for _, a := range s.Allow {
		al, err := compileAllow(a)
		if err != nil {
			return rule{}, err
		}
		ru.allow = append(ru.allow, al)
	}
	return ru, nil
}

func compileAllow(a allowSpec) (allowList, error) {
	al := allowList{target: a.Target, and: strings.EqualFold(a.Condition, "AND")}
	al.never = al.and && len(a.Paths) > 0
	if len(a.Regexes) > 0 {
		parts := make([]string, len(a.Regexes))
		for i, x := range a.Regexes {
			parts[i] = "(?:" + x + ")"
		}
		re, err := regexp.Compile(strings.Join(parts, "|"))
		if err != nil {
			return al, err
		}
		al.re = re
	}
	for _, w := range a.StopWords {
		al.stop = append(al.stop, strings.ToLower(w))
	}
	return al, nil
}

// maxWidth is the largest number of bytes the expression can match, or -1
// when unbounded.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpNoMatch:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += runeMax(r)
		}
		return n
	case syntax.OpCharClass:
		w := 0
		for i := 1; i < len(re.Rune); i += 2 {
			w = max(w, runeMax(re.Rune[i]))
		}
		return w
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 4
	case syntax.OpCapture:
		return maxWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		w := maxWidth(re.Sub[0])
		if w < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat:
		t := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			t += w
		}
		return t
	case syntax.OpAlternate:
		t := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			t = max(t, w)
		}
		return t
	}
	return -1
}

func runeMax(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

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
	s := unsafe.String(unsafe.SliceData(text), len(text))
	f, sc := r.find(s)
	if sc == nil {
		return text, nil
	}
	defer r.scratch.Put(sc)
	if len(f) == 0 {
		return text, nil
	}
	out, counts := r.apply(dst[:0], s, f)
	return out, counts
}

// RedactString is [Redactor.Redact] for a string: it returns s itself and
// nil counts when nothing is found.
func (r *Redactor) RedactString(s string) (string, Counts) {
	f, sc := r.find(s)
	if sc == nil {
		return s, nil
	}
	defer r.scratch.Put(sc)
	if len(f) == 0 {
		return s, nil
	}
	out, counts := r.apply(nil, s, f)
	return string(out), counts
}

// Contains reports whether text holds a secret some rule would redact.
func (r *Redactor) Contains(s string) bool {
	f, sc := r.find(s)
	if sc != nil {
		defer r.scratch.Put(sc)
	}
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
	if len(r.always) == 0 && !r.kw.any(s) {
		return nil, nil
	}
	sc, _ := r.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{spans: make([][]span, len(r.rules))}
	}
	for _, i := range sc.used {
		sc.spans[i] = sc.spans[i][:0]
	}
	sc.used = sc.used[:0]
	sc.findings = sc.findings[:0]
	addSpan := func(ri int32, start, end int) {
		start, end = max(start, 0), min(end, len(s))
		sp := sc.spans[ri]
		if len(sp) == 0 {
			sc.used = append(sc.used, ri)
		} else if last := &sp[len(sp)-1]; start <= last.end {
			last.end = max(last.end, end)
			return
		}
		sc.spans[ri] = append(sp, span{start, end})
	}
	for _, ri := range r.always {
		addSpan(ri, 0, len(s))
	}
	r.kw.scan(s, func(w int32, end int) {
		for _, ri := range r.kwRules[w] {
			win := r.rules[ri].window
			addSpan(ri, end-win-len(r.kw.words[w]), end+win)
		}
	})
	for _, ri := range sc.used {
		ru := &r.rules[ri]
		for _, sp := range sc.spans[ri] {
			start, end := widen(s, sp.start, sp.end)
			r.match(sc, ru, ri, s, start, end)
		}
	}
	f := sc.findings
	if len(f) < 2 {
		return f, sc
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
	sc.findings = out
	return out, sc
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

func (r *Redactor) match(sc *scratch, ru *rule, ri int32, s string, start, end int) {
	window := s[start:end]
	for _, m := range ru.re.FindAllStringSubmatchIndex(window, -1) {
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
				continue
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
			continue
		}
		secret := window[ss:se]
		if ru.entropy != 0 && shannon(secret) <= ru.entropy {
			continue
		}
		match := window[ms:me]
		line := lineOf(s, start+ms, start+me)
		if r.global.allows(secret, match, line) {
			continue
		}
		allowed := false
		for i := range ru.allow {
			if ru.allow[i].allows(secret, match, line) {
				allowed = true
				break
			}
		}
		if allowed {
			continue
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

func (a *allowList) allows(secret, match, line string) bool {
	if a.never {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
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
