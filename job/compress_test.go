package job

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/config"
)

// compressed is the format package's fixtures: records.jsonl and the
// same records gzip-, zstd-, bzip2- and xz-compressed.
const compressed = "../format/testdata/compressed"

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(compressed, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCompressedWalkRoundTrip: a directory walk reads the same records
// from plain JSON Lines and from gzip, zstd, bzip2 and xz files, by name
// (any case, .jsonl or .ndjson) and by content (a misleading extension),
// and writes each one's output uncompressed, named without the
// compression extension, byte for byte the plain file's output; a note
// says so.
func TestCompressedWalkRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "ds")
	files := map[string]string{ // input → its output, relative
		"plain/r.jsonl":        "plain/r.jsonl",
		"gz/r.jsonl.gz":        "gz/r.jsonl",
		"zst/r.jsonl.zst":      "zst/r.jsonl",
		"bz2/r.jsonl.bz2":      "bz2/r.jsonl",
		"xz/r.jsonl.xz":        "xz/r.jsonl",
		"misnamed/r.jsonl":     "misnamed/r.jsonl", // zstd content
		"misnamed/s.jsonl.gz":  "misnamed/s.jsonl", // xz content
		"upper/R.JSONL.BZ2":    "upper/R.jsonl",
		"upper/P.JSONL":        "upper/P.jsonl",
		"nd/r.ndjson.xz":       "nd/r.jsonl",
		"nd/s.NDJSON":          "nd/s.jsonl",
		"nd/t.ndjson.ZST":      "nd/t.jsonl",
		"nd/u.Ndjson.Gz":       "nd/u.jsonl",
		"misnamed/t.jsonl.bz2": "misnamed/t.jsonl", // gzip content
	}
	content := map[string]string{
		"misnamed/r.jsonl": "records.jsonl.zst", "misnamed/s.jsonl.gz": "records.jsonl.xz", "misnamed/t.jsonl.bz2": "records.jsonl.gz",
		"upper/P.JSONL": "records.jsonl", "nd/s.NDJSON": "records.jsonl", "nd/t.ndjson.ZST": "records.jsonl.zst", "nd/u.Ndjson.Gz": "records.jsonl.gz",
	}
	for rel := range files {
		src := content[rel]
		if src == "" {
			src = "records.jsonl" + strings.ToLower(strings.TrimPrefix(filepath.Ext(rel), ".jsonl"))
		}
		os.MkdirAll(filepath.Join(in, filepath.Dir(rel)), 0o755)
		input(t, in, rel, fixture(t, src))
	}
	var notes strings.Builder
	res, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in}, Notes: &notes})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Total.RecordsIn(), int64(60*len(files)); got != want {
		t.Errorf("%d records read, want %d (60 from each of %d files)", got, want, len(files))
	}
	out := in + "_compressed"
	plain, err := os.ReadFile(filepath.Join(out, "plain/r.jsonl"))
	if err != nil || bytes.Count(plain, []byte("\n")) != 60 {
		t.Fatalf("plain output: %d lines, %v", bytes.Count(plain, []byte("\n")), err)
	}
	for rel, o := range files {
		b, err := os.ReadFile(filepath.Join(out, o))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if !bytes.Equal(b, plain) {
			t.Errorf("%s: its output %s differs from the plain file's", rel, o)
		}
	}
	if want := "compressed files (bzip2, gzip, zstd, xz) read decompressed; outputs are written uncompressed, without the compression extension (bz2/r.jsonl.bz2 → bz2/r.jsonl)"; !strings.Contains(notes.String(), "11 "+want) {
		t.Errorf("notes %q, want %q", notes.String(), want)
	}
}

