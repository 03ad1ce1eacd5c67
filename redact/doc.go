// Package redact replaces secrets in texts with typed markers,
// "[REDACTED:<kind>]", and counts the replacements per kind, never keeping
// a value.
//
// The rules are gitleaks' default rule set (a pinned, attributed copy in
// gitleaks/, converted to rules_gen.go by go generate), less the rules that
// only apply to some file paths, plus ours: the keys of the LLM providers
// an OpenAI-compatible endpoint may be that gitleaks lacks (OpenRouter,
// Groq, xAI, Together AI, Fireworks, DeepSeek, Mistral, Replicate, Azure
// OpenAI; rules_providers.go, each format's source named there), and
// (rules_extra.go) passwords in URLs and NAME=value assignments of
// secret-named upper-case variables. The kind is the rule id with '-' as '_' ("aws-access-token" →
// "aws_access_token").
//
// Matching follows gitleaks: a rule runs only where one of its keywords
// occurs (case-insensitively); the secret is the rule's secret group or
// its first non-empty group, else the whole match; a finding whose
// secret's Shannon entropy is at or under the rule's threshold, or that an
// allowlist (global or the rule's, or ours) allows, is dropped. Unlike
// gitleaks, a rule's expression never runs over a whole text: a rule
// whose matches start at one of its keywords (a token prefix such as
// "ghp_", or gitleaks' keyword template "(?i)[\w.-]{0,50}?(?:key|…)…")
// runs anchored at each keyword occurrence, after quick necessary checks
// (the literal and the class of bytes that must follow it; for the
// template, an assignment operator within reach and a run of the bytes
// the secret can hold, long enough and ending where a secret may end).
// A template rule runs at the words of its template group (which its
// keywords name, except for lob, New Relic and Typeform, whose keywords
// lie inside the secret and are implied by it); gitleaks' JWT rule runs
// from ".ey", its second segment's start, back to the first (its keyword
// "ey" is in every "they" and "key"). Any other
// rule runs on a window around each occurrence (its longest possible
// match on each side, counting 256 repetitions for an unbounded one, 16
// KiB for private key blocks; a match that reaches the window's end is
// searched again in a longer window). Overlapping findings keep the
// earliest; on the same bytes a specific rule wins over a generic one
// (gitleaks' generic-api-key and our two rules). Gitleaks' value
// templates are made to accept backslashes around a value, so a secret
// inside JSON that is itself a string (\"key\": \"value\") is found.
// TestMatchesReference checks all of this against running every rule's
// whole expression over the whole text, gitleaks' way.
//
// Keywords are found, where the CPU has AVX-512 (F, BW, VBMI), by a
// filter that tests 64 positions per step with tables held in registers
// (filter.go, filter_amd64.s: class pairs of each position's four bytes
// and a hash of its 4-gram; the 2-byte keywords' spellings in the same
// pass), and the escape view of RedactEncoded is made 64 bytes at a time;
// elsewhere by probing a bit table of hashed 4-grams at every position:
// eight positions at a time with AVX2 (probe_amd64.s, a gather per eight
// positions), one at a time otherwise (build tag purego forces that), the
// 2-byte keywords and the escapes by searching for their bytes 32 at a
// time. Each way reports the same keyword occurrences, in the same order.
//
// Images are never changed: [Redactor.RedactLine] leaves alone the
// strings of a JSON line that hold an image's bytes inline
// (jsonx.InlineImages), also inside JSON held in a string. A string is
// one when both its place and its payload say so. Its place: a base64
// data:image/… URL; the "data" of an Anthropic {"type": "base64",
// "media_type": "image/…"} source; the "bytes" of a Hugging Face datasets
// {"bytes", "path"} value (Image or Audio). Its payload (after the data
// URL's comma, or the whole string): strict base64 — the standard
// alphabet, "\/" the only escape, no white space, at most two '=' and
// only at the end — whose first decoded bytes are an image or audio
// file's signature (PNG, JPEG, GIF, WebP, BMP, TIFF, an ISO BMFF ftyp box
// such as AVIF or HEIC, WAV, FLAC, MP3 with an ID3 tag, Ogg). Why: a
// screenshot's base64 can hold what a rule matches (an AKIA… run between
// a '/' and a '+' is an AWS key id to gitleaks), and replacing it would
// corrupt the image; a text made to look like an image ("data:image/png;
// base64," then a command line with a token, a token as a datasets
// value's bytes) is not the base64 of an image file and is redacted as
// any text. What the exemption still lets through: a secret written
// wholly in base64 characters inside a real image's base64 (after its
// signature), which cannot be told from pixels without decoding them, and
// a secret in an image's decoded bytes (base64 is never decoded). Not
// kept: an SVG or other text image in base64, base64 broken into lines
// ("\n") or in the URL alphabet ('-', '_'), a data:audio/… URL.
//
// The scan of the encoded line still sees these strings (skipping them
// would cost a walk of every line); a line with a finding, or with an
// escape the scan cannot read in place ("\/", a \u escape of an ASCII
// character), goes to the string-by-string pass (jsonx.MapTexts), which
// reads each image-shaped payload once to check it (without copying or
// decoding it; bench/README.md has the cost) and skips the images, so a
// line whose only findings lie in images is returned as it is. Any other payload is a text: a data:text/plain URL,
// a non-base64 data: URL or an Anthropic document source may hold a
// readable secret, and a base64 one is read as written (a chance match
// there is replaced and counted, as in any text). Redact and RedactString
// know no images: a text is what the caller says it is. A line that is
// not JSON is redacted as bytes (RedactEncoded), images or not.
//
// A replacement never makes JSON invalid (escapes.go): the span a marker
// replaces is narrowed so that no escape of the text, at any depth of JSON
// nested in strings, lies at or across its edges (gitleaks' JWT rule takes
// backslashes, and ate the one of \" after a token in tool-call
// arguments); and [Redactor.RedactLine] redacts a string that holds JSON
// (an object, an array or a string) whose shape that would still change
// string by string instead, at any depth. A string that is a whole number
// or literal is redacted as text (it may be a numeric password).
//
// Object keys are texts too: [Redactor.RedactLine] redacts a key that
// holds a secret ({"ghp_…": "owner"}) as it would a value, at any depth and
// in JSON held in strings, and keeps the keys of each object distinct: a
// redacted key whose new name another key of its object already has is
// numbered in its marker, "[REDACTED:github_pat#2]", then "#3", the first
// free number, members taken in order (keys.go).
//
// [WithSecrets] adds secrets known exactly, whatever their format (the
// run's own LLM API key): each value, as written, in lower case and in
// upper case, is replaced wherever it occurs, with no entropy threshold or
// allowlist, and a finding of another rule that overlaps it is merged into
// its own, so no byte of it is left.
//
// [Redactor.Redact] on a text with no secret allocates nothing and returns
// its input unchanged. A text is whatever the caller decoded: a turn's
// content, a tool call's arguments (often JSON, with \n escapes, which the
// rules tolerate). [Redactor.RedactLine] redacts a whole JSON line (a
// record) as if each of its strings were redacted on its own, without
// decoding them in the common case ([Redactor.RedactEncoded] scans the
// encoded line; a line with a finding, or with an escape the scan cannot
// read in place, is decoded string by string); the pipeline redacts every
// input line so. bench/redact measures false positives, recall (per
// string and through whole lines) and speed on the real data
// (bench/README.md, "Secret redaction").
package redact
