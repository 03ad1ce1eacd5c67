package format

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

var records = []string{
	`{"conversations":[{"from":"human","value":"hi"}],"id":"a"}`,
	`{"conversations":[{"from":"human","value":"yo é"}],"id":"b"}`,
}

// write makes the same two records as every format, with an odd name
// (no known extension) beside each, so that detection by content is
// tested too.
func write(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	plain := filepath.Join(dir, "r.jsonl")
	// A blank line between the records: line numbers count it.
	os.WriteFile(plain, []byte(records[0]+"\n\n"+records[1]+"\n"), 0o644)
	files["jsonl"] = plain
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(records[0] + "\n\n" + records[1] + "\n"))
	zw.Close()
	files["gzip"] = filepath.Join(dir, "r.jsonl.gz")
	os.WriteFile(files["gzip"], gz.Bytes(), 0o644)
	for _, f := range []string{Parquet, Arrow} {
		p := filepath.Join(dir, "r"+Ext(f))
		w, err := Create(p, f, Schema{}, Column{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range records {
			if err := w.Write([]byte(r)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[f] = p
	}
	for k, p := range map[string]string{"jsonl": files["jsonl"], "gzip": files["gzip"], "parquet": files[Parquet], "arrow": files[Arrow]} {
		b, _ := os.ReadFile(p)
		odd := filepath.Join(dir, "noext_"+k+".data")
		os.WriteFile(odd, b, 0o644)
		files["odd "+k] = odd
	}
	return files
}

// TestOneContract: every reader, chosen by name or by content, returns the
// same records as JSON objects, 1-based numbers (JSONL: physical lines,
// blank ones counted), bytes the caller owns, then io.EOF.
func TestOneContract(t *testing.T) {
	files := write(t, t.TempDir())
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			in, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var got [][]byte
			var nums []int64
			for {
				b, n, err := in.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got, nums = append(got, b), append(nums, n)
			}
			if len(got) != 2 || !strings.Contains(string(got[0]), `"hi"`) || !strings.Contains(string(got[1]), `"yo é"`) {
				t.Fatalf("records %q", got)
			}
			want := []int64{1, 2}
			if in.Format == JSONL {
				want = []int64{1, 3}
			}
			if nums[0] != want[0] || nums[1] != want[1] {
				t.Errorf("numbers %v, want %v (format %s)", nums, want, in.Format)
			}
			got[0][0] = 'X' // owned by the caller: must not show in the next record
			if got[1][0] != '{' {
				t.Errorf("records share bytes")
			}
			if f, _ := Detect(path); f != in.Format {
				t.Errorf("Detect %s, Open %s", f, in.Format)
			}
		})
	}
	if f, _ := Detect(files["odd parquet"]); f != Parquet {
		t.Errorf("a Parquet file without its extension is detected as %s", f)
	}
	if f, _ := Detect(files["odd arrow"]); f != Arrow {
		t.Errorf("an Arrow file without its extension is detected as %s", f)
	}
}

// TestHashSeesEveryByteOnce: Options.Hash receives the file's bytes
// exactly once, streamed or in a first pass.
func TestHashSeesEveryByteOnce(t *testing.T) {
	files := write(t, t.TempDir())
	for _, name := range []string{"jsonl", "gzip", Parquet, Arrow} {
		h := xxh3.New()
		in, err := Open(files[name], Options{Hash: h})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := in.Next(); err != nil {
				break
			}
		}
		in.Close()
		b, _ := os.ReadFile(files[name])
		if h.Sum128() != xxh3.Hash128(b) {
			t.Errorf("%s: the hash is not the file's bytes", name)
		}
	}
}

// TestStdin: "-" reads standard input (Options.Stdin here) as JSONL.
func TestStdin(t *testing.T) {
	in, err := Open(Stdin, Options{Stdin: strings.NewReader(records[0] + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	b, n, err := in.Next()
	if err != nil || n != 1 || string(b) != records[0] {
		t.Fatalf("%q %d %v", b, n, err)
	}
	if _, _, err := in.Next(); err != io.EOF {
		t.Fatalf("after the last record: %v", err)
	}
}

func TestUnknownOutputFormat(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "x.csv"), "csv", Schema{}, Column{}); err == nil || !strings.Contains(err.Error(), "unknown output format") {
		t.Fatalf("err = %v", err)
	}
}

// A file under a name Of does not know is left out, saying it holds
// Parquet or Arrow data when its first bytes are one of the magic numbers
// Detect reads them by (the Arrow stream format's continuation marker too).
func TestMemberUnknownNameMagic(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ head, want string }{
		{"PAR1xxxx", "Parquet data (by its first bytes)"},
		{"ARROW1\x00\x00", "Arrow data (by its first bytes)"},
		{"\xff\xff\xff\xff\x10\x00\x00\x00", "Arrow data (by its first bytes)"},
		{"{\"a\":1}\n", "not a data file name"},
	} {
		path := filepath.Join(dir, "data.bin")
		if err := os.WriteFile(path, []byte(c.head), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Member(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Format != "" || !strings.HasPrefix(got.Why, c.want) {
			t.Errorf("Member(%q) = %+v, want left out: %q…", c.head, got, c.want)
		}
	}
}
