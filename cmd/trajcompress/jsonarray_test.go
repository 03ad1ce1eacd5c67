package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// llamaFactoryJSON writes records as LLaMA-Factory ships a dataset: one
// JSON array, json.dump(indent=2, ensure_ascii=False).
func llamaFactoryJSON(t *testing.T, path string, recs [][]byte) {
	t.Helper()
	var vals []json.RawMessage
	for _, r := range recs {
		vals = append(vals, r)
	}
	b, err := json.MarshalIndent(vals, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(b, '\n'), 0o644)
}

// TestJSONArrayInput: a LLaMA-Factory .json dataset (one indented array)
// is read record by record like the same records as JSONL: the same
// outcomes and compressed records, outcome lines naming the line where
// each record starts and its index, and a .json output that CPython's
// json.load reads back as an array of the same length.
func TestJSONArrayInput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src.jsonl")
	mustRun(t, "fixtures", "--output", src, "--count", "40", "--seed", "9", "--profile", "coding", "--median-tokens", "3000")
	recs := lines(t, src)
	var objs [][]byte
	for _, r := range recs {
		if json.Valid(r) && r[0] == '{' {
			objs = append(objs, r)
		}
	}
	os.WriteFile(src, append(bytes.Join(objs, []byte("\n")), '\n'), 0o644)
	arr := filepath.Join(tmp, "data.json")
	llamaFactoryJSON(t, arr, objs)
	args := []string{"--target-max-tokens", "2500", "--summary-target-tokens", "200"}
	mustRun(t, append([]string{"compress", "--quiet", "--input", src, "--outcomes", filepath.Join(tmp, "o_jsonl.jsonl")}, args...)...)
	mustRun(t, append([]string{"compress", "--quiet", "--input", arr, "--outcomes", filepath.Join(tmp, "o_json.jsonl")}, args...)...)
	outJSON := filepath.Join(tmp, "data_compressed.json")
	pythonLoads(t, outJSON, true)
	var got []json.RawMessage
	b, _ := os.ReadFile(outJSON)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := lines(t, filepath.Join(tmp, "src_compressed.jsonl"))
	if len(got) != len(want) {
		t.Fatalf("%d records in the .json output, %d in the .jsonl one", len(got), len(want))
	}
	for i := range want {
		var c bytes.Buffer
		json.Compact(&c, want[i])
		if !bytes.Equal(c.Bytes(), got[i]) && !reflect.DeepEqual(normalize(t, want[i]), normalize(t, got[i])) {
			t.Fatalf("record %d differs:\n json: %.200s\njsonl: %.200s", i+1, got[i], want[i])
		}
	}
	type oline struct {
		Line, Record int64
		Outcome      string
		TokensAfter  int `json:"tokens_after"`
	}
	read := func(p string) []oline {
		var out []oline
		for _, l := range lines(t, p) {
			var o oline
			json.Unmarshal(l, &o)
			out = append(out, o)
		}
		return out
	}
	oa, ob := read(filepath.Join(tmp, "o_jsonl.jsonl")), read(filepath.Join(tmp, "o_json.jsonl"))
	line := int64(2)
	for i := range oa {
		if oa[i].Outcome != ob[i].Outcome || oa[i].TokensAfter != ob[i].TokensAfter {
			t.Errorf("record %d: %+v from JSONL, %+v from the array", i+1, oa[i], ob[i])
		}
		if ob[i].Record != int64(i+1) || ob[i].Line != line {
			t.Errorf("record %d: line %d record %d, want line %d record %d", i+1, ob[i].Line, ob[i].Record, line, i+1)
		}
		var v json.RawMessage
		json.Unmarshal(objs[i], &v)
		ind, _ := json.MarshalIndent([]json.RawMessage{v}, "", "  ")
		line += int64(bytes.Count(ind, []byte("\n"))) - 1 // the element's lines, its comma line included
	}
}

