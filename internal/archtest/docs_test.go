package archtest

import (
	"bufio"
	"bytes"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// layoutTable reads the package table of docs/architecture.md ("| package |
// what it is |"): each row's first cell names one or more packages in
// backquotes, relative to the main module ("beam/trajbeam" for the Beam
// module's); a name ending in "/..." covers a subtree. It returns each
// name with the line it is on.
func layoutTable(t *testing.T, r string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`([^`]+)`")
	rows := map[string]int{}
	in := false
	for n, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| package | what it is |"):
			in = true
			continue
		case !in || strings.HasPrefix(line, "|---"):
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		cell, _, _ = strings.Cut(cell, "(") // "(module `beam/`)" is a note
		ms := name.FindAllStringSubmatch(cell, -1)
		if len(ms) == 0 {
			t.Errorf("docs/architecture.md:%d: a row naming no package in backquotes: %s", n+1, line)
		}
		for _, m := range ms {
			rows[m[1]] = n + 1
		}
	}
	if len(rows) == 0 {
		t.Fatal(`docs/architecture.md: no "| package | what it is |" table`)
	}
	return rows
}

// TestLayoutTableComplete: the package table of docs/architecture.md names
// every package of the module and of the Beam module (beam/), and names no
// package that does not exist, so that the page stays true as packages
// are added, moved or removed.
func TestLayoutTableComplete(t *testing.T) {
	r := root(t)
	var pkgs []string
	for _, p := range packages(t) {
		pkgs = append(pkgs, p.rel)
	}
	for _, p := range packagesIn(t, filepath.Join(r, "beam")) {
		pkgs = append(pkgs, "beam/"+p.rel)
	}
	rows := layoutTable(t, r)
	covers := func(row, pkg string) bool {
		if pre, ok := strings.CutSuffix(row, "/..."); ok {
			return pkg == pre || strings.HasPrefix(pkg, pre+"/")
		}
		return pkg == row
	}
	used := map[string]bool{}
	for _, p := range pkgs {
		found := false
		for row := range rows {
			if covers(row, p) {
				found, used[row] = true, true
			}
		}
		if !found {
			t.Errorf("package %s is not in the table of docs/architecture.md: add a row from its doc comment", p)
		}
	}
	for _, row := range slices.Sorted(maps.Keys(rows)) {
		if n := rows[row]; !used[row] {
			t.Errorf("docs/architecture.md:%d: %s names no package of the module or of beam/", n, row)
		}
	}
}
