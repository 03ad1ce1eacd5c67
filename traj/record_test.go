package traj

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

var pos = Pos{File: "in.jsonl", Line: 7}

func mustDecode(t *testing.T, line string, s Schema) *Record {
	t.Helper()
	r, err := Decode([]byte(line), pos, s)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return r
}

func TestDecodeShareGPT(t *testing.T) {
	line := `{"id": 1, "conversations": [{"from": "system", "value": "sys"}, {"from": "human", "value": "hi \u00e9\n"}, {"from": "gpt", "value": null}, {"from": "tool", "value": "<tool_response>x</tool_response>"}, {"from": "observation", "value": "o"}, {"from": "function_call", "value": "f"}, {"from": "weird", "value": "w"}], "z": [1, 2]}`
	r := mustDecode(t, line, Schema{})
	if r.Dialect != DialectShareGPT {
		t.Fatalf("dialect %q", r.Dialect)
	}
	var roles []Role
	var texts []string
	for _, tu := range r.Turns {
		roles = append(roles, tu.Role)
		texts = append(texts, tu.Text)
	}
	wantRoles := []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleTool, RoleAssistant, Role("weird")}
	if !reflect.DeepEqual(roles, wantRoles) {
		t.Errorf("roles %v, want %v", roles, wantRoles)
	}
	wantTexts := []string{"sys", "hi é\n", "", "<tool_response>x</tool_response>", "o", "f", "w"}
	if !reflect.DeepEqual(texts, wantTexts) {
		t.Errorf("texts %q, want %q", texts, wantTexts)
	}
	if got := string(r.AppendJSON(nil, r.Turns)); got != line {
		t.Errorf("unchanged record not byte-identical:\n got %s\nwant %s", got, line)
	}
}

func TestDecodeOpenAI(t *testing.T) {
	line := `{"messages":[{"role":"system","content":"S"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"x"}}]},` +
		`{"role":"assistant","content":null,"reasoning_content":"think","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"p\":1}"}},{"id":"c2","type":"function","function":{"name":"cat","arguments":{"f":"a"}}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"r1"},{"role":"tool","tool_call_id":"c2","content":[{"type":"text","value":"r2"}]}],"tools":[]}`
	r := mustDecode(t, line, Schema{})
	if r.Dialect != DialectOpenAI {
		t.Fatalf("dialect %q", r.Dialect)
	}
	a := r.Turns[2]
	if !reflect.DeepEqual(a.CallIDs, []string{"c1", "c2"}) {
		t.Errorf("CallIDs %v", a.CallIDs)
	}
	if a.Text != "think\nls\n{\"p\":1}\ncat\n{\"f\":\"a\"}" {
		t.Errorf("assistant text %q", a.Text)
	}
	if r.Turns[1].Text != "look" || r.Turns[1].Extra != 0 {
		t.Errorf("parts: text %q extra %d", r.Turns[1].Text, r.Turns[1].Extra)
	}
	if r.Turns[3].AnswersID != "c1" || r.Turns[4].Text != "r2" {
		t.Errorf("tool turns: %+v %+v", r.Turns[3], r.Turns[4])
	}
	if got := string(r.AppendJSON(nil, r.Turns)); got != line {
		t.Errorf("unchanged record not byte-identical")
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, line, reason string
	}{
		{"invalid_json", `{"conversations": [`, "invalid_json"},
		{"not_object", `[1,2]`, "not_an_object"},
		{"string", `"x"`, "not_an_object"},
		{"no_turns", `{"id": 1}`, "unknown_shape"},
		{"turns_not_list", `{"conversations": "x"}`, "unknown_shape"},
		{"turn_not_object", `{"conversations": [1]}`, "unknown_shape"},
		{"value_not_string", `{"conversations": [{"from": "human", "value": 3}]}`, "bad_turn"},
		{"first_turn_no_role", `{"conversations": [{"value": "hi"}, {"from": "gpt", "value": "x"}]}`, "no_role"},
		{"later_turn_no_role", `{"conversations": [{"from": "human", "value": "a"}, {"value": "b"}]}`, "no_role"},
		{"openai_no_role", `{"messages": [{"content": "hi"}]}`, "no_role"},
		{"both_keys_no_role", `{"messages": [{"content": "hi"}], "conversations": [{"value": "x"}]}`, "unknown_shape"},
		{"from_not_string", `{"conversations": [{"from": "human", "value": "a"}, {"from": 1, "value": "b"}]}`, "bad_turn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.line), pos, Schema{})
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DecodeError", err)
			}
			if de.Reason != c.reason {
				t.Errorf("reason %q, want %q (%v)", de.Reason, c.reason, err)
			}
			if !strings.HasPrefix(err.Error(), "in.jsonl:7: ") {
				t.Errorf("error %q does not name file:line", err)
			}
		})
	}
	// With the dialect forced, shape errors get specific reasons.
	_, err := Decode([]byte(`{"conversations": "x"}`), pos, Schema{Dialect: DialectShareGPT})
	if de := (*DecodeError)(nil); !errors.As(err, &de) || de.Reason != "turns_not_a_list" {
		t.Errorf("forced sharegpt: %v", err)
	}
	_, err = Decode([]byte(`{"messages": []}`), pos, Schema{Dialect: DialectShareGPT})
	if de := (*DecodeError)(nil); !errors.As(err, &de) || de.Reason != "no_turns" {
		t.Errorf("forced sharegpt on messages: %v", err)
	}
}

