package prepass

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsontest"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/traj"
)

// A prepass step never makes valid JSON invalid. For
// any record line, the line written after the step is valid JSON of the
// same structure, recursively into the strings that hold JSON, but for
// what the step replaces by design: a tool result's content by a digest
// or a back-reference (FuzzDigests), string leaves of a call's arguments
// cut around a marker (FuzzShrinkArguments).

// seedRecords adds to f the real data's shortest lines (none when it is
// absent) and records of both dialects whose arguments and results are
// jsontest.Tricky's nested JSON, made long enough to be digested and
// shrunk.
func seedRecords(f *testing.F) {
	lines, err := testenv.RealLines(32<<10, 2, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range lines {
		f.Add(l, uint8(0), uint8(255), uint8(6))
	}
	for _, line := range trickyRecords(f) {
		f.Add(line, uint8(1), uint8(255), uint8(6))
	}
}

// trickyRecords are records whose tool-call arguments (a JSON string, an
// object, a Hermes block) and tool results hold jsontest.Tricky's JSON, a
// long leaf added so that they are over every threshold.
func trickyRecords(t testing.TB) [][]byte {
	var out [][]byte
	pad := strings.Repeat("long text ", 20)
	for _, tr := range jsontest.Tricky() {
		obj := `{"pad":"` + pad + `","v":` + tr + `}`
		quoted, _ := json.Marshal(obj)
		if !utf8.ValidString(tr) { // pipeline repairs such lines before any step
			continue
		}
		out = append(out, []byte(`{"messages":[{"role":"user","content":"u"},`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"terminal","arguments":`+string(quoted)+`}},`+
			`{"id":"b","type":"function","function":{"name":"read_file","arguments":`+obj+`}}]},`+
			`{"role":"tool","tool_call_id":"a","content":`+string(quoted)+`},`+
			`{"role":"tool","tool_call_id":"b","content":[{"type":"text","text":`+string(quoted)+`}]},`+
			`{"role":"user","content":"end"}]}`))
		call, _ := json.Marshal("<tool_call>\n{\"name\": \"search\", \"arguments\": " + obj + "}\n</tool_call>")
		resp, _ := json.Marshal("<tool_response>\n{\"name\": \"search\", \"content\": " + string(quoted) + "}\n</tool_response>" +
			"<tool_response>\n{\"name\": \"search\", \"content\": " + obj + "}\n</tool_response>" +
			"<tool_response>\n{\"name\": \"search\", \"result\": " + obj + "}\n</tool_response>")
		out = append(out, []byte(`{"conversations":[{"from":"human","value":"u"},{"from":"gpt","value":`+string(call)+`},`+
			`{"from":"tool","value":`+string(resp)+`},{"from":"function_call","value":`+string(quoted)+`},{"from":"human","value":"end"}]}`))
	}
	return out
}

func FuzzDigests(f *testing.F) {
	seedRecords(f)
	f.Fuzz(func(t *testing.T, line []byte, lo, hi, keep uint8) {
		checkStep(t, line, int(lo), int(hi), Config{Counter: counter(t), DigestOver: 3, ArgsOver: 1 << 30})
	})
}

func FuzzShrinkArguments(f *testing.F) {
	seedRecords(f)
	f.Fuzz(func(t *testing.T, line []byte, lo, hi, keep uint8) {
		checkStep(t, line, int(lo), int(hi), Config{Counter: counter(t), DigestOver: 1 << 30, ArgsOver: 3, LeafKeep: 1 + int(keep)%40})
	})
}

// checkStep runs Apply on line's turns [lo, hi) and checks what it wrote
// against line: valid JSON of the same structure, but for tool results of
// [lo, hi) replaced by a digest or a back-reference, and cut string leaves
// in the arguments of calls of [lo, hi).
func checkStep(t *testing.T, line []byte, lo, hi int, cfg Config) {
	if !utf8.Valid(line) { // the pipeline repairs ill-formed UTF-8 first
		return
	}
	rec, err := traj.Decode(line, traj.Pos{File: "fuzz", Line: 1}, traj.Schema{})
	if err != nil {
		return
	}
	out, _ := Apply(rec, rec.Turns, lo, hi, never, cfg)
	after := rec.AppendJSON(nil, out)
	if err := jsontest.Compare(line, after, stepOptions(rec, lo, hi)); err != nil {
		t.Fatalf("%v\nin:  %.2000s\nout: %.2000s", err, line, after)
	}
}

// stepOptions are the differences the prepass may make to rec's turns
// [lo, hi).
func stepOptions(rec *traj.Record, lo, hi int) jsontest.Options {
	turnsKey, contKey := "conversations", "value"
	if rec.Dialect == traj.DialectOpenAI {
		turnsKey, contKey = "messages", "content"
	}
	// turn is the index of the turn p lies in, when it is one of [lo, hi).
	turn := func(p jsontest.Path) (traj.Turn, bool) {
		if !p.HasPrefix(turnsKey, "*") {
			return traj.Turn{}, false
		}
		i, err := strconv.Atoi(p[1])
		if err != nil || i < lo || i >= hi || i >= len(rec.Turns) {
			return traj.Turn{}, false
		}
		return rec.Turns[i], true
	}
	isCall := func(t traj.Turn) bool { return t.Role == traj.RoleAssistant || t.Name == "function_call" }
	// A cut leaf of a call's arguments, anywhere in them.
	cutLeaf := func(p jsontest.Path, a, b string) error {
		if t, ok := turn(p); ok && isCall(t) && isCut(a, b) {
			return nil
		}
		return fmt.Errorf("changed: %.200q → %.200q", a, b)
	}
	return jsontest.Options{
		// A tool result's whole content, by a digest or a back-reference.
		Replaced: func(p jsontest.Path, _, b []byte) error {
			if t, ok := turn(p); ok && t.Role == traj.RoleTool && p.Is(turnsKey, "*", contKey) {
				return isReplacement(b)
			}
			return fmt.Errorf("not replaceable")
		},
		Leaf: func(p jsontest.Path, a, b string) error {
			t, ok := turn(p)
			switch {
			case !ok || !p.Is(turnsKey, "*", contKey) || rec.Dialect == traj.DialectOpenAI:
			case t.Role == traj.RoleTool && strings.Contains(a, respOpen):
				// Hermes responses: "content" replaced, or a body that is
				// not JSON.
				return sameBlocks(a, b, respOpen, respClose, jsontest.Options{
					Replaced: func(p jsontest.Path, a, b []byte) error {
						if p.Is("content") {
							return isReplacement(b)
						}
						if len(p) == 0 { // a body without a content
							return isResponseReplacement(a, b)
						}
						return fmt.Errorf("not replaceable")
					},
					Leaf: func(p jsontest.Path, a, b string) error {
						if len(p) == 0 {
							return isReplacement(jsontest.Quote(b))
						}
						return fmt.Errorf("changed: %.200q → %.200q", a, b)
					},
				})
			case isCall(t) && strings.Contains(a, callOpen):
				return sameBlocks(a, b, callOpen, callClose, jsontest.Options{Leaf: func(_ jsontest.Path, a, b string) error {
					if isCut(a, b) {
						return nil
					}
					return fmt.Errorf("changed: %.200q → %.200q", a, b)
				}})
			}
			return cutLeaf(p, a, b)
		},
	}
}

// sameBlocks checks a turn text b against a, its text before the step:
// the same text outside the open…close blocks, the same number of blocks,
// a block body that held JSON holds JSON of the same structure (o),
// another is o.Leaf's to judge (with an empty path).
func sameBlocks(a, b, open, close string, o jsontest.Options) error {
	sa, sb := blockSpans(a, open, close), blockSpans(b, open, close)
	if len(sa) != len(sb) {
		return fmt.Errorf("%d blocks became %d", len(sa), len(sb))
	}
	pa, pb := 0, 0
	for k := range sa {
		if a[pa:sa[k].start] != b[pb:sb[k].start] {
			return fmt.Errorf("the text before block %d changed", k)
		}
		ba, bb := a[sa[k].start:sa[k].end], b[sb[k].start:sb[k].end]
		var err error
		switch {
		case ba == bb:
		case jsontest.HoldsJSON(ba):
			err = jsontest.Compare([]byte(ba), []byte(bb), o)
		case o.Leaf != nil:
			err = o.Leaf(nil, ba, bb)
		default:
			err = fmt.Errorf("changed")
		}
		if err != nil {
			return fmt.Errorf("block %d: %w", k, err)
		}
		pa, pb = sa[k].end, sb[k].end
	}
	if a[pa:] != b[pb:] {
		return fmt.Errorf("the text after the last block changed")
	}
	return nil
}

// isReplacement reports whether the JSON value v is a digest or a
// back-reference, as a string.
func isReplacement(v []byte) error {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return fmt.Errorf("replaced by %.200s, not a string", v)
	}
	if !strings.HasPrefix(s, "[trajcompress digest of a ") && !backRefRE.MatchString(s) {
		return fmt.Errorf("replaced by %.200q, not a digest or a back-reference", s)
	}
	return nil
}

var (
	backRefRE = regexp.MustCompile(`^\[same output as turn \d+\]$`)
	cutRE     = regexp.MustCompile(`(?s)^(.*)…\[(\d+) characters cut by trajcompress\]…(.*)$`)
)

// isCut reports whether b is a, cut by cut().
func isCut(a, b string) bool {
	m := cutRE.FindStringSubmatch(b)
	if m == nil || !strings.HasPrefix(a, m[1]) || !strings.HasSuffix(a, m[3]) || len(m[1])+len(m[3]) > len(a) {
		return false
	}
	n, _ := strconv.Atoi(m[2])
	return n == utf8.RuneCountInString(a)-utf8.RuneCountInString(m[1])-utf8.RuneCountInString(m[3])
}

// A string leaf of the arguments that holds JSON (a nested object, a
// JSON-encoded string, at depth 2 and 3) is shrunk inside, and still holds
// JSON of the same structure: cutting it as text broke it.
func TestShrinkKeepsNestedJSON(t *testing.T) {
	long := strings.Repeat("word ", 40)
	inner, _ := json.Marshal(map[string]any{"text": long, "n": 1, "list": []any{"a", long}})
	innerStr, _ := json.Marshal(string(inner))
	deep, _ := json.Marshal(map[string]any{"args": string(inner), "quoted": string(innerStr)})
	for _, src := range []string{
		`{"content":` + string(innerStr) + `}`,
		`{"content":` + mustMarshal(t, string(deep)) + `,"x":` + mustMarshal(t, string(innerStr)) + `}`,
		`[` + mustMarshal(t, `"`+long+`"`) + `]`, // a string holding a JSON string
	} {
		out, changed, ok := shrinkJSON(src, 20)
		if !ok || !changed {
			t.Fatalf("shrinkJSON(%.80s): changed %v, ok %v", src, changed, ok)
		}
		if err := jsontest.Compare([]byte(src), []byte(out), jsontest.Options{Leaf: func(_ jsontest.Path, a, b string) error {
			if isCut(a, b) {
				return nil
			}
			return fmt.Errorf("not a cut: %q", b)
		}}); err != nil {
			t.Errorf("shrinkJSON(%.80s): %v\n%s", src, err, out)
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A Hermes tool response whose body is JSON but has no "content" to
// replace (other keys, a null content, an array) is digested into JSON:
// it was replaced by the digest's bare text, and the block no longer held
// JSON.
func TestDigestKeepsResponseJSON(t *testing.T) {
	long := strings.Repeat("output line\n", 60)
	q := func(v any) string { return mustMarshal(t, v) }
	for _, body := range []string{
		`{"name": "terminal", "tool_call_id": "c1", "result": ` + q(long) + `, "n": 3}`,
		`{"name": "terminal", "content": null, "stdout": ` + q(long) + `}`,
		`[` + q(long) + `, 1]`,
		q(long),
	} {
		turn := "<tool_response>\n" + body + "\n</tool_response>"
		rec := decode(t, m{"conversations": []m{
			{"from": "human", "value": "u"},
			{"from": "gpt", "value": hermesCall("terminal", json.RawMessage(`{"command":"ls"}`))},
			{"from": "tool", "value": turn},
			{"from": "human", "value": "end"},
		}})
		out, rep := Apply(rec, rec.Turns, 1, 3, never, Config{Counter: counter(t), DigestOver: 10, ArgsOver: 1 << 30})
		if rep.Changes[Digests] != 1 {
			t.Fatalf("%.40s: not digested: %+v", body, rep)
		}
		sp := blockSpans(out[2].Text, respOpen, respClose)
		got := out[2].Text[sp[0].start:sp[0].end]
		var v any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Errorf("%.40s: the response body is no longer JSON: %q", body, got)
			continue
		}
		if err := isResponseReplacement([]byte(body), []byte(got)); err != nil {
			t.Errorf("%.40s: %v", body, err)
		}
	}
}

// isResponseReplacement reports whether b, a Hermes response body that
// replaced the JSON a, is a digest or a back-reference as JSON: a string,
// or an object of a's name and tool_call_id (as written) and the content.
func isResponseReplacement(a, b []byte) error {
	if b[0] == '"' {
		return isReplacement(b)
	}
	ma, _, err := jsonx.Members(a, 0)
	mb, _, err2 := jsonx.Members(b, 0)
	if err != nil || err2 != nil || len(mb) == 0 {
		return fmt.Errorf("%.200s replaced by %.200s", a, b)
	}
	for _, x := range mb[:len(mb)-1] {
		y, ok := jsonx.Find(ma, must(jsonx.Unquote(x.Key)))
		if !ok || !(jsonx.KeyIs(x.Key, "name") || jsonx.KeyIs(x.Key, "tool_call_id")) || string(a[y.Start:y.End]) != string(b[x.Start:x.End]) {
			return fmt.Errorf("member %s of %.200s: not the response's name or tool_call_id", x.Key, b)
		}
	}
	last := mb[len(mb)-1]
	if !jsonx.KeyIs(last.Key, "content") {
		return fmt.Errorf("%.200s: no content last", b)
	}
	return isReplacement(b[last.Start:last.End])
}

func must(s string, _ bool) string { return s }

// span is a block's body inside a text, trimmed of surrounding space.
type span struct{ start, end int }

// blockSpans returns the trimmed bodies of the open…close blocks of s (an
// unclosed last block runs to the end): the checker's own reading of the
// blocks, apart from traj's.
func blockSpans(s, open, close string) []span {
	var out []span
	off := 0
	for {
		i := strings.Index(s[off:], open)
		if i < 0 {
			return out
		}
		start := off + i + len(open)
		end, next := len(s), len(s)
		if j := strings.Index(s[start:], close); j >= 0 {
			end, next = start+j, start+j+len(close)
		}
		body := strings.TrimSpace(s[start:end])
		if body != "" {
			start += strings.Index(s[start:end], body)
		} else {
			start = end
		}
		out = append(out, span{start, start + len(body)})
		off = next
	}
}
