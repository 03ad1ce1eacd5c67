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
	"unicode"
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
	// Pre, for a rule of ours whose matches start at a keyword, is a
	// quick necessary condition checked at each keyword occurrence s[at:]
	// before the expression runs.
	Pre func(s string, at int) bool
	// Locate, for a rule whose Keywords lie inside its matches rather
	// than at their start (see locators), maps a keyword occurring at
	// s[at:] to where a match would start, or -1; the expression then runs
	// anchored there.
	Locate func(s string, at int) int
	// Within, for a rule run anchored at its keywords, are literals one
	// of which every match holds after the keyword (ASCII case as
	// written): the expression runs only on a window that holds one.
	Within []string
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
	// anchored is set for gitleaks' keyword-template rules,
	// (?i)[\w.-]{0,50}?(?:KEYWORDS)…: the same expression less its lazy
	// identifier prefix, anchored with ^, run at each keyword occurrence
	// instead of searching a window. back is the length of the identifier
	// run before the keyword that the prefix would have matched.
	anchored *regexp.Regexp
	template bool // anchored is a keyword-template rule's tail
	minValue int  // a template rule's shortest secret (its first group)
	// reach, for a template rule, bounds how far after the keyword's
	// start the assignment operator can be: the keyword group's longest
	// match, 20 identifier bytes and 5 quotes or blanks.
	reach int
	// wordStart: the anchored expression began with \b, checked by hand
	// against the byte before the keyword.
	wordStart bool
	// follows are quick necessary conditions of a keyword-prefixed rule:
	// a match starts with one of the literals, then at least min bytes of
	// the class (nil: not known, run the expression).
	follows []follow
	// prefixes are literals one of which a match of a case-sensitive
	// keyword-prefixed rule starts with (nil: not known).
	prefixes []string
	pre      func(s string, at int) bool // ruleSpec.Pre
	locate   func(s string, at int) int  // ruleSpec.Locate
	within   []string                    // ruleSpec.Within
	// secret, for a template rule, marks the bytes its secret can hold:
	// a necessary condition templateTail checks before the expression runs
	// (nil: not known).
	secret *[256]bool
	// allowRun, for a template rule with an allowlist ^[class]+$ of its
	// secret (gitleaks' generic-api-key: ^[a-zA-Z_.-]+$), marks the bytes
	// of that class (ASCII only): a secret of them only is allowed, so the
	// expression need not run when every secret it could find is one
	// (secretsAllowed).
	allowRun *[256]bool
	// anchors are the words a template rule runs at: the literal starts of
	// its keyword group (what its match holds right after the identifier
	// prefix), lower-cased.
	anchors []string
}

// follow is one alternative's start: a literal (compared ignoring ASCII
// case), then min bytes from class.
type follow struct {
	lit   string
	class *[256]bool
	min   int
}

func (f *follow) admits(s string) bool {
	if !hasFoldedPrefix(s, f.lit) {
		return false
	}
	s = s[len(f.lit):]
	if len(s) < f.min {
		return false
	}
	for i := 0; i < f.min; i++ {
		if !f.class[s[i]] {
			return false
		}
	}
	return true
}

// Redactor finds secrets and replaces them with typed markers. It is safe
// for concurrent use.
type Redactor struct {
	rules  []rule
	global allowList
	ours   allowList // ourGlobal
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
// or end (so that ^, $ and \b see the text as it is), or at least past
// the window by that much, so a \b at the window start is not invented.
const lineSlack = 32

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
	return newOn(bestKernel(), disabled...)
}

// newOn is New with keywords found and escape views made kern's way.
func newOn(kern *kernel, disabled ...string) (*Redactor, error) {
	r := &Redactor{}
	g, err := compileAllow(gitleaksGlobal)
	if err != nil {
		return nil, fmt.Errorf("redact: global allowlist: %w", err)
	}
	r.global = g
	if r.ours, err = compileAllow(ourGlobal); err != nil {
		return nil, fmt.Errorf("redact: our global allowlist: %w", err)
	}
	var kwords []string
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
		words := s.Keywords
		if ru.anchors != nil {
			words = ru.anchors
		}
		if len(words) == 0 {
			r.always = append(r.always, idx)
			continue
		}
		for _, w := range words {
			w = strings.ToLower(w)
			wi, ok := wordIdx[w]
			if !ok {
				wi = int32(len(kwords))
				wordIdx[w] = wi
				kwords = append(kwords, w)
				r.kwRules = append(r.kwRules, nil)
			}
			if !slices.Contains(r.kwRules[wi], idx) {
				r.kwRules[wi] = append(r.kwRules[wi], idx)
			}
		}
	}
	r.kw = newKeywordIndex(kwords)
	r.kw.kern = kern
	r.kw.cases = map[int32][]string{}
	for _, w := range r.kw.short {
		if sp := r.exactSpellings(kwords[w], r.kwRules[w]); sp != nil {
			r.kw.cases[w] = sp
		}
	}
	r.kw.buildFilter()
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

