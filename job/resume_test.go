package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// Resume: kill a run anywhere and it finishes the same. A child
// process runs a compress job over inputs of several tasks and is
// SIGKILLed after a random delay; the same job run again goes on from the
// tasks the child finished. Its outputs must be byte for byte those of an
// uninterrupted run, its metrics the same but for the processing times
// (so no record counted twice), and nothing of ours may be left.

// resumeLayout is an input kind of the trials.
type resumeLayout struct {
	name   string
	dir    bool
	format string
}

var resumeLayouts = []resumeLayout{
	{"file-jsonl", false, format.JSONL},
	{"file-parquet", false, format.Parquet},
	{"dir-jsonl", true, format.JSONL},
	{"dir-parquet", true, format.Parquet},
}

// resumeInput writes the layout's input under base: generated agent runs,
// about 3 MB per file, so that a 1 MiB task size makes several tasks (a
// Parquet file several row groups), and returns its path.
func resumeInput(t testing.TB, l resumeLayout, base string) string {
	t.Helper()
	write := func(path string, seed uint64) {
		w, err := createGroups(path, l.format)
		if err != nil {
			t.Fatal(err)
		}
		count := 120
		if l.format == format.Parquet { // compressed: more records for as many MiB
			count = 400
		}
		err = gen.Generate(gen.Options{Count: count, Seed: seed, Profile: "mix", MedianTokens: 3000, P99Tokens: 20000}, func(line []byte) error {
			return w.Write(line)
		})
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(base, 0o755)
	if !l.dir {
		p := filepath.Join(base, "in."+l.format)
		write(p, 11)
		return p
	}
	d := filepath.Join(base, "runs")
	os.MkdirAll(filepath.Join(d, "sub"), 0o755)
	write(filepath.Join(d, "a."+l.format), 12)
	write(filepath.Join(d, "sub", "b."+l.format), 13)
	return d
}

// createGroups is a writer of path; Parquet gets small row groups (256
// KiB of JSON each) and leaves out the malformed generated lines, which a
// Parquet row cannot hold.
func createGroups(path, f string) (format.Writer, error) {
	if f == format.JSONL {
		return format.Create(path, f, format.Schema{}, format.Column{})
	}
	return &smallGroups{path: path}, nil
}

type smallGroups struct {
	path string
	recs [][]byte
}

func (s *smallGroups) Write(rec []byte) error {
	if json.Valid(rec) && rec[0] == '{' {
		s.recs = append(s.recs, append([]byte(nil), rec...))
	}
	return nil
}

func (s *smallGroups) Close() error {
	sch, err := parquet.InferSchema(s.recs)
	if err != nil {
		return err
	}
	w, err := parquet.Create(s.path, sch, parquet.WriterOptions{RowGroupBytes: 256 << 10})
	if err != nil {
		return err
	}
	for _, r := range s.recs {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return w.Close()
}

func (s *smallGroups) Abort() error { return nil }

// resumeSpec is the spec of a trial: the input, the output under root.
func resumeSpec(in, root string, dir bool, workers int) Spec {
	cfg := config.Default()
	cfg.Processing.NumWorkers = workers
	cfg.Compression.TargetMaxTokens = 4000
	out := filepath.Join(root, "out.jsonl")
	if strings.HasSuffix(in, ".parquet") {
		out = filepath.Join(root, "out.parquet")
	}
	if dir {
		out = filepath.Join(root, "out")
	}
	return Spec{Config: cfg, Settings: Settings{Input: in, TaskSize: 1 << 20, Paths: Paths{Output: out, Outcomes: filepath.Join(root, "outcomes.jsonl")}}}
}

// snapshot is every file of ours under root: outputs byte for byte, the
// metrics without their processing times; and any leftover.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		b, _ := os.ReadFile(path)
		if strings.HasSuffix(path, "metrics.json") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			delete(m, "processing")
			b, _ = json.Marshal(m)
		}
		out[rel] = string(b)
		return nil
	})
	return out
}

