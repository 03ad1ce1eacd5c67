package jsonl

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type rec struct {
	text        string
	line, index int64
}

func readArray(t *testing.T, r Records) ([]rec, error) {
	t.Helper()
	var out []rec
	for {
		b, n, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec{string(b), n, r.Record()})
	}
}

// llamaFactory is a dataset as LLaMA-Factory ships them:
// json.dump(data, f, indent=2, ensure_ascii=False).
const llamaFactory = `[
  {
    "conversations": [
      {
        "from": "human",
        "value": "Hi, [what] is {2+2}? \"quoted\" \\"
      },
      {
        "from": "gpt",
        "value": "4 — é"
      }
    ],
    "system": "be brief",
    "n": -1.5e3,
    "ok": true,
    "none": null
  },
  {
    "conversations": []
  }
]
`

func TestArrayReader(t *testing.T) {
	first := `{"conversations":[{"from":"human","value":"Hi, [what] is {2+2}? \"quoted\" \\"},{"from":"gpt","value":"4 — é"}],"system":"be brief","n":-1.5e3,"ok":true,"none":null}`
	cases := []struct {
		name, in string
		want     []rec
	}{
		{"llamafactory indent=2", llamaFactory, []rec{{first, 2, 1}, {`{"conversations":[]}`, 18, 2}}},
		{"one line", `[{"a":1},{"b":[1,2]} , {"c":"x y"}]`, []rec{{`{"a":1}`, 1, 1}, {`{"b":[1,2]}`, 1, 2}, {`{"c":"x y"}`, 1, 3}}},
		{"crlf", "[\r\n  {\"a\": 1},\r\n  {\"b\": 2}\r\n]\r\n", []rec{{`{"a":1}`, 2, 1}, {`{"b":2}`, 3, 2}}},
		{"cr only", "[\r{\"a\": 1},\r\r{\"b\": 2}\r]", []rec{{`{"a":1}`, 2, 1}, {`{"b":2}`, 4, 2}}},
		{"bom", "\xef\xbb\xbf[{\"a\":1}]", []rec{{`{"a":1}`, 1, 1}}},
		{"empty", "  [ \n ]  \n", nil},
		{"scalars", `[1, "s", null, [true, false], -0.5e-3]`, []rec{{"1", 1, 1}, {`"s"`, 1, 2}, {"null", 1, 3}, {"[true,false]", 1, 4}, {"-0.5e-3", 1, 5}}},
		{"invalid element kept invalid", `[{"a": tr ue, "b": 1 2}, {"c": 3}]`, []rec{{`{"a":tr ue,"b":1 2}`, 1, 1}, {`{"c":3}`, 1, 2}}},
		{"invalid utf-8 kept", "[{\"a\":\"\xe9\"}]", []rec{{"{\"a\":\"\xe9\"}", 1, 1}}},
		{"escapes", `[{"a":"\\\"]\\"}, {"b":"\\\\"}]`, []rec{{`{"a":"\\\"]\\"}`, 1, 1}, {`{"b":"\\\\"}`, 1, 2}}},
	}
	for _, c := range cases {
		for kind, src := range sources(c.in) {
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				r, err := NewJSON(src(), "d.json")
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := r.(*ArrayReader); !ok {
					t.Fatalf("read as %T", r)
				}
				got, err := readArray(t, r)
				if err != nil {
					t.Fatal(err)
				}
				same(t, got, c.want)
			})
		}
	}
}

// TestArrayReaderErrors: a malformed array is an error naming the file,
// the line and the record; the records before it were returned.
func TestArrayReaderErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
		before         int
	}{
		{"missing comma", "[\n{\"a\":1}\n{\"b\":2}]", `d.json:3: after record 1: want , or ] between records, got '{'`, 1},
		{"trailing comma", "[{\"a\":1},\n]", `d.json:2: after record 1: a comma before ]`, 1},
		{"data after", "[{\"a\":1}]\n[{\"b\":2}]", `d.json:2: data after the array's closing ]`, 1},
		{"truncated", "[\n{\"a\":1},\n{\"b\": [1, 2", `d.json:3: the file ends inside the array, after record 1: truncated?`, 1},
		{"truncated in string", "[{\"a\":\"xx", `d.json:1: the file ends inside the array, after record 0`, 0},
		{"unclosed", "[{\"a\":1}", `d.json:1: the file ends inside the array, after record 1`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewJSON(strings.NewReader(c.in), "d.json")
			if err != nil {
				t.Fatal(err)
			}
			got, err := readArray(t, r)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || len(got) != c.before {
				t.Fatalf("%d records, then %v; want %d, then %q", len(got), err, c.before, c.want)
			}
			if _, _, err2 := r.Next(); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("error not sticky: %v", err2)
			}
		})
	}
}

