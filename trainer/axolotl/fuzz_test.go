package axolotl

import (
	"encoding/json"
	"testing"
)

// FuzzMessages: any valid JSON list of messages is mapped without a panic
// into a valid JSON list holding one message per Message returned (plus a
// dropped first system message), under a custom mapping with
// drop_system_message and the training fields.
func FuzzMessages(f *testing.F) {
	for _, s := range []string{`[]`, `[{"role":"system","content":"s"}]`, `[{"role":"system","content":"s"},{"role":"gpt","content":"a","train":1}]`,
		`[{"role":"bot","content":"x","detail":[{"begin_offset":0,"end_offset":0,"train":true}]},{"content":"no role"}]`, `[1, "a"]`,
		`[{"role":"system","content":[{"text":"s"}]},{"role":"gpt","content":[{"text":"a","train":false},{"value":" b","weight":0.5},3]}]`} {
		f.Add(s)
	}
	r := NewRules(map[string][]string{"assistant": {"gpt", "bot"}}, []string{"assistant"}, false, "train", "detail", "turn", "turn", true)
	f.Fuzz(func(t *testing.T, s string) {
		var v []any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		out, ms, err := r.Messages([]byte(s))
		if err != nil {
			return
		}
		var got []json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s → invalid JSON %s: %v", s, out, err)
		}
		if len(got) != len(ms) {
			t.Fatalf("%s → %d messages, %d read", s, len(got), len(ms))
		}
	})
}
