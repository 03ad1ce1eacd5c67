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
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return global, nil, fmt.Errorf("line %d: not a key = value: %q", lineNo, line)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		var list []string
		var str string
		var isList bool
		if strings.HasPrefix(val, "[") {
			isList = true
			body := val[1:]
			for !strings.HasSuffix(strings.TrimSpace(body), "]") {
				i++
				if i >= len(lines) {
					return global, nil, fmt.Errorf("line %d: unterminated array", lineNo)
				}
				body += "\n" + lines[i]
			}
			body = strings.TrimSpace(body)
			body = strings.TrimSuffix(body, "]")
			for _, item := range splitItems(body) {
				s, err := scalarString(item)
				if err != nil {
					return global, nil, fmt.Errorf("line %d: %s: %w", lineNo, key, err)
				}
				list = append(list, s)
			}
		} else if s, err := scalarString(val); err == nil {
			str = s
		} else if _, err := strconv.ParseFloat(val, 64); err == nil {
			str = val
		} else {
			return global, nil, fmt.Errorf("line %d: %s: unsupported value %q", lineNo, key, val)
		}
		var target *allow
		switch section {
		case "":
			if key == "title" || key == "minVersion" {
				continue
			}
		case "[allowlist]":
			target = &global
		case "[[rules.allowlists]]":
			r := &rules[len(rules)-1]
			target = &r.Allow[len(r.Allow)-1]
		case "[[rules]]":
			r := &rules[len(rules)-1]
			var err error
			switch key {
			case "id":
				r.ID = str
			case "description":
			case "regex":
				r.Regex = str
			case "path":
				r.Path = str
			case "keywords":
				r.Keywords = list
			case "entropy":
				r.Entropy, err = strconv.ParseFloat(str, 64)
			case "secretGroup":
				r.SecretGroup, err = strconv.Atoi(str)
			default:
				return global, nil, fmt.Errorf("line %d: unknown rule key %q", lineNo, key)
			}
			if err != nil {
				return global, nil, fmt.Errorf("line %d: %s: %w", lineNo, key, err)
			}
			continue
		}
		if target == nil {
			return global, nil, fmt.Errorf("line %d: unexpected key %q in %q", lineNo, key, section)
		}
		switch {
		case key == "description":
		case key == "regexes" && isList:
			target.Regexes = list
		case key == "stopwords" && isList:
			target.StopWords = list
		case key == "paths" && isList:
			target.Paths = list
		case key == "regexTarget":
			target.Target = str
		case key == "condition":
			target.Condition = str
		default:
			return global, nil, fmt.Errorf("line %d: unknown allowlist key %q", lineNo, key)
		}
	}
	for _, r := range rules {
		if r.ID == "" {
			return global, nil, fmt.Errorf("a rule without an id")
		}
	}
	return global, rules, nil
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
