package redact

// Compiling the rules: gitleaks' expressions and allowlists into what
// match.go runs (anchors, windows, literal checks).

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

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
		pre: s.Pre, locate: s.Locate, within: s.Within, known: s.Known,
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
