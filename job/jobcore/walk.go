package jobcore

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/trajcompress/trajcompress/format"
)

// WalkInputs lists the input files under the directory root, relative to
// it, in the order a run reads them (hidden entries left out; into
// subdirectories when recursive; links to files outside root left out):
// the listing of [NewPlan]. leftOut names what could look like data but is
// not read, each with the reason.
func WalkInputs(root string, recursive bool) (files, leftOut []string, err error) {
	files, _, leftOut, err = Walk(root, recursive, false)
	return files, leftOut, err
}

// Walk lists the input files under root, relative to it: the files
// [format.Member] reads (by name, whatever the case of its extensions:
// .jsonl, .ndjson, .json, each plain or .gz, .zst, .bz2, .xz; .parquet,
// .arrow; a .json file only when it holds records), in the order of a
// depth-first walk with each directory's entries sorted by name,
// descending into subdirectories when recursive. Hidden files and
// directories (a name starting with ".": .git, .cache, and the temporary
// files of a run) are not walked; a symbolic link to a file is followed,
// one to a directory below root is not (it may loop), nor a directory
// below root when not recursive. root itself may be a link to a
// directory. A link to a file outside the tree under root
// (x.jsonl -> /etc/passwd) is not read unless follow is set. leftOut names, each with the reason, every other file and
// linked directory found, so that the caller can say so: nothing is
// skipped without a word. An unreadable directory is an error, not a
// silent gap.
//
// found holds what [format.Member] found of each file (its format — a
// .json file may hold JSON Lines — and compression), so that no file is
// opened twice to tell.
func Walk(root string, recursive, follow bool) (files []string, found map[string]format.Found, leftOut []string, err error) {
	found = map[string]format.Found{}
	walkRoot := root
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		walkRoot = root + string(filepath.Separator) // WalkDir then reads the directory it names
	}
	tree := AbsClean(root) // where a link may lead without --follow-links
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("--input: %w", err)
		}
		if path == walkRoot {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || (d.IsDir() && !recursive) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if why, skip := skipLink(path, tree, recursive, follow); skip {
				if why != "" {
					leftOut = append(leftOut, path+": "+why)
				}
				return nil
			}
		} else if d.IsDir() {
			return nil
		} else if !d.Type().IsRegular() {
			leftOut = append(leftOut, path+": not a regular file")
			return nil
		}
		f, err := format.Member(path)
		if err != nil {
			return err
		}
		if f.Format == "" {
			leftOut = append(leftOut, path+": "+f.Why)
			return nil
		}
		rel, err := filepath.Rel(walkRoot, path)
		if err != nil {
			return err
		}
		files = append(files, rel)
		found[rel] = f
		return nil
	})
	return files, found, leftOut, err
}

// Within reports whether path is dir or below it (both absolute, clean).
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// AbsClean is path made absolute, with the symbolic links of its longest
// existing prefix resolved, so that two names of one place compare equal.
func AbsClean(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// skipLink says whether the walk leaves out the symbolic link at path
// (tree: where a link may lead without follow), and why ("" for a link
// to a directory of a walk that is not recursive, which goes unsaid).
func skipLink(path, tree string, recursive, follow bool) (why string, skip bool) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return "a broken symbolic link", true
	case st.IsDir():
		if recursive {
			return "a symbolic link to a directory, not followed (give its target as --input, or copy it in)", true
		}
		return "", true
	case !st.Mode().IsRegular():
		return "not a regular file", true
	}
	if to := AbsClean(path); !follow && !Within(tree, to) {
		return "a symbolic link to " + to + ", outside the input directory: not read (--follow-links reads it)", true
	}
	return "", false
}
