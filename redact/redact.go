package redact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
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
	// Known marks a rule that matches a secret known by its value
	// ([WithSecrets]): no allowlist applies, and where its finding
	// overlaps another one the two become one finding of its kind, so
	// that no byte of the value is left.
	Known bool
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
	known    bool                        // ruleSpec.Known
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
	kern *kernel // how keywords are found and escape views made

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
// rules less the ones that need a file path, plus ours: rules_providers.go
// and rules_extra.go), compiled once.
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
// be honoured and the rule would fire everywhere), then ours: the LLM
// providers' keys gitleaks lacks (rules_providers.go), then extraRules.
func builtinSpecs() []ruleSpec {
	var out []ruleSpec
	for _, s := range gitleaksRules {
		if s.Path != "" || s.Regex == "" {
			continue
		}
		out = append(out, tuned(s))
	}
	out = append(out, providerRules...)
	return append(out, extraRules...)
}

// New compiles the built-in rules, less those whose ids are in disabled.
func New(disabled ...string) (*Redactor, error) {
	return newOn(bestKernel(), disabled...)
}

// newOn is New with keywords found and escape views made kern's way.
func newOn(kern *kernel, disabled ...string) (*Redactor, error) {
	r := &Redactor{kern: kern}
	g, err := compileAllow(gitleaksGlobal)
	if err != nil {
		return nil, fmt.Errorf("redact: global allowlist: %w", err)
	}
	r.global = g
	if r.ours, err = compileAllow(ourGlobal); err != nil {
		return nil, fmt.Errorf("redact: our global allowlist: %w", err)
	}
	for _, s := range builtinSpecs() {
		if slices.Contains(disabled, s.ID) {
			continue
		}
		ru, err := compileRule(s)
		if err != nil {
			return nil, fmt.Errorf("redact: rule %s: %w", s.ID, err)
		}
		r.rules = append(r.rules, ru)
	}
	r.index()
	return r, nil
}

// index builds the keyword index of r.rules, found r.kern's way: each
// rule runs at its keywords (a template rule at its anchors), or on every
// text when it has none.
func (r *Redactor) index() {
	var kwords []string
	wordIdx := map[string]int32{}
	for i := range r.rules {
		ru, idx := &r.rules[i], int32(i)
		words := ru.keywords
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
	r.kw.kern = r.kern
	r.kw.cases = map[int32][]string{}
	for _, w := range r.kw.short {
		if sp := r.exactSpellings(kwords[w], r.kwRules[w]); sp != nil {
			r.kw.cases[w] = sp
		}
	}
	r.kw.buildFilter()
}
