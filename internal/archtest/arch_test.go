package archtest

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/trajcompress/trajcompress/"

// A tier is a named set of packages with the same role. A package may
// import packages of the tiers its tier lists in below, and of its own
// tier only along the edges listed in within.
type tier struct {
	name  string
	what  string   // the role, one line
	below []string // the tiers it may import; "*" is every other tier
	pkgs  []string // package paths relative to the module; a trailing "/" is a prefix
}

// tiers, top to bottom. Every library package is in exactly one.
var tiers = []tier{
	{"app", "a run, end to end: the CLI, the job, the drivers", []string{"*"},
		[]string{"cmd/", "job", "job/jobcore", "bench/", "examples", "internal/archtest"}},
	{"gate", "judging a run by its metrics", []string{"core", "model", "leaf"},
		[]string{"check", "check/checkfile", "report"}},
	{"config", "the settings, read, checked and declared as flags", []string{"io", "core", "model", "leaf"},
		[]string{"config"}},
	{"engine", "the record path and the summarizer that waits on the network", []string{"core", "model", "leaf"},
		[]string{"pipeline", "summary/llm"}},
	{"io", "record files and putting outputs in place", []string{"leaf"},
		[]string{"format", "format/jsonl", "format/parquet", "format/arrow", "format/internal/jsonval",
			"format/internal/formattest", "format/internal/roundtrip", "internal/commit"}},
	{"core", "pure decisions about one record, and its metrics", []string{"model", "leaf"},
		[]string{"snap", "prepass", "summary", "validate", "metrics", "fixtures/gen", "trainview", "trainer/llamafactory"}},
	{"model", "the record and what it is measured with", []string{"leaf"},
		[]string{"traj", "tokenize", "redact", "internal/jsontest", "imagetok", "chattemplate", "trainer/axolotl"}},
	{"leaf", "the foundations", nil,
		[]string{"internal/jsonx", "outcome", "task", "internal/atomicfile", "internal/readfile",
			"internal/testenv", "internal/jinja2ref", "internal/crash", "redact/redacttest", "redact/internal/rulegen", "traj/errline", "imagetok/imagetest",
			"trainer/trainercfg", "trainer/trl"}},
}

// within are the imports allowed between packages of one tier.
var within = map[string][]string{
	"cmd/trajcompress":           {"job"},
	"job":                        {"job/jobcore"},
	"bench/mockllm":              {"bench/mockllm/mock"},
	"bench/tokenizer/tokbench":   {"bench/tokenizer"},
	"check/checkfile":            {"check"},
	"internal/jinja2ref":         {"internal/testenv"},
	"report":                     {"check"},
	"metrics":                    {"snap"},
	"validate":                   {"snap"},
	"format":                     {"format/jsonl", "format/parquet", "format/arrow", "format/internal/jsonval"},
	"format/jsonl":               {"internal/commit"},
	"format/parquet":             {"format/internal/jsonval"},
	"format/arrow":               {"format/internal/jsonval"},
	"format/internal/formattest": {"format/internal/jsonval"},
}

// named are the packages whose doc comment names what they import: they
// may import exactly those packages of ours (or fewer), and the doc must
// still name each. The key's doc file is the first of docFiles that
// exists.
var named = map[string][]string{
	// "it imports only the standard library, outcome and traj"
	"snap": {"outcome", "traj"},
	// "no I/O, imports nothing"
	"outcome": {},
	// "it imports only the standard library"
	"internal/jsonx": {},
	// "Of trajcompress it imports only internal/jsonx"
	"chattemplate": {"internal/jsonx"},
	// "It imports the packages of one record and no more: traj, internal/jsonx,
	// redact, tokenize, imagetok, snap, prepass, summary, metrics, outcome and trainview"
	"pipeline": {"traj", "internal/jsonx", "internal/crash", "tokenize", "imagetok", "snap", "prepass", "redact", "summary", "metrics", "outcome", "trainview"},
}

// pure packages may not reach anything that does I/O, networking,
// processes or system calls, directly or through any package they import
// (ours or a third party's).
var pure = []string{"snap", "tokenize", "traj", "internal/jsonx", "outcome", "redact", "prepass", "task",
	"summary", "validate", "metrics", "check", "report", "format/internal/jsonval", "traj/errline", "imagetok",
	"internal/crash", "trainer/llamafactory", "trainer/trainercfg", "trainer/trl", "trainer/axolotl"}

