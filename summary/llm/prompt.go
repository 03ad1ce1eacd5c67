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
// [Elide]. A turn holding an earlier summary is rendered as
// "[Turn i - ROLE - EARLIER SUMMARY]:" with the summary's body only (no
// prefix or end marker to copy).
func RenderTurns(turns []traj.Turn, start int) string {
	var b strings.Builder
	for i, t := range turns {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if summary.IsSummary(t.Text) {
			fmt.Fprintf(&b, "[Turn %d - %s - EARLIER SUMMARY]:\n%s", start+i, roleLabel(t), Elide(summary.SummaryBody(t.Text)))
			continue
		}
		fmt.Fprintf(&b, "[Turn %d - %s]:\n%s", start+i, roleLabel(t), Elide(t.Text))
	}
	return b.String()
}

// PromptVersion names the prompts below; it is part of every cache key, so
// a changed prompt never reuses a summary written for another one.
const PromptVersion = "handoff-1"

// handoff is the shape every summary is asked for: a handoff note for
// whoever continues the work.
const handoff = `Write it as a handoff note with these sections, in this order, each a heading line followed by short lines (write "none" for an empty section):
Goal: what the user wants done.
Constraints: requirements, preferences and limits that were stated.
Completed actions: what was done, each with the tool used and the exact file paths, commands or queries.
Current state: where the work stands, with exact results, values, errors and outputs that matter.
Open questions: what is unresolved or was asked and not answered.
Relevant files: the file paths, URLs and identifiers involved.
Remaining work: what is left to do.

The summary is reference material only: it records what already happened, it is not an instruction to anyone, and it must not address the reader or ask for anything.`

// RegionPrompt is the user message asking for a summary of turns, labelled
// from start, of about target tokens.
func RegionPrompt(turns []traj.Turn, start, target int) string {
	earlier := ""
	for _, t := range turns {
		if summary.IsSummary(t.Text) {
			earlier = "\nAn EARLIER SUMMARY among the turns covers turns replaced before: fold its content into your summary. Write one updated summary; never quote or nest a summary inside it.\n"
			break
		}
	}
	return fmt.Sprintf(`Summarize the following conversation turns. This summary will replace these turns in the conversation history.

Write the summary in the SAME LANGUAGE as the turns below. Never translate. Keep it factual, keep exact values, and do not invent anything.
%s
%s

Target approximately %d tokens; never more than %d.

---
TURNS TO SUMMARIZE:
%s
---

Write only the summary, starting with "%s" and ending with the line "%s".`,
		earlier, handoff, target, target*3/2, RenderTurns(turns, start), summary.Prefix, summary.EndMarker)
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
		fmt.Fprintf(&b, "[Part %d - Turns %d-%d]:\n%s", i+1, p.first, p.last, summary.SummaryBody(summary.Prefix+" "+stripPrefix(p.text)))
	}
	return fmt.Sprintf(`The following are summaries of consecutive parts of one stretch of a conversation, in order. Merge them into one summary that will replace the whole stretch in the conversation history.

Write the summary in the SAME LANGUAGE as the parts below. Never translate. Keep every action taken, with its tool and exact paths or commands, every key result, decision and finding, and exact values.

%s

Target approximately %d tokens; never more than %d.

---
PARTS TO MERGE:
%s
---

Write only the summary, starting with "%s" and ending with the line "%s".`,
		handoff, target, target*3/2, b.String(), summary.Prefix, summary.EndMarker)
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
// [summary.Prefix] exactly once, followed by one space, and ends with a
// line holding [summary.EndMarker] (what a reply wrote from its first end
// marker on is dropped). ok is false when no summary is left (empty, only
// a prefix or marker, or unfinished reasoning). Normalize is idempotent.
func Normalize(content string) (text string, ok bool) {
	body, ok := stripThinking(content)
	if !ok {
		return "", false
	}
	body = stripPrefix(body)
	if i := strings.Index(body, summary.EndMarker); i >= 0 {
		body = stripPrefix(body[:i])
	}
	if body == "" {
		return "", false
	}
	return summary.Prefix + " " + body + "\n" + summary.EndMarker, true
}
