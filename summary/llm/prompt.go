package llm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

// Elision of long turn values, as the peer's elide_middle: a value longer
// than ElideOver characters (code points) keeps its first ElideHead and last
// ElideTail characters around a marker saying how much was left out.
const (
	ElideOver = 3000
	ElideHead = 1500
	ElideTail = 500
)

// Elide returns s, or its head + marker + tail when s has more than
// [ElideOver] characters. It never splits a UTF-8 sequence.
func Elide(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= ElideOver {
		return s
	}
	head := byteOffset(s, ElideHead)
	tail := byteOffset(s, n-ElideTail)
	omitted := n - ElideHead - ElideTail
	return s[:head] + fmt.Sprintf("\n⟪%s of %s chars omitted here by trajcompress⟫\n",
		commas(omitted), commas(n)) + s[tail:]
}

// byteOffset is the byte index of the rune with index i in s.
func byteOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

// commas formats n with thousands separators, like Python's {:,}.
func commas(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// roleLabel is the "ROLE" of "[Turn i - ROLE]": the role as written in the
// input, upper-cased, as the peer renders its from field.
func roleLabel(t traj.Turn) string {
	switch {
	case t.Name != "":
		return strings.ToUpper(t.Name)
	case t.Role != "":
		return strings.ToUpper(string(t.Role))
	}
	return "UNKNOWN"
}

// RenderTurns renders turns as the peer does: "[Turn i - ROLE]:\nvalue"
// blocks joined by a blank line, i counting from start, values elided by
// [Elide].
func RenderTurns(turns []traj.Turn, start int) string {
	var b strings.Builder
	for i, t := range turns {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[Turn %d - %s]:\n%s", start+i, roleLabel(t), Elide(t.Text))
	}
	return b.String()
}

// RegionPrompt is the user message asking for a summary of turns, labelled
// from start, of about target tokens.
func RegionPrompt(turns []traj.Turn, start, target int) string {
	return fmt.Sprintf(`Summarize the following conversation turns concisely. This summary will replace these turns in the conversation history.

Write the summary in the SAME LANGUAGE as the turns below. Never translate.

Write from a neutral perspective describing what happened:
1. What actions were taken (tool calls, searches, file operations)
2. Key results and information obtained
3. Important decisions or findings
4. Relevant data, file names, values, or outputs, with their exact values

Keep the summary factual and informative. Target approximately %d tokens.

---
TURNS TO SUMMARIZE:
%s
---

Write only the summary, starting with "%s".`, target, RenderTurns(turns, start), summary.Prefix)
}

// part is the summary of one chunk of a region, for [mergePrompt].
type part struct {
	first, last int // turn indices covered, inclusive
	text        string
}

// mergePrompt asks to merge the summaries of consecutive chunks of one
// region into one summary of about target tokens.
func mergePrompt(parts []part, target int) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[Part %d - Turns %d-%d]:\n%s", i+1, p.first, p.last, stripPrefix(p.text))
	}
	return fmt.Sprintf(`The following are summaries of consecutive parts of one stretch of a conversation, in order. Merge them into one concise summary that will replace the whole stretch in the conversation history.

Write the summary in the SAME LANGUAGE as the parts below. Never translate.

Keep it neutral and keep every action taken, key result, decision or finding, and exact data, file names and values. Target approximately %d tokens.

---
PARTS TO MERGE:
%s
---

Write only the summary, starting with "%s".`, target, b.String(), summary.Prefix)
}

// prefixRE matches one leading summary prefix, tolerating markdown bold and
// a missing colon.
var prefixRE = regexp.MustCompile(`^(?:\*\*)?\[CONTEXT SUMMARY\](?:\*\*)?\s*:?(?:\*\*)?`)

// stripPrefix removes every leading copy of the summary prefix.
func stripPrefix(s string) string {
	for {
		s = strings.TrimSpace(s)
		loc := prefixRE.FindStringIndex(s)
		if loc == nil {
			return s
		}
		s = s[loc[1]:]
	}
}

// stripThinking drops reasoning a model wrote into its content: everything
// up to the last "</think>", and a "<think>" block opened after it that
// never closes, to the end. The result holds neither tag, so a text it
// returns comes back unchanged. ok is false when nothing is left but
// reasoning (the budget went to it).
func stripThinking(s string) (string, bool) {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	}
	if i := strings.Index(s, "<think>"); i >= 0 {
		s = s[:i]
		if strings.TrimSpace(s) == "" {
			return "", false
		}
	}
	return s, true
}

// Normalize turns a reply into summary text that starts with
// [summary.Prefix] exactly once, followed by one space. ok is false when no
// summary is left (empty, only a prefix, or unfinished reasoning).
func Normalize(content string) (text string, ok bool) {
	body, ok := stripThinking(content)
	if !ok {
		return "", false
	}
	body = stripPrefix(body)
	if body == "" {
		return "", false
	}
	return summary.Prefix + " " + body, true
}
