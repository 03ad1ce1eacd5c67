package prepass

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/traj"
)

// fuzzRecord builds a record of either dialect from the fuzzer's pieces:
// rounds of an assistant turn with two tool calls (arguments: JSON around
// a piece, or the raw piece) and the tool results (pieces, repeated so that
// duplicates and long outputs occur).
func fuzzRecord(t *testing.T, data string, openAI bool) *traj.Record {
	pieces := strings.Split(data, "|")
	turns := []m{}
	user := func(s string) {
		if openAI {
			turns = append(turns, m{"role": "user", "content": s})
		} else {
			turns = append(turns, m{"from": "human", "value": s})
		}
	}
	user("start")
	for i := 0; i+1 < len(pieces); i += 2 {
		a, b := pieces[i], pieces[i+1]
		names := []string{"terminal", "read_file", "search", "web_extract", "memory"}
		n1, n2 := names[i%len(names)], names[(i+1)%len(names)]
		args1, _ := json.Marshal(m{"command": a, "path": "/p/" + b, "content": strings.Repeat(a, 1+len(b)%7)})
		args2 := b // raw: JSON or not
		out1 := strings.Repeat(a+"\n", 1+len(a)%9)
		out2 := b
		if openAI {
			id1, id2 := "c"+string(rune('a'+i%26)), "d"+string(rune('a'+i%26))
			turns = append(turns,
				m{"role": "assistant", "content": nil, "tool_calls": []m{oaCall(id1, n1, string(args1)), oaCall(id2, n2, args2)}},
				m{"role": "tool", "tool_call_id": id1, "content": out1},
				m{"role": "tool", "tool_call_id": id2, "content": out2})
		} else {
			call2 := "<tool_call>\n" + args2 + "\n</tool_call>"
			if json.Valid([]byte(args2)) {
				call2 = hermesCall(n2, json.RawMessage(args2))
			}
			turns = append(turns,
				m{"from": "gpt", "value": hermesCall(n1, json.RawMessage(args1)) + call2},
				m{"from": "tool", "value": hermesResp("", n1, out1) + hermesResp("", n2, out2)})
		}
	}
	user("end")
	key := "conversations"
	if openAI {
		key = "messages"
	}
	return decode(t, m{key: turns})
}

func FuzzApply(f *testing.F) {
	f.Add("ls -la|{\"q\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}|ls -la|{\"q\": \"x\"}", uint8(1), uint8(9), true)
	f.Add("error: boom\nexit code 2|plain text args that are long enough to matter|a|b", uint8(0), uint8(255), false)
	f.Add("</tool_call>|<tool_response>x</tool_response>|é\u2028\"\\|{\"a\":[1,2,{\"b\":\"cccccccccccccccccccccccccccccccccccccc\"}]}", uint8(2), uint8(6), false)
	f.Fuzz(func(t *testing.T, data string, lo, hi uint8, openAI bool) {
		rec := fuzzRecord(t, data, openAI)
		cfg := Config{Counter: counter(t), DigestOver: 3, ArgsOver: 3, LeafKeep: 6}
		out, rep := Apply(rec, rec.Turns, int(lo), int(hi), never, cfg)
		if len(out) != len(rec.Turns) {
			t.Fatalf("%d turns out of %d", len(out), len(rec.Turns))
		}
		for i, nt := range out {
			ot := rec.Turns[i]
			if (i < int(lo) || i >= int(hi)) && string(nt.Raw) != string(ot.Raw) {
				t.Fatalf("turn %d outside [%d, %d) changed", i, lo, hi)
			}
			if nt.Role != ot.Role || nt.Name != ot.Name || nt.AnswersID != ot.AnswersID || !slices.Equal(nt.CallIDs, ot.CallIDs) {
				t.Fatalf("turn %d: role or pairing changed", i)
			}
			if !openAI && (strings.Count(nt.Text, callOpen) != strings.Count(ot.Text, callOpen) ||
				strings.Count(nt.Text, respOpen) != strings.Count(ot.Text, respOpen) ||
				strings.Count(nt.Text, respClose) != strings.Count(ot.Text, respClose) ||
				strings.Count(nt.Text, callClose) != strings.Count(ot.Text, callClose)) {
				t.Fatalf("turn %d: block tags changed:\n%q\n%q", i, ot.Text, nt.Text)
			}
		}
		line := rec.AppendJSON(nil, out)
		if !json.Valid(line) {
			t.Fatalf("invalid JSON out")
		}
		back, err := traj.Decode(line, rec.Pos, traj.Schema{})
		if err != nil || len(back.Turns) != len(out) {
			t.Fatalf("output does not decode as the same turns: %v", err)
		}
		for i := range out {
			if back.Turns[i].Text != out[i].Text {
				t.Fatalf("turn %d re-decodes differently", i)
			}
		}
		// Shrunk arguments are valid JSON where the input's were.
		for i := range out {
			if !openAI || len(out[i].CallIDs) == 0 {
				continue
			}
			was, now := rec.CallArguments(rec.Turns[i]), rec.CallArguments(out[i])
			for k := range now {
				a, b := argsJSON(was[k]), argsJSON(now[k])
				if json.Valid([]byte(a)) != json.Valid([]byte(b)) {
					t.Fatalf("turn %d call %d: arguments' validity changed:\n%s\n%s", i, k, a, b)
				}
			}
		}
		if rep.Total() < 0 {
			t.Fatal("negative saving")
		}
	})
}
