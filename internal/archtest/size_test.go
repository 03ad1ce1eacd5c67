package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// maxFields is the most fields a struct of package pipeline may have: the
// record path's state is cut into one small struct per step, so that what
// each step reads and writes can be seen at its type, and its settings
// (Options) into one group per concern. No struct is excepted.
const maxFields = 12

// maxLines is the most lines a Go file of the module may have, unless it
// is generated ("// Code generated ... DO NOT EDIT.") or vendored
// (third_party/).
const maxLines = 800

// longFiles are the files allowed more than maxLines lines until they are
// split. An entry the file no longer needs fails the test, so the list
// only shrinks.
var longFiles = map[string]string{}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// TestPipelineStructsSmall fails when a struct type of package pipeline
// (non-test files) has more than maxFields fields (an embedded field is
// one; "a, b int" is two).
func TestPipelineStructsSmall(t *testing.T) {
	dir := filepath.Join(root(t), "pipeline")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			fields := 0
			for _, fl := range st.Fields.List {
				fields += max(len(fl.Names), 1)
			}
			name := ts.Name.Name
			t.Logf("pipeline.%s: %d fields", name, fields)
			if fields > maxFields {
				t.Errorf("%s: struct pipeline.%s has %d fields, over %d: cut it by the step that writes them (see the package doc)",
					fset.Position(ts.Pos()), name, fields, maxFields)
			}
			return true
		})
	}
}

// TestFilesShort fails when a Go file of the repository (the Beam module
// too) has more than maxLines lines, unless it is generated, vendored
// (third_party/) or listed in longFiles.
func TestFilesShort(t *testing.T) {
	r := root(t)
	listed := map[string]bool{}
	var over []string
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != r && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || rel == "third_party" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(b) {
			return nil
		}
		lines := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			lines++
		}
		_, ok := longFiles[rel]
		listed[rel] = ok
		switch {
		case lines > maxLines && !ok:
			over = append(over, fmt.Sprintf("%s: %d lines, over %d: split it by subject", rel, lines, maxLines))
		case lines <= maxLines && ok:
			over = append(over, fmt.Sprintf("%s: %d lines now: remove it from longFiles", rel, lines))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range longFiles {
		if _, ok := listed[name]; !ok {
			over = append(over, fmt.Sprintf("longFiles names %s, which is not a Go file of the repository", name))
		}
	}
	sort.Strings(over)
	for _, s := range over {
		t.Error(s)
	}
}
