package redact

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/redact/redacttest"
	"github.com/trajcompress/trajcompress/traj"
)

func TestRulesCompile(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.rules) < 200 {
		t.Fatalf("only %d rules compiled", len(r.rules))
	}
	if gitleaksCommit == "" {
		t.Fatal("rules_gen.go does not name the gitleaks commit")
	}
}

func TestPlantedKinds(t *testing.T) {
	r := Default()
	rng := rand.New(rand.NewPCG(1, 2))
	for i, kind := range redacttest.Kinds() {
		for n := range 20 {
			s := redacttest.Make(rng, i)
			for _, wrap := range []string{"%s", "before text\n%s\nafter", `{"cmd": %q}`} {
				text := strings.Replace(wrap, "%s", s.Text, 1)
				if strings.Contains(wrap, "%q") {
					b, _ := json.Marshal(s.Text)
					text = strings.Replace(wrap, "%q", string(b), 1)
				}
				out, c := r.RedactString(text)
				if strings.Contains(out, s.Value) || (strings.Contains(wrap, "%q") && strings.Contains(out, jsonInner(s.Value))) {
					t.Errorf("%s #%d in %q: value survives: %q", kind, n, wrap, out)
					continue
				}
				if c[kind] == 0 {
					t.Errorf("%s #%d in %q: counted as %v, output %q", kind, n, wrap, c, out)
				}
				if !strings.Contains(out, "[REDACTED:"+kind+"]") {
					t.Errorf("%s #%d: no %s marker in %q", kind, n, kind, out)
				}
			}
		}
	}
}

