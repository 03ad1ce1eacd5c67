package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/check/checkfile"
	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/task"
)

// The tamper matrix of verified reuse: a run directory whose every task
// is done (the run failed at its commit, or its shards finished) is
// changed as a hostile user, a bad disk or a network file system would
// change it — a byte flipped in a segment (same length), a segment cut
// short, two segments of the same length swapped, a count edited in a
// task's metrics state (with its checksum left stale, or made to match),
// a marker deleted, markers of a trajcompress that wrote no checksums.
// A resumed run must end with the outputs and metrics of an uninterrupted
// run, having said which tasks it ran again and why; a merge must refuse,
// naming the shard, the task and what differs, put nothing in place, and
// merge the same outputs once the shard named has run again. Never a
// silently different output.

// reuseInput writes the inputs of the matrix under dir: a JSONL file of
// three tasks at 1 MiB (with malformed lines, so rejects), two small
// files holding the same records in two orders (whole-file segments of
// equal length, to swap) and a Parquet file (a whole segment in its own
// format).
func reuseInput(t testing.TB, dir string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	lines := func(o gen.Options) [][]byte {
		var out [][]byte
		if err := gen.Generate(o, func(line []byte) error { out = append(out, append(slices.Clone(line), '\n')); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	big := lines(gen.Options{Count: 120, Seed: 31, MedianTokens: 3000, P99Tokens: 20000})
	small := lines(gen.Options{Count: 12, Seed: 32, MedianTokens: 2000, P99Tokens: 8000})
	rev := slices.Clone(small)
	slices.Reverse(rev)
	for name, ls := range map[string][][]byte{"a.jsonl": big, "b.jsonl": small, "c.jsonl": rev} {
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Join(ls, nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := createGroups(filepath.Join(dir, "sub", "d.parquet"), format.Parquet)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(gen.Options{Count: 20, Seed: 33, MedianTokens: 2000, P99Tokens: 8000}) {
		w.Write(bytes.TrimSuffix(l, []byte("\n")))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// reuseSpec is the spec of a run of the matrix's inputs into root/out,
// with outcomes (and rejects, by default) beside it.
func reuseSpec(in, root string, shard task.Shard) Spec {
	cfg := config.Default()
	cfg.Processing.NumWorkers = 2
	cfg.Compression.TargetMaxTokens = 4000
	return Spec{Config: cfg, Shard: shard, Settings: Settings{Input: in, TaskSize: 1 << 20,
		Paths: Paths{Output: filepath.Join(root, "out"), Outcomes: filepath.Join(root, "outcomes.jsonl")}}}
}

// tamper is one change made to a run directory whose every task is done.
type tamper struct {
	name string
	// do changes the run directory rd and returns the tasks it damaged.
	do func(t *testing.T, rd *runDir) []int
	// why is what the note or the refusal says of a damaged task.
	why string
	// missing: the change leaves tasks not done (a merge names them as
	// missing, not as failing verification).
	missing bool
	// marker: the change is to markers' own bytes, which a shard checks
	// of its siblings' tasks too.
	marker bool
}

// tampersToRun are the matrix's changes; -short (the race detector's
// pass) runs two of them: a byte flipped, a count edited.
func tampersToRun() []tamper {
	if !testing.Short() {
		return tampers
	}
	return []tamper{tampers[0], tampers[6]}
}

// readRunDir reads the run directory of the output set anchored at anchor,
// as a resumed run would (without verifying it).
func readRunDir(t *testing.T, anchor string) *runDir {
	t.Helper()
	rd := &runDir{path: runDirOf(anchor)}
	ents, err := os.ReadDir(filepath.Join(rd.path, "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	tasks := make([]task.Task, n)
	for i := range tasks {
		tasks[i].Index = i
	}
	if _, err := rd.readMarkers(tasks); err != nil {
		t.Fatal(err)
	}
	for i, m := range rd.markers {
		if m == nil || m.bad != "" {
			t.Fatalf("task %d: marker %v before any change", i, m)
		}
	}
	return rd
}

// taskOf is the first task whose span of seg holds byte off.
func taskOf(t *testing.T, rd *runDir, seg string, off int64) int {
	t.Helper()
	for _, m := range rd.markers {
		for _, sp := range []*span{m.Output, m.Rejects, m.Outcomes} {
			if sp != nil && sp.Seg == seg && sp.Start <= off && off < sp.End {
				return m.Task
			}
		}
	}
	t.Fatalf("no task's span of %s holds byte %d", seg, off)
	return -1
}

// outputSpan is the output span of the markers' k-th task of file f with
// parts > 1, and the task.
func outputSpan(t *testing.T, rd *runDir, f, k int) (*span, int) {
	t.Helper()
	for _, m := range rd.markers {
		if m.File == f && m.Part == k && m.Parts > 1 {
			return m.Output, m.Task
		}
	}
	t.Fatalf("file %d has no part %d", f, k)
	return nil, -1
}

// wholeOf is the task and whole-file segment of file f.
func wholeOf(t *testing.T, rd *runDir, f int) (string, int) {
	t.Helper()
	for _, m := range rd.markers {
		if m.File == f && m.Parts == 1 {
			return m.Output.Seg, m.Task
		}
	}
	t.Fatalf("file %d is not one task", f)
	return "", -1
}

// flipDigit changes the first digit 1-8 at or after off in seg to the
// next digit: the same length, still JSON, another record.
func flipDigit(t *testing.T, rd *runDir, seg string, off int64) int64 {
	t.Helper()
	p := rd.segPath(seg)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < int64(len(b)); i++ {
		if b[i] >= '1' && b[i] <= '8' {
			b[i]++
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return i
		}
	}
	t.Fatalf("%s: no digit after %d", seg, off)
	return -1
}

// rewriteMarker rewrites the marker of task i after edit: sealed again
// when reseal, else with the checksum it had.
func rewriteMarker(t *testing.T, rd *runDir, i int, reseal bool, edit func(m *marker)) {
	t.Helper()
	m := rd.markers[i]
	edit(m)
	b, err := json.Marshal(m)
	if reseal {
		b, err = m.seal()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rd.markerPath(i), append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// inflateRecords adds n records to a count of the marker's metrics state
// (records_in and records_out grow by n).
func inflateRecords(t *testing.T, m *marker, n int64) {
	t.Helper()
	var st map[string]json.RawMessage
	if err := json.Unmarshal(m.State, &st); err != nil {
		t.Fatal(err)
	}
	var oc map[string]int64
	json.Unmarshal(st["outcomes"], &oc)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range oc {
			if !yield(k) {
				return
			}
		}
	}) {
		if k != "invalid" {
			oc[k] += n
			break
		}
	}
	st["outcomes"], _ = json.Marshal(oc)
	m.State, _ = json.Marshal(st)
}

var tampers = []tamper{
	{"flip a byte in a segment", func(t *testing.T, rd *runDir) []int {
		sp, task := outputSpan(t, rd, 0, 1)
		flipDigit(t, rd, sp.Seg, (sp.Start+sp.End)/2)
		return []int{task}
	}, "have xxh3-128", false, false},
	{"flip a byte in the outcome lines", func(t *testing.T, rd *runDir) []int {
		sp := rd.markers[0].Outcomes
		at := flipDigit(t, rd, sp.Seg, sp.Start)
		return []int{taskOf(t, rd, sp.Seg, at)}
	}, "have xxh3-128", false, false},
	{"flip a byte in a Parquet segment", func(t *testing.T, rd *runDir) []int {
		seg, task := wholeOf(t, rd, 3)
		p := rd.segPath(seg)
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 0x01
		os.WriteFile(p, b, 0o644)
		return []int{task}
	}, "have xxh3-128", false, false},
	{"truncate a segment", func(t *testing.T, rd *runDir) []int {
		sp, task := outputSpan(t, rd, 0, 1)
		if err := os.Truncate(rd.segPath(sp.Seg), (sp.Start+sp.End)/2); err != nil {
			t.Fatal(err)
		}
		// Every task whose span reaches past the cut.
		var hit []int
		for _, m := range rd.markers {
			if m.Output != nil && m.Output.Seg == sp.Seg && m.Output.End > (sp.Start+sp.End)/2 {
				hit = append(hit, m.Task)
			}
		}
		if !slices.Contains(hit, task) {
			t.Fatal("the cut spares the task it cuts")
		}
		return hit
	}, "cut short", false, false},
	{"swap two segments of the same length", func(t *testing.T, rd *runDir) []int {
		s1, t1 := wholeOf(t, rd, 1)
		s2, t2 := wholeOf(t, rd, 2)
		p1, p2 := rd.segPath(s1), rd.segPath(s2)
		b1, _ := os.ReadFile(p1)
		b2, _ := os.ReadFile(p2)
		if len(b1) != len(b2) || bytes.Equal(b1, b2) {
			t.Fatalf("the segments of b and c are %d and %d bytes (equal: %v): the swap needs two of one length that differ", len(b1), len(b2), bytes.Equal(b1, b2))
		}
		os.WriteFile(p1, b2, 0o644)
		os.WriteFile(p2, b1, 0o644)
		return []int{t1, t2}
	}, "have xxh3-128", false, false},
	{"delete a segment", func(t *testing.T, rd *runDir) []int {
		seg, task := wholeOf(t, rd, 1)
		os.Remove(rd.segPath(seg))
		return []int{task}
	}, "cannot be read", false, false},
	{"edit a count in a task state", func(t *testing.T, rd *runDir) []int {
		rewriteMarker(t, rd, 0, false, func(m *marker) { inflateRecords(t, m, 198) })
		return []int{0}
	}, "does not match its checksum", false, true},
	{"edit a count, checksum made to match", func(t *testing.T, rd *runDir) []int {
		rewriteMarker(t, rd, 0, true, func(m *marker) { inflateRecords(t, m, 198) })
		return []int{0}
	}, "its counts disagree", false, false},
	{"edit rows out and the state, checksum made to match", func(t *testing.T, rd *runDir) []int {
		rewriteMarker(t, rd, 0, true, func(m *marker) { inflateRecords(t, m, 1); m.RowsOut++; m.Lines++ })
		return []int{0}
	}, "lines, but its metrics state counts", false, false},
	{"damage a marker", func(t *testing.T, rd *runDir) []int {
		os.WriteFile(rd.markerPath(2), []byte(`{"version":1,"task":2,`), 0o600)
		return []int{2}
	}, "its marker is damaged", false, true},
	{"delete a marker", func(t *testing.T, rd *runDir) []int {
		os.Remove(rd.markerPath(1))
		return []int{1}
	}, "", true, false},
	{"markers of a trajcompress without checksums", func(t *testing.T, rd *runDir) []int {
		var all []int
		for i := range rd.markers {
			rewriteMarker(t, rd, i, false, func(m *marker) {
				m.Sum, m.Shard = "", nil
				for _, sp := range []*span{m.Output, m.Rejects, m.Outcomes} {
					if sp != nil {
						sp.Sum = ""
					}
				}
			})
			all = append(all, i)
		}
		return all
	}, "has no checksum", false, true},
}

// reuseRef is the uninterrupted run of the matrix's inputs: its
// snapshot, and its inputs' directory.
func reuseRef(t *testing.T) (base, in string, want map[string]string) {
	t.Helper()
	base = t.TempDir()
	in = filepath.Join(base, "in")
	reuseInput(t, in)
	ref := filepath.Join(base, "ref")
	os.MkdirAll(ref, 0o755)
	if _, err := Run(context.Background(), reuseSpec(in, ref, task.Single)); err != nil {
		t.Fatal(err)
	}
	return base, in, snapshot(t, ref)
}

// noteOf is the note a run wrote about task i, "" for none.
func noteOf(notes string, i int) string {
	for _, l := range strings.Split(notes, "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("note: task %d ", i)) {
			return l
		}
	}
	return ""
}

// TestResumeVerifiesWhatItReuses: a run whose every task is done fails at
// its commit; its run directory is changed; run again, it runs again
// exactly the tasks the change damaged (saying why) and puts in place the
// outputs and metrics of an uninterrupted run, which the metrics vouch
// for.
func TestResumeVerifiesWhatItReuses(t *testing.T) {
	t.Parallel()
	base, in, want := reuseRef(t)
	eachTamper(t, base, "resume", func(t *testing.T, tc tamper, root string) string {
		spec := reuseSpec(in, root, task.Single)
		boom := errors.New("injected")
		unset := setFault(root, func(string) error { return boom })
		_, err := Run(context.Background(), spec)
		unset()
		var kept KeptError
		if !errors.As(err, &kept) || kept.Done != kept.Tasks || kept.Tasks < 6 {
			t.Fatalf("the run failing at its commit: %v (want every task of at least 6 kept)", err)
		}
		rd := readRunDir(t, spec.Output)
		hit := tc.do(t, rd)
		var notes strings.Builder
		spec.Notes = &notes
		if _, err := Run(context.Background(), spec); err != nil {
			t.Fatalf("resume after %s: %v\n%s", tc.name, err, notes.String())
		}
		if d := diffSnapshots(want, snapshot(t, root)); d != "" {
			t.Fatalf("after %s, the resumed run's outputs are not an uninterrupted run's: %s\nnotes: %s", tc.name, d, notes.String())
		}
		if err := checkfile.VerifyRunOutputs(filepath.Join(root, "out", "compression_metrics.json")); err != nil {
			t.Fatal(err)
		}
		for i := range rd.markers {
			n := noteOf(notes.String(), i)
			switch {
			case slices.Contains(hit, i) && !tc.missing && (!strings.Contains(n, "is run again") || !strings.Contains(n, tc.why)):
				t.Errorf("task %d (damaged): note %q, want it run again because %q\nall notes: %s", i, n, tc.why, notes.String())
			case !slices.Contains(hit, i) && n != "":
				t.Errorf("task %d (untouched): note %q", i, n)
			}
		}
		if len(hit) < kept.Tasks && !strings.Contains(notes.String(), fmt.Sprintf("resuming the unfinished run in %s: %d of %d tasks are done", rd.path, kept.Tasks-len(hit), kept.Tasks)) {
			t.Errorf("the resume note does not count the %d damaged tasks out: %s", len(hit), notes.String())
		}
		why := tc.why
		if tc.missing {
			why = "(no marker: not done)"
		}
		return fmt.Sprintf("| resume | %s | tasks %v run again: %s | identical to an uninterrupted run |", tc.name, hit, why)
	})
}

// eachTamper runs f on each change of the matrix, in a root of its own
// under base, several at a time (runCases), and logs the table rows f
// returns in the matrix's order.
func eachTamper(t *testing.T, base, what string, f func(t *testing.T, tc tamper, root string) string) {
	tcs := tampersToRun()
	names := make([]string, len(tcs))
	for k, tc := range tcs {
		names[k] = strings.ReplaceAll(tc.name, " ", "_")
	}
	table := make([]string, len(tcs))
	runCases(t, names, func(t *testing.T, k int) {
		root := filepath.Join(base, fmt.Sprintf("%s%02d", what, k))
		os.MkdirAll(root, 0o755)
		table[k] = f(t, tcs[k], root)
	})
	for _, l := range table {
		if l != "" {
			t.Log(l)
		}
	}
}

// TestMergeVerifiesWhatItPutsTogether: two shards finish a run; its run
// directory is changed; the merge refuses, naming each damaged task, the
// shard that did it and what differs, and puts nothing in place; the
// shards named run again (redoing those tasks) and the merge then puts in
// place an uninterrupted run's outputs.
func TestMergeVerifiesWhatItPutsTogether(t *testing.T) {
	t.Parallel()
	base, in, want := reuseRef(t)
	eachTamper(t, base, "merge", func(t *testing.T, tc tamper, root string) string {
		shard := func(i int) *strings.Builder {
			spec := reuseSpec(in, root, task.Shard{Index: i, Count: 2})
			var notes strings.Builder
			spec.Notes = &notes
			if _, err := Run(context.Background(), spec); err != nil {
				t.Fatalf("shard %d: %v", i, err)
			}
			return &notes
		}
		shard(0)
		shard(1)
		out := filepath.Join(root, "out")
		rd := readRunDir(t, out)
		hit := tc.do(t, rd)
		_, err := Merge(MergeSpec{Output: out})
		if err == nil {
			t.Fatalf("merge after %s: no error", tc.name)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Fatalf("merge after %s put outputs in place (err %v)", tc.name, err)
		}
		msg := err.Error()
		if tc.missing {
			if !errors.Is(err, ErrTasksMissing) {
				t.Fatalf("merge after %s: %v", tc.name, err)
			}
		} else {
			if !errors.Is(err, ErrUnverified) {
				t.Fatalf("merge after %s: %v, want it refused as unverified", tc.name, err)
			}
			for _, i := range hit {
				line := ""
				for _, l := range strings.Split(msg, "\n") {
					if strings.Contains(l, fmt.Sprintf("task %d ", i)) {
						line = l
					}
				}
				shardName := fmt.Sprintf("shard %d of 2", i%2)
				if tc.why == "has no checksum" || tc.why == "its marker is damaged" {
					shardName = "task i is shard i mod --num-shards's"
				}
				if !strings.Contains(line, tc.why) || !strings.Contains(line, shardName) {
					t.Errorf("merge after %s: task %d named as %q, want %q and %q\n%s", tc.name, i, line, shardName, tc.why, msg)
				}
			}
		}
		// The shards named run again, then the merge.
		var redone []string
		for s := range 2 {
			if !slices.ContainsFunc(hit, func(i int) bool { return i%2 == s }) {
				continue
			}
			notes := shard(s)
			for _, i := range hit {
				if i%2 == s && !tc.missing && !strings.Contains(noteOf(notes.String(), i), "is run again") {
					t.Errorf("shard %d run again: task %d not redone: %s", s, i, notes.String())
				}
				// Its sibling's damaged markers, before that shard runs again.
				if i%2 != s && len(redone) == 0 && tc.marker && !strings.Contains(noteOf(notes.String(), i), "another shard's, fails verification") {
					t.Errorf("shard %d run again: its sibling's task %d not said to fail verification: %s", s, i, notes.String())
				}
			}
			redone = append(redone, fmt.Sprint(s))
		}
		if _, err := Merge(MergeSpec{Output: out}); err != nil {
			t.Fatalf("merge after the shards ran again: %v", err)
		}
		if d := diffSnapshots(want, snapshot(t, root)); d != "" {
			t.Fatalf("after %s and the shards again, the merged outputs are not an uninterrupted run's: %s", tc.name, d)
		}
		first := strings.SplitN(msg, "\n", 3)
		shown := first[0]
		if len(first) > 1 {
			shown = strings.TrimSpace(first[1])
		}
		if len(shown) > 160 {
			shown = shown[:160] + "…"
		}
		return fmt.Sprintf("| merge | %s | refused: %s | shard(s) %s again, merge: identical |", tc.name, shown, strings.Join(redone, ", "))
	})
}

// TestResumeReusesEveryIntactTask: verification never fails a task
// nothing changed — JSON Lines by byte range, Parquet by row groups, a
// file or a directory: a run failing at its commit, resumed, reuses every
// task and runs none again.
func TestResumeReusesEveryIntactTask(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	var layouts []resumeLayout
	var names []string
	for _, l := range resumeLayouts {
		if testing.Short() && l.format != format.JSONL {
			continue // Parquet's many row groups: the full test run only
		}
		layouts, names = append(layouts, l), append(names, l.name)
	}
	runCases(t, names, func(t *testing.T, i int) {
		l := layouts[i]
		in := resumeInput(t, l, filepath.Join(base, l.name))
		root := filepath.Join(base, l.name+"-run")
		os.MkdirAll(root, 0o755)
		spec := resumeSpec(in, root, l.dir, 2)
		unset := setFault(root, func(string) error { return errors.New("injected") })
		_, err := Run(context.Background(), spec)
		unset()
		var kept KeptError
		if !errors.As(err, &kept) || kept.Done != kept.Tasks || kept.Tasks < 3 {
			t.Fatalf("the run failing at its commit: %v", err)
		}
		var notes strings.Builder
		spec.Notes = &notes
		if _, err := Run(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(notes.String(), "run again") || !strings.Contains(notes.String(), fmt.Sprintf("%d of %d tasks are done", kept.Tasks, kept.Tasks)) {
			t.Fatalf("an intact run directory was not reused whole:\n%s", notes.String())
		}
	})
}
