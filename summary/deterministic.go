package summary

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// Deterministic summarises a region offline by extraction: what the user
// asked, which tools were called with which key arguments (paths, commands,
// queries, URLs), and what came back, errors first. Every quoted piece is
// copied from the turns, so the summary is in their language; nothing is
// translated or invented. The same request always gives the same bytes, and
// the text never exceeds Request.TargetTokens under Counter (the prefix
// alone is always kept).
type Deterministic struct {
	Counter tokenize.Counter
}

// Summarize implements [Summarizer]. It never fails.
func (d Deterministic) Summarize(_ context.Context, req Request) (Result, error) {
	return Result{Text: d.build(req)}, nil
}

// errorWindow bounds the error search: only the first and last
// errorWindow bytes of a result are searched (errors sit at either end of
// long outputs, and tool outputs can be megabytes long).
const errorWindow = 4096

// errorLine returns the first line of s that looks like an error,
// searching the first and then the last errorWindow bytes.
func errorLine(s string) (string, bool) {
	windows := []string{s}
	if len(s) > 2*errorWindow {
		windows = []string{s[:errorWindow], s[len(s)-errorWindow:]}
	}
	for _, w := range windows {
		for l := range strings.Lines(w) {
			if isErrorLine(l) {
				return l, true
			}
		}
	}
	return "", false
}

