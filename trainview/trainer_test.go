package trainview

import (
	"errors"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"testing"
)

func TestParseArguments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// A string holding an object becomes the object, members in order.
		{`[{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{\"b\": 1, \"a\": [\"x\"]}"}}]}]`,
			`[{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"b": 1, "a": ["x"]}}}]}]`},
		// An object stays; a message without calls stays.
		{`[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}},{"function":{"name":"g","arguments":"[1,2]"}}]}]`,
			`[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}},{"function":{"name":"g","arguments":[1,2]}}]}]`},
		{`[]`, `[]`},
	} {
		got, err := ParseArguments([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s %v\nwant %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseArguments([]byte(`[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"not json"}}]}]`)); !errors.Is(err, ErrArguments) {
		t.Errorf("arguments not JSON: %v", err)
	}
}

func FuzzParseArguments(f *testing.F) {
	f.Add([]byte(`[{"tool_calls":[{"function":{"arguments":"{\"a\":1}"}}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !validList(b) {
			return
		}
		out, err := ParseArguments(b)
		if err == nil && !validList(out) {
			t.Fatalf("%s → invalid %s", b, out)
		}
	})
}

func validList(b []byte) bool {
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		return c == '[' && jsonx.Valid(b)
	}
	return false
}