// TestJSONArrayConversions: JSONL ↔ JSON ↔ Parquet ↔ Arrow keep the
// records; a .json file holding JSON Lines is read as JSON Lines and
// written as .jsonl; a rejected array element is named by line and index.
func TestJSONArrayConversions(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	mustRun(t, "fixtures", "--output", in, "--count", "30", "--seed", "2", "--profile", "parallel", "--dialect", "openai", "--median-tokens", "800")
	big := "100000000" // nothing is compressed
	steps := []string{"a.json", "b.parquet", "c.json", "d.arrow", "e.json", "f.jsonl"}
	prev := in
	for _, s := range steps {
		out := filepath.Join(tmp, s)
		mustRun(t, "compress", "--quiet", "--input", prev, "--output", out, "--target-max-tokens", big)
		if strings.HasSuffix(s, ".json") {
			pythonLoads(t, out, true)
		}
		prev = out
	}
	want, got := lines(t, in), lines(t, prev)
	var wantObjs [][]byte
	for _, w := range want {
		if json.Valid(w) && w[0] == '{' {
			wantObjs = append(wantObjs, w)
		}
	}
	if len(wantObjs) != len(got) {
		t.Fatalf("%d records in, %d back", len(wantObjs), len(got))
	}
	for i := range got {
		if w, g := normalize(t, wantObjs[i]), normalize(t, got[i]); !reflect.DeepEqual(w, g) {
			t.Fatalf("record %d changed:\n in: %.300s\nout: %.300s", i+1, wantObjs[i], got[i])
		}
	}

	// JSON Lines under a .json name.
	jl := filepath.Join(tmp, "lines.json")
	os.WriteFile(jl, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"+`{"conversations":[{"from":"human","value":"yo"}]}`+"\n"), 0o644)
	mustRun(t, "compress", "--quiet", "--input", jl)
	if n := len(lines(t, filepath.Join(tmp, "lines_compressed.jsonl"))); n != 2 {
		t.Errorf("lines.json: %d records in lines_compressed.jsonl, want 2", n)
	}

	// A bad element in a one-line array.
	one := filepath.Join(tmp, "one.json")
	os.WriteFile(one, []byte(`[{"conversations":[{"from":"human","value":"hi"}]}, {"messages": 3}, 42]`), 0o644)
	rej := filepath.Join(tmp, "rej.jsonl")
	mustRun(t, "compress", "--quiet", "--input", one, "--rejects", rej, "--max-reject-rate", "1")
	var r []struct {
		Line, Record int64
		Raw          string
	}
	for _, l := range lines(t, rej) {
		var x struct {
			Line, Record int64
			Raw          string
		}
		json.Unmarshal(l, &x)
		r = append(r, x)
	}
	if len(r) != 2 || r[0].Record != 2 || r[0].Line != 1 || r[0].Raw != `{"messages":3}` || r[1].Record != 3 || r[1].Raw != "42" {
		t.Errorf("rejects: %+v", r)
	}
}

// TestJSONArrayMalformed: a .json array that is cut short or has no comma
// between records fails the run naming the file and line, and leaves no
// output in place.
func TestJSONArrayMalformed(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for name, body := range map[string]string{
		"cut.json":   "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"}]},\n{\"conversations\":[",
		"comma.json": "[\n{\"conversations\":[]}\n{\"conversations\":[]}\n]",
	} {
		p := filepath.Join(tmp, name)
		os.WriteFile(p, []byte(body), 0o644)
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"compress", "--quiet", "--input", p}, nil, &bytes.Buffer{}, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), name+":3:") {
			t.Errorf("%s: exit %d, %q; want exit 1 naming %s:3", name, code, stderr.String(), name)
		}
		if _, err := os.Stat(filepath.Join(tmp, strings.TrimSuffix(name, ".json")+"_compressed.json")); err == nil {
			t.Errorf("%s: output put in place after a read error", name)
		}
	}
}
