// Package redact replaces secrets in texts with typed markers,
// "[REDACTED:<kind>]", and counts the replacements per kind, never keeping
// a value.
//
// The rules are gitleaks' default rule set (a pinned, attributed copy in
// gitleaks/, converted to rules_gen.go by go generate), less the rules that
// only apply to some file paths, plus two of ours (rules_extra.go):
// passwords in URLs and NAME=value assignments of secret-named upper-case
// variables. The kind is the rule id with '-' as '_' ("aws-access-token" →
// "aws_access_token").
//
// Matching follows gitleaks: a rule runs only where one of its keywords
// occurs (case-insensitively); the secret is the rule's secret group or
// its first non-empty group, else the whole match; a finding whose
// secret's Shannon entropy is at or under the rule's threshold, or that an
// allowlist (global or the rule's) allows, is dropped. Unlike gitleaks, a
// rule's regular expression runs only on a window around each keyword
// occurrence (the rule's longest possible match on each side, widened to
// line ends by up to 256 bytes; 16 KiB for unbounded rules), so a long text
// with a keyword in it costs the windows, not the text. Overlapping
// findings keep the earliest; on the same bytes a specific rule wins over
// gitleaks' generic-api-key.
//
// [Redactor.Redact] on a text with no keyword is a single pass of table
// probes and allocates nothing; it returns its input unchanged. A text is
// whatever the caller decoded: a turn's content, a tool call's arguments
// (often JSON, with \n escapes, which the rules tolerate).
package redact