// impure are the standard (and x/sys) packages that do I/O, networking,
// processes or system calls. golang.org/x/sys/cpu is not among them: it
// only asks the CPU what it supports.
var impure = []string{"os", "os/exec", "os/signal", "net", "syscall", "io/fs", "io/ioutil", "path/filepath",
	"runtime/pprof", "golang.org/x/sys/unix", "golang.org/x/sys/windows", "plugin"}

// fileReaders are the files of pure packages that may read files (never
// anything else impure), and whose imports a pure importer of the package
// does not reach: tokenize.New takes the path of a tokenizer.json or
// tiktoken file, a model directory, or a Hugging Face model id looked up
// in the local cache, so finding and reading those files is
// part of its contract. The encoders themselves do no I/O.
var fileReaders = map[string][]string{
	"tokenize": {"resolve.go", "hf.go", "tiktokenfile.go"},
	// imagetok reads the headers of local images a record names (LLaMA-
	// Factory's images paths, a datasets Image's path) and a model's
	// preprocessor_config.json.
	"imagetok": {"file.go"},
}

var fileReading = []string{"os", "io/fs", "path/filepath", module + "internal/readfile"}

// trusted are the third-party packages that import an impure package
// without doing I/O on any path we call.
var trusted = map[string]string{
	"github.com/dlclark/regexp2/syntax": "writes to os.Stdout only behind its unexported debug switch (parser.go, writer.go)",
	"github.com/klauspost/cpuid/v2":     "os.Exit only from Flags/Detect's command-line handling, which nothing of ours calls",
	"golang.org/x/image/riff":           "imports io/ioutil for ioutil.Discard only (riff.go), no file I/O",
	"golang.org/x/sys/cpu":              "asks the CPU what it supports (CPUID and XGETBV on amd64); its os import reads /proc/self/auxv on other architectures, the features' only source there",
}

// goroutinesAllowed are the packages whose non-test code may start
// goroutines: pipeline, the benchmarks, and internal/jinja2ref, a
// harness only tests import (TestTestHarnessesOnlyInTests), whose one
// goroutine reads the Python reference's output so that a render can be
// timed out.
func goroutinesAllowed(pkg string) bool {
	return pkg == "pipeline" || strings.HasPrefix(pkg, "bench/") || pkg == "internal/jinja2ref"
}

// TestTestHarnessesOnlyInTests fails when a package that goroutinesAllowed
// lets start goroutines as a test harness is imported by non-test code.
func TestTestHarnessesOnlyInTests(t *testing.T) {
	const harness = "internal/jinja2ref"
	for _, p := range packages(t) {
		for _, imp := range p.imports {
			if imp == harness {
				t.Errorf("%s imports %s, a harness for tests only", p.rel, harness)
			}
		}
	}
}

func tierOf(pkg string) (tier, bool) {
	for _, t := range tiers {
		for _, p := range t.pkgs {
			if pkg == p || strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p) {
				return t, true
			}
		}
	}
	return tier{}, false
}

type pkgInfo struct {
	rel     string
	dir     string
	files   []string // non-test Go files of this build
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

// packages lists the module's packages (non-test files only). It reads
// every file here, in the test's process, so that go test's cache sees a
// changed import.
func packages(t *testing.T) []pkgInfo {
	t.Helper()
	return packagesIn(t, root(t))
}

// packagesIn lists the packages of the module rooted at r (a nested
// module's are left out), their paths relative to r.
func packagesIn(t *testing.T, r string) []pkgInfo {
	t.Helper()
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
		p := pkgInfo{rel: filepath.ToSlash(rel), dir: path, files: bp.GoFiles}
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
		pt, ok := tierOf(p.rel)
		if !ok {
			t.Errorf("package %s has no tier: add it to the tiers table", p.rel)
			continue
		}
		allowed, isNamed := named[p.rel]
		for _, imp := range p.imports {
			it, ok := tierOf(imp)
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no tier", p.rel, imp)
			case it.name == "app" && pt.name != "app":
				t.Errorf("%s (%s) imports %s (app): nothing imports a command, the job or a driver", p.rel, pt.name, imp)
			case it.name == pt.name && !slices.Contains(within[p.rel], imp):
				t.Errorf("%s imports %s, of its own tier (%s): not an edge listed in within", p.rel, imp, pt.name)
			case it.name != pt.name && !slices.Contains(pt.below, "*") && !slices.Contains(pt.below, it.name):
				t.Errorf("%s (%s) imports %s (%s): tier %s may import only %s", p.rel, pt.name, imp, it.name, pt.name, strings.Join(pt.below, ", "))
			}
			if isNamed && !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which its doc comment does not name (it names: %s)", p.rel, imp, orNone(allowed))
			}
		}
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// TestDocsNameImports: the doc comment of each package in named still
// names every package the allow-list grants, so the list and the doc move
// together.
func TestDocsNameImports(t *testing.T) {
	r := root(t)
	for pkg, imps := range named {
		doc := packageDoc(t, filepath.Join(r, pkg))
		if !strings.Contains(doc, "import") {
			t.Errorf("%s: its doc comment says nothing about what it imports", pkg)
		}
		for _, imp := range imps {
			if !strings.Contains(doc, imp) {
				t.Errorf("%s: the allow-list grants %s, which its doc comment does not name", pkg, imp)
			}
		}
	}
}