// TestWalkNamesWhatItLeavesOut: every file a directory walk leaves out is
// named in a note with the reason; an empty Parquet or Arrow file, and a
// Git LFS pointer, are left out so, and the run goes on.
func TestWalkNamesWhatItLeavesOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "ds")
	os.MkdirAll(filepath.Join(in, "sub"), 0o755)
	input(t, in, "a.jsonl", rec)
	pointer := "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n"
	zst := fixture(t, "records.jsonl.zst")
	leftOut := map[string]string{
		"README.md":         "not a data file name",
		"data.zst":          "zstd-compressed data under a name that does not say it holds JSON Lines or a JSON array: rename it data.jsonl.zst (or .json.zst), or give it as --input to read it by its content",
		"sub/part-0000":     "zstd-compressed data under a name that does not say it holds JSON Lines or a JSON array: rename it part-0000.jsonl.zst (or .json.zst), or give it as --input to read it by its content",
		"t.parquet.gz":      "a compressed parquet file: it cannot be read compressed (its format compresses its own data); decompress it first",
		"empty.parquet":     "an empty file (0 bytes), not a Parquet file (an interrupted download or copy?)",
		"sub/empty.arrow":   "an empty file (0 bytes), not an Arrow file (an interrupted download or copy?)",
		"lfs.parquet":       "a Git LFS pointer file, not the data it stands for (the repository was cloned without git-lfs): fetch the data with git lfs pull --include " + filepath.Join(in, "lfs.parquet"),
		"sub/lfs.jsonl.zst": "a Git LFS pointer file, not the data it stands for (the repository was cloned without git-lfs): fetch the data with git lfs pull --include " + filepath.Join(in, "sub/lfs.jsonl.zst"),
		"dataset_info.json": "datasets metadata, not records",
	}
	body := map[string]string{"README.md": "# data\n", "data.zst": zst, "sub/part-0000": zst, "t.parquet.gz": "\x1f\x8b\x08\x00", "lfs.parquet": pointer, "sub/lfs.jsonl.zst": pointer, "dataset_info.json": "{\n}\n"}
	for rel := range leftOut {
		input(t, in, rel, body[rel])
	}
	var notes strings.Builder
	res, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in}, Notes: &notes})
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if res.Total.RecordsIn() != 1 {
		t.Errorf("%d records read, want 1", res.Total.RecordsIn())
	}
	for rel, why := range leftOut {
		if want := "note: --input: left out " + filepath.Join(in, rel) + ": " + why + "\n"; !strings.Contains(notes.String(), want) {
			t.Errorf("no note %q in\n%s", want, notes.String())
		}
	}
	if n := strings.Count(notes.String(), "left out"); n != len(leftOut) {
		t.Errorf("%d files noted left out, want %d", n, len(leftOut))
	}
}

// TestCompressedOutputIsPlain: an output named as compressed is written
// uncompressed, without the compression extension, and a note says so;
// so is a compressed input's.
func TestCompressedOutputIsPlain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl.xz", fixture(t, "records.jsonl.xz"))
	for _, o := range []string{"o.jsonl.gz", "o.jsonl.zst", "o.JSONL.XZ", "o.jsonl.bz2"} {
		var notes strings.Builder
		res, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in, Paths: Paths{Output: filepath.Join(dir, o)}}, Notes: &notes})
		if err != nil {
			t.Fatal(err)
		}
		plain := filepath.Join(dir, o[:len("o.jsonl")])
		if res.Plan.Files[0].Out != plain {
			t.Errorf("--output %s: written to %s, want %s", o, res.Plan.Files[0].Out, plain)
		}
		b, err := os.ReadFile(plain)
		if err != nil || bytes.Count(b, []byte("\n")) != 60 || b[0] != '{' {
			t.Errorf("--output %s: %d lines, %v", o, bytes.Count(b, []byte("\n")), err)
		}
		if _, err := os.Stat(filepath.Join(dir, o)); err == nil {
			t.Errorf("%s was written", o)
		}
		for _, want := range []string{
			"output is not written (compressed input is read): the output is written uncompressed to " + plain,
			"--input " + in + " is xz-compressed: it is read decompressed, and its output " + plain + " is written uncompressed",
		} {
			if !strings.Contains(notes.String(), want) {
				t.Errorf("--output %s: notes %q, want %q", o, notes.String(), want)
			}
		}
		os.Remove(plain)
	}
}