// isErrorLine reports whether a line looks like an error report. It is
// the hand-written form of this pattern, which errorline_test.go checks it
// against (the regexp was 20-30% of a run's CPU time). Case folding is
// ASCII-only; the regexp would also fold U+017F (ſ) and U+212A (K).
//
//	(?im)^\W*(error|fatal|panic|exception|traceback)\b | \b(error|exception|fatal)\s*: |
//	\bfail(ed|ure)?\b | no such file | permission denied | command not found | \bnot found\b |
//	exit (code|status):? ?[1-9] | returncode"?: ?[1-9] | 错误 | 失败 | エラー | ошибка
func isErrorLine(line string) bool {
	var buf [512]byte
	low := buf[:0]
	for i := 0; i < len(line); i++ {
		c := line[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low = append(low, c)
	}
	// A view, not a copy: l does not outlive this call.
	l := unsafe.String(unsafe.SliceData(low), len(low))
	// ^\W*(error|fatal|panic|exception|traceback)\b
	i := 0
	for i < len(l) && !isWord(l[i]) {
		i++
	}
	for _, w := range []string{"error", "fatal", "panic", "exception", "traceback"} {
		if strings.HasPrefix(l[i:], w) && !wordAt(l, i+len(w)) {
			return true
		}
	}
	for _, w := range []string{"no such file", "permission denied", "command not found"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	for _, k := range []string{"错误", "失败", "エラー", "ошибка", "Ошибка", "ОШИБКА"} {
		if strings.Contains(line, k) {
			return true
		}
	}
	return anyAt(l, "error", func(e int) bool { return colonAfter(l, e) }, true) ||
		anyAt(l, "exception", func(e int) bool { return colonAfter(l, e) }, true) ||
		anyAt(l, "fatal", func(e int) bool { return colonAfter(l, e) }, true) ||
		anyAt(l, "fail", func(e int) bool {
			for _, suf := range []string{"ed", "ure", ""} {
				if strings.HasPrefix(l[e:], suf) && !wordAt(l, e+len(suf)) {
					return true
				}
			}
			return false
		}, true) ||
		anyAt(l, "not found", func(e int) bool { return !wordAt(l, e) }, true) ||
		anyAt(l, "exit code", func(e int) bool { return codeAfter(l, e, false) }, false) ||
		anyAt(l, "exit status", func(e int) bool { return codeAfter(l, e, false) }, false) ||
		anyAt(l, "returncode", func(e int) bool { return codeAfter(l, e, true) }, false)
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// wordAt reports whether l[i] is a word character (false past the end).
func wordAt(l string, i int) bool { return i < len(l) && isWord(l[i]) }

// anyAt reports whether some occurrence of w in l (at a word start, when
// boundary is set) satisfies after(end of the occurrence).
func anyAt(l, w string, after func(int) bool, boundary bool) bool {
	for off := 0; ; {
		j := strings.Index(l[off:], w)
		if j < 0 {
			return false
		}
		s := off + j
		if (!boundary || s == 0 || !isWord(l[s-1])) && after(s+len(w)) {
			return true
		}
		off = s + 1
	}
}

// colonAfter: \b\s*: after position e.
func colonAfter(l string, e int) bool {
	if wordAt(l, e) {
		return false
	}
	for e < len(l) && (l[e] == ' ' || l[e] == '\t' || l[e] == '\n' || l[e] == '\r' || l[e] == '\f') {
		e++
	}
	return e < len(l) && l[e] == ':'
}

// codeAfter: :? ?[1-9] after "exit code"/"exit status", or "?: ?[1-9]
// after "returncode".
func codeAfter(l string, e int, returncode bool) bool {
	if returncode {
		if e < len(l) && l[e] == '"' {
			e++
		}
		if e >= len(l) || l[e] != ':' {
			return false
		}
		e++
	} else if e < len(l) && l[e] == ':' {
		e++
	}
	if e < len(l) && l[e] == ' ' {
		e++
	}
	return e < len(l) && '1' <= l[e] && l[e] <= '9'
}

// blocks returns the trimmed bodies of every open…close block of s, in
// linear time.
func blocks(s, open, close string) []string {
	var out []string
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return out
		}
		s = s[i+len(open):]
		j := strings.Index(s, close)
		if j < 0 {
			return append(out, strings.TrimSpace(s))
		}
		out = append(out, strings.TrimSpace(s[:j]))
		s = s[j+len(close):]
	}
}

// withoutThink drops <think>…</think> blocks.
func withoutThink(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}

// keyArgs are argument names worth quoting, most telling first.
var keyArgs = []string{"command", "cmd", "path", "file_path", "filepath", "file", "filename", "query", "q",
	"url", "pattern", "search", "code", "directory", "dir", "name", "id", "city", "location"}

type call struct{ name, args string }

// piece is one line of the summary with its priority (lower first).
type piece struct {
	prio int
	seq  int
	text string
}

func (d Deterministic) build(req Request) string {
	var pieces []piece
	add := func(prio int, text string) {
		pieces = append(pieces, piece{prio, len(pieces), text})
	}
	end := req.Start + len(req.Turns)
	head := fmt.Sprintf("%s %d turns (%d–%d) condensed.", Prefix, len(req.Turns), req.Start, end-1)
	var ncalls, nerrors int
	seen := map[string]int{}
	for i, t := range req.Turns {
		idx := req.Start + i
		switch {
		case t.Role == traj.RoleUser:
			if s := clip(t.Text, 240); s != "" {
				add(1, fmt.Sprintf("[%d user] %s", idx, s))
			}
		case t.Role == traj.RoleTool:
			for _, r := range toolResults(t) {
				kind, prio, body := "result", 4, clip(r, 100)
				if line, ok := errorLine(r); ok {
					nerrors++
					kind, prio, body = "error", 2, clip(line, 200)
				}
				// Agents re-read the same file and re-run the same command:
				// say so instead of quoting the same text again.
				if first, ok := seen[body]; ok {
					add(prio+2, fmt.Sprintf("[%d %s] same as turn %d", idx, kind, first))
					continue
				}
				seen[body] = idx
				add(prio, fmt.Sprintf("[%d %s] %s", idx, kind, body))
			}
		case t.Role == traj.RoleAssistant:
			calls := toolCalls(t)
			for _, c := range calls {
				ncalls++
				add(3, fmt.Sprintf("[%d call] %s(%s)", idx, c.name, c.args))
			}
			if len(calls) == 0 {
				if s := clip(withoutThink(t.Text), 160); s != "" {
					add(5, fmt.Sprintf("[%d assistant] %s", idx, s))
				}
			}
		default:
			if s := clip(t.Text, 120); s != "" {
				add(6, fmt.Sprintf("[%d %s] %s", idx, t.Name, s))
			}
		}
	}
	if ncalls > 0 || nerrors > 0 {
		head += fmt.Sprintf(" %d tool calls, %d errors.", ncalls, nerrors)
	}
	// Keep the most telling pieces that fit, then print them in turn order.
	sort.SliceStable(pieces, func(i, j int) bool { return pieces[i].prio < pieces[j].prio })
	budget := req.TargetTokens
	used := d.Counter.Count(head)
	var kept []piece
	for _, p := range pieces {
		c := d.Counter.Count(p.text) + 1
		if used+c > budget {
			continue
		}
		used += c
		kept = append(kept, p)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].seq < kept[j].seq })
	for {
		var b strings.Builder
		b.WriteString(head)
		for _, p := range kept {
			b.WriteByte('\n')
			b.WriteString(p.text)
		}
		text := b.String()
		// Per-piece counts bound the total closely but not exactly: verify.
		if len(kept) == 0 || d.Counter.Count(text) <= budget {
			if len(kept) == 0 {
				return clipTokens(d.Counter, text, budget)
			}
			return text
		}
		kept = kept[:len(kept)-1]
	}
}

