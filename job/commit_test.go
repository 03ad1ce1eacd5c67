package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/check/checkfile"
	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/metrics"
)

// The crash-point matrix of atomic commits, through the whole run (the
// package internal/commit tests the protocol alone): a run over an input
// whose previous run's outputs are in place fails, or is SIGKILLed, after
// each write, sync and rename step of its commit, for a file and a
// directory input, JSONL and Parquet. A reader then looks at every output
// name (records, rejects, outcomes, metrics).

// runLayout is one kind of run: a file or a directory input, in a format.
type runLayout struct {
	name   string
	dir    bool
	format string
}

var runLayouts = []runLayout{
	{"file-jsonl", false, format.JSONL},
	{"file-parquet", false, format.Parquet},
	{"dir-jsonl", true, format.JSONL},
	{"dir-parquet", true, format.Parquet},
}

// gens: a generation of the input is a number of records (and, in JSONL,
// of rejected lines), so each output of a generation has its own count.
var gens = map[string]struct{ records, bad int }{"old": {3, 1}, "new": {5, 2}, "next": {2, 0}}

// writeInputs (re)writes the layout's input under root for generation gen
// and returns the run's spec.
func writeInputs(t testing.TB, l runLayout, root, gen string) Spec {
	t.Helper()
	g := gens[gen]
	files := []string{"a." + l.format}
	in := filepath.Join(root, files[0])
	if l.dir {
		in = filepath.Join(root, "runs")
		files = []string{filepath.Join("runs", "x."+l.format), filepath.Join("runs", "sub", "y."+l.format)}
	}
	for fi, name := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := format.Create(path, l.format, format.Schema{}, format.Column{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range g.records + fi {
			rec := fmt.Sprintf(`{"id":"%s-%d-%d","conversations":[{"from":"human","value":"hello from %s %d"},{"from":"gpt","value":"hi"}]}`, gen, fi, i, gen, i)
			if err := w.Write([]byte(rec)); err != nil {
				t.Fatal(err)
			}
			if l.format == format.JSONL && i < g.bad {
				if err := w.Write([]byte("not json " + gen)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return Spec{Config: config.Default(), Settings: Settings{Input: in, Paths: Paths{Outcomes: filepath.Join(root, "outcomes.jsonl")}}}
}

// signature is what a reader finds under each output name: a count of
// records (lines, rows, records_in of the metrics), -1 for no file.
func signature(t testing.TB, p Plan) map[string]int64 {
	t.Helper()
	sig := map[string]int64{}
	count := func(path string) int64 {
		if _, err := os.Stat(path); err != nil {
			return -1
		}
		if path == p.Metrics {
			var m struct {
				Outcomes struct {
					RecordsIn int64 `json:"records_in"`
				} `json:"outcomes"`
			}
			b, err := os.ReadFile(path)
			if err != nil || json.Unmarshal(b, &m) != nil {
				return -2 // unreadable metrics
			}
			return m.Outcomes.RecordsIn
		}
		in, err := format.Open(path, format.Options{})
		if err != nil {
			return -2
		}
		defer in.Close()
		var n int64
		for {
			if _, _, err := in.Next(); err == io.EOF {
				return n
			} else if err != nil {
				return -2
			}
			n++
		}
	}
	for _, f := range p.Files {
		sig[f.Out] = count(f.Out)
	}
	for _, s := range []string{p.Metrics, p.Rejects, p.Outcomes} {
		sig[s] = count(s)
	}
	return sig
}

// readerFinds names the generation a reader finds: "old" or "new" when
// every output is that generation's (and the metrics vouch for the
// outputs beside them), else "mixed" with what differs.
func readerFinds(t testing.TB, p Plan, want map[string]map[string]int64) string {
	t.Helper()
	got := signature(t, p)
	for _, gen := range []string{"old", "new"} {
		if equalSig(got, want[gen]) {
			var m struct {
				Run struct {
					Outputs []metrics.OutputFile `json:"outputs"`
				} `json:"run"`
			}
			b, _ := os.ReadFile(p.Metrics)
			if err := json.Unmarshal(b, &m); err != nil {
				return "unreadable metrics"
			}
			if err := checkfile.VerifyOutputs(p.Metrics, m.Run.Outputs); err != nil {
				return "metrics not vouching: " + err.Error()
			}
			return gen
		}
	}
	var diff []string
	for k, v := range got {
		diff = append(diff, fmt.Sprintf("%s=%d(old %d, new %d)", filepath.Base(k), v, want["old"][k], want["new"][k]))
	}
	sort.Strings(diff)
	return "mixed: " + strings.Join(diff, " ")
}

func equalSig(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// leftoversUnder lists files of a commit (staged, set aside, temporary,
// journal, lock) anywhere under root.
func leftoversUnder(t testing.TB, root string) []string {
	var lo []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && (strings.Contains(d.Name(), ".tc-") || strings.Contains(d.Name(), ".tmp-") || strings.HasSuffix(d.Name(), ".partial")) {
			lo = append(lo, path)
		}
		return nil
	})
	return lo
}

// runGen runs generation gen over the layout in root with the fault hook.
func runGen(t testing.TB, l runLayout, root, gen string, fault func(string) error) (Plan, error) {
	t.Helper()
	spec := writeInputs(t, l, root, gen)
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	unset := setFault(root, fault)
	defer unset()
	_, err = Run(context.Background(), spec)
	return p, err
}

// faults are the commit fault hooks of the runs under way, by the
// directory their outputs are under: commitFault looks them up, so that
// the cases of a matrix, each in a root of its own, run at the same time.
var faults struct {
	sync.Mutex
	under map[string]func(string) error
}

func init() { commitFault = faultUnder }

// faultUnder is the hook set for the root anchor is under, or nil.
func faultUnder(anchor string) func(string) error {
	faults.Lock()
	defer faults.Unlock()
	for root, f := range faults.under {
		if strings.HasPrefix(anchor, root+string(filepath.Separator)) {
			return f
		}
	}
	return nil
}

// setFault makes fault the commit fault hook of the runs whose outputs
// are under root (none: nil), until the function it returns is called.
func setFault(root string, fault func(string) error) (unset func()) {
	root = filepath.Clean(root)
	faults.Lock()
	defer faults.Unlock()
	if faults.under == nil {
		faults.under = map[string]func(string) error{}
	}
	if _, ok := faults.under[root]; ok {
		panic("two fault hooks for " + root)
	}
	faults.under[root] = fault
	return func() {
		faults.Lock()
		defer faults.Unlock()
		delete(faults.under, root)
	}
}

// matrixParallel is how many cases of a crash matrix run at a time: each
// works in a root of its own and mostly waits (on syncs, on a child
// process), so one at a time left the machine idle.
const matrixParallel = 4

// runCases runs f for each name as a subtest, matrixParallel at a time
// (t.Run from several goroutines, so go test's -parallel, the number of
// CPUs, does not bound cases that wait), and returns when all are done.
func runCases(t *testing.T, names []string, f func(t *testing.T, i int)) {
	sem := make(chan struct{}, matrixParallel)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			t.Run(name, func(t *testing.T) { f(t, i) })
		}()
	}
	wg.Wait()
}

// expected runs each generation once in a scratch root (the counts do not
// depend on where) and lists the commit's steps of a run over an old one.
func expected(t *testing.T, l runLayout) (want map[string]map[string]int64, steps []string, root func() string) {
	want = map[string]map[string]int64{}
	base := t.TempDir()
	root = func() string {
		d, err := os.MkdirTemp(base, "r")
		if err != nil {
			panic(err) // called from the cases' goroutines: not t.Fatal
		}
		return d
	}
	// Signatures are keyed by path: take them in one root, then compare in
	// others by rebasing.
	ref := root()
	for _, gen := range []string{"old", "new"} {
		var seen []string
		p, err := runGen(t, l, ref, gen, func(s string) error { seen = append(seen, s); return nil })
		if err != nil {
			t.Fatal(err)
		}
		want[gen] = rebase(signature(t, p), ref, "")
		if gen == "new" {
			steps = seen
		}
	}
	if len(steps) < 8 {
		t.Fatalf("only %d commit steps: %v", len(steps), steps)
	}
	return want, steps, root
}

// rebase rewrites the keys of sig from under one root to under another.
func rebase(sig map[string]int64, from, to string) map[string]int64 {
	out := make(map[string]int64, len(sig))
	for k, v := range sig {
		rel, _ := filepath.Rel(from, k)
		out[filepath.Join(to, rel)] = v
	}
	return out
}

func wantIn(want map[string]map[string]int64, root string) map[string]map[string]int64 {
	return map[string]map[string]int64{"old": rebase(want["old"], "", root), "new": rebase(want["new"], "", root)}
}

// TestRunFailureAtEveryCommitStep: an error injected after each step of
// the commit fails the run, and a reader finds entirely the previous run's
// outputs (or, when it comes after the commit is complete, the new run's,
// reported as success). A failed run keeps its finished tasks: run again,
// it resumes and puts the new outputs in place without reading a record;
// the next run after that leaves nothing of ours behind.
func TestRunFailureAtEveryCommitStep(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash matrix: the full test run only (make test), not -short")
	}
	cases, names := stepCases(t, runLayouts)
	runCases(t, names, func(t *testing.T, i int) {
		l, step, want := cases[i].l, cases[i].step, cases[i].want
		root := cases[i].mkroot()
		if _, err := runGen(t, l, root, "old", nil); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("injected")
		p, err := runGen(t, l, root, "new", func(s string) error {
			if s == step {
				return boom
			}
			return nil
		})
		got := readerFinds(t, p, wantIn(want, root))
		done := strings.HasPrefix(step, "remove ") // after the last rename: done
		if done {
			if err != nil || got != "new" {
				t.Fatalf("err %v, reader finds %s", err, got)
			}
		} else if !errors.Is(err, boom) || got != "old" {
			t.Fatalf("err %v, reader finds %s: want the injected error and the old outputs", err, got)
		}
		t.Logf("%-12s | fail after %-40s | reader finds %s", l.name, step, got)
		if !done {
			resumeNew(t, l, root, p, want)
		}
		if _, err := runGen(t, l, root, "next", nil); err != nil {
			t.Fatal(err)
		}
		if lo := leftoversUnder(t, root); len(lo) > 0 {
			t.Fatalf("left behind after the next run: %v", lo)
		}
	})
}

// stepCase is a case of a commit step matrix: a layout, the step after
// which its run fails or is killed, what each generation writes, and
// where a case makes its root.
type stepCase struct {
	l      runLayout
	step   string
	want   map[string]map[string]int64
	mkroot func() string
}

// stepCases are the cases of a commit step matrix over layouts, every
// step of each, and their names.
func stepCases(t *testing.T, layouts []runLayout) (cases []stepCase, names []string) {
	for _, l := range layouts {
		want, steps, mkroot := expected(t, l)
		for k, step := range steps {
			cases = append(cases, stepCase{l, step, want, mkroot})
			names = append(names, fmt.Sprintf("%s/%02d_%s", l.name, k, step))
		}
	}
	return cases, names
}

// resumeNew runs the new generation again over a run that failed or was
// killed with every task done: it must resume (no task run again) and put
// the new outputs in place.
func resumeNew(t testing.TB, l runLayout, root string, p Plan, want map[string]map[string]int64) {
	t.Helper()
	if _, err := os.Stat(runDirOf(p.anchor(false))); err != nil {
		t.Fatalf("the failed run did not keep its tasks: %v", err)
	}
	spec := writeInputsSpec(l, root)
	var notes strings.Builder
	spec.Notes = &notes
	if _, err := Run(context.Background(), spec); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	if !strings.Contains(notes.String(), "resuming") {
		t.Fatalf("the run did not resume: %q", notes.String())
	}
	if got := readerFinds(t, p, wantIn(want, root)); got != "new" {
		t.Fatalf("after resuming, a reader finds %s", got)
	}
	if _, err := os.Stat(runDirOf(p.anchor(false))); err == nil {
		t.Fatalf("the finished run left its run directory")
	}
}

// TestRunKillAtEveryCommitStep SIGKILLs a child process running the new
// run after each step of its commit. What a reader finds right after the
// kill is logged (mixed only between the commit point and the end of the
// renames); after recovery — which the next run on the output, and check,
// do first — it is entirely old or entirely new, the metrics vouch for
// the outputs, and after the next run nothing of ours is left.
func TestRunKillAtEveryCommitStep(t *testing.T) {
	t.Parallel()
	if os.Getenv("JOB_KILL_STEP") != "" {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("crash matrix: the full test run only (make test), not -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	layouts := runLayouts
	if testing.Short() { // the -race pass: one layout; the full matrix runs without -short
		layouts = layouts[:1]
	}
	cases, names := stepCases(t, layouts)
	matrix := make([]string, len(cases))
	runCases(t, names, func(t *testing.T, i int) {
		l, step, want := cases[i].l, cases[i].step, cases[i].want
		root := cases[i].mkroot()
		if _, err := runGen(t, l, root, "old", nil); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestRunKillChild$")
		cmd.Env = append(os.Environ(), "JOB_KILL_STEP="+step, "JOB_KILL_ROOT="+root, "JOB_KILL_LAYOUT="+l.name)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("%s/%s: child was not killed: %v\n%s", l.name, step, err, out)
		}
		p, err := NewPlan(writeInputsSpec(l, root))
		if err != nil {
			t.Fatal(err)
		}
		w := wantIn(want, root)
		raw := readerFinds(t, p, w)
		anchor := p.Files[0].Out
		if p.Dir != "" {
			anchor = p.Dir
		}
		recovered, err := commit.Recover(anchor)
		if err != nil {
			t.Fatalf("%s/%s: recover: %v", l.name, step, err)
		}
		after := readerFinds(t, p, w)
		if after != "old" && after != "new" {
			t.Fatalf("%s/%s: after recovery a reader finds %s", l.name, step, after)
		}
		if strings.HasPrefix(raw, "mixed") {
			raw = "mixed"
		}
		matrix[i] = fmt.Sprintf("%-12s | kill after %-40s | right after: %-5s | recovered %-5v | then: %s", l.name, step, raw, recovered, after)
		if after == "old" {
			resumeNew(t, l, root, p, want)
		} else if _, err := os.Stat(runDirOf(p.anchor(false))); err == nil {
			t.Fatalf("%s/%s: the new outputs are in place but the run directory is left", l.name, step)
		}
		if _, err := runGen(t, l, root, "next", nil); err != nil {
			t.Fatal(err)
		}
		if lo := leftoversUnder(t, root); len(lo) > 0 {
			t.Fatalf("%s/%s: left behind after the next run: %v", l.name, step, lo)
		}
	})
	for _, m := range matrix {
		t.Log(m)
	}
}

// writeInputsSpec is the spec writeInputs returns, without writing.
func writeInputsSpec(l runLayout, root string) Spec {
	in := filepath.Join(root, "a."+l.format)
	if l.dir {
		in = filepath.Join(root, "runs")
	}
	return Spec{Config: config.Default(), Settings: Settings{Input: in, Paths: Paths{Outcomes: filepath.Join(root, "outcomes.jsonl")}}}
}

// TestRunKillChild is the child of TestRunKillAtEveryCommitStep: it runs
// the new generation and kills itself after the step it is given.
func TestRunKillChild(t *testing.T) {
	step := os.Getenv("JOB_KILL_STEP")
	if step == "" {
		t.Skip("run by TestRunKillAtEveryCommitStep")
	}
	l := runLayouts[slices.IndexFunc(runLayouts, func(l runLayout) bool { return l.name == os.Getenv("JOB_KILL_LAYOUT") })]
	runGen(t, l, os.Getenv("JOB_KILL_ROOT"), "new", func(s string) error {
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
		return nil
	})
	t.Fatal("the step never came")
}

// TestConcurrentRunsNeverMix: two runs on the same outputs at the same
// time, from different inputs, with and without --wait. Without it one
// may fail at once (locked, a UsageError); whatever the timing, the
// outputs in place are one run's, and its metrics vouch for them
// (before the lock, 4 of 60 trials mixed one run's output with
// the other's metrics).
func TestConcurrentRunsNeverMix(t *testing.T) {
	t.Parallel()
	trials := 60
	if testing.Short() {
		trials = 15
	}
	locked := 0
	for trial := range trials {
		dir := t.TempDir()
		out := filepath.Join(dir, "o.jsonl")
		var specs [2]Spec
		for i := range specs {
			body := strings.Repeat(rec, i+1) // run i writes i+1 records
			specs[i] = Spec{Config: config.Default(), Settings: Settings{Input: input(t, dir, fmt.Sprintf("in%d.jsonl", i), body), Paths: Paths{Output: out}}, Wait: trial%2 == 0}
		}
		errs := make(chan error, 2)
		for _, s := range specs {
			go func() { _, err := Run(context.Background(), s); errs <- err }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				var ue UsageError
				if !asUsage(err, &ue) || !errors.Is(err, commit.ErrLocked) || specs[0].Wait {
					t.Fatalf("trial %d: %v", trial, err)
				}
				locked++
			}
		}
		p, _ := NewPlan(specs[0])
		sig := signature(t, p)
		if sig[out] != sig[p.Metrics] || sig[p.Metrics] < 1 {
			t.Fatalf("trial %d: the output holds %d records, the metrics say %d", trial, sig[out], sig[p.Metrics])
		}
		if got := readerFinds(t, p, map[string]map[string]int64{"old": sig}); got != "old" {
			t.Fatalf("trial %d: %s", trial, got)
		}
	}
	t.Logf("%d trials, %d runs refused as locked, every output set one run's", trials, locked)
}