func TestCustomSchema(t *testing.T) {
	line := `{"dialog": [{"speaker": "human", "text": "a"}, {"speaker": "gpt", "text": "b"}]}`
	r := mustDecode(t, line, Schema{Dialect: DialectShareGPT, TurnsKey: "dialog", RoleKey: "speaker", ContentKey: "text"})
	if len(r.Turns) != 2 || r.Turns[1].Role != RoleAssistant || r.Turns[1].Text != "b" {
		t.Fatalf("turns %+v", r.Turns)
	}
	s := r.NewTurn(RoleUser, "sum")
	if string(s.Raw) != `{"speaker": "human", "text": "sum"}` {
		t.Errorf("new turn %s", s.Raw)
	}
}

func TestSpliceKeepsEverythingElse(t *testing.T) {
	line := `{"a":"x","conversations":[{"from":"system","value":"S","w":1},{"from":"human","value":"q"},{"from":"gpt","value":"g"},{"from":"tool","value":"t"},{"from":"gpt","value":"end"}],"compression_metrics":{"old":1},"b":2}`
	r := mustDecode(t, line, Schema{})
	sys := r.AppendText(r.Turns[0], " NOTE")
	sum := r.NewTurn(RoleUser, "[CONTEXT SUMMARY]: did \"x\"")
	out := []Turn{sys, r.Turns[1], sum, r.Turns[4]}
	got := string(r.AppendJSON(nil, out, Field{Key: "compression_metrics", Value: []byte(`{"n":2}`)}, Field{Key: "extra", Value: []byte(`true`)}))
	want := `{"a":"x","conversations":[{"from":"system","value":"S NOTE","w":1},{"from":"human","value":"q"},{"from":"human","value":"[CONTEXT SUMMARY]: did \"x\""},{"from":"gpt","value":"end"}],"compression_metrics":{"n":2},"b":2,"extra":true}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if sys.Text != "S NOTE" || !sys.Made() || r.Turns[0].Made() {
		t.Errorf("AppendText result %+v", sys)
	}
	// The output is allocated once, at its length, so a record holding a
	// big value (an inline image) is copied once, never regrown: what a
	// call allocates is the output and a little more, whether the turns
	// change or not.
	big := mustDecode(t, strings.Replace(line, `"end"`, `"`+strings.Repeat("e", 1<<20)+`"`, 1), Schema{})
	bigOut := []Turn{big.AppendText(big.Turns[0], " NOTE"), big.Turns[1], sum, big.Turns[4]}
	// (A field larger than the slack of a large allocation's rounding.)
	metricsValue := []byte(`{"n":"` + strings.Repeat("m", 16<<10) + `"}`)
	for _, turns := range [][]Turn{bigOut, big.Turns} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const calls = 20
		var n int
		for range calls {
			n = len(big.AppendJSON(nil, turns, Field{Key: "compression_metrics", Value: metricsValue}))
		}
		runtime.ReadMemStats(&after)
		if per := float64(after.TotalAlloc-before.TotalAlloc) / calls; per > 1.1*float64(n) && !raceEnabled {
			t.Errorf("%.0f bytes allocated per call for an output of %d", per, n)
		}
	}
}

func TestAppendTextKinds(t *testing.T) {
	// The last: LLaMA-Factory's content blocks hold their text under
	// "value", and so does the part added to them.
	line := `{"messages": [{"role": "system", "content": null}, {"role": "system", "content": [{"type": "text", "text": "A"}]}, {"role": "system"}, {"role": "system", "content": []}, {"role": "system", "content": [{"type": "text", "value": "A"}]}]}`
	r := mustDecode(t, line, Schema{})
	want := []string{
		`{"role": "system", "content": "N"}`,
		`{"role": "system", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "N"}]}`,
		`{"role": "system", "content": "N"}`,
		`{"role": "system", "content": [{"type": "text", "text": "N"}]}`,
		`{"role": "system", "content": [{"type": "text", "value": "A"}, {"type": "text", "value": "N"}]}`,
	}
	for i, w := range want {
		got := r.AppendText(r.Turns[i], "N")
		if string(got.Raw) != w {
			t.Errorf("turn %d: got %s want %s", i, got.Raw, w)
		}
		if !json.Valid(got.Raw) {
			t.Errorf("turn %d: invalid JSON", i)
		}
	}
}

// FuzzRoundTrip: any record that decodes is re-emitted byte-identically
// when unchanged, and stays valid JSON with the same turn count plus one
// after a summary is spliced in.
func FuzzRoundTrip(f *testing.F) {
	f.Add(`{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]}], "k": {"n": [1, {"m": "\u00e9"}]}}`)
	f.Add(` { "conversations" : [ ] } `)
	f.Fuzz(func(t *testing.T, line string) {
		r, err := Decode([]byte(line), pos, Schema{})
		var de *DecodeError
		invalid := errors.As(err, &de) && de.Reason == "invalid_json"
		if invalid == json.Valid([]byte(line)) {
			t.Fatalf("Decode(%q): %v, but encoding/json.Valid says %v", line, err, !invalid)
		}
		if err != nil {
			return
		}
		if got := string(r.AppendJSON(nil, r.Turns)); got != line {
			t.Fatalf("not identical:\n got %q\nwant %q", got, line)
		}
		turns := append([]Turn{r.NewTurn(RoleUser, "s\"\n")}, r.Turns...)
		if len(r.Turns) > 0 {
			turns[1] = r.AppendText(turns[1], " note")
		}
		out := r.AppendJSON(nil, turns, Field{Key: "m", Value: []byte(`{"x":1}`)})
		if !json.Valid(out) {
			t.Fatalf("invalid JSON after splice: %q", out)
		}
		r2, err := Decode(out, pos, Schema{Dialect: r.Dialect, TurnsKey: "", RoleKey: "", ContentKey: ""})
		if err != nil {
			t.Fatalf("re-decode: %v\n%q", err, out)
		}
		if len(r2.Turns) != len(turns) {
			t.Fatalf("turns %d, want %d", len(r2.Turns), len(turns))
		}
	})
}

func TestPrependTextKinds(t *testing.T) {
	line := `{"messages": [{"role": "user", "content": "Q"}, {"role": "tool", "content": [{"type": "text", "text": "A"}], "tool_call_id": "c"}, {"role": "user", "content": []}]}`
	r := mustDecode(t, line, Schema{})
	want := []struct{ raw, text string }{
		{`{"role": "user", "content": "S Q"}`, "S Q"},
		{`{"role": "tool", "content": [{"type": "text", "text": "S "}, {"type": "text", "text": "A"}], "tool_call_id": "c"}`, "S \nA"},
		{`{"role": "user", "content": [{"type": "text", "text": "S "}]}`, "S "},
	}
	for i, w := range want {
		got := r.PrependText(r.Turns[i], "S ")
		if string(got.Raw) != w.raw || got.Text != w.text {
			t.Errorf("turn %d: got %s (%q), want %s (%q)", i, got.Raw, got.Text, w.raw, w.text)
		}
		if got.AnswersID != r.Turns[i].AnswersID {
			t.Errorf("turn %d: lost its tool_call_id", i)
		}
	}
}

func TestDuplicateKeysLastWins(t *testing.T) {
	line := `{"conversations": "ignored", "conversations": [{"from": "human", "value": "first", "value": "second"}]}`
	r := mustDecode(t, line, Schema{})
	if len(r.Turns) != 1 || r.Turns[0].Text != "second" {
		t.Fatalf("turns %+v: want the last value of each repeated key", r.Turns)
	}
	var v struct {
		C []struct{ Value string } `json:"conversations"`
	}
	json.Unmarshal([]byte(line), &v)
	if v.C[0].Value != r.Turns[0].Text {
		t.Fatalf("encoding/json reads %q, we read %q", v.C[0].Value, r.Turns[0].Text)
	}
}

// TestEditTextKeepsEscapes: appending or prepending to a string content
// keeps the existing text's bytes (escapes and all) and decodes to the
// joined text.
func TestEditTextKeepsEscapes(t *testing.T) {
	line := `{"conversations": [{"from": "system", "value": "caf\u00e9 \/ \"q\"\nend"}]}`
	r := mustDecode(t, line, Schema{})
	for _, front := range []bool{false, true} {
		got := r.editText(r.Turns[0], " + \"n\"\n", front)
		old := `caf\u00e9 \/ \"q\"\nend`
		want := `{"from": "system", "value": "` + old + ` + \"n\"\n"}`
		text := "café / \"q\"\nend + \"n\"\n"
		if front {
			want = `{"from": "system", "value": " + \"n\"\n` + old + `"}`
			text = " + \"n\"\ncafé / \"q\"\nend"
		}
		if string(got.Raw) != want || got.Text != text {
			t.Errorf("front=%v: got %s (%q), want %s (%q)", front, got.Raw, got.Text, want, text)
		}
		var v struct{ Value string }
		if err := json.Unmarshal(got.Raw, &v); err != nil || v.Value != text {
			t.Errorf("front=%v: decodes to %q (%v), want %q", front, v.Value, err, text)
		}
	}
}