// clipTokens shortens text (keeping the prefix) until it fits budget.
func clipTokens(c tokenize.Counter, text string, budget int) string {
	for c.Count(text) > budget && len(text) > len(Prefix) {
		cut := max(len(Prefix), len(text)*9/10)
		for cut > len(Prefix) && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return text
}

// toolCalls extracts the calls of an assistant turn: OpenAI tool_calls from
// the raw message, or Hermes <tool_call> blocks (also a bare JSON call as in
// LLaMA-Factory function_call turns).
func toolCalls(t traj.Turn) []call {
	var out []call
	if len(t.CallIDs) > 0 && len(t.Raw) > 0 {
		var m struct {
			ToolCalls []struct {
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(t.Raw, &m) == nil {
			for _, tc := range m.ToolCalls {
				out = append(out, call{tc.Function.Name, argsSummary(tc.Function.Arguments)})
			}
			return out
		}
	}
	bodies := blocks(t.Text, "<tool_call>", "</tool_call>")
	if len(bodies) == 0 && t.Name == "function_call" {
		bodies = []string{t.Text}
	}
	for _, body := range bodies {
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal([]byte(body), &c) == nil && c.Name != "" {
			out = append(out, call{c.Name, argsSummary(c.Arguments)})
			continue
		}
		var list []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal([]byte(body), &list) == nil {
			for _, c := range list {
				out = append(out, call{c.Name, argsSummary(c.Arguments)})
			}
			continue
		}
		out = append(out, call{"call", clip(body, 100)})
	}
	return out
}

// argsSummary renders the telling arguments of a call as k=v pairs.
func argsSummary(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil { // arguments as a JSON-encoded string
		raw = json.RawMessage(s)
	}
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return clip(string(raw), 80)
	}
	var parts []string
	for _, k := range keyArgs {
		if v, ok := args[k]; ok {
			parts = append(parts, k+"="+clip(scalar(v), 100))
		}
		if len(parts) == 2 {
			break
		}
	}
	if len(parts) == 0 {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(parts) == 2 {
				break
			}
			parts = append(parts, k+"="+clip(scalar(args[k]), 60))
		}
	}
	return strings.Join(parts, ", ")
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// toolResults splits a tool turn into its results (one per
// <tool_response> block, or the whole text).
func toolResults(t traj.Turn) []string {
	bodies := blocks(t.Text, "<tool_response>", "</tool_response>")
	if len(bodies) == 0 {
		return []string{t.Text}
	}
	out := make([]string, 0, len(bodies))
	for _, body := range bodies {
		out = append(out, responseText(body))
	}
	return out
}

// responseText renders a Hermes tool response {"name": …, "content": …} as
// "name: content", without decoding the whole (often huge) body into Go
// values: the content string is unescaped once, any other content is kept
// as its JSON text. A body that is not such an object is returned as is.
func responseText(body string) string {
	if body == "" {
		return body
	}
	b := unsafe.Slice(unsafe.StringData(body), len(body)) // read only
	content, ok := traj.Lookup(b, "content")
	if !ok || string(content) == "null" {
		return body
	}
	text := string(content)
	if content[0] == '"' {
		if text, ok = traj.String(content); !ok {
			return body
		}
	}
	if name, ok := traj.Lookup(b, "name"); ok && name[0] == '"' {
		if n, ok := traj.String(name); ok && n != "" {
			return n + ": " + text
		}
	}
	return text
}

// clip collapses white space and keeps at most n runes, marking the cut.
// It reads only as much of s as it keeps.
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
			return b.String()
		}
		if space {
			b.WriteByte(' ')
			runes++
			space = false
			if runes == n {
				b.WriteString("…")
				return b.String()
			}
		}
		b.WriteRune(r)
		runes++
	}
	return b.String()
}
