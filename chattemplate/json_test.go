package chattemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

// Expected values are Python 3.11's json.dumps output.
func TestToJSONPython(t *testing.T) {
	for _, tc := range []struct {
		in     string
		kwargs map[string]jinja.Value
		want   string
	}{
		{`{"b": 1, "a": [1.0, 2.5, 1e-7, 1e16, 123456.0, -0.0, true, null], "c": "é\"\\\n<&>\u0001\u007f😀"}`, nil,
			`{"b": 1, "a": [1.0, 2.5, 1e-07, 1e+16, 123456.0, -0.0, true, null], "c": "é\"\\\n<&>\u0001` + "\u007f" + `😀"}`},
		{`{"c": "é😀\u007f"}`, map[string]jinja.Value{"ensure_ascii": jinja.NewBool(true)}, `{"c": "\u00e9\ud83d\ude00\u007f"}`},
		{`{"b": {"x": []}, "a": [1, {}]}`, map[string]jinja.Value{"indent": jinja.NewInt(2)},
			"{\n  \"b\": {\n    \"x\": []\n  },\n  \"a\": [\n    1,\n    {}\n  ]\n}"},
		{`{"b": 1, "a": 2}`, map[string]jinja.Value{"sort_keys": jinja.NewBool(true),
			"separators": jinja.NewList([]jinja.Value{jinja.NewString(","), jinja.NewString(":")})}, `{"a":2,"b":1}`},
	} {
		v, err := FromJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := filterToJSON([]jinja.Value{v}, tc.kwargs)
		if err != nil {
			t.Fatal(err)
		}
		if got.AsString() != tc.want {
			t.Errorf("tojson(%s, %v)\n got %s\nwant %s", tc.in, tc.kwargs, got.AsString(), tc.want)
		}
	}
}

func TestRenameToJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{{ x | tojson }}`, `{{ x | __hf_tojson }}`},
		{`{{- x|tojson(indent=4) -}}`, `{{- x|__hf_tojson(indent=4) -}}`},
		{`{% set y = x | tojson %}| tojson {{ "| tojson" }}`, `{% set y = x | __hf_tojson %}| tojson {{ "| tojson" }}`},
		{`{# x | tojson #}{{ x | tojsonish }}`, `{# x | tojson #}{{ x | tojsonish }}`},
		{`{{ 'a\'| tojson' | tojson }}`, `{{ 'a\'| tojson' | __hf_tojson }}`},
		{`{%- raw %}{{ x | tojson }}{% endraw -%}{{ x | tojson }}`, `{%- raw %}{{ x | tojson }}{% endraw -%}{{ x | __hf_tojson }}`},
	} {
		if got := renameToJSON(tc.in); got != tc.want {
			t.Errorf("renameToJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FromJSON reads as Python's json.loads: escapes, surrogate pairs, a
// repeated key (first place, last value), ill-formed UTF-8 as U+FFFD (as
// encoding/json), integers and floats apart; invalid JSON is an error.
func TestFromJSON(t *testing.T) {
	in := "{\"a\": \"x\\u00e9\\ud83d\\ude00\\\"\\/\", \"b\": [1, 2.0, -3e2, true, false, null, {}, []], \"c\": \"\xff\xfe é\", \"a\": \"last\"}"
	v, err := FromJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, err := filterToJSON([]jinja.Value{v}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a": "last", "b": [1, 2.0, -300.0, true, false, null, {}, []], "c": "` + "\ufffd\ufffd é" + `"}`
	if got.AsString() != want {
		t.Errorf("got  %s\nwant %s", got.AsString(), want)
	}
	v, err = FromJSON([]byte(`["x\u00e9\ud83d\ude00\"\/"]`))
	if err != nil || v.String() == "" {
		t.Fatal(err)
	}
	if s, _ := filterToJSON([]jinja.Value{v}, nil); s.AsString() != `["xé😀\"/"]` {
		t.Errorf("escapes: %s", s.AsString())
	}
	for _, bad := range []string{`{"a": }`, `[1,]`, `"x`, ``, `[1] 2`} {
		if _, err := FromJSON([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The string decoder agrees with encoding/json on every escape, surrogate
// pairs and lone surrogates included.
func TestUnescapeMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`"a\nb\tc\r\b\f\/\\\""`, `"\u00e9\u4e2d\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`,
		`"\ud83dx\ude00"`, `"\u0000\u001f"`, `"é\n😀"`, `"\uD83D\uDE00\uABCD"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		v, err := FromJSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if v.AsString() != want {
			t.Errorf("%s: got %q, want %q", in, v.AsString(), want)
		}
	}
}

// fromValidJSON, given what json.Valid refuses, errs or returns a value:
// it never panics.
func TestFromValidJSONInvalidInput(t *testing.T) {
	for _, bad := range []string{``, `{`, `[1,`, `"x`, `{"a"`, `{"a":`, `tru`, `-`, `[1 2]`, `{"a" 1}`, `"\u12"`, `"\`} {
		_, _ = fromValidJSON([]byte(bad))
	}
}

// FromJSON's strings are copies; RenderValid's share the input but the
// render keeps nothing of it: neither changes when the input does
// afterwards (a raise_exception message included).
func TestStringsOutliveInput(t *testing.T) {
	in := []byte(`["plain", "esc\naped"]`)
	v, err := FromJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	copy(in, bytes.Repeat([]byte{'x'}, len(in)))
	if a, b := v.AsList().Items[0].AsString(), v.AsList().Items[1].AsString(); a != "plain" || b != "esc\naped" {
		t.Errorf("after the input changed: %q, %q", a, b)
	}
	tm, err := Parse("raise", `{{ raise_exception(messages[0].content) }}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []byte(`[{"role": "user", "content": "refused here"}]`)
	_, err = tm.RenderValid(msgs, nil)
	if err == nil {
		t.Fatal("no error")
	}
	want := err.Error()
	copy(msgs, bytes.Repeat([]byte{'x'}, len(msgs)))
	if err.Error() != want || !strings.Contains(want, "refused here") {
		t.Errorf("error %q, was %q", err.Error(), want)
	}
}

// tojson's byte-run copy (valid UTF-8, ensure_ascii=False) writes what
// the rune-by-rune writer does.
func TestToJSONStringRuns(t *testing.T) {
	alphabet := []string{"a", " ", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "é", "中", "😀", "\ufffd", "/", "<"}
	r := rand.New(rand.NewPCG(3, 4))
	o := dumpOpts{}
	for range 3000 {
		var sb strings.Builder
		for range r.IntN(40) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		var fast, slow strings.Builder
		o.strUTF8(&fast, s)
		o.strRunes(&slow, s)
		if fast.String() != slow.String() {
			t.Fatalf("%q: %q, rune by rune %q", s, fast.String(), slow.String())
		}
	}
}

// tojson of a string of the render's JSON whose literal there is
// json.dumps's takes that literal (rawForms); every other string, and
// every string with ensure_ascii, is written again. RenderValid (which
// takes literals) renders as Render (which does not), whatever the
// literals' escapes and whatever the template makes of the strings.
func TestToJSONRawForms(t *testing.T) {
	long := strings.Repeat("x", rawFormMin)
	contents := []string{
		`"` + long + ` plain é中"`,
		`"` + long + `\n\t\"\\ \b\f \u0000\u001f"`, // json.dumps's own escapes
		`"` + long + `\/"`,                         // \/: not json.dumps's
		`"` + long + `\u00e9"`,                     // an escape json.dumps does not write
		`"` + long + `\u001F"`,                     // upper-case hex
		`"` + long + `\u000a"`,                     // \n written long
		`"` + long + `\ud83d\ude00"`,
		`"short\n"`,
		`"  ` + long + `  "`,
	}
	src := `{% for m in messages %}{{ m.content | tojson }}|{{ m.content[:rawmin] | tojson }}|{{ m.content[1:] | tojson }}|` +
		`{{ m.content | trim | tojson }}|{{ m.content | tojson(ensure_ascii=true) }}|{{ m | tojson(indent=2) }}|` +
		`{{ [m.content] | map('tojson') | join(',') }}|{{ (m.content + '') | tojson }}` + "\n{% endfor %}{{ tools | tojson }}"
	tm, err := Parse("forms", strings.ReplaceAll(src, "rawmin", fmt.Sprint(rawFormMin)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, c := range contents {
		msgs = append(msgs, `{"role": "user", "content": `+c+`, "extra": {"k": `+c+`}}`)
	}
	in := []byte("[" + strings.Join(msgs, ",") + "]")
	tools := []byte(`[{"description": ` + contents[1] + `}, {"description": ` + contents[2] + `}]`)
	want, err := tm.Render(in, tools)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tm.RenderValid(in, tools)
	if err != nil || got != want {
		t.Fatalf("RenderValid: %v\n%s\nRender:\n%s", err, got, want)
	}

	// Which strings are taken: those json.dumps writes as they are, of
	// rawFormMin bytes and more, found only as themselves.
	data := []byte("[" + strings.Join(contents, ",") + "]")
	forms := getForms(len(data))
	defer forms.release()
	v, err := fromValidJSONShared(data, forms)
	if err != nil {
		t.Fatal(err)
	}
	items := v.AsList().Items
	for i, taken := range []bool{true, true, false, false, false, false, false, false, true} {
		s := items[i].AsString()
		lit, ok := forms.find(s)
		if ok != taken || ok && lit != contents[i] {
			t.Errorf("%s: find = %q, %v; want taken %v", contents[i], lit, ok, taken)
		}
		if _, ok := forms.find(s[:len(s)-1]); ok {
			t.Errorf("%s: a prefix of it is taken for it", contents[i])
		}
		if _, ok := forms.find(s[1:]); ok {
			t.Errorf("%s: a suffix of it is taken for it", contents[i])
		}
		if _, ok := forms.find(strings.Clone(s)); ok {
			t.Errorf("%s: a copy of it is taken for it", contents[i])
		}
	}
}
