// Command rulegen converts gitleaks' default configuration (a pinned copy in
// redact/gitleaks/gitleaks.toml) into the Go table redact/rules_gen.go, so the
// redact package needs no TOML parser and no gitleaks dependency at run time.
//
// It reads only the subset of TOML that gitleaks' generated file uses: the
// tables [allowlist], [[rules]] and [[rules.allowlists]]; keys set to a
// basic string, a ”'literal”' string, a number or an array of strings;
// comments and blank lines. Anything else is an error naming the line, so a
// newer gitleaks.toml that uses more of TOML fails loudly instead of being
// half read.
//
//	go run ./redact/internal/rulegen -in redact/gitleaks/gitleaks.toml -out redact/rules_gen.go -commit <id>
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"strconv"
	"strings"
)

type allow struct {
	Target, Condition  string
	Regexes, StopWords []string
	Paths              []string
}

type rule struct {
	ID, Regex, Path string
	Entropy         float64
	SecretGroup     int
	Keywords        []string
	Allow           []allow
}

func main() {
	in := flag.String("in", "gitleaks/gitleaks.toml", "gitleaks config to read")
	out := flag.String("out", "rules_gen.go", "Go file to write")
	commit := flag.String("commit", "", "gitleaks commit the config was copied from")
	flag.Parse()
	src, err := os.ReadFile(*in)
	if err != nil {
		fail(err)
	}
	global, rules, err := parse(string(src))
	if err != nil {
		fail(fmt.Errorf("%s: %w", *in, err))
	}
	code, err := generate(*commit, global, rules)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rulegen:", err)
	os.Exit(1)
}