// packageDoc returns the package doc comment of the package in dir.
func packageDoc(t *testing.T, dir string) string {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if af.Doc != nil {
			b.WriteString(af.Doc.Text())
		}
	}
	if b.Len() == 0 {
		t.Fatalf("%s has no package doc comment", dir)
	}
	return b.String()
}

// TestTiersComplete: every package named in the tables exists, so a
// rename cannot leave a stale entry that guards nothing.
func TestTiersComplete(t *testing.T) {
	have := map[string]bool{}
	for _, p := range packages(t) {
		have[p.rel] = true
	}
	var listed []string
	for _, tr := range tiers {
		for _, p := range tr.pkgs {
			if !strings.HasSuffix(p, "/") {
				listed = append(listed, p)
			}
		}
	}
	listed = append(listed, pure...)
	for k, v := range within {
		listed = append(listed, k)
		listed = append(listed, v...)
	}
	for k, v := range named {
		listed = append(listed, k)
		listed = append(listed, v...)
	}
	for _, p := range listed {
		if !have[p] {
			t.Errorf("the structure tables name %s, which is not a package of the module", p)
		}
	}
}

func isImpure(imp string) bool {
	for _, bad := range impure {
		if imp == bad || strings.HasPrefix(imp, bad+"/") {
			return true
		}
	}
	return false
}

// graph is every package the module's packages reach, with the imports
// through which a pure importer reaches further: for the module's own
// packages, read here from their files (a file-reading file of a pure
// package counts only for that package); for third-party and standard
// packages, from go list.
type graph struct {
	imports  map[string][]string // full import path -> full import paths
	standard map[string]bool
}

func loadGraph(t *testing.T) graph {
	t.Helper()
	g := graph{imports: map[string][]string{}, standard: map[string]bool{}}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.Bytes())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g.standard[f[0]] = f[1] == "true"
		g.imports[f[0]] = f[2:]
	}
	fset := token.NewFileSet()
	for _, p := range packages(t) {
		var imps []string
		for _, name := range p.files {
			if slices.Contains(fileReaders[p.rel], name) {
				continue
			}
			for _, imp := range fileImports(t, fset, filepath.Join(p.dir, name)) {
				if imp != "C" && !slices.Contains(imps, imp) {
					imps = append(imps, imp)
				}
			}
		}
		g.imports[module+p.rel] = imps
	}
	return g
}