// exactSpellings returns the spellings of the 2-byte keyword w that its
// rules can match at all, when every one of them is case-sensitive and
// starts with known literals (a JWT's "ey", Twilio's "SK"); nil otherwise.
func (r *Redactor) exactSpellings(w string, rules []int32) []string {
	var out []string
	for _, ri := range rules {
		ru := &r.rules[ri]
		if ru.anchored == nil || ru.template || ru.prefixes == nil {
			return nil
		}
		for _, p := range ru.prefixes {
			if len(p) >= 2 && strings.EqualFold(p[:2], w) && !slices.Contains(out, p[:2]) {
				out = append(out, p[:2])
			}
		}
	}
	return out
}

func compileRule(s ruleSpec) (rule, error) {
	s.Regex = jsonTolerant.Replace(s.Regex)
	re, err := regexp.Compile(s.Regex)
	if err != nil {
		return rule{}, err
	}
	ru := rule{
		id: s.ID, marker: "[REDACTED:" + Kind(s.ID) + "]", re: re, entropy: s.Entropy,
		group: s.SecretGroup, generic: strings.HasPrefix(s.ID, "generic-") || s.Generic, keywords: s.Keywords,
		pre: s.Pre, locate: s.Locate, within: s.Within,
	}
	syn, err := syntax.Parse(s.Regex, syntax.Perl)
	if err != nil {
		return rule{}, err
	}
	ru.window = maxWidth(syn.Simplify(), unboundedRepeat)
	if ru.window < 0 || ru.window > maxWindow || strings.Contains(s.Regex, `[\s\S`) {
		// Unbounded across lines (a private key block): a whole block
		// must fit in the window.
		ru.window = maxWindow
	}
	if rest, ok := strings.CutPrefix(s.Regex, templatePrefix); ok {
		ru.anchored, err = regexp.Compile(`(?i)^(?:` + rest)
		if err != nil {
			return rule{}, err
		}
		ru.template = true
		if g := firstGroup(syn); g != nil {
			ru.minValue = minWidth(g)
			if secretThenEnd(syn, g) {
				ru.secret = byteClass(g)
			}
		}
		ru.anchors = templateAnchors(rest)
		ru.allowRun = allowedRun(s.Allow)
		ru.reach = 64
		if g, err := syntax.Parse(`(?i)(?:`+rest, syntax.Perl); err == nil && g.Op == syntax.OpConcat {
			if w := maxWidth(g.Sub[0], unboundedRepeat); w >= 0 {
				ru.reach = w + 20 + 5 + 1
			}
		}
	} else if s.Locate != nil || startsWithKeyword(syn, s.Keywords) {
		// Every match starts with one of the rule's keywords (or where
		// Locate says): run the expression anchored at each keyword
		// occurrence.
		ru.anchored, err = regexp.Compile(`^(?:` + s.Regex + `)`)
		if err != nil {
			return rule{}, err
		}
		ru.follows = follows(syn)
		if !strings.Contains(s.Regex, "(?i") {
			ru.prefixes, _ = litSet(syn)
		}
		src := strings.TrimPrefix(s.Regex, "(?i)")
		ru.wordStart = strings.HasPrefix(src, `\b`) || strings.HasPrefix(src, `(\b`)
		if ru.wordStart && s.Locate == nil {
			for _, k := range s.Keywords {
				if !isWordByte(k[0]) {
					// \b before a non-word byte means something else.
					ru.anchored, ru.wordStart = nil, false
				}
			}
		}
	}
	if ru.anchored != nil && ru.window < maxWindow {
		// Anchored, a rule's match starts at the keyword: its window need
		// only be as long as a match of ASCII text (a longer match, of
		// wider runes, reaches the window's end and is searched again in a
		// longer one), and the shorter slice lets regexp backtrack instead
		// of running its NFA. It still holds a shortest match of 4-byte runes.
		ru.window = max(maxRunes(syn.Simplify(), unboundedRepeat), 4*minWidth(syn))
	}
	if ru.anchored != nil {
		// Only the anchored form runs (find); the program of the whole
		// expression, a few KB for a template rule, would only weigh on
		// the heap, and so on every garbage collection's goal.
		ru.re = nil
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

// allowedRun returns the byte class of an allowlist of a rule's secret
// that is one expression ^[class]+$ (or ^[class]*$) of ASCII bytes: a
// secret made of them only is allowed whatever else the list holds. Nil
// when there is none.
func allowedRun(allow []allowSpec) *[256]bool {
	for _, a := range allow {
		if a.Target != "" || strings.EqualFold(a.Condition, "AND") {
			continue
		}
		for _, x := range a.Regexes {
			re, err := syntax.Parse(x, syntax.Perl)
			if err != nil {
				continue
			}
			re = re.Simplify()
			if re.Op != syntax.OpConcat || len(re.Sub) != 3 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[2].Op != syntax.OpEndText {
				continue
			}
			rep := re.Sub[1]
			if rep.Op != syntax.OpPlus && rep.Op != syntax.OpStar || rep.Sub[0].Op != syntax.OpCharClass {
				continue
			}
			cc := rep.Sub[0]
			if len(cc.Rune) == 0 || cc.Rune[len(cc.Rune)-1] >= 0x80 {
				continue
			}
			return classTable(cc)
		}
	}
	return nil
}

// startsWithKeyword reports whether every match of re begins with one of
// keywords (ASCII case ignored), as far as re's leading literals show.
func startsWithKeyword(re *syntax.Regexp, keywords []string) bool {
	set, _ := litSet(re)
	if len(set) == 0 {
		return false
	}
	for _, p := range set {
		p = strings.ToLower(p)
		ok := false
		for _, k := range keywords {
			if strings.HasPrefix(p, strings.ToLower(k)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// litSet returns strings such that every match of re starts with one of
// them, and whether every match is exactly one of them. A leading \b is
// passed over (the caller checks it). A nil set means nothing is known.
func litSet(re *syntax.Regexp) ([]string, bool) { return litSetMax(re, 256) }

// litSetMax is litSet with sets of at most maxSet strings (a longer set is
// cut to the literals before the part that would make it longer).
func litSetMax(re *syntax.Regexp, maxSet int) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, true
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if len(set) == 8 {
					return nil, false
				}
				set = append(set, string(c))
			}
		}
		return set, true
	case syntax.OpCapture:
		return litSetMax(re.Sub[0], maxSet)
	case syntax.OpQuest:
		// x?: the empty string or one of x's.
		s, e := litSetMax(re.Sub[0], maxSet)
		if s == nil {
			return nil, false
		}
		return append([]string{""}, s...), e
	case syntax.OpAlternate:
		var set []string
		exact := true
		for _, sub := range re.Sub {
			s, e := litSetMax(sub, maxSet)
			if s == nil {
				return nil, false
			}
			set = append(set, s...)
			exact = exact && e
		}
		return set, exact
	case syntax.OpConcat:
		acc := []string{""}
		for i, sub := range re.Sub {
			if i == 0 && sub.Op == syntax.OpWordBoundary {
				continue
			}
			s, e := litSetMax(sub, maxSet)
			if s == nil || len(acc)*len(s) > maxSet {
				return known(acc), false
			}
			next := make([]string, 0, len(acc)*len(s))
			for _, a := range acc {
				for _, b := range s {
					next = append(next, a+b)
				}
			}
			acc = next
			if !e {
				return known(acc), false
			}
		}
		return known(acc), true
	}
	return nil, false
}

// follows derives the quick conditions of rule.follows from re: for each
// top-level alternative, its leading literal and the class repeated after
// it; nil when some alternative does not have that shape.
func follows(re *syntax.Regexp) []follow {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpConcat && len(re.Sub) > 0 && re.Sub[0].Op == syntax.OpWordBoundary {
		rest := *re
		rest.Sub = re.Sub[1:]
		re = &rest
		if len(re.Sub) == 1 {
			re = re.Sub[0]
		}
	}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpConcat && len(re.Sub) > 0 && (re.Sub[0].Op == syntax.OpCapture || re.Sub[0].Op == syntax.OpAlternate) {
		// (A|B)tail: the conditions of the group's alternatives.
		head := re.Sub[0]
		for head.Op == syntax.OpCapture {
			head = head.Sub[0]
		}
		if head.Op == syntax.OpAlternate {
			re = head
		} else if head.Op == syntax.OpConcat {
			re = head
		}
	}
	var alts []*syntax.Regexp
	if re.Op == syntax.OpAlternate {
		alts = re.Sub
	} else {
		alts = []*syntax.Regexp{re}
	}
	var out []follow
	for _, a := range alts {
		for a.Op == syntax.OpCapture {
			a = a.Sub[0]
		}
		if a.Op != syntax.OpConcat || len(a.Sub) < 2 || a.Sub[0].Op != syntax.OpLiteral || a.Sub[0].Flags&syntax.FoldCase != 0 && !asciiFoldable(a.Sub[0].Rune) {
			return nil
		}
		f := follow{lit: strings.ToLower(string(a.Sub[0].Rune))}
		// A case-sensitive literal is compared folded too, which only
		// admits more.
		next := a.Sub[1]
		for next.Op == syntax.OpCapture {
			next = next.Sub[0]
		}
		if (next.Op == syntax.OpRepeat || next.Op == syntax.OpPlus) && next.Sub[0].Op == syntax.OpCharClass {
			f.min = next.Min
			if next.Op == syntax.OpPlus {
				f.min = 1
			}
			f.class = classTable(next.Sub[0])
		}
		if f.class == nil {
			f.class = &[256]bool{}
		}
		out = append(out, f)
	}
	return out
}

func asciiFoldable(rs []rune) bool {
	for _, r := range rs {
		if r >= 0x80 {
			return false
		}
	}
	return true
}

// classTable marks the bytes a character class can start with (any byte
// 0x80 and above when the class holds non-ASCII runes).
func classTable(cc *syntax.Regexp) *[256]bool {
	var t [256]bool
	for i := 0; i+1 < len(cc.Rune); i += 2 {
		lo, hi := cc.Rune[i], cc.Rune[i+1]
		for c := lo; c <= hi && c < 0x80; c++ {
			t[c] = true
		}
		if hi >= 0x80 {
			for c := 0x80; c < 256; c++ {
				t[c] = true
			}
		}
	}
	return &t
}

// known is set, or nil when it says nothing (holds "").
func known(set []string) []string {
	for _, s := range set {
		if s == "" {
			return nil
		}
	}
	return set
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// templatePrefix starts gitleaks' keyword-template rules: an identifier
// run of up to 50 bytes, lazily, then a group of keywords.
const templatePrefix = `(?i)[\w.-]{0,50}?(?:`

// templateEnd ends them (as jsonTolerant rewrites it): what may follow
// the secret.
const templateEnd = `(?:[\x60'"\s;\\]|$)`

// secretThenEnd reports whether re, a template rule's expression, ends
// with its secret g followed by templateEnd and nothing else.
func secretThenEnd(re, g *syntax.Regexp) bool {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[len(re.Sub)-2] != g {
		return false
	}
	end, err := syntax.Parse(`(?i)`+templateEnd, syntax.Perl) // as the rule reads it
	return err == nil && re.Sub[len(re.Sub)-1].Equal(end)
}

// templateAnchors returns the words a template rule's match holds after
// its identifier prefix: the literal starts of its keyword group rest
// (the expression after templatePrefix), lower-cased and of 2 bytes at
// least; nil when they are not known. They are the rule's anchors rather
// than its gitleaks keywords because some rules' keywords lie inside the
// secret ("test_" in lob's "(live|test)_[a-f0-9]{35}" after "lob"): run
// at those, the anchored expression could never match.
// maxAnchors bounds a template rule's anchors: the keyword group is
// followed as far as that many words spell it (snyk's group spells 72).
const maxAnchors = 16

func templateAnchors(rest string) []string {
	re, err := syntax.Parse(`(?i)(?:`+rest, syntax.Perl)
	if err != nil {
		return nil
	}
	set, _ := litSetMax(re, maxAnchors)
	var out []string
	for _, w := range set {
		w = strings.ToLower(w)
		if len(w) < 2 {
			return nil
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	// An anchor that extends another one adds only the same runs again.
	out = slices.DeleteFunc(out, func(w string) bool {
		for _, v := range out {
			if len(v) < len(w) && strings.HasPrefix(w, v) {
				return true
			}
		}
		return false
	})
	return out
}

// byteClass marks the bytes a match of re can hold (any byte 0x80 and
// above for a non-ASCII rune); nil when not known.
func byteClass(re *syntax.Regexp) *[256]bool {
	var t [256]bool
	var walk func(re *syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				if r >= 0x80 {
					for c := 0x80; c < 256; c++ {
						t[c] = true
					}
					continue
				}
				t[r] = true
				if re.Flags&syntax.FoldCase != 0 {
					t[unicode.ToLower(r)], t[unicode.ToUpper(r)] = true, true
				}
			}
			return true
		case syntax.OpCharClass:
			ct := classTable(re)
			for c := range t {
				t[c] = t[c] || ct[c]
			}
			return true
		case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		case syntax.OpCapture, syntax.OpConcat, syntax.OpAlternate, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			for _, sub := range re.Sub {
				if !walk(sub) {
					return false
				}
			}
			return true
		}
		return false // any character, or an op not listed
	}
	if !walk(re) {
		return nil
	}
	return &t
}

// unboundedRepeat is how many repetitions maxWidth counts for x*, x+ and
// x{n,}: secrets are shorter than that. A match reaching the end of its
// window is searched again in a longer one (see match), so a longer one
// is still found whole.
const unboundedRepeat = 256

// maxWidth is the largest number of bytes the expression can match,
// counting unbounded repetitions as min+unb repetitions, or -1 when
// unbounded and unb < 0.
func maxWidth(re *syntax.Regexp, unb int) int {
	_, hi := widths(re, unb, false)
	return hi
}

// maxRunes is maxWidth counting runes, not bytes.
func maxRunes(re *syntax.Regexp, unb int) int {
	_, hi := widths(re, unb, true)
	return hi
}

// minWidth is the fewest bytes re can match (each rune counted as 1).
func minWidth(re *syntax.Regexp) int {
	lo, _ := widths(re, 0, true)
	return lo
}

// widths returns the fewest runes and the most bytes (runes, when
// runes is set) re can match; see maxWidth for unb.
func widths(re *syntax.Regexp, unb int, runes bool) (lo, hi int) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpNoMatch:
		return 0, 0
	case syntax.OpLiteral:
		if runes {
			return len(re.Rune), len(re.Rune)
		}
		for _, r := range re.Rune {
			hi += runeMax(r)
		}
		return len(re.Rune), hi
	case syntax.OpCharClass:
		if runes {
			return 1, 1
		}
		for i := 1; i < len(re.Rune); i += 2 {
			hi = max(hi, runeMax(re.Rune[i]))
		}
		return 1, hi
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		if runes {
			return 1, 1
		}
		return 1, 4
	case syntax.OpCapture:
		return widths(re.Sub[0], unb, runes)
	case syntax.OpQuest:
		_, hi = widths(re.Sub[0], unb, runes)
		return 0, hi
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		lo, hi = widths(re.Sub[0], unb, runes)
		minReps, maxReps := 0, re.Max
		switch {
		case re.Op == syntax.OpPlus:
			minReps, maxReps = 1, -1
		case re.Op == syntax.OpRepeat:
			minReps = re.Min
		default:
			maxReps = -1
		}
		lo *= minReps
		switch {
		case hi < 0:
		case maxReps >= 0:
			hi *= maxReps
		case unb < 0:
			hi = -1
		default:
			hi *= minReps + unb + boolInt(re.Op == syntax.OpStar)
		}
		return lo, hi
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			l, h := widths(sub, unb, runes)
			lo += l
			if hi >= 0 && h >= 0 {
				hi += h
			} else {
				hi = -1
			}
		}
		return lo, hi
	case syntax.OpAlternate:
		lo = -1
		for _, sub := range re.Sub {
			l, h := widths(sub, unb, runes)
			if lo < 0 || l < lo {
				lo = l
			}
			if hi >= 0 && h >= 0 {
				hi = max(hi, h)
			} else {
				hi = -1
			}
		}
		return max(lo, 0), hi
	}
	return 0, -1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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
// that ends later). f is reordered in place.
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
