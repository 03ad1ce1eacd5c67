// Package formattest holds what the Parquet and Arrow tests check alike:
// one table of records every tabular writer must give back
// ([RoundTripCases]), the comparison of rows read back with the records
// written ([CheckRows]), and a byte-flip sweep over a good file whose
// reads must end in io.EOF or in an error naming the file, never in a
// panic ([FlipSweep]), and opening a Parquet file with parquet-go to check
// that Image bytes columns are binary ([OpenParquet], [BinaryLeaves]).
// It is imported by tests only.
package formattest

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
)

// Case is a named set of records written and read back together.
type Case struct {
	Name string
	Recs []string
}

// RoundTripCases are the records a writer with an inferred schema must
// give back: both dialects with tool calls and list content, integers at
// the int64 limits and beyond 2^53, floats at the float64 limits, nested
// and empty lists, nulls, and strings with escapes and non-ASCII text.
var RoundTripCases = []Case{
	{"sharegpt", []string{
		`{"conversations":[{"from":"system","value":"be brief"},{"from":"human","value":"hi"},{"from":"gpt","value":"hello"}],"tools":"[]"}`,
		`{"conversations":[{"from":"human","value":"x"},{"from":"function_call","value":"{\"name\":\"f\"}"},{"from":"observation","value":"1"}],"tools":"[{\"name\":\"f\"}]"}`,
	}},
	{"openai tool calls and list content", []string{
		`{"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:x"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
		`{"messages":[{"role":"user","content":"plain"},{"role":"assistant","content":"done","reasoning_content":"hmm"}],"tools":null}`,
	}},
	{"numbers", []string{
		`{"i":9223372036854775807,"j":-9223372036854775808,"f":0.1,"g":1e-300,"h":123456789.125,"b":true}`,
		`{"i":0,"j":9007199254740993,"f":-2.5,"g":5e-324,"h":1.7976931348623157e+308,"b":false}`,
	}},
	{"nested lists and odd strings", []string{
		`{"grid":[[1,2],[],[3]],"s":"tab\tnl\nquote\"bs\\ctl\u0001 ünï 😀","e":[],"o":{"a":{"b":[{"c":null}]}}}`,
		`{"grid":null,"s":"","e":["x"],"o":null}`,
		`{"grid":[[]],"s":null,"e":null,"o":{"a":null}}`,
	}},
}

// Bytes returns the records as byte slices.
func (c Case) Bytes() [][]byte {
	out := make([][]byte, len(c.Recs))
	for i, r := range c.Recs {
		out[i] = []byte(r)
	}
	return out
}

// WriteAll writes the records with w and closes it; any error fails t.
func WriteAll(t testing.TB, w interface {
	Write(obj []byte) error
	Close() error
}, recs [][]byte) {
	t.Helper()
	for i, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// CheckRows checks that the rows read back (got, JSON text) are the
// records written (sample), in order, equal as JSON values up to a null
// standing for an absent key and to key order, and that every row's keys
// are the schema's columns in their order.
func CheckRows(t testing.TB, sample [][]byte, got []string, columns []string) {
	t.Helper()
	if len(got) != len(sample) {
		t.Fatalf("got %d rows, want %d", len(got), len(sample))
	}
	for i := range got {
		want, _ := jsonval.Decode(sample[i])
		g, err := jsonval.Decode([]byte(got[i]))
		if err != nil {
			t.Fatalf("row %d: output is not JSON: %v", i, err)
		}
		if !jsonval.Equal(g, want, jsonval.EqualOptions{NullIsAbsent: true, IgnoreOrder: true}) {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], sample[i])
		}
		if keys := g.(*jsonval.Object).Keys; !slices.Equal(keys, columns) {
			t.Errorf("row %d: keys %v, want the schema's %v", i, keys, columns)
		}
	}
}

// Drain returns a readAll for [FlipSweep]: open the file with open, read
// it to the end and return the error that ended the read (io.EOF when it
// ended cleanly).
func Drain[R interface {
	Next() ([]byte, int64, error)
	Close() error
}](open func(path string) (R, error)) func(path string) error {
	return func(path string) error {
		r, err := open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		for err == nil {
			_, _, err = r.Next()
		}
		return err
	}
}

// FlipSweep writes data to path with one byte flipped, at every step-th
// offset, and reads each version with readAll, which returns the error
// that ended the read (io.EOF for a clean end). Any other error must name
// path. It returns how many versions failed and how many were tried.
// Under -short it tries every third of those offsets (3*step apart); the
// whole sweep runs without -short.
func FlipSweep(t testing.TB, data []byte, path string, step int, readAll func(path string) error) (failed, tried int) {
	t.Helper()
	if testing.Short() {
		step *= 3
	}
	for off := 0; off < len(data); off += step {
		tried++
		b := bytes.Clone(data)
		b[off] ^= 0x5a
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := readAll(path); err != io.EOF {
			failed++
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("offset %d: error does not name the file: %v", off, err)
			}
		}
	}
	return failed, tried
}

// OpenParquet opens the Parquet file at path with parquet-go, closed when
// t ends; an error fails t.
func OpenParquet(t testing.TB, path string) *pq.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) //nolint:errcheck // opened read-only
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pf
}

// BinaryLeaves checks that each dotted column path (as parquet-go names
// it: "images.list.element.bytes") is a leaf of pf that is a plain binary
// BYTE_ARRAY, with no STRING or other logical type: a datasets Image's
// bytes.
func BinaryLeaves(t testing.TB, pf *pq.File, paths ...string) {
	t.Helper()
	for _, path := range paths {
		leaf, ok := pf.Schema().Lookup(strings.Split(path, ".")...)
		if !ok || leaf.Node.Type().Kind() != pq.ByteArray || leaf.Node.Type().LogicalType() != nil {
			t.Errorf("Parquet column %s: %v, want binary", path, leaf.Node)
		}
	}
}

// TextPartSample is the record the schema of [StringAsTextPart] is
// inferred from: message content as a list of {type, text, n} parts, a
// list of {value} structs, a list of {type: int, text} structs, a list of
// structs without text, and a list of strings.
const TextPartSample = `{"m":[{"role":"u","content":[{"type":"text","text":"a","n":1}]}],` +
	`"v":[{"value":"x"}],"k":[{"type":7,"text":"y"}],"nums":[{"n":1}],"strs":["s"]}`

// StringAsTextPart checks, with w a writer of a schema inferred from
// [TextPartSample], that a string where the schema has a list of structs
// with a string "text" (else "value") field is written as one part (with
// "type": "text" when the struct has a string "type"), and that a string
// in any other list is still an error; readAll reads the file back after
// w is closed.
func StringAsTextPart(t testing.TB, w interface {
	Write([]byte) error
	Close() error
}, readAll func() []string) {
	t.Helper()
	for _, rec := range []string{`{"nums":[{"n":1}],"strs":"s"}`, `{"nums":"s"}`} {
		if err := w.Write([]byte(rec)); err == nil || !strings.Contains(err.Error(), "want an array, got string") {
			t.Errorf("%s: err = %v, want: want an array, got string", rec, err)
		}
	}
	if err := w.Write([]byte(`{"m":[{"role":"u","content":"hello"}],"v":"x2","k":"y2","nums":null,"strs":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAll()
	want := `{"m":[{"role":"u","content":[{"type":"text","text":"hello","n":null}]}],"v":[{"value":"x2"}],` +
		`"k":[{"type":null,"text":"y2"}],"nums":null,"strs":[]}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("read back %q, want %s", got, want)
	}
}
