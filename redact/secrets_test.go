package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// testKey is an API key in a format no rule knows: no prefix, characters
// the generic rule's value class lacks ('/', '+', '~'), low entropy parts.
const testKey = "Zq8/Lm3+Vx7~Rt2.Kp9aaaa-Wn4Hs6Yb1Qe5"

func TestWithSecrets(t *testing.T) {
	lower, upper := strings.ToLower(testKey), strings.ToUpper(testKey)
	base := Default()
	if out, c := base.RedactString("key " + testKey); c != nil || !strings.Contains(out, testKey) {
		t.Fatalf("a rule knows the test key's format: %q %v", out, c)
	}
	withBase, err := WithSecrets(base, "llm-api-key", testKey)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := WithSecrets(nil, "llm-api-key", testKey)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the key is " + testKey + ".",
		"Authorization: Bearer " + testKey,
		"echo: " + lower + " and " + upper,
		"OPENAI_API_KEY=" + testKey + " and api_key: " + testKey, // overlaps the generic rules
		testKey + testKey,
		`{"key": "` + testKey + `"}`,
	}
	for _, r := range []*Redactor{withBase, alone} {
		for _, text := range texts {
			out, c := r.RedactString(text)
			for _, sp := range []string{testKey, lower, upper, "Zq8", "Qe5", "qe5", "QE5"} {
				if strings.Contains(out, sp) {
					t.Errorf("%q survives in %q (from %q)", sp, out, text)
				}
			}
			if c["llm_api_key"] == 0 {
				t.Errorf("%q: counts %v", text, c)
			}
		}
	}
	// The AVX-512 keyword filter takes every keyword (the providers' and
	// the key's): none of them is one more 2-byte spelling.
	for _, r := range []*Redactor{base, withBase, alone} {
		if !r.kw.filterOK {
			t.Errorf("the keyword filter does not fit %d keywords (%d of 2 bytes)", len(r.kw.words), len(r.kw.short))
		}
	}
	// The built-in rules still apply, and the redactor they came from is
	// unchanged.
	if out, c := withBase.RedactString("token " + testPAT); c["github_pat"] != 1 || strings.Contains(out, testPAT) {
		t.Errorf("built-in rules lost: %q %v", out, c)
	}
	if _, c := alone.RedactString("token " + testPAT); c != nil {
		t.Errorf("a redactor of known secrets only found %v", c)
	}
	if _, c := base.RedactString(testKey); c != nil {
		t.Errorf("WithSecrets changed its base: %v", c)
	}
	// Through whole JSON lines: as written, with escapes, nested.
	esc, _ := json.Marshal(map[string]string{"content": "echoed " + testKey + " and " + upper})
	lines := []string{
		string(esc),
		`{"a": "` + strings.ReplaceAll(testKey, "/", `\/`) + `"}`,
		`{"args": "{\"k\": \"` + testKey + `\"}"}`,
		`{"` + testKey + `": 1}`,
		`{"a": "\u005Aq8/Lm3+Vx7~Rt2.Kp9aaaa-Wn4Hs6Yb1Qe5"}`,
	}
	for _, line := range lines {
		out, c := withBase.RedactLine([]byte(line))
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("%s: output not JSON: %s", line, out)
			continue
		}
		dec, _ := json.Marshal(v)
		if strings.Contains(string(dec), "Qe5") || strings.Contains(string(dec), "QE5") || c["llm_api_key"] == 0 {
			t.Errorf("%s: key survives or uncounted: %s %v", line, out, c)
		}
	}
}

func TestWithSecretsShort(t *testing.T) {
	base := Default()
	r, err := WithSecrets(base, "llm-api-key", "EMPTY", "", "none")
	if err != nil || r != base {
		t.Fatalf("short values made a new redactor (%v)", err)
	}
	if r, _ := WithSecrets(nil, "llm-api-key", "EMPTY"); r != nil {
		t.Fatal("short values made a redactor")
	}
}