func TestKillAnywhereAndResume(t *testing.T) {
	t.Parallel()
	if os.Getenv("JOB_RESUME_CHILD") != "" {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("crash matrix: the full test run only (make test), not -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	trials := 3 // per layout and worker count: 24 at least, more until 20 were killed mid-run
	layouts := resumeLayouts
	if testing.Short() {
		trials, layouts = 2, resumeLayouts[:2]
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	base := t.TempDir()
	var log []string
	killed := 0
	for _, l := range layouts {
		in := resumeInput(t, l, filepath.Join(base, l.name))
		for _, workers := range []int{1, 2} {
			// The uninterrupted run, and how long it takes.
			ref := filepath.Join(base, fmt.Sprintf("%s-w%d-ref", l.name, workers))
			os.MkdirAll(ref, 0o755)
			t0 := time.Now()
			res, err := Run(context.Background(), resumeSpec(in, ref, l.dir, workers))
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(t0)
			want := snapshot(t, ref)
			tasks := 0
			if ls, ts, err := listing(res.Plan, false, 1<<20); err == nil {
				tasks, _ = len(ts), ls
			}
			if tasks < 3 {
				t.Fatalf("%s: %d tasks: the trials need several", l.name, tasks)
			}
			for trial := 0; trial < trials || (!testing.Short() && l == layouts[len(layouts)-1] && workers == 2 && killed < 20 && trial < 4*trials); trial++ {
				root := filepath.Join(base, fmt.Sprintf("%s-w%d-%d", l.name, workers, trial))
				os.MkdirAll(root, 0o755)
				// A child process (its start-up included) killed after a
				// random part of the uninterrupted run's time.
				delay := time.Duration(r.Float64() * float64(took+100*time.Millisecond))
				cmd := exec.Command(exe, "-test.run=^TestResumeChild$")
				cmd.Env = append(os.Environ(), "JOB_RESUME_CHILD=1", "JOB_RESUME_IN="+in, "JOB_RESUME_ROOT="+root,
					"JOB_RESUME_DIR="+strconv.FormatBool(l.dir), "JOB_RESUME_WORKERS="+strconv.Itoa(workers))
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				var how string
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("child: %v", err)
					}
					how = "finished before the kill"
				case <-time.After(delay):
					cmd.Process.Kill()
					<-done
					killed++
					how = "killed"
				}
				doneTasks := countMarkers(root)
				// Go on: the same job, in this process.
				spec := resumeSpec(in, root, l.dir, workers)
				var notes strings.Builder
				spec.Notes = &notes
				if _, err := Run(context.Background(), spec); err != nil {
					t.Fatalf("%s w%d trial %d (%s after %v, %d tasks done): resume: %v", l.name, workers, trial, how, delay, doneTasks, err)
				}
				got := snapshot(t, root)
				if d := diffSnapshots(want, got); d != "" {
					t.Fatalf("%s w%d trial %d (%s after %v, %d tasks done): %s", l.name, workers, trial, how, delay, doneTasks, d)
				}
				log = append(log, fmt.Sprintf("%-12s workers %d trial %d: %-24s after %4dms, %d of %d tasks done, resumed: same bytes, same metrics",
					l.name, workers, trial, how, delay.Milliseconds(), doneTasks, tasks))
			}
		}
	}
	for _, s := range log {
		t.Log(s)
	}
	t.Logf("%d trials, %d killed mid-run", len(log), killed)
	if !testing.Short() && killed < 20 {
		t.Fatalf("only %d of %d trials were killed before they finished", killed, len(log))
	}
}

// countMarkers is how many tasks of the run under root are done.
func countMarkers(root string) int {
	n := 0
	filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(path, runDirSuffix+string(filepath.Separator)+"tasks") && strings.HasSuffix(path, ".json") {
			n++
		}
		return nil
	})
	return n
}

func diffSnapshots(want, got map[string]string) string {
	var d []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			d = append(d, k+" is missing")
		} else if g != v {
			d = append(d, fmt.Sprintf("%s differs (%d bytes, want %d)", k, len(g), len(v)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, k+" is left over")
		}
	}
	slices.Sort(d)
	return strings.Join(d, "; ")
}

// TestResumeChild is the child of TestKillAnywhereAndResume.
func TestResumeChild(t *testing.T) {
	t.Parallel()
	if os.Getenv("JOB_RESUME_CHILD") == "" {
		t.Skip("run by TestKillAnywhereAndResume")
	}
	workers, _ := strconv.Atoi(os.Getenv("JOB_RESUME_WORKERS"))
	spec := resumeSpec(os.Getenv("JOB_RESUME_IN"), os.Getenv("JOB_RESUME_ROOT"), os.Getenv("JOB_RESUME_DIR") == "true", workers)
	if _, err := Run(context.Background(), spec); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
