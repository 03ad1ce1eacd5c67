package prepass

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj/errline"
)

// Tool kinds a digest is written for.
const (
	kindTerminal = "terminal"
	kindRead     = "file read"
	kindSearch   = "search"
	kindWeb      = "web fetch"
	kindOther    = "other"
)

// toolKind classifies a tool by its name, then by its argument keys.
func toolKind(name string, args map[string]any) string {
	n := strings.ToLower(name)
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := args[k]; ok {
				return true
			}
		}
		return false
	}
	hasAny := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(n, w) {
				return true
			}
		}
		return false
	}
	switch {
	case hasAny("terminal", "bash", "shell", "exec", "command", "run_cmd", "cmd") || has("command", "cmd"):
		return kindTerminal
	case hasAny("search", "grep", "find", "glob", "ripgrep"):
		return kindSearch
	case hasAny("fetch", "browse", "extract", "http", "url", "web", "scrape", "crawl") || has("url", "urls"):
		return kindWeb
	case hasAny("read", "view", "cat", "open", "file") && has("path", "file_path", "filepath", "file", "filename"):
		return kindRead
	}
	return kindOther
}

// digest is the one-line digest of a tool result: what the tool was, how
// big its output was, and the few facts that say what happened.
func digest(name, args, body string) string {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) != nil {
		a = nil
	}
	kind := toolKind(name, a)
	label := name
	if label == "" {
		label = "tool"
	}
	// A JSON result: the fields that carry the output.
	var obj map[string]json.RawMessage
	if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &obj) != nil {
		obj = nil
	}
	text := body
	for _, k := range []string{"output", "stdout", "content", "result", "text"} {
		if v, ok := obj[k]; ok && len(v) > 0 && v[0] == '"' {
			if s, ok := jsonx.Unquote(v); ok {
				text = s
				if k == "output" || k == "stdout" {
					if e, ok := obj["stderr"]; ok && len(e) > 0 && e[0] == '"' {
						if es, ok := jsonx.Unquote(e); ok && es != "" {
							text += "\n" + es
						}
					}
				}
				break
			}
		}
	}
	facts := []string{}
	add := func(k, v string) {
		if v != "" {
			facts = append(facts, k+" "+v)
		}
	}
	lines := countLines(text)
	switch kind {
	case kindTerminal:
		add("command:", clip(str(a, "command", "cmd"), 160))
		if code, ok := exitCode(obj, text); ok {
			add("exit code", code)
		}
		add("lines:", strconv.Itoa(lines))
		var errs []string
		rest := text
		for len(errs) < 3 {
			l, ok := errline.Find(rest)
			if !ok {
				break
			}
			errs = append(errs, clip(l, 160))
			i := strings.Index(rest, l)
			if i < 0 {
				break
			}
			rest = rest[i+len(l):]
		}
		add("errors:", strings.Join(errs, " | "))
	case kindRead:
		add("path:", clip(str(a, "path", "file_path", "filepath", "file", "filename"), 200))
		add("lines:", lineRange(a, lines))
	case kindSearch:
		add("pattern:", clip(str(a, "pattern", "query", "regex", "q", "search", "search_term"), 160))
		add("path:", clip(str(a, "path", "dir", "directory", "root"), 200))
		add("matches:", matchCount(obj, text))
	case kindWeb:
		u := str(a, "url")
		if u == "" {
			if list, ok := a["urls"].([]any); ok && len(list) > 0 {
				u, _ = list[0].(string)
				if len(list) > 1 {
					u += fmt.Sprintf(" (+%d more)", len(list)-1)
				}
			}
		}
		add("url:", clip(u, 200))
	default:
		add("first line:", clip(firstLine(text), 160))
	}
	return untag(fmt.Sprintf("[trajcompress digest of a %d-byte %s result] %s", len(body), label, strings.Join(facts, "; ")))
}

