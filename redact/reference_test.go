package redact

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/redact/redacttest"
)

var (
	refOnce sync.Once
	refREs  []*regexp.Regexp
	refKW   [][]string
)

// reference finds what gitleaks' way of matching finds with the same
// rules: a rule runs when one of gitleaks' own keywords for it occurs
// anywhere in the text (ASCII case ignored), its whole expression over the
// whole text; every match goes through the same checks (accept: secret
// group, entropy, allowlists) and the same overlap resolution. find's
// keyword anchoring, windows, quick checks and locators must not change
// the answer.
func (r *Redactor) reference(s string) []finding {
	refOnce.Do(func() {
		orig := map[string][]string{}
		for _, g := range gitleaksRules {
			orig[g.ID] = g.Keywords
		}
		for _, sp := range builtinSpecs() {
			refREs = append(refREs, regexp.MustCompile(jsonTolerant.Replace(sp.Regex)))
			kw := sp.Keywords
			if k, ok := orig[sp.ID]; ok {
				kw = k
			}
			refKW = append(refKW, kw)
		}
	})
	if len(r.rules) != len(refREs) {
		panic("reference needs a Redactor with every rule")
	}
	low := strings.ToLower(s)
	sc := &scratch{}
	for ri := range r.rules {
		if kw := refKW[ri]; len(kw) > 0 && !containsAny(low, kw) {
			continue
		}
		for _, m := range refREs[ri].FindAllStringSubmatchIndex(s, -1) {
			r.accept(sc, &r.rules[ri], int32(ri), s, 0, s, m, 0)
		}
	}
	return r.resolve(sc.findings)
}

func containsAny(low string, kw []string) bool {
	for _, k := range kw {
		if strings.Contains(low, strings.ToLower(k)) {
			return true
		}
	}
	return false
}

func describe(r *Redactor, s string, f []finding) string {
	var b strings.Builder
	for _, x := range f {
		fmt.Fprintf(&b, "%s[%d:%d]=%.40q ", r.rules[x.rule].id, x.start, x.end, s[x.start:x.end])
	}
	return b.String()
}

// compareReference reports a text whose findings differ from reference's.
func compareReference(t *testing.T, r *Redactor, s string) bool {
	t.Helper()
	got, sc := r.find(s)
	gotS := describe(r, s, got)
	if sc != nil {
		r.scratch.Put(sc)
	}
	want := describe(r, s, r.reference(s))
	if gotS != want {
		t.Errorf("findings differ from gitleaks' way of matching in %.200q:\n got  %s\n want %s", s, gotS, want)
		return false
	}
	return true
}

// TestMatchesReference checks find against reference on texts with
// planted secrets of every kind, in the contexts a trajectory holds them,
// and on secrets of the rules whose keywords lie inside the secret.
func TestMatchesReference(t *testing.T) {
	r := Default()
	rng := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for i := range redacttest.Kinds() {
		for range 10 {
			s := redacttest.Make(rng, i)
			texts = append(texts, s.Text, "text before\n"+s.Text+"\nand after", `{"cmd": "`+strings.ReplaceAll(s.Text, "\n", `\n`)+`"}`)
		}
	}
	texts = append(texts,
		"LOB_API_KEY=test_9f3a1c7e5b2d8f4a6c0e9b7d3f1a5c8e2b4",
		`lob: "live_pub_8e2c4a6f0b9d7e1c3a5f8b2d4e6c9a7"`,
		"NEW_RELIC_API_KEY=NRAK-QX7ZB2M4N6P5R3T9WK8JH1DF0LC",
		"newrelic_insert_key: NRII-9q8w7e6r5t4y3u2i1o0p-asdfghjklzx",
		`typeform_token = "tfp_`+strings.Repeat("aB3", 19)+`c2"`,
		"a JWT: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1 end",
		"they key eyes: ey.ey and x.eyJ0eXAiOiJKV1Q in prose",
	)
	texts = append(texts, anchorTexts...)
	for _, s := range texts {
		compareReference(t, r, s)
	}
}

