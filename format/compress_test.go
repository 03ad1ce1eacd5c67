package format

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/task"
)

// fixtures is testdata/compressed (see gen.sh there): records.jsonl, and
// the same bytes compressed by the gzip, zstd, bzip2 and xz tools, each
// file two members, frames or streams.
const fixtures = "testdata/compressed"

// readAll reads every record of path, with its line.
func readAll(t *testing.T, path string, o Options) (recs []string, lines []int64, f string) {
	t.Helper()
	in, err := Open(path, o)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer in.Close()
	for {
		b, n, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs, lines = append(recs, string(b)), append(lines, n)
	}
	return recs, lines, in.Format
}

// TestCompressedRoundTrip: the same records, at the same lines, are read
// from the plain file and from its gzip, zstd, bzip2 and xz forms (each
// of two members, frames or streams, all read), by name (any case, .jsonl
// or .ndjson) and by content (a name that says plain, another
// compression, or nothing); the layout of a compressed file is whole (a
// compressed stream cannot be split by byte range), and standard input
// is read by content too.
func TestCompressedRoundTrip(t *testing.T) {
	want, wantLines, _ := readAll(t, filepath.Join(fixtures, "records.jsonl"), Options{})
	if len(want) != 60 || wantLines[len(wantLines)-1] != 61 {
		t.Fatalf("plain: %d records, last at line %d; want 60, 61", len(want), wantLines[len(wantLines)-1])
	}
	dir := t.TempDir()
	for _, ext := range []string{"gz", "zst", "bz2", "xz"} {
		b, err := os.ReadFile(filepath.Join(fixtures, "records.jsonl."+ext))
		if err != nil {
			t.Fatal(err)
		}
		other := map[string]string{"gz": "zst", "zst": "xz", "bz2": "gz", "xz": "bz2"}[ext]
		for _, name := range []string{
			"r.jsonl." + ext,                     // by name
			"R." + strings.ToUpper("jsonl."+ext), // upper case
			"r.ndjson." + ext,                    // .ndjson
			"r_" + ext + ".jsonl",                // by content: the name says plain
			"r_" + ext + ".jsonl." + other,       // by content: the name says another compression
			"r_" + ext + ".data",                 // by content: a name that says nothing
		} {
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				if f, err := Detect(path); err != nil || f != JSONL {
					t.Fatalf("Detect: %q, %v", f, err)
				}
				got, lines, f := readAll(t, path, Options{})
				if f != JSONL || len(got) != len(want) {
					t.Fatalf("%s: %d records, want %d", f, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] || lines[i] != wantLines[i] {
						t.Fatalf("record %d at line %d differs from the plain file's (line %d)", i+1, lines[i], wantLines[i])
					}
				}
				l, err := LayoutOf(path)
				if err != nil || l.Kind != task.Whole {
					t.Errorf("layout %v, %v: a compressed file must be read whole", l.Kind, err)
				}
			})
		}
		t.Run("stdin "+ext, func(t *testing.T) {
			got, _, _ := readAll(t, Stdin, Options{Stdin: bytes.NewReader(b)})
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("standard input: %d records differ", len(got))
			}
		})
	}
	if l, err := LayoutOf(filepath.Join(fixtures, "records.jsonl")); err != nil || l.Kind != task.Lines {
		t.Errorf("plain layout %v, %v: want byte ranges", l.Kind, err)
	}
	// A JSON array, zstd-compressed, by name and by content.
	b, _ := os.ReadFile(filepath.Join(fixtures, "array.json.zst"))
	for _, name := range []string{"a.json.zst", "A.JSON.ZST", "a.data"} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, b, 0o644)
		got, _, f := readAll(t, path, Options{})
		if f != JSON || len(got) != len(want) {
			t.Fatalf("%s: %s, %d records; want a JSON array of %d", name, f, len(got), len(want))
		}
		for i := range want {
			var g, w any
			json.Unmarshal([]byte(got[i]), &g)
			json.Unmarshal([]byte(want[i]), &w)
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if !bytes.Equal(gb, wb) {
				t.Fatalf("%s: record %d differs", name, i+1)
			}
		}
	}
}

// TestOutputNamesDropCompression: the stem of a compressed input drops
// both extensions, whatever their case.
func TestOutputNamesDropCompression(t *testing.T) {
	for in, want := range map[string]string{
		"runs/a.jsonl.gz": "a", "a.jsonl.zst": "a", "a.JSONL.BZ2": "a", "a.ndjson.xz": "a", "a.NDJSON": "a",
		"a.json.zst": "a", "a.Parquet": "a", "a.gz": "a.gz", "a.txt": "a.txt",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"a.JSONL": JSONL, "a.ndjson": JSONL, "a.NDJSON.ZST": JSONL, "a.jsonl.xz": JSONL, "a.jsonl.bz2": JSONL,
		"a.Json.Gz": JSON, "a.PARQUET": Parquet, "a.ARROW": Arrow, "a.parquet.gz": "", "a.zst": "",
	} {
		if got := Of(in); got != want {
			t.Errorf("Of(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestNotDataSaysWhat: a Git LFS pointer is named as one, with the
// command that fetches it; an empty Parquet or Arrow file is said empty.
func TestNotDataSaysWhat(t *testing.T) {
	dir := t.TempDir()
	pointer := "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"
	for name, want := range map[string]string{
		"train.parquet":   "a Git LFS pointer file, not the data it stands for (the repository was cloned without git-lfs): fetch the data with git lfs pull --include " + filepath.Join(dir, "train.parquet"),
		"data.jsonl":      "git lfs pull --include " + filepath.Join(dir, "data.jsonl"),
		"empty.parquet":   "an empty file (0 bytes), not a Parquet file",
		"empty.arrow":     "an empty file (0 bytes), not an Arrow file",
		"my data.parquet": "git lfs pull --include '" + filepath.Join(dir, "my data.parquet") + "'",
	} {
		path := filepath.Join(dir, name)
		content := pointer
		if strings.HasPrefix(name, "empty") {
			content = ""
		}
		os.WriteFile(path, []byte(content), 0o644)
		_, err := Detect(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: err = %v, want it to say %q", name, err, want)
		}
		if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open %s: err = %v", name, err)
		}
	}
}