// tagFree writes the tags that delimit calls, results and reasoning in a
// Hermes turn without their angle brackets' meaning, so that text quoted
// from a result cannot open or close a block.
var tagFree = strings.NewReplacer(
	"<tool_call>", "‹tool_call›", "</tool_call>", "‹/tool_call›",
	"<tool_response>", "‹tool_response›", "</tool_response>", "‹/tool_response›",
	"<think>", "‹think›", "</think>", "‹/think›",
)

func untag(s string) string { return tagFree.Replace(s) }

// str is the first of keys that args holds as a string (a list of strings
// is joined).
func str(args map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := args[k].(type) {
		case string:
			return v
		case []any:
			var parts []string
			for _, x := range v {
				if s, ok := x.(string); ok {
					parts = append(parts, s)
				}
			}
			if len(parts) > 0 {
				return strings.Join(parts, " ")
			}
		}
	}
	return ""
}

var exitRE = regexp.MustCompile(`(?i)\b(?:exit(?:ed)?(?: with)?(?: code| status)|returncode|return code)\b"?\s*[:=]?\s*(-?\d+)`)

// exitCode is the exit status a terminal result reports: a JSON
// exit_code/returncode/exit_status, else "exit code N" in the text.
func exitCode(obj map[string]json.RawMessage, text string) (string, bool) {
	for _, k := range []string{"exit_code", "returncode", "exit_status", "exitCode", "return_code"} {
		if v, ok := obj[k]; ok {
			var n json.Number
			if json.Unmarshal(v, &n) == nil {
				return n.String(), true
			}
		}
	}
	if m := exitRE.FindAllStringSubmatch(text, -1); len(m) > 0 {
		return m[len(m)-1][1], true
	}
	return "", false
}

// lineRange is the line range a read covered: from its arguments when
// they say (offset/limit, start/end, view_range), else the count.
func lineRange(args map[string]any, lines int) string {
	num := func(keys ...string) (int, bool) {
		for _, k := range keys {
			if f, ok := args[k].(float64); ok {
				return int(f), true
			}
		}
		return 0, false
	}
	if vr, ok := args["view_range"].([]any); ok && len(vr) == 2 {
		a, aok := vr[0].(float64)
		b, bok := vr[1].(float64)
		if aok && bok {
			return fmt.Sprintf("%d-%d", int(a), int(b))
		}
	}
	if s, ok := num("start_line", "line_start", "from_line", "start"); ok {
		if e, ok := num("end_line", "line_end", "to_line", "end"); ok {
			return fmt.Sprintf("%d-%d", s, e)
		}
		return fmt.Sprintf("%d-%d", s, s+lines-1)
	}
	if off, ok := num("offset", "line_offset"); ok {
		if lim, ok := num("limit", "line_limit", "lines"); ok {
			return fmt.Sprintf("%d-%d", off, off+lim-1)
		}
		return fmt.Sprintf("%d-%d", off, off+lines-1)
	}
	return fmt.Sprintf("1-%d", lines)
}

// matchCount is a search result's match count: a JSON total/count or the
// length of a JSON list of matches, else its non-empty lines.
func matchCount(obj map[string]json.RawMessage, text string) string {
	for _, k := range []string{"total_count", "count", "total", "num_matches", "match_count"} {
		if v, ok := obj[k]; ok {
			var n json.Number
			if json.Unmarshal(v, &n) == nil {
				return n.String()
			}
		}
	}
	for _, k := range []string{"matches", "results", "files", "items"} {
		if v, ok := obj[k]; ok {
			var list []json.RawMessage
			if json.Unmarshal(v, &list) == nil {
				return strconv.Itoa(len(list))
			}
		}
	}
	n := 0
	for l := range strings.Lines(text) {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return strconv.Itoa(n)
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// clip collapses white space to single spaces and keeps at most n runes,
// marking a cut with "…".
func clip(s string, n int) string {
	var b strings.Builder
	runes, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if runes == n {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
			runes++
		}
		b.WriteRune(r)
		runes++
	}
	return b.String()
}
