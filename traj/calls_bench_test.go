package traj

import (
	"strings"
	"testing"
)

// BenchmarkCallsOpenAI reads the tool calls of an OpenAI assistant turn
// with a long content, as the passes after decoding do.
func BenchmarkCallsOpenAI(b *testing.B) {
	line := `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"` + strings.Repeat("thinking about it ", 500) +
		`","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]}]}`
	r, err := Decode([]byte(line), pos, Schema{})
	if err != nil {
		b.Fatal(err)
	}
	t := r.Turns[1]
	b.ReportAllocs()
	for b.Loop() {
		if len(t.Calls()) != 1 {
			b.Fatal("no call")
		}
	}
}