// TestMatchesReferenceRealData compares on a sample of the real turn
// texts (skipped when the real data is absent): every 7th text, and
// every 7th with a secret planted.
func TestMatchesReferenceRealData(t *testing.T) {
	dir := testenv.NeedRealData(t)
	if testing.Short() {
		t.Skip("the reference scans every rule over every text: the full test run only")
	}
	texts, err := testenv.RealTurnTexts(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := Default()
	rng := rand.New(rand.NewPCG(7, 8))
	bad := 0
	for i, s := range texts {
		if i%7 == 3 {
			sec := redacttest.Make(rng, rng.IntN(len(redacttest.Kinds())))
			s, _ = redacttest.Plant(rng, s, sec.Text)
		} else if i%7 != 0 {
			continue
		}
		if !compareReference(t, r, s) {
			if bad++; bad >= 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

// anchorTexts hold secrets of the template rules whose keyword group has
// an optional part (message[_-]?bird, linked[_-]?in, sonar[_.-]?(login|
// token), passw(?:or)?d, CREDENTIALS?), each spelling, and their kind.
var anchorTexts, anchorKinds = func() ([]string, []string) {
	var texts, kinds []string
	add := func(kind string, t ...string) {
		for _, x := range t {
			texts, kinds = append(texts, x), append(kinds, kind)
		}
	}
	add("messagebird_api_token", `MESSAGEBIRD_TOKEN="q7w2e9r4t1y8u3i6o5p0a7s2d"`, "message_bird: q7w2e9r4t1y8u3i6o5p0a7s2d", "message-bird_key = q7w2e9r4t1y8u3i6o5p0a7s2d;")
	add("messagebird_client_id", "messagebird_client = 8e2c4a6f-0b9d-7e1c-3a5f-8b2d4e6c9a7f")
	add("linkedin_client_id", "linkedin_id: k3j8h2g7f1d6s9", "LINKED_IN_ID=k3j8h2g7f1d6s9", `"linked-in-client": "k3j8h2g7f1d6s9"`)
	add("linkedin_client_secret", "linkedin_secret: k3j8h2g7f1d6s9a4")
	add("sonar_api_token", "sonar.login = squ_a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0", "SONAR_TOKEN=a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0", "sonarlogin: sqp_a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0", "sonar-token => sqa_a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0")
	add("generic_api_key", "db_passwd: Zq8vN2kLp0xR7wQ1", "the password = Zq8vN2kLp0xR7wT4")
	add("secret_assignment", "AWS_CREDENTIAL=hunter2x9", "GOOGLE_CREDENTIALS_FILE=hunter2x9")
	return texts, kinds
}()

// TestAnchorSpellings: each spelling of a template rule's optional keyword
// part is found, under the rule's own kind.
func TestAnchorSpellings(t *testing.T) {
	r := Default()
	for i, text := range anchorTexts {
		if _, c := r.RedactString(text); c[anchorKinds[i]] != 1 {
			t.Errorf("%q: %v, want one %s", text, c, anchorKinds[i])
		}
	}
}

// TestKeywordInsideSecret: rules whose gitleaks keywords lie inside the
// secret (lob, New Relic, Typeform) run at their template words and find
// their secrets.
func TestKeywordInsideSecret(t *testing.T) {
	r := Default()
	for text, kind := range map[string]string{
		"LOB_API_KEY=test_9f3a1c7e5b2d8f4a6c0e9b7d3f1a5c8e2b4":                                  "lob_api_key",
		`lob: "live_pub_8e2c4a6f0b9d7e1c3a5f8b2d4e6c9a7"`:                                       "lob_pub_api_key",
		"NEW_RELIC_API_KEY=NRAK-QX7ZB2M4N6P5R3T9WK8JH1DF0LC":                                    "new_relic_user_api_key",
		"newrelic_insert_key: NRII-9q8w7e6r5t4y3u2i1o0p-asdfghjklzx":                            "new_relic_insert_key",
		`typeform_token = "tfp_` + strings.Repeat("aB3", 19) + `c2"`:                            "typeform_api_token",
		"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1 end": "jwt",
	} {
		if _, c := r.RedactString(text); c[kind] != 1 {
			t.Errorf("%q: %v, want one %s", text, c, kind)
		}
	}
}

// TestMatchesReferenceAssignments compares find with reference on random
// keyword assignments of gitleaks' template shape: the keyword, an
// identifier tail, quotes and blanks, each operator, quotes, blanks and
// '=' after it, then a value of letters only (which generic-api-key's
// allowlist drops without its expression running) or with digits and
// the other bytes a secret holds, then what may end it.
func TestMatchesReferenceAssignments(t *testing.T) {
	r := Default()
	rng := rand.New(rand.NewPCG(9, 10))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	run := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 4000 {
		text := pick("", "x ", "\n", `"`, "my_", "A.") +
			pick("key", "token", "API", "Auth", "secret", "password", "access", "creds", "sonar_token", "linkedin", "messagebird", "twitter") +
			pick("", "_id", "s", ".value", " ", "_x-y") +
			pick("", `"`, `\"`, " ", "' ", `\\"`) +
			pick("=", ":", "::=", ":::=", "=>", "||", "?=", ",", ">", ": ", "= ") +
			pick("", " ", `"`, `\"`, "==", " = ", "'", "\t", `\\\"`, "=\"") +
			pick(run("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.-", 8+rng.IntN(30)),
				run("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.=-+/", 8+rng.IntN(30)),
				run("abcdefXYZ_-", 9+rng.IntN(5))+pick("1", "=", "+", "/", "é", ".")+run("abcXYZ", rng.IntN(6))) +
			pick("", `"`, `\"`, " ", ";", "\n", "`", "\\n", ",", ")", "é")
		compareReference(t, r, text)
	}
}

// FuzzMatchesReference: on any text, find (keyword filter, anchors,
// quick checks, the allowlist shortcut) finds what reference does.
func FuzzMatchesReference(f *testing.F) {
	for _, s := range anchorTexts {
		f.Add(s)
	}
	f.Add("key: test_key.py::test_value PASSED [9%]\\ntoken = abc_def.ghi-jkl\n")
	f.Add(`{"cmd": "export GITHUB_TOKEN=ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG s.abcdefghijklmnopqrstuvwx"}`)
	r := Default()
	f.Fuzz(func(t *testing.T, s string) {
		compareReference(t, r, s)
	})
}
