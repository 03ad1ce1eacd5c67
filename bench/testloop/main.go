// Command testloop measures the test loop: it runs `go test -json` on the
// packages given (./... by default) with itself as the test binaries'
// -exec wrapper, and prints, per package, the wall time and the CPU time
// (user+system, children included: the processes a test starts and waits
// for) of its test binary, then the slowest top-level tests by elapsed
// time, then the totals and the load average at the start and the end.
// CPU time is the figure to compare on a shared machine: wall time there
// says more about the other jobs than about the tests. See
// bench/README.md, "Test loop".
//
//	go run ./bench/testloop [-top 20] [-- go test flags and packages]
//
// What follows -- goes to go test as it is (default: -short -count=1
// ./...).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// wrapEnv names the file the -exec wrapper appends its lines to.
const wrapEnv = "TESTLOOP_TIMES"

// module is stripped from package paths in the list of tests.
const module = "github.com/trajcompress/trajcompress/"

func main() {
	if f := os.Getenv(wrapEnv); f != "" && len(os.Args) > 1 {
		os.Exit(wrap(f, os.Args[1:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// wrap runs a test binary with its arguments and appends "dir wall cpu"
// to the file: dir is the package directory go test runs it in.
func wrap(file string, args []string) int {
	start := time.Now()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	if cmd.ProcessState != nil {
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		dir, _ := os.Getwd()
		f, ferr := os.OpenFile(file, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if ferr == nil {
			fmt.Fprintf(f, "%s\t%.3f\t%.3f\n", dir, wall.Seconds(), cpu.Seconds())
			f.Close() //nolint:errcheck // a lost line shows as a package without figures
		}
	}
	return code
}

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testloop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	top := fs.Int("top", 20, "how many of the slowest tests to list")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	testArgs := fs.Args()
	if len(testArgs) == 0 {
		testArgs = []string{"-short", "-count=1", "./..."}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	times, err := os.CreateTemp("", "testloop-*.tsv")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	times.Close()                 //nolint:errcheck // only its name is used
	defer os.Remove(times.Name()) //nolint:errcheck // a temp file

	load0 := loadavg()
	start := time.Now()
	goArgs := append([]string{"test", "-json", "-exec", self}, testArgs...)
	cmd := exec.Command("go", goArgs...)
	cmd.Env = append(os.Environ(), wrapEnv+"="+times.Name())
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	type result struct {
		name    string
		elapsed float64
		action  string
	}
	var tests []result
	failed := map[string]bool{}
	var failedTests []string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch {
		case e.Action == "fail" && e.Test == "":
			failed[e.Package] = true
		case e.Action == "fail" && e.Test != "":
			failedTests = append(failedTests, strings.TrimPrefix(e.Package, module)+" "+e.Test)
			if !strings.Contains(e.Test, "/") {
				tests = append(tests, result{strings.TrimPrefix(e.Package, module) + " " + e.Test, e.Elapsed, e.Action})
			}
		case e.Action == "pass" && e.Test != "" && !strings.Contains(e.Test, "/"):
			tests = append(tests, result{strings.TrimPrefix(e.Package, module) + " " + e.Test, e.Elapsed, e.Action})
		}
	}
	werr := cmd.Wait()
	wall := time.Since(start)
	var cpuAll float64
	if cmd.ProcessState != nil {
		cpuAll = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}

	b, _ := os.ReadFile(times.Name())
	type pkg struct {
		name      string
		wall, cpu float64
	}
	var ps []pkg
	var cpuTests float64
	root, _ := os.Getwd()
	for line := range strings.Lines(string(b)) {
		var p pkg
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 3 {
			continue
		}
		p.name = f[0]
		if rel, err := filepath.Rel(root, f[0]); err == nil {
			p.name = "./" + rel
		}
		fmt.Sscan(f[1], &p.wall) //nolint:errcheck // written above
		fmt.Sscan(f[2], &p.cpu)  //nolint:errcheck // written above
		cpuTests += p.cpu
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].cpu > ps[j].cpu })
	fmt.Fprintf(stdout, "%-36s %8s %8s\n", "package (by CPU)", "wall s", "CPU s")
	for _, p := range ps {
		fmt.Fprintf(stdout, "%-36s %8.2f %8.2f\n", p.name, p.wall, p.cpu)
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].elapsed > tests[j].elapsed })
	fmt.Fprintf(stdout, "\nslowest top-level tests (elapsed s, as go test reports it)\n")
	for _, t := range tests[:min(*top, len(tests))] {
		fmt.Fprintf(stdout, "%8.2f %s %s\n", t.elapsed, t.action, t.name)
	}
	fmt.Fprintf(stdout, "\ngo test %s: %.1f s wall, %.1f s CPU (test binaries %.1f s, go command and compiles %.1f s); load average %s at the start, %s at the end\n",
		strings.Join(testArgs, " "), wall.Seconds(), cpuAll, cpuTests, cpuAll-cpuTests, load0, loadavg())
	if werr != nil || len(failed) > 0 {
		fmt.Fprintf(stdout, "FAILED: %d packages (%v)\n", len(failed), werr)
		for p := range failed {
			fmt.Fprintf(stdout, "  package %s\n", strings.TrimPrefix(p, module))
		}
		for _, t := range failedTests {
			fmt.Fprintf(stdout, "  test %s\n", t)
		}
		return 1
	}
	return 0
}

// loadavg is the 1-minute load average, or "?" off Linux.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
