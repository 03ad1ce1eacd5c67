package jobcore

import (
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/traj"
)

// LLaMA-Factory's repairs: consecutive turns of one role merged, a
// trailing turn with no answer dropped, kept only when its converter then
// accepts the row; a row it accepts, or one the repair cannot fix, is
// left alone.
func TestLlamaFactoryRepair(t *testing.T) {
	tok, err := tokenize.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	s := trainercfg.Defaults(trainercfg.LlamaFactory, "", "chatml")
	rc, err := TrainerCounter(&s, tok, "")
	if err != nil {
		t.Fatal(err)
	}
	lf := rc.(*LlamaFactoryCounter)
	for _, tc := range []struct{ in, want, done string }{
		// SWE-agent: two user messages in a row, and a trailing user turn.
		{`{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "assistant", "content": "c"}, {"role": "user", "content": "d"}]}`,
			`{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "a\n\nb"}, {"role": "assistant", "content": "c"}]}`,
			"merged 1 consecutive turns of the same role; dropped the trailing user turn (no answer to train on)"},
		// hermes-agent: two gpt turns in a row.
		{`{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}, {"from": "gpt", "value": "c"}]}`,
			`{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b\n\nc"}]}`,
			"merged 1 consecutive turns of the same role"},
		// hermes-agent: tool results under "tool", which LLaMA-Factory's
		// default tags do not accept: renamed observation.
		{`{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "<tool_call>x</tool_call>"}, {"from": "tool", "value": "r"}, {"from": "gpt", "value": "ok"}]}`,
			`{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "<tool_call>x</tool_call>"}, {"from": "observation", "value": "r"}, {"from": "gpt", "value": "ok"}]}`,
			"renamed 1 tool turns observation"},
		// Accepted as read: nothing to do.
		{`{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]}`, "", ""},
		// Two function_call turns are not merged: not repairable.
		{`{"conversations": [{"from": "human", "value": "a"}, {"from": "function_call", "value": "{\"name\": \"f\", \"arguments\": {}}"}, {"from": "function_call", "value": "{\"name\": \"g\", \"arguments\": {}}"}, {"from": "observation", "value": "r"}, {"from": "gpt", "value": "ok"}]}`, "", ""},
	} {
		rec, err := traj.Decode([]byte(tc.in), traj.Pos{}, traj.Schema{})
		if err != nil {
			t.Fatal(err)
		}
		turns, done := lf.Repair(rec)
		got := ""
		if turns != nil {
			got = string(rec.AppendJSON(nil, turns))
		}
		if got != tc.want || strings.Join(done, "; ") != tc.done {
			t.Errorf("%s:\n got %s %q\nwant %s %q", tc.in, got, done, tc.want, tc.done)
		}
	}
}
