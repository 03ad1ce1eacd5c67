package redact

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// exactLine is what RedactLine stands in for: every string of the JSON
// line decoded and redacted one by one, a member's value also read with
// its key, inline images left alone.
func exactLine(r *Redactor, line []byte) ([]byte, Counts) { return r.exactLine(line) }

const (
	testPAT = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fGh"
	testAWS = "AKIAIOSFODNN7Q2XZ5W3"
)

func TestRedactLine(t *testing.T) {
	r := Default()
	cases := []struct {
		name, line string
		want       map[string]int
	}{
		{"clean", `{"a": "the key point: tokens matter\nsee https://example.com"}`, nil},
		{"line start after \\n", `{"a": "out:\n` + testPAT + `\nend"}`, map[string]int{"github_pat": 1}},
		{"after \\t", `{"a": "x\t` + testAWS + `"}`, map[string]int{"aws_access_token": 1}},
		{"quoted", `{"a": "token \"` + testPAT + `\""}`, map[string]int{"github_pat": 1}},
		{"after a \\u escape", `{"a": "caf\u00e9` + testAWS + `"}`, map[string]int{"aws_access_token": 1}},
		{"after a surrogate pair", `{"a": "\ud83d\ude00` + testAWS + `"}`, map[string]int{"aws_access_token": 1}},
		{"slash escapes", `{"a": "postgres:\/\/app:s3cr3tPw9@db.internal\/prod"}`, map[string]int{"url_password": 1}},
		{"ASCII \\u escape", `{"a": "\u0041KIAIOSFODNN7Q2XZ5W3"}`, map[string]int{"aws_access_token": 1}},
		{"JSON inside a string", `{"args": "{\"cmd\": \"git push https://x:` + testPAT + `@github.com/a/b\"}"}`, map[string]int{"github_pat": 1}},
		{"escaped backslash then n", `{"a": "C:\\n` + testAWS + `"}`, nil}, // "C:\n" + key: 'n' is a letter here, no boundary
		{"in a key only", `{"` + testPAT + `": 1}`, map[string]int{"github_pat": 1}},
		{"in a key inside JSON in a string", `{"args": "{\"` + testPAT + `\": \"x\"}"}`, map[string]int{"github_pat": 1}},
		// A secret known by its key: arguments given as an object, a
		// top-level field, pretty-printed.
		{"by its key", `{"function": {"name": "db", "arguments": {"dsn_password": "Zq8Lm3Vx7Rt2Kp9Wn4Hs6Yb1Qe5", "sql": "select 1"}}}`, map[string]int{"generic_api_key": 1}},
		{"by its key, spaced", "{\n  \"api_token\" :  \"Zq8Lm3Vx7Rt2Kp9Wn4Hs6Yb1Qe5\"\n}", map[string]int{"generic_api_key": 1}},
		{"a key that names no secret", `{"model": "Zq8Lm3Vx7Rt2Kp9Wn4Hs6Yb1Qe5"}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.line)) {
				t.Fatalf("bad case: %s", tc.line)
			}
			out, c := r.RedactLine([]byte(tc.line))
			wantOut, wantC := exactLine(r, []byte(tc.line))
			if string(out) != string(wantOut) || c.Total() != wantC.Total() {
				t.Fatalf("RedactLine = %s %v; decoding every string gives %s %v", out, c, wantOut, wantC)
			}
			if !maps.Equal(map[string]int(c), tc.want) {
				t.Errorf("counts %v, want %v", c, tc.want)
			}
			if !json.Valid(out) {
				t.Errorf("output not JSON: %s", out)
			}
		})
	}
}

// TestRedactLineKeys: a secret used as an object key is redacted like a
// value, and the object's keys stay distinct (the marker numbered), at
// any depth and inside JSON held in a string.
func TestRedactLineKeys(t *testing.T) {
	const pat2 = "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
	r := Default()
	cases := []struct {
		name, line, want string
		n                int
	}{
		{"one key", `{"` + testPAT + `": "x"}`, `{"[REDACTED:github_pat]": "x"}`, 1},
		{"two keys of one kind", `{"` + testPAT + `": "alice", "` + pat2 + `": "bob"}`,
			`{"[REDACTED:github_pat]": "alice", "[REDACTED:github_pat#2]": "bob"}`, 2},
		{"a key that is a marker already", `{"[REDACTED:github_pat]": 1, "` + testPAT + `": 2}`,
			`{"[REDACTED:github_pat]": 1, "[REDACTED:github_pat#2]": 2}`, 1},
		{"key and value", `{"token ` + testPAT + `": "` + pat2 + `"}`,
			`{"token [REDACTED:github_pat]": "[REDACTED:github_pat]"}`, 2},
		{"nested", `{"a": [{"b": {"` + testPAT + `": {"` + pat2 + `": 1}}}]}`,
			`{"a": [{"b": {"[REDACTED:github_pat]": {"[REDACTED:github_pat]": 1}}}]}`, 2},
		{"same keys in different objects", `[{"` + testPAT + `": 1}, {"` + testPAT + `": 2}]`,
			`[{"[REDACTED:github_pat]": 1}, {"[REDACTED:github_pat]": 2}]`, 2},
		{"JSON in a string", `{"result": "{\"` + testPAT + `\": 1, \"` + pat2 + `\": 2}"}`,
			`{"result": "{\"[REDACTED:github_pat]\": 1, \"[REDACTED:github_pat#2]\": 2}"}`, 2},
		{"escaped key", `{"\u0067hp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fGh": 1}`, `{"[REDACTED:github_pat]": 1}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, c := r.RedactLine([]byte(tc.line))
			if string(out) != tc.want || c["github_pat"] != tc.n {
				t.Fatalf("RedactLine(%s) = %s %v; want %s and %d github_pat", tc.line, out, c, tc.want, tc.n)
			}
			if err := checkKeepsJSON([]byte(tc.line), out, c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRedactLineNotJSON(t *testing.T) {
	r := Default()
	line := `{"conversations": [{"from": "human", "value": "out:\n` + testPAT + `` // cut short
	out, c := r.RedactLine([]byte(line))
	if c["github_pat"] != 1 || strings.Contains(string(out), testPAT) || string(out) != strings.Replace(line, testPAT, "[REDACTED:github_pat]", 1) {
		t.Fatalf("got %s %v", out, c)
	}
}

func TestRedactLineCleanNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race, so the scratch is allocated again")
	}
	r := Default()
	line := []byte(`{"messages": [{"role": "user", "content": "` + strings.Repeat(`The key point:\n they said \"tokens\" matter. See https://example.com/x.\t`, 100) + `"}]}`)
	allocs := testing.AllocsPerRun(100, func() {
		out, c := r.RedactLine(line)
		if c != nil || &out[0] != &line[0] {
			t.Fatal("clean line changed")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per clean line", allocs)
	}
}

// FuzzRedactLine: on valid JSON, RedactLine gives exactly what decoding
// and redacting every string gives: its scan of the encoded line never
// misses what the decoded strings hold.
func FuzzRedactLine(f *testing.F) {
	for _, s := range []string{
		`{"a": "out:\n` + testPAT + `\nend"}`,
		`{"a": "x\t` + testAWS + `", "b": ["export GITHUB_TOKEN=` + testPAT + `"]}`,
		`{"a": "caf\u00e9 postgres://u:s3cr3tPw9@h/db"}`,
		`{"args": "{\"cmd\": \"curl -H \\\"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1\\\"\"}"}`,
		`{"k": "DB_PASSWORD=hunter22x\r\nAPI_KEY=abc123def456ghi789"}`,
		`["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX\n-----END RSA PRIVATE KEY-----"]`,
		`{"a": "\ud83d\ude00` + testAWS + `\u4e2d"}`,
		`"plain"`,
		`{"url": "data:image/png;base64,iVBORw0KGgo/` + testAWS + `+AAA", "text": "key ` + testAWS + `"}`,
		`{"source": {"type": "base64", "media_type": "image/png", "data": "iVBO/` + testAWS + `+AAA"}}`,
		`{"images": [{"bytes": "iVBO/` + testAWS + `+AAA", "path": null}]}`,
		`{"` + testPAT + `": 1, "[REDACTED:github_pat]": {"` + testPAT + `": "` + testAWS + `", "k ` + testPAT + `": 2}}`,
	} {
		f.Add(s)
	}
	r := Default()
	f.Fuzz(func(t *testing.T, line string) {
		if !json.Valid([]byte(line)) {
			out, c := r.RedactLine([]byte(line))
			if c == nil && string(out) != line {
				t.Fatal("changed without counts")
			}
			return
		}
		out, c := r.RedactLine([]byte(line))
		wantOut, wantC := exactLine(r, []byte(line))
		if string(out) != string(wantOut) || c.Total() != wantC.Total() {
			t.Fatalf("RedactLine(%q) = %q %v; decoding every string gives %q %v", line, out, c, wantOut, wantC)
		}
		if !json.Valid(out) {
			t.Fatalf("output not JSON: %q", out)
		}
	})
}
