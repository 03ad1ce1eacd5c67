// Package examples holds runnable, commented setups for the main uses of
// trajcompress, one directory each with a run.sh (see README.md); its test
// runs every one of them against the CLI built from this tree, so that the
// examples stay true. An example that cannot run here (no npm to fetch a
// model's files) exits 77 after a "SKIP: why" line, and its test skips
// with that reason.
package examples

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// build builds the CLI and bench/mockllm into a directory shared by the
// tests of one run.
var build = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "trajcompress-examples-")
	if err != nil {
		return "", err
	}
	for _, pkg := range []string{"./cmd/trajcompress", "./bench/mockllm"} {
		cmd := exec.Command("go", "build", "-o", dir, pkg)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", errors.New("go build " + pkg + ": " + err.Error() + "\n" + string(out))
		}
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := build(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// examples lists the example directories: those holding a run.sh.
func examples(t *testing.T) []string {
	t.Helper()
	scripts, err := filepath.Glob("*/run.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	var names []string
	for _, s := range scripts {
		names = append(names, filepath.Dir(s))
	}
	return names
}

func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the examples run whole compress runs")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the examples' run.sh")
	}
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range examples(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("bash", filepath.Join(name, "run.sh"))
			cmd.Env = append(os.Environ(),
				"TRAJCOMPRESS="+filepath.Join(bin, "trajcompress"),
				"MOCKLLM="+filepath.Join(bin, "mockllm"),
				"WORK="+t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 77 {
				for _, line := range strings.Split(stderr.String(), "\n") {
					if strings.HasPrefix(line, "SKIP: ") {
						t.Skip(line)
					}
				}
				t.Fatalf("exit 77 without a SKIP line:\n%s", &stderr)
			}
			if err != nil {
				t.Fatalf("%s/run.sh: %v\nstdout:\n%s\nstderr:\n%s", name, err, &stdout, &stderr)
			}
			if want := name + ": ok"; !strings.Contains(stdout.String(), want) {
				t.Fatalf("%s/run.sh did not print %q:\n%s", name, want, &stdout)
			}
		})
	}
}

// Every example is listed in README.md, and every directory README.md
// lists has a run.sh.
func TestExamplesListed(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range examples(t) {
		if !bytes.Contains(readme, []byte("]("+name+"/)")) {
			t.Errorf("README.md does not list %s/ (as [title](%s/))", name, name)
		}
	}
}
