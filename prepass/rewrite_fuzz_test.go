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
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/traj"
)

// Issue 22, item 1: a prepass step never makes valid JSON invalid. For
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
			"<tool_response>\n{\"name\": \"search\", \"content\": " + obj + "}\n</tool_response>")
		out = append(out, []byte(`{"conversations":[{"from":"human","value":"u"},{"from":"gpt","value":`+string(call)+`},`+
			`{"from":"tool","value":`+string(resp)+`},{"from":"function_call","value":`+string(quoted)+`},{"from":"human","value":"end"}]}`))
	}
	return out
}

func FuzzDigests(f *testing.F) {
	seedRecords(f)
	f.Fuzz(func(t *testing.T, line []byte, lo, hi, keep uint8) {
		checkStep(t, line, int(lo), int(hi), Config{Counter: counter(t), DigestOver: 3, ArgsOver: 1 << 30, ErrorLine: testErrorLine})
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
					Replaced: func(p jsontest.Path, _, b []byte) error {
						if p.Is("content") {
							return isReplacement(b)
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
