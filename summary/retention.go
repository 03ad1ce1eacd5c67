package summary

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// PathKeys and CommandKeys are the argument names whose string values
// count as the paths and the commands a tool call names.
var (
	PathKeys    = []string{"path", "file_path", "filepath", "file", "filename", "target_file", "notebook_path", "directory", "dir"}
	CommandKeys = []string{"command", "cmd", "script"}
)

// commandPrefix is how much of a command identifies it: its first line,
// blanks collapsed, up to this many characters. (A summary names a long
// command by its start; the rest is often a script.)
const commandPrefix = 60

// Retention says what a summary text keeps of the region it replaces:
// the distinct tool names called in the turns, and the distinct paths
// and commands named in those calls' arguments (values of [PathKeys] and
// [CommandKeys]; a command by its first line, blanks collapsed, up to 60
// characters), and how many of each the text names (a tool name as a
// whole word, a path or command as written, blanks collapsed). Calls are
// read as [Deterministic] reads them: [traj.Turn.Calls].
func Retention(turns []traj.Turn, text string) (tools, toolsKept, args, argsKept int) {
	norm := collapse(text)
	seenTool, seenArg := map[string]bool{}, map[string]bool{}
	for _, t := range turns {
		for _, c := range t.Calls() {
			if c.Name != "" && !seenTool[c.Name] {
				seenTool[c.Name] = true
				tools++
				if containsWord(norm, c.Name) {
					toolsKept++
				}
			}
			for _, v := range namedArgs(c.Args) {
				if v == "" || seenArg[v] {
					continue
				}
				seenArg[v] = true
				args++
				if strings.Contains(norm, v) {
					argsKept++
				}
			}
		}
	}
	return tools, toolsKept, args, argsKept
}

// namedKeys are the argument names namedArgs reads: PathKeys, then
// CommandKeys.
var namedKeys = append(append([]string(nil), PathKeys...), CommandKeys...)

// namedArgs returns the paths and commands a call's arguments (their
// JSON text: [traj.Call].Args) name, normalised as Retention compares
// them.
func namedArgs(args string) []string {
	raw := unsafe.Slice(unsafe.StringData(args), len(args)) // read only
	vals, ok := jsonx.Fields(raw, namedKeys...)
	if !ok {
		return nil
	}
	var out []string
	for i, v := range vals {
		if v == nil || v[0] != '"' {
			continue
		}
		s, ok := jsonx.Unquote(v)
		if !ok {
			continue
		}
		if i >= len(PathKeys) { // a command: its first line's start
			s = strings.TrimSpace(s)
			if nl := strings.IndexByte(s, '\n'); nl >= 0 {
				s = s[:nl]
			}
			s = strings.TrimSuffix(clip(s, commandPrefix), "…")
		}
		out = append(out, collapse(s))
	}
	return out
}

// collapse trims s and turns every run of blanks into one space.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// containsWord reports whether s holds w with no letter, digit or '_' on
// either side.
func containsWord(s, w string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(w):])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		off = i + 1
	}
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