// TestNewJSONLinesUnderJSONName: a .json file whose first byte is '{' is
// JSON Lines.
func TestNewJSONLinesUnderJSONName(t *testing.T) {
	r, err := NewJSON(strings.NewReader("\n{\"a\":1}\n{\"b\":2}\n"), "d.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readArray(t, r)
	if _, ok := r.(*Reader); !ok || err != nil || len(got) != 2 || got[1] != (rec{`{"b":2}`, 3, 2}) {
		t.Fatalf("%T: %v, %v", r, got, err)
	}
}

// TestPrettyObjects: a .json file whose first line is a lone '{' holds
// JSON values spread over lines (json.dump(obj, indent=2)): each is one
// record, compacted, at the line where it starts; a file cut short is an
// error naming the record.
func TestPrettyObjects(t *testing.T) {
	in := "{\n  \"conversations\": [\n    {\"from\": \"human\", \"value\": \"{x\"}\n  ]\n}\n\n{\n  \"b\": 2\n}\n"
	r, err := NewJSON(strings.NewReader(in), "d.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readArray(t, r)
	want := []rec{{`{"conversations":[{"from":"human","value":"{x"}]}`, 1, 1}, {`{"b":2}`, 7, 2}}
	if _, ok := r.(*ArrayReader); !ok || err != nil {
		t.Fatalf("%T: %v, %v", r, got, err)
	}
	same(t, got, want)
	for _, c := range []struct{ in, kind string }{
		{in, KindValues}, {"  {  \r\n\"a\":1}", KindValues}, {"{\"a\":1}\n", KindLines}, {"{", KindLines},
		{"{\"a\":\n1}", KindLines}, {" \n\t", KindEmpty}, {"", KindEmpty}, {"\n[1]", KindArray},
	} {
		if k, err := KindOf(strings.NewReader(c.in)); k != c.kind || err != nil {
			t.Errorf("KindOf(%q) = %s, %v; want %s", c.in, k, err, c.kind)
		}
	}
	r, _ = NewJSON(strings.NewReader("{\n\"a\": [1,\n"), "d.json")
	if _, err := readArray(t, r); err == nil || !strings.HasPrefix(err.Error(), "d.json:3: the file ends inside record 1: truncated?") {
		t.Errorf("truncated: %v", err)
	}
}

// TestMismatchedBracketEndsElement: an element whose closing bracket does
// not match ([1,2}) ends there, and is returned to be rejected; the next
// element is read on its own, so records are counted one for one.
func TestMismatchedBracketEndsElement(t *testing.T) {
	in := `[{"id":"a","c":[1,2},{"id":"b","c":[]},{"id":"c","c":[3]}]`
	r, err := NewJSON(strings.NewReader(in), "d.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readArray(t, r)
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, []rec{{`{"id":"a","c":[1,2}`, 1, 1}, {`{"id":"b","c":[]}`, 1, 2}, {`{"id":"c","c":[3]}`, 1, 3}})
}

// TestArrayReaderMemory: the reader holds one record, not the array.
func TestArrayReaderMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200 MB")
	}
	rec := `{"conversations":[{"from":"human","value":"` + strings.Repeat("x", 1<<20) + `"}]}`
	n := 200
	src := io.MultiReader(strings.NewReader("["), &repeated{s: rec + ",\n", n: n - 1}, strings.NewReader(rec+"]"))
	r, err := NewJSON(src, "big.json")
	if err != nil {
		t.Fatal(err)
	}
	ar := r.(*ArrayReader)
	count := 0
	for {
		_, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		count++
		if cap(ar.buf) > 4<<20 {
			t.Fatalf("buffer grew to %d bytes at record %d", cap(ar.buf), count)
		}
	}
	if count != n {
		t.Fatalf("%d records, want %d", count, n)
	}
}

