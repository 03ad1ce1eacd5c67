package commit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// TestModes: a committed output that is new has mode 0666 &^ umask,
// whatever mode its writer left the staged file with (a hard link to a
// 0600 file, say); one written over keeps the mode the old file had, also
// through a symbolic link. Not parallel: the umask is process-wide.
func TestModes(t *testing.T) {
	testenv.Umasks(t, func(t *testing.T, umask fs.FileMode) {
		root := t.TempDir()
		fresh, kept := filepath.Join(root, "new.jsonl"), filepath.Join(root, "old.jsonl")
		os.WriteFile(kept, []byte("old\n"), 0o640)
		os.Chmod(kept, 0o640)
		other := t.TempDir()
		real := filepath.Join(other, "real.jsonl")
		os.WriteFile(real, []byte("old\n"), 0o604)
		os.Chmod(real, 0o604)
		link := filepath.Join(root, "link.jsonl")
		os.Symlink(real, link)
		tx, err := Begin(fresh, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{fresh, kept, link} {
			p, _, err := tx.File(target)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(p, []byte("new\n"), 0)
			os.Chmod(p, 0o600) // as a hard link to a private segment would be
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]fs.FileMode{fresh: 0o666 &^ umask, kept: 0o640, real: 0o604} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: mode %03o, want %03o", filepath.Base(path), fi.Mode().Perm(), want)
			}
		}
	})
}

// TestFileNoFollowRefusesLink: a name the program chose that is a
// symbolic link is refused, naming it; the file it points to is left
// alone.
func TestFileNoFollowRefusesLink(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	link := filepath.Join(root, "a_compressed.jsonl")
	os.Symlink(victim, link)
	tx, err := Begin(link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tx.FileNoFollow(link); err == nil || !strings.Contains(err.Error(), link) {
		t.Fatalf("got %v, want an error naming %s", err, link)
	}
	p, _, err := tx.FileNoFollow(filepath.Join(root, "plain.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("new\n"), 0o644)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "plain.jsonl")); string(b) != "new\n" {
		t.Fatalf("plain.jsonl holds %q", b)
	}
}

// TestLockLinkNotFollowed: a symbolic link planted at the lock file's
// name is not opened through: the file it points to is not truncated.
func TestLockLinkNotFollowed(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	anchor := filepath.Join(root, "out.jsonl")
	os.Symlink(victim, LockPath(anchor))
	tx, err := Begin(anchor, Options{})
	if err == nil {
		tx.Abort()
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim holds %q (Begin: %v)", b, err)
	}
	if err == nil || !strings.Contains(err.Error(), LockPath(anchor)) {
		t.Fatalf("Begin: %v, want an error naming the lock file", err)
	}
}
