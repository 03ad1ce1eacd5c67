package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// TestModes: a new file is 0666 &^ umask, under umask 077 and 022; a file
// written over keeps its mode; a symbolic link at the path is followed
// (the file it points to is replaced, the link stays). Not parallel: the
// umask is process-wide.
func TestModes(t *testing.T) {
	testenv.Umasks(t, func(t *testing.T, umask fs.FileMode) {
		dir := t.TempDir()
		write := func(path string) {
			t.Helper()
			f, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("x")
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		mode := func(path string) fs.FileMode {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			return fi.Mode().Perm()
		}
		p := filepath.Join(dir, "new.json")
		write(p)
		if m, want := mode(p), 0o666&^umask; m != want {
			t.Fatalf("new file: mode %03o, want %03o", m, want)
		}
		os.Chmod(p, 0o640)
		write(p)
		if m := mode(p); m != 0o640 {
			t.Fatalf("written over: mode %03o, want 640", m)
		}
		seg := filepath.Join(dir, "seg")
		a, err := Append(seg, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.Commit()
		if m, want := mode(seg), 0o666&^umask; m != want {
			t.Fatalf("Append: mode %03o, want %03o", m, want)
		}
		target := filepath.Join(t.TempDir(), "target")
		os.WriteFile(target, []byte("old"), 0o600)
		link := filepath.Join(dir, "link")
		os.Symlink(target, link)
		write(link)
		if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatal("the link was replaced by a file")
		}
		if b, _ := os.ReadFile(target); string(b) != "x" || mode(target) != 0o600 {
			t.Fatalf("target: %q mode %03o", b, mode(target))
		}
	})
}
