package jsonx

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMapStrings(t *testing.T) {
	up := func(s string) (string, bool) {
		if strings.Contains(s, "secret") {
			return strings.ReplaceAll(s, "secret", "[X]"), true
		}
		return s, false
	}
	tests := []struct{ in, want string }{
		{`{"secret": "a secret", "n": [1, "secret\n", {"k": "no"}], "t": true}`, `{"secret": "a [X]", "n": [1, "[X]\n", {"k": "no"}], "t": true}`},
		{`"secret"`, `"[X]"`},
		{` [ "x" , "secret" ] `, ` [ "x" , "[X]" ] `},
		{`{"a": "\u0073ecret é"}`, `{"a": "[X] é"}`},
		{`{"a": 1}`, `{"a": 1}`},
	}
	for _, tt := range tests {
		got, changed := MapStrings([]byte(tt.in), up)
		if string(got) != tt.want || changed != (tt.in != tt.want) || !json.Valid(got) {
			t.Errorf("MapStrings(%s) = %s, %v; want %s", tt.in, got, changed, tt.want)
		}
	}
}

// FuzzMapStrings: on any valid JSON, the output is valid and decodes to
// the input's value with f applied to every string value.
func FuzzMapStrings(f *testing.F) {
	for _, s := range []string{`{"a": "b", "c": ["d", 1, {"e": "f"}]}`, `"x"`, `[]`, `{"k\u00e9": "\ud83d\ude00"}`, `null`} {
		f.Add(s)
	}
	mark := func(s string) (string, bool) { return s + "·", true }
	var apply func(v any) any
	apply = func(v any) any {
		switch x := v.(type) {
		case string:
			s, _ := mark(x)
			return s
		case []any:
			for i := range x {
				x[i] = apply(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = apply(x[k])
			}
		}
		return v
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		var want any
		if json.Unmarshal([]byte(in), &want) != nil || !NumbersFitFloat64([]byte(in)) {
			return
		}
		out, _ := MapStrings([]byte(in), mark)
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("MapStrings(%s) = %s: %v", in, out, err)
		}
		if !reflect.DeepEqual(got, apply(want)) {
			t.Fatalf("MapStrings(%s) = %s", in, out)
		}
	})
}
