package archtest

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/trajcompress/trajcompress/"

// layer orders the module's library packages: a package may import only
// packages of a strictly lower layer. Packages not listed (bench drivers,
// cmd, test helpers) are on top and only checked against allowed.
var layer = map[string]int{
	"internal/jsonx": 0, "outcome": 0, "task": 0, "internal/atomicfile": 0, "internal/commit": 1, "internal/testenv": 0, "internal/readfile": 0,
	"traj": 1, "tokenize": 1, "chattemplate": 1, "imagetok": 1,
	"snap": 2, "summary": 2,
	"metrics": 3, "summary/llm": 3, "validate": 3, "format/internal/jsonval": 2,
	"format/jsonl": 2, "format/internal/formattest": 3, "format/arrow": 3, "format/parquet": 3,
	"format/internal/roundtrip": 5, "redact": 1, "redact/redacttest": 0, "internal/jsontest": 1, "redact/internal/rulegen": 0, "prepass": 2, "format": 4, "config": 6, "check": 4, "fixtures/gen": 2,
	"pipeline": 5, "report": 5,
	"job": 7,
}

// pure packages may not import anything that does I/O, networking,
// processes or system calls.
var pure = []string{"snap", "tokenize", "traj", "internal/jsonx", "outcome", "redact", "prepass", "task", "report", "imagetok"}

var impure = []string{"os", "os/exec", "os/signal", "net", "syscall", "io/fs", "io/ioutil", "path/filepath", "runtime/pprof", "golang.org/x/sys"}

// fileReaders are the files of pure packages that may read files (never
// anything else impure): tokenize.New takes the path of a tokenizer.json
// or tiktoken file, a model directory, or a Hugging Face model id looked
// up in the local cache (issue 14), so finding and reading those files is
// part of its contract. The encoders themselves do no I/O.
var fileReaders = map[string][]string{
	"tokenize": {"resolve.go", "hf.go", "tiktokenfile.go"},
	// imagetok reads the headers of local images a record names (LLaMA-
	// Factory's images paths, a datasets Image's path) and a model's
	// preprocessor_config.json.
	"imagetok": {"file.go"},
}

var fileReading = []string{"os", "io/fs", "path/filepath"}

// cpuFeatures may be imported by a pure package: redact's kernels are
// chosen by the CPU's features (cpu_amd64.go; CPUID and XGETBV, no I/O).
const cpuFeatures = "golang.org/x/sys/cpu"

// goroutinesAllowed are the packages whose non-test code may start
// goroutines.
func goroutinesAllowed(pkg string) bool {
	return pkg == "pipeline" || strings.HasPrefix(pkg, "bench/")
}

type pkgInfo struct {
	rel     string
	dir     string
	imports []string // module-internal, relative
	std     []string // everything else
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", dir, err)
	}
	return dir
}

// packages lists the module's packages (non-test files only).
func packages(t *testing.T) []pkgInfo {
	t.Helper()
	r := root(t)
	var out []pkgInfo
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != r && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin") {
			return filepath.SkipDir
		}
		if path != r {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		bp, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(r, path)
		p := pkgInfo{rel: filepath.ToSlash(rel), dir: path}
		for _, imp := range bp.Imports {
			if s, ok := strings.CutPrefix(imp, module); ok {
				p.imports = append(p.imports, s)
			} else {
				p.std = append(p.std, imp)
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportGraph(t *testing.T) {
	for _, p := range packages(t) {
		if len(p.imports) > 0 {
			t.Logf("%-28s -> %s", p.rel, strings.Join(p.imports, " "))
		}
		l, ok := layer[p.rel]
		if !ok {
			if !strings.HasPrefix(p.rel, "cmd/") && !strings.HasPrefix(p.rel, "bench/") && !strings.HasPrefix(p.rel, "internal/archtest") {
				t.Errorf("package %s has no layer: add it to the layer table", p.rel)
			}
			continue
		}
		for _, imp := range p.imports {
			il, ok := layer[imp]
			if !ok {
				t.Errorf("%s (layer %d) imports %s, which is not a library package", p.rel, l, imp)
			} else if il >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down", p.rel, l, imp, il)
			}
		}
	}
}

func TestPurePackages(t *testing.T) {
	seen := 0
	fset := token.NewFileSet()
	for _, p := range packages(t) {
		if !slices.Contains(pure, p.rel) {
			continue
		}
		seen++
		files, _ := filepath.Glob(filepath.Join(p.dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			mayRead := slices.Contains(fileReaders[p.rel], filepath.Base(f))
			for _, is := range af.Imports {
				imp := strings.Trim(is.Path.Value, `"`)
				for _, bad := range impure {
					if imp != bad && !strings.HasPrefix(imp, bad+"/") {
						continue
					}
					if mayRead && slices.Contains(fileReading, imp) || imp == cpuFeatures {
						continue
					}
					t.Errorf("pure package %s imports %s (%s)", p.rel, imp, filepath.Base(f))
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no pure package found: is the walk broken?")
	}
}

func TestGoroutinesOnlyInPipeline(t *testing.T) {
	fset := token.NewFileSet()
	for _, p := range packages(t) {
		if goroutinesAllowed(p.rel) {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(p.dir, "*.go"))
		sort.Strings(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					t.Errorf("%s: go statement outside package pipeline", fset.Position(n.Pos()))
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Go" || sel.Sel.Name == "TryGo") {
						t.Errorf("%s: %s call outside package pipeline", fset.Position(n.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