// impurePath returns a chain of imports from pkg to an impure package, or
// nil. Standard packages are the end of a path: the standard library's
// own imports (fmt imports os) are not held against us, only what our
// packages and third-party ones import.
func (g graph) impurePath(pkg string) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, ok := trusted[p]; ok {
			continue
		}
		for _, imp := range g.imports[p] {
			if _, seen := prev[imp]; seen {
				continue
			}
			prev[imp] = p
			if isImpure(imp) {
				var path []string
				for q := imp; q != ""; q = prev[q] {
					path = append(path, strings.TrimPrefix(q, module))
				}
				slices.Reverse(path)
				return path
			}
			if !g.standard[imp] {
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// fileImports returns the import paths of one Go file.
func fileImports(t *testing.T, fset *token.FileSet, path string) []string {
	t.Helper()
	af, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	imps := make([]string, 0, len(af.Imports))
	for _, is := range af.Imports {
		imps = append(imps, strings.Trim(is.Path.Value, `"`))
	}
	return imps
}

func TestPurePackages(t *testing.T) {
	g := loadGraph(t)
	seen := 0
	fset := token.NewFileSet()
	for _, p := range packages(t) {
		if !slices.Contains(pure, p.rel) {
			continue
		}
		seen++
		// The file-reading files may read files and do nothing else impure.
		for _, name := range fileReaders[p.rel] {
			if !slices.Contains(p.files, name) {
				t.Errorf("%s: fileReaders names %s, which is not one of its files", p.rel, name)
				continue
			}
			for _, imp := range fileImports(t, fset, filepath.Join(p.dir, name)) {
				if isImpure(imp) && !slices.Contains(fileReading, imp) {
					t.Errorf("pure package %s imports %s (%s): its file-reading files may only read files", p.rel, imp, name)
				}
			}
		}
		if path := g.impurePath(module + p.rel); path != nil {
			t.Errorf("pure package %s reaches %s: %s", p.rel, path[len(path)-1], strings.Join(path, " -> "))
		}
	}
	if seen != len(pure) {
		t.Fatalf("found %d of the %d pure packages: is the walk broken?", seen, len(pure))
	}
}

var update = flag.Bool("update", false, "rewrite the tier diagram in docs/architecture.md")

// TestTierDiagram prints the tiers and fails when docs/architecture.md
// does not show the same text (the first code block after "## Tiers");
// -update rewrites that block.
func TestTierDiagram(t *testing.T) {
	d := diagram()
	t.Log("\n" + d)
	path := filepath.Join(root(t), "docs", "architecture.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sec := bytes.Index(doc, []byte("\n## Tiers\n"))
	if sec < 0 {
		t.Fatalf("%s has no \"## Tiers\" section", path)
	}
	open := bytes.Index(doc[sec:], []byte("\n```\n"))
	if open < 0 {
		t.Fatalf("%s: no code block in the Tiers section", path)
	}
	start := sec + open + len("\n```\n")
	end := bytes.Index(doc[start:], []byte("```\n"))
	if end < 0 {
		t.Fatalf("%s: the Tiers section's code block is not closed", path)
	}
	if string(doc[start:start+end]) == d {
		return
	}
	if !*update {
		t.Fatalf("%s does not show the current tier diagram (go test ./internal/archtest -run TestTierDiagram -update rewrites it)", path)
	}
	out := append(append(append([]byte{}, doc[:start]...), d...), doc[start+end:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// diagram is the tiers as text: one block per tier, top to bottom, its
// packages (* for pure), what it may import, then the edges within tiers
// and the doc-named allow-lists.
func diagram() string {
	var b strings.Builder
	for _, tr := range tiers {
		below := "nothing of ours"
		if slices.Contains(tr.below, "*") {
			below = "any tier"
		} else if len(tr.below) > 0 {
			below = strings.Join(tr.below, ", ")
		}
		fmt.Fprintf(&b, "%-7s %s; imports %s\n", tr.name, tr.what, below)
		var line strings.Builder
		for _, p := range tr.pkgs {
			name := p
			if strings.HasSuffix(p, "/") {
				name += "..."
			}
			if slices.Contains(pure, p) {
				name += "*"
			}
			if line.Len() > 0 && line.Len()+len(name) > 88 {
				fmt.Fprintf(&b, "        %s\n", strings.TrimSpace(line.String()))
				line.Reset()
			}
			line.WriteString(name + "  ")
		}
		fmt.Fprintf(&b, "        %s\n", strings.TrimSpace(line.String()))
		if tr.name != tiers[len(tiers)-1].name {
			b.WriteString("   |\n")
		}
	}
	b.WriteString("* pure: reaches no I/O, network, process or system call through any import\n\n")
	b.WriteString("within a tier:\n")
	for _, k := range sortedKeys(within) {
		fmt.Fprintf(&b, "  %s -> %s\n", k, strings.Join(within[k], ", "))
	}
	b.WriteString("imports named by the package doc (only these):\n")
	for _, k := range sortedKeys(named) {
		fmt.Fprintf(&b, "  %s: %s\n", k, orNone(named[k]))
	}
	return b.String()
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