type repeated struct {
	s   string
	n   int
	cur *strings.Reader
}

func (r *repeated) Read(p []byte) (int, error) {
	for r.cur == nil || r.cur.Len() == 0 {
		if r.n == 0 {
			return 0, io.EOF
		}
		r.n--
		r.cur = strings.NewReader(r.s)
	}
	return r.cur.Read(p)
}

// arraySpec is what the reader must return for a valid JSON array: its
// elements as encoding/json finds them, compacted, and the line of each
// start (LF, CR, CRLF each ending a line).
func arraySpec(t *testing.T, in []byte) ([]rec, bool) {
	body := bytes.TrimPrefix(in, bom)
	var elems []json.RawMessage
	if !json.Valid(body) || json.Unmarshal(body, &elems) != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token() // [
	var out []rec
	for i := range elems {
		off := int(dec.InputOffset())
		for off < len(body) && (body[off] == ' ' || body[off] == '\t' || body[off] == '\n' || body[off] == '\r' || body[off] == ',') {
			off++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		json.Compact(&c, raw)
		pre := strings.ReplaceAll(string(body[:off]), "\r\n", "\n")
		line := int64(strings.Count(pre, "\n") + strings.Count(pre, "\r") + 1)
		out = append(out, rec{c.String(), line, int64(i + 1)})
	}
	return out, true
}

func FuzzArrayReader(f *testing.F) {
	f.Add([]byte(llamaFactory))
	f.Add([]byte("\xef\xbb\xbf[\r\n{\"a\": [1, {\"b\": \"]\\\"\"}]},\r\"x\" , 1e5 ]"))
	f.Add([]byte(`[{"a": tr ue}, 1 2]`))
	f.Add([]byte("{\n  \"a\": [1, {\"b\": \"}\"}],\r\n  \"c\": null\n}\n"))
	f.Add([]byte(`[{"a":[1,2},{"b":3}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := NewJSON(bytes.NewReader(in), "f.json")
		if err != nil {
			return // UTF-16 or gzip header: not this test's
		}
		got, rerr := readArray(t, r)
		if k, _ := KindOf(bytes.NewReader(in)); k == KindValues && json.Valid(bytes.TrimPrefix(in, bom)) {
			// One pretty-printed value: one record, compacted.
			var c bytes.Buffer
			json.Compact(&c, bytes.TrimPrefix(in, bom))
			if rerr != nil || len(got) != 1 || got[0].text != c.String() {
				t.Fatalf("%q: one value, got %v, %v", in, got, rerr)
			}
			return
		}
		want, valid := arraySpec(t, in)
		if _, isArray := r.(*ArrayReader); !isArray || !valid {
			return // not a valid array: any records and an error are fine, no panic
		}
		if rerr != nil {
			t.Fatalf("%q: valid array, error %v", in, rerr)
		}
		same(t, got, want)
	})
}

func TestArrayWriter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "o.json")
	for _, c := range []struct {
		recs []string
		want string
	}{
		{nil, "[]\n"},
		{[]string{`{"a":1}`}, "[\n{\"a\":1}\n]\n"},
		{[]string{`{"a":1}`, `{"b": 2}`}, "[\n{\"a\":1},\n{\"b\": 2}\n]\n"},
	} {
		w, err := CreateArray(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.recs {
			if err := w.Write([]byte(r)); err != nil {
				t.Fatal(err)
			}
		}
		if b, err := os.ReadFile(p); err == nil && len(c.recs) > 0 && !json.Valid(b) {
			t.Fatalf("target is not valid JSON before Close: %q", b)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if string(b) != c.want || !json.Valid(b) {
			t.Errorf("%q: wrote %q, want %q", c.recs, b, c.want)
		}
		r, _ := NewJSON(bytes.NewReader(b), "o.json")
		got, err := readArray(t, r)
		if err != nil || len(got) != len(c.recs) {
			t.Errorf("read back %v, %v", got, err)
		}
	}
	w, _ := CreateArray(p)
	w.Write([]byte(`{"x":1}`))
	w.Abort()
	if b, _ := os.ReadFile(p); string(b) != "[\n{\"a\":1},\n{\"b\": 2}\n]\n" {
		t.Errorf("Abort changed the target: %q", b)
	}
}
