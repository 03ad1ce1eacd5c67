package llamafactory

import (
	"encoding/json"
	"math"
	"testing"
)

func TestPythonJSON(t *testing.T) {
	for _, c := range []struct{ in, out, indent string }{
		// json.dumps(json.loads(in), ensure_ascii=False), and with indent=4
		{`{"a": 1, "b": [1.0, 2.5, 1e16, 1e-5, 0.0001, -0.0, 100000.0], "a": 3}`, `{"a": 3, "b": [1.0, 2.5, 1e+16, 1e-05, 0.0001, -0.0, 100000.0]}`, "{\n    \"a\": 3,\n    \"b\": [\n        1.0,\n        2.5,\n        1e+16,\n        1e-05,\n        0.0001,\n        -0.0,\n        100000.0\n    ]\n}"},
		{`{"s":"é\u00e9\n\t\"\\/\u0001\u007f😀"}`, `{"s": "éé\n\t\"\\/\u0001` + "\x7f" + `😀"}`, "{\n    \"s\": \"éé\\n\\t\\\"\\\\/\\u0001\x7f😀\"\n}"},
		{`[[], {}, null, true, false, 12345678901234567890123, -0]`, `[[], {}, null, true, false, 12345678901234567890123, 0]`, "[\n    [],\n    {},\n    null,\n    true,\n    false,\n    12345678901234567890123,\n    0\n]"},
		{`1E400`, `Infinity`, `Infinity`},
	} {
		v, err := loads(c.in)
		if err != nil {
			t.Fatalf("loads(%s): %v", c.in, err)
		}
		if got := dumps(v, 0); got != c.out {
			t.Errorf("dumps(loads(%s)) = %s, want %s", c.in, got, c.out)
		}
		if got := dumps(v, 4); got != c.indent {
			t.Errorf("dumps(loads(%s), indent=4) = %q, want %q", c.in, got, c.indent)
		}
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `"\x01"`, `1 2`} {
		if _, err := loads(bad); err == nil {
			t.Errorf("loads(%q) succeeded, Python raises JSONDecodeError", bad)
		}
	}
	// str() of values, as str.format writes them in the default tool format
	for _, c := range []struct{ in, out string }{
		{`["string", "null"]`, `['string', 'null']`},
		{`{"a": "it's", "b": true, "c": null}`, `{'a': "it's", 'b': True, 'c': None}`},
		{`"x"`, `x`},
		{`2.50`, `2.5`},
	} {
		v, _ := loads(c.in)
		if got := pyFormat(v); got != c.out {
			t.Errorf("str(%s) = %s, want %s", c.in, got, c.out)
		}
	}
}

// FuzzLoadsDumps: what loads reads is valid JSON, dumps writes valid JSON,
// and reading that back writes the same bytes.
func FuzzLoadsDumps(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x"]}`, `[null, true, {"k": {}}]`, `"\ud83d\ude00"`, `-1e-7`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := loads(s)
		if (err == nil) != json.Valid([]byte(s)) {
			t.Fatalf("loads(%q) error %v, json.Valid %v", s, err, json.Valid([]byte(s)))
		}
		if err != nil {
			return
		}
		for _, indent := range []int{0, 4} {
			out := dumps(v, indent)
			if !json.Valid([]byte(out)) && !containsNonFinite(v) {
				t.Fatalf("dumps(loads(%q)) = %q is not JSON", s, out)
			}
			w, err := loads(out)
			if err != nil {
				if containsNonFinite(v) {
					continue
				}
				t.Fatalf("loads(dumps(…)) of %q: %v", out, err)
			}
			if again := dumps(w, indent); again != out {
				t.Fatalf("not stable: %q then %q", out, again)
			}
		}
	})
}

func containsNonFinite(v value) bool {
	switch v.K {
	case kFloat:
		return math.IsNaN(v.F) || math.IsInf(v.F, 0)
	case kList:
		for _, x := range v.A {
			if containsNonFinite(x) {
				return true
			}
		}
	case kDict:
		for _, m := range v.O {
			if containsNonFinite(m.Val) {
				return true
			}
		}
	}
	return false
}