// parse reads the TOML subset described in the command's doc.
func parse(src string) (allow, []rule, error) {
	var (
		global  allow
		rules   []rule
		section string
	)
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch line {
		case "[allowlist]", "[[rules]]", "[[rules.allowlists]]":
			section = line
			if line == "[[rules]]" {
				rules = append(rules, rule{})
			}
			if line == "[[rules.allowlists]]" {
				if len(rules) == 0 {
					return global, nil, fmt.Errorf("line %d: rule allowlist before any rule", lineNo)
				}
				r := &rules[len(rules)-1]
				r.Allow = append(r.Allow, allow{})
			}
			continue
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok {
			return global, nil, fmt.Errorf("line %d: not a key = value: %q", lineNo, line)
		}
		key = strings.TrimSpace(key)
		v, err := readValue(lines, &i, strings.TrimSpace(raw))
		if err != nil {
			return global, nil, fmt.Errorf("line %d: %s: %w", lineNo, key, err)
		}
		switch section {
		case "":
			if key == "title" || key == "minVersion" {
				continue
			}
			err = fmt.Errorf("unexpected key %q in %q", key, section)
		case "[allowlist]":
			err = setAllowKey(&global, key, v)
		case "[[rules.allowlists]]":
			r := &rules[len(rules)-1]
			err = setAllowKey(&r.Allow[len(r.Allow)-1], key, v)
		case "[[rules]]":
			err = setRuleKey(&rules[len(rules)-1], key, v)
		}
		if err != nil {
			return global, nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
	for _, r := range rules {
		if r.ID == "" {
			return global, nil, fmt.Errorf("a rule without an id")
		}
	}
	return global, rules, nil
}

// value is a TOML value of the subset: a string (or a number, as written)
// or an array of strings.
type value struct {
	str    string
	list   []string
	isList bool
}

// readValue reads the value val that starts on line *i, and the lines an
// array continues on (moving *i past them).
func readValue(lines []string, i *int, val string) (value, error) {
	if !strings.HasPrefix(val, "[") {
		if s, err := scalarString(val); err == nil {
			return value{str: s}, nil
		}
		if _, err := strconv.ParseFloat(val, 64); err == nil {
			return value{str: val}, nil
		}
		return value{}, fmt.Errorf("unsupported value %q", val)
	}
	body := val[1:]
	for !strings.HasSuffix(strings.TrimSpace(body), "]") {
		*i++
		if *i >= len(lines) {
			return value{}, fmt.Errorf("unterminated array")
		}
		body += "\n" + lines[*i]
	}
	v := value{isList: true}
	for _, item := range splitItems(strings.TrimSuffix(strings.TrimSpace(body), "]")) {
		s, err := scalarString(item)
		if err != nil {
			return value{}, err
		}
		v.list = append(v.list, s)
	}
	return v, nil
}

// setRuleKey sets key of a [[rules]] section.
func setRuleKey(r *rule, key string, v value) error {
	var err error
	switch key {
	case "id":
		r.ID = v.str
	case "description":
	case "regex":
		r.Regex = v.str
	case "path":
		r.Path = v.str
	case "keywords":
		r.Keywords = v.list
	case "entropy":
		r.Entropy, err = strconv.ParseFloat(v.str, 64)
	case "secretGroup":
		r.SecretGroup, err = strconv.Atoi(v.str)
	default:
		return fmt.Errorf("unknown rule key %q", key)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// setAllowKey sets key of an allowlist section.
func setAllowKey(a *allow, key string, v value) error {
	switch {
	case key == "description":
	case key == "regexes" && v.isList:
		a.Regexes = v.list
	case key == "stopwords" && v.isList:
		a.StopWords = v.list
	case key == "paths" && v.isList:
		a.Paths = v.list
	case key == "regexTarget":
		a.Target = v.str
	case key == "condition":
		a.Condition = v.str
	default:
		return fmt.Errorf("unknown allowlist key %q", key)
	}
	return nil
}

// splitItems splits the body of a TOML array into its items, at commas
// outside strings.
func splitItems(body string) []string {
	var items []string
	for {
		body = strings.TrimLeft(body, " \t\r\n,")
		if body == "" {
			return items
		}
		var end int
		switch {
		case strings.HasPrefix(body, "'''"):
			end = strings.Index(body[3:], "'''") + 6
		case strings.HasPrefix(body, `"`):
			end = 1
			for end < len(body) && body[end] != '"' {
				if body[end] == '\\' {
					end++
				}
				end++
			}
			end++
		default:
			end = strings.IndexAny(body, ",\n")
			if end < 0 {
				end = len(body)
			}
		}
		if end > len(body) || end < 1 {
			end = len(body)
		}
		items = append(items, strings.TrimSpace(body[:end]))
		body = body[end:]
	}
}

// scalarString decodes a ”'literal”' or "basic" TOML string.
func scalarString(v string) (string, error) {
	switch {
	case len(v) >= 6 && strings.HasPrefix(v, "'''") && strings.HasSuffix(v, "'''"):
		return v[3 : len(v)-3], nil
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1], nil
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		return strconv.Unquote(v)
	}
	return "", fmt.Errorf("not a string: %q", v)
}

func generate(commit string, global allow, rules []rule) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by redact/internal/rulegen from redact/gitleaks/gitleaks.toml; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package redact\n\n")
	fmt.Fprintf(&b, "// gitleaksCommit is the gitleaks commit the rules were copied from.\nconst gitleaksCommit = %q\n\n", commit)
	fmt.Fprintf(&b, "// gitleaksGlobal is gitleaks' global allowlist.\nvar gitleaksGlobal = %s\n\n", allowLit(global))
	fmt.Fprintf(&b, "// gitleaksRules are gitleaks' default rules, in the config's order.\nvar gitleaksRules = []ruleSpec{\n")
	for _, r := range rules {
		fmt.Fprintf(&b, "{ID: %q, Regex: %q, Path: %q, Entropy: %v, SecretGroup: %d, Keywords: %s", r.ID, r.Regex, r.Path, r.Entropy, r.SecretGroup, strs(r.Keywords))
		if len(r.Allow) > 0 {
			fmt.Fprintf(&b, ", Allow: []allowSpec{")
			for _, a := range r.Allow {
				fmt.Fprintf(&b, "%s,\n", allowLit(a))
			}
			fmt.Fprintf(&b, "}")
		}
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n")
	return format.Source(b.Bytes())
}

func allowLit(a allow) string {
	return fmt.Sprintf("allowSpec{Target: %q, Condition: %q, Regexes: %s, StopWords: %s, Paths: %s}",
		a.Target, a.Condition, strs(a.Regexes), strs(a.StopWords), strs(a.Paths))
}

func strs(s []string) string {
	if len(s) == 0 {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("[]string{")
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(x))
	}
	b.WriteString("}")
	return b.String()
}