// TestTwoTurnLists: a record with both "conversations" and "messages" is
// read by one when they hold the same turns (OtherTurnsKey names the
// other), and rejected, naming both keys, when they differ.
func TestTwoTurnLists(t *testing.T) {
	conv := `"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}, {"from": "ipython", "value": "42"}]`
	same := `"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "ipython", "content": "42"}]`
	r, err := Decode([]byte(`{`+conv+`, `+same+`}`), Pos{File: "f", Line: 1}, Schema{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dialect != DialectShareGPT || r.OtherTurnsKey != "messages" || len(r.Turns) != 3 || r.Turns[2].Role != RoleTool {
		t.Fatalf("dialect %s other %q turns %+v", r.Dialect, r.OtherTurnsKey, r.Turns)
	}
	r, err = Decode([]byte(`{`+same+`}`), Pos{File: "f", Line: 1}, Schema{})
	if err != nil || r.OtherTurnsKey != "" {
		t.Fatalf("one list: %v, other %q", err, r.OtherTurnsKey)
	}
	for name, other := range map[string]string{
		"text":   `"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "no"}, {"role": "tool", "content": "42"}]`,
		"role":   `"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "yo"}, {"role": "tool", "content": "42"}]`,
		"length": `"messages": [{"role": "user", "content": "hi"}]`,
		"empty":  `"messages": []`,
		"broken": `"messages": [{"content": "hi"}]`,
	} {
		_, err := Decode([]byte(`{`+conv+`, `+other+`}`), Pos{File: "f", Line: 2}, Schema{})
		var de *DecodeError
		if !errors.As(err, &de) || de.Reason != "two_turn_lists" || !strings.Contains(de.Detail, `"conversations" and "messages"`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A forced dialect reads its own list and looks at no other.
	if r, err := Decode([]byte(`{`+conv+`, "messages": []}`), Pos{}, Schema{Dialect: DialectShareGPT}); err != nil || r.OtherTurnsKey != "" {
		t.Fatalf("forced: %v", err)
	}
}

// Only real image parts are images: a part whose type merely contains
// "image" is read for its text.
func TestImagePartTypes(t *testing.T) {
	line := `{"messages":[{"role":"user","content":[` +
		`{"type":"image_caption","text":"a red button"},` +
		`{"type":"image_url","image_url":{"url":"x.png"},"text":"not read"},` +
		`{"type":"input_image","image_url":"y.png","text":"not read"},` +
		`{"type":"computer_screenshot","image_url":"z.png","text":"not read"},` +
		`{"type":"image","image":"w.png","text":"not read"},` +
		`{"type":"image_description","value":"a form"},` +
		`{"type":"text","text":"click it"}]},{"role":"assistant","content":"ok"}]}`
	r := mustDecode(t, line, Schema{})
	if got, want := r.Turns[0].Text, "a red button\na form\nclick it"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
