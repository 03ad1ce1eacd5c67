package archtest

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// issueRef is a reference to one of the project's own issues (the word
// issue, then a number, "#" allowed): a cloner cannot follow it.
var issueRef = regexp.MustCompile(`(?i)\bissue ?#?[0-9]+`)

// upstreamRef is a public upstream reference a cloner can follow
// (golang/go#75804, github.com/owner/repo/issues/123); it is blanked out of
// a line before issueRef is looked for, so it is the only allowed form.
var upstreamRef = regexp.MustCompile(`[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+|github\.com/[^\s)]+/issues/[0-9]+`)

// dataExt are the extensions of data files: under a testdata directory only
// files of other extensions (scripts, docs, code) are read; real or
// generated trajectories may say anything.
var dataExt = map[string]bool{
	".jsonl": true, ".json": true, ".tsv": true, ".golden": true, ".html": true,
	".jinja": true, ".txt": true, ".parquet": true, ".arrow": true,
}

// textFiles lists the module's files to read, relative to root: the
// tracked files (git ls-files), or, outside a git checkout, every file
// under root. Vendored upstream code (third_party/) is skipped, except the
// documents of our own changes to it (PATCHES.md); so are node_modules,
// the data files under testdata and binary files.
func textFiles(t *testing.T, r string) []string {
	t.Helper()
	var all []string
	out, err := exec.Command("git", "-C", r, "ls-files", "-z").Output()
	if err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				all = append(all, f)
			}
		}
	} else {
		t.Logf("git ls-files failed (%v): walking %s instead", err, r)
		err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != r && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin") {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(r, path)
			all = append(all, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for _, f := range all {
		parts := strings.Split(f, "/")
		switch {
		case parts[0] == "third_party" && filepath.Base(f) != "PATCHES.md":
			continue
		case strings.Contains("/"+f+"/", "/node_modules/"):
			continue
		case strings.Contains("/"+f, "/testdata/") && dataExt[filepath.Ext(f)]:
			continue
		}
		files = append(files, f)
	}
	return files
}

// TestNoIssueNumbers: no code, test, script or document names one of the
// project's issues by number; it says the behaviour or the reason
// instead. Upstream references of the form
// owner/repo#N are allowed.
func TestNoIssueNumbers(t *testing.T) {
	r := root(t)
	files := textFiles(t, r)
	if len(files) < 100 {
		t.Fatalf("only %d files found under %s: the listing is broken", len(files), r)
	}
	read := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(r, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			continue // binary
		}
		read++
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, len(b)+1)
		for n := 1; sc.Scan(); n++ {
			line := upstreamRef.ReplaceAllString(sc.Text(), "")
			if m := issueRef.FindString(line); m != "" {
				t.Errorf("%s:%d: %q names an issue; say the behaviour or the reason instead", f, n, m)
			}
		}
	}
	if read < 100 {
		t.Fatalf("only %d text files read: the listing is broken", read)
	}
}
