package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	os.WriteFile(path, []byte("old"), 0o644)

	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("destination changed before Commit: %q", b)
	}
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("Abort changed the destination: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary file left: %v", ents)
	}

	f, _ = Create(path)
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil { // no-op after Commit
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Fatalf("got %q mode %v", b, st.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary file left: %v", ents)
	}
}

func TestCommitFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "sub", "x")) // no such directory
	if err == nil {
		f.Abort()
		t.Fatal("Create in a missing directory succeeded")
	}
	f, _ = Create(filepath.Join(dir, "x"))
	f.File.Close() // Sync will fail
	if err := f.Commit(); err == nil {
		t.Fatal("Commit of a closed file succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed Commit left files: %v", ents)
	}
}

func TestFinish(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	f, _ := Create(path)
	f.WriteString("a")
	boom := os.ErrInvalid
	if err := f.Finish(boom); err != boom {
		t.Fatalf("Finish(err) = %v, want %v", err, boom)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Finish(err) left files: %v", ents)
	}
	f, _ = Create(path)
	f.WriteString("b")
	if err := f.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "b" {
		t.Fatalf("Finish(nil) did not commit: %q", b)
	}
}

// TestAppend: a segment reopened after a checkpoint is cut to what the
// checkpoint covered and written on from there; a file shorter than the
// checkpoint is refused.
func TestAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	f, err := Append(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("one\n"))
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("lost\n")) // after the checkpoint: a kill would leave it
	f.Abort()
	if f, err = Append(path, 4); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("two\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Fatalf("segment %q", b)
	}
	if _, err := Append(path, 100); err == nil {
		t.Fatal("a segment shorter than its checkpoint was accepted")
	}
}

// TestShortName: a name of at most ShortKept bytes is kept; a longer one
// is cut at a character boundary and ends in a hash of the whole, so two
// long names that share their start stay apart; FitName fits NameMax.
func TestShortName(t *testing.T) {
	if s := ShortName("a.jsonl"); s != "a.jsonl" {
		t.Fatalf("short name changed: %q", s)
	}
	a, b := strings.Repeat("é", 120)+"a", strings.Repeat("é", 120)+"b"
	sa, sb := ShortName(a), ShortName(b)
	if len(sa) > ShortKept || sa == sb || !utf8.ValidString(sa) || !strings.HasPrefix(a, strings.Split(sa, "~")[0]) {
		t.Fatalf("%q (%d bytes), %q", sa, len(sa), sb)
	}
	if n := FitName(strings.Repeat("x", 300), "_compressed.jsonl"); len(n) != NameMax || !strings.HasSuffix(n, "_compressed.jsonl") {
		t.Fatalf("FitName: %d bytes: %q", len(n), n)
	}
}
