package jsontest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

func TestTrickyAreJSON(t *testing.T) {
	for _, s := range Tricky() {
		if !jsonx.Valid([]byte(s)) {
			t.Errorf("not JSON: %q", s)
		}
	}
	var v struct{ Result string }
	if json.Unmarshal([]byte(Tricky()[2]), &v) != nil || !HoldsJSON(v.Result) {
		t.Error("depth 3 does not nest")
	}
}

func TestCompare(t *testing.T) {
	d3 := Tricky()[2]
	_, broken := nest(strings.Replace(Tricky()[0], `\\\"x`, `\\"x`, 1))
	for _, c := range []struct {
		name, before, after string
		o                   Options
		bad                 string // substring of the error; "" for none
	}{
		{"same", d3, d3, Options{}, ""},
		{"white space and escapes", `{"a": ["\u0041", 1]}`, `{"a":["A",1]}`, Options{}, ""},
		{"nested re-encoded", `{"a":"{\"b\": [1, 2]}"}`, `{"a":"{\"b\":[1,2]}"}`, Options{}, ""},
		{"invalid", `{"a":1}`, `{"a":1`, Options{}, "not valid JSON"},
		{"key", `{"a":1}`, `{"b":1}`, Options{}, "key"},
		{"number", `{"a":1}`, `{"a":1.0}`, Options{}, "at a: 1 became 1.0"},
		{"length", `[1,2]`, `[1]`, Options{}, "array of 2"},
		{"nested broken", `{"a":"{\"b\":\"x\"}"}`, `{"a":"{\"b\":\"x…"}`, SameOptions, "at a: a string that held JSON"},
		{"nested type", `{"a":"{\"b\":\"x\"}"}`, `{"a":"{\"b\":[]}"}`, SameOptions, "at a.#.b: a string became a array"},
		{"leaf refused", `{"a":"x"}`, `{"a":"y"}`, Options{}, "at a: a string changed"},
		{"leaf allowed", `{"a":"x"}`, `{"a":"y"}`, SameOptions, ""},
		{"replaced", `{"a":{"b":1}}`, `{"a":"digest"}`, Options{Replaced: func(p Path, _, _ []byte) error {
			if p.Is("a") {
				return nil
			}
			return errNo
		}}, ""},
		{"depth 3 leaf", d3, strings.Replace(d3, `hi`, `ho`, 1), SameOptions, ""},
		{"depth 3 quote lost", d3, broken, SameOptions, "held JSON"},
		{"utf-8", `["a"]`, "[\"\xff\"]", SameOptions, "not valid UTF-8"},
	} {
		err := Compare([]byte(c.before), []byte(c.after), c.o)
		if (err == nil) != (c.bad == "") || err != nil && !strings.Contains(err.Error(), c.bad) {
			t.Errorf("%s: %v, want %q", c.name, err, c.bad)
		}
	}
}

var SameOptions = Options{Leaf: func(Path, string, string) error { return nil }}

var errNo = errorString("no")

type errorString string

func (e errorString) Error() string { return string(e) }