func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func TestNotSecrets(t *testing.T) {
	r := Default()
	clean := []string{
		"commit 3f2a9c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b\nAuthor: someone",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"request id 123e4567-e89b-12d3-a456-426614174000 done",
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}`,
		"the key point is that the token budget matters",
		"export API_KEY=$API_KEY",
		"password: ${DB_PASSWORD}",
		"DB_PASSWORD=<your-password>",
		"postgres://user:password@localhost/db",
		"git clone https://github.com/acme/app.git",
		"go.sum: golang.org/x/sys v0.46.0 h1:abcdEFGH1234ijklMNOP5678qrstUVWX9012yzAB3456=",
		// Provider names and identifiers that are not their keys.
		`{"model": "deepseek-ai/DeepSeek-V3", "base_url": "https://api.deepseek.com"}`,
		"model: mistralai/Mistral-7B-Instruct-v0.2 (mistral_tokenizer_version: v3)",
		"xai-org/grok-1 weights; together.ai serves it; azure: eastus2",
		"static int fw_updateFirmwareVersionCheck(struct device *dev);",
		"OPENROUTER_API_KEY=sk-or-v1-... (see https://openrouter.ai/keys)",
		"cache key for the together run: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	}
	for _, s := range clean {
		out, c := r.RedactString(s)
		if c != nil || out != s {
			t.Errorf("redacted %v in %q: %q", c, s, out)
		}
	}
}

func TestRedactBytesNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race, so the scratch is allocated again")
	}
	r := Default()
	// Clean text full of keywords ("key", "token", "ey", "s.", "://").
	text := []byte(strings.Repeat("The key point: they said tokens matter. See files.go at https://example.com/x. ", 200))
	dst := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		out, c := r.Redact(dst, text)
		if c != nil || &out[0] != &text[0] {
			t.Fatal("clean text changed")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per clean Redact", allocs)
	}
}

func TestRedactBytes(t *testing.T) {
	r := Default()
	in := []byte("key AKIAIOSFODNN7Q2XZ5W3 and xoxb-7305918264-4928175036-Zq8TwLp3Xk9RmV2sNd5YbH7c end")
	orig := string(in)
	out, c := r.Redact(make([]byte, 0, 8), in)
	if string(in) != orig {
		t.Fatal("input modified")
	}
	want := "key [REDACTED:aws_access_token] and [REDACTED:slack_bot_token] end"
	if string(out) != want || c["aws_access_token"] != 1 || c["slack_bot_token"] != 1 || c.Total() != 2 {
		t.Fatalf("got %q %v", out, c)
	}
}

func TestSpecificBeatsGeneric(t *testing.T) {
	r := Default()
	v := "ghp_" + strings.Repeat("aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fGh", 1)
	out, c := r.RedactString(`token: "` + v + `"`)
	if c["github_pat"] != 1 || c.Total() != 1 {
		t.Fatalf("got %q %v", out, c)
	}
}

func TestKeywordIndex(t *testing.T) {
	k := newKeywordIndex([]string{"ey", "key", "sk-ant", "q~"})
	var got []string
	k.scan("KEY sk-ANT xQ~ eY", func(w int32, end int) { got = append(got, k.words[w]+"@"+string(rune('0'+end%10))) })
	// Keywords of 3+ bytes in text order, then 2-byte ones keyword by keyword.
	want := []string{"key@3", "sk-ant@0", "ey@3", "ey@7", "q~@4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestMaxWidthWindows(t *testing.T) {
	r := Default()
	for _, ru := range r.rules {
		if ru.window <= 0 {
			t.Errorf("rule %s: window %d", ru.id, ru.window)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("export GITHUB_TOKEN=ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG\n")
	f.Add("postgres://u:s3cr3tpw@h/db")
	f.Add("plain text with key and token words")
	r := Default()
	f.Fuzz(func(t *testing.T, s string) {
		out, c := r.RedactString(s)
		if c == nil {
			if out != s {
				t.Fatal("changed without counts")
			}
			return
		}
		if strings.Count(out, "[REDACTED:") < c.Total() {
			t.Fatalf("%d markers for %v", strings.Count(out, "[REDACTED:"), c)
		}
		// Redacting the output again finds nothing new in what was kept
		// (markers are not secrets).
		out2, _ := r.RedactString(out)
		if strings.Count(out2, "[REDACTED:") < strings.Count(out, "[REDACTED:") {
			t.Fatal("markers lost")
		}
	})
}

// TestAnchoring checks how the rules run: ours and the hot token rules
// anchored at their keywords, and the 2-byte keywords searched in the
// only case their rules can match.
func TestAnchoring(t *testing.T) {
	r := Default()
	anchored := map[string]bool{}
	for _, ru := range r.rules {
		anchored[ru.id] = ru.anchored != nil
	}
	for _, id := range []string{"url-password", "secret-assignment", "generic-api-key", "jwt", "github-pat", "vault-service-token", "twilio-api-key"} {
		if !anchored[id] {
			t.Errorf("rule %s is not anchored", id)
		}
	}
	for _, ru := range r.rules {
		if ru.id == "jwt" && (ru.locate == nil || !slices.Equal(ru.keywords, []string{".ey"})) {
			t.Errorf("jwt runs at %v, want .ey with its locator", ru.keywords)
		}
		if ru.id == "lob-api-key" && !slices.Equal(ru.anchors, []string{"lob"}) {
			t.Errorf("lob-api-key runs at %v, want lob", ru.anchors)
		}
	}
	got := map[string][]string{}
	for w, sp := range r.kw.cases {
		got[r.kw.words[w]] = sp
	}
	for w, want := range map[string]string{"sk": "SK"} {
		if strings.Join(got[w], ",") != want {
			t.Errorf("keyword %q searched as %v, want %s", w, got[w], want)
		}
	}
}

// TestFuncWithTraj redacts every string of a record's turns in place, as
// the pipeline will: content, reasoning, tool-call arguments (JSON inside a
// JSON string).
func TestFuncWithTraj(t *testing.T) {
	line := `{"messages": [{"role": "assistant", "content": null, "reasoning_content": "use AKIAIOSFODNN7Q2XZ5W3", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"git push https://x:ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fGh@github.com/a/b\"}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}`
	rec, err := traj.Decode([]byte(line), traj.Pos{}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	counts := Counts{}
	f := Default().Func(counts)
	var out []traj.Turn
	for _, tr := range rec.Turns {
		nt, _ := rec.MapTurnStrings(tr, f)
		out = append(out, nt)
	}
	got := string(rec.AppendJSON(nil, out))
	if strings.Contains(got, "AKIA") || strings.Contains(got, "ghp_") || !json.Valid([]byte(got)) {
		t.Fatalf("not redacted: %s", got)
	}
	if counts["aws_access_token"] != 1 || counts["github_pat"] != 1 || counts.Total() != 2 {
		t.Fatalf("counts %v in %s", counts, got)
	}
	if out[0].CallIDs[0] != "c1" || out[1].AnswersID != "c1" {
		t.Fatal("pairing changed")
	}
}
