package trajbeam

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoJobImport: no Go file of the Beam module (code and tests, under
// any build tag) imports package job or a package under it but
// job/jobcore. The pipeline builds the pool's Compressor with jobcore and
// the tests take the pool from the CLI (runPool), so that job — the
// CLI's run, its run directory, its output sets — stays free to change
// without the Beam module. Indirect imports need no check here: in the
// main module only cmd/trajcompress may import job (internal/archtest's
// tiers), and jobcore does not.
func TestNoJobImport(t *testing.T) {
	const module = "github.com/trajcompress/trajcompress/"
	const job = module + "job"
	root, err := filepath.Abs("..") // the Beam module
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if path == job || strings.HasPrefix(path, job+"/") && path != job+"/jobcore" {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("beam/%s imports %s", filepath.ToSlash(rel), path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("%d Go files under %s: not the Beam module", files, root)
	}
}
