package job

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/task"
)

// listing reads the layout of every input file and splits them into the
// run's tasks (package task): a sampled file, read whole to pick its
// sample, is one task.
func listing(p Plan, sampled bool, target int64) ([]format.Layout, []task.Task, error) {
	layouts := make([]format.Layout, len(p.Files))
	inputs := make([]task.Input, len(p.Files))
	for i, f := range p.Files {
		l, err := format.LayoutOf(f.In)
		if err != nil {
			return nil, nil, err
		}
		if sampled {
			l.Input = task.Input{Kind: task.Whole, Size: l.Size}
		}
		layouts[i], inputs[i] = l, l.Input
	}
	return layouts, task.Split(inputs, target), nil
}

// segFile is a segment being appended to: JSON lines, made durable at the
// end of each task.
type segFile struct {
	name   string
	f      *atomicfile.File
	bw     *bufio.Writer
	end    int64
	synced int64        // bytes made durable by the last checkpoint
	h      *xxh3.Hasher // every byte of the segment, when this process wrote them all
}

func (s *segFile) Write(rec []byte) error {
	s.bw.Write(rec)
	err := s.bw.WriteByte('\n')
	s.end += int64(len(rec)) + 1
	if s.h != nil {
		s.h.Write(rec)
		s.h.Write(newline)
	}
	return err
}

// checkpoint makes the segment durable and returns the span [from, end)
// a task wrote.
func (s *segFile) checkpoint(from int64) (*span, error) {
	if err := s.bw.Flush(); err != nil {
		return nil, err
	}
	if s.end != s.synced { // nothing new: no sync (a rejects segment, mostly)
		if err := s.f.Checkpoint(); err != nil {
			return nil, err
		}
		s.synced = s.end
	}
	sp := &span{Seg: s.name, Start: from, End: s.end, Format: format.JSONL}
	if s.h != nil {
		b := s.h.Sum128().Bytes()
		sp.XXH3 = hex.EncodeToString(b[:])
	}
	return sp, nil
}

func (s *segFile) close() error {
	err := s.bw.Flush()
	if cerr := s.f.Commit(); err == nil {
		err = cerr
	}
	return err
}

// segment opens the segment name for appending after what the committed
// markers cover of it (a killed task's bytes past that are cut off). One
// process running every task keeps each segment open across its tasks.
func (r *runner) segment(name string) (*segFile, error) {
	if s, ok := r.segs[name]; ok {
		return s, nil
	}
	keep := r.committed[name]
	f, err := atomicfile.Append(r.dir.segPath(name), keep)
	if err != nil {
		return nil, err
	}
	s := &segFile{name: name, f: f, bw: bufio.NewWriterSize(f, 1<<20), end: keep, synced: keep}
	if keep == 0 {
		s.h = xxh3.New()
	}
	r.segs[name] = s
	return s, nil
}

// segName names the segment task t writes what into ("out", "rejects",
// "outcomes"): one per file (records) or per run (side lines) when one
// process runs every task, one per task for a shard.
func (r *runner) segName(t task.Task, what string) string {
	if r.shard.Count > 1 {
		return fmt.Sprintf("t%06d.%s.jsonl", t.Index, what)
	}
	if what == "out" {
		return fmt.Sprintf("f%06d.out.jsonl", t.File)
	}
	return what + ".jsonl"
}

// closeSegs closes the open segments (a shard's after each task).
func (r *runner) closeSegs() error {
	var first error
	for name, s := range r.segs {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
		delete(r.segs, name)
	}
	return first
}

// firstLine is the number of lines (rows) of t's file before t, and
// whether it is known: from the layout for row groups and batches, from
// the markers of the file's earlier tasks for byte ranges (a shard may run
// a task before them: its numbers are then relative, fixed when merged).
func (r *runner) firstLine(t task.Task) (int64, bool) {
	l := r.layouts[t.File]
	switch {
	case t.Part == 0:
		return 0, true
	case l.Kind == task.Units:
		var n int64
		for _, rows := range l.Rows[:t.Start] {
			n += rows
		}
		return n, true
	}
	var n int64
	for i := t.Index - t.Part; i < t.Index; i++ {
		m := r.markers[i]
		if m == nil {
			return 0, false
		}
		n += m.Lines
	}
	return n, true
}

// taskHook, when set (by this package's tests only), is called with each
// task when it has read its input ("read", before its input is checked
// again) and when its marker is committed ("committed").
var taskHook func(t task.Task, at string)

// runTask reads task t through the pipeline into its segments and commits
// its marker.
func (r *runner) runTask(ctx context.Context, t task.Task) (err error) {
	f := r.plan.Files[t.File]
	start := time.Now()
	if err := r.checkInput(t.Index, t.File, "started"); err != nil {
		return err
	}
	first, known := r.firstLine(t)
	hasher := jobcore.NewBlockHasher()
	opts := jobcore.InputOptions(r.cfg)
	opts.Hash, opts.Ctx, opts.Stdin, opts.Task, opts.FirstLine = hasher, ctx, r.spec.Stdin, &t, first
	opts.MaxRecordBytes = r.spec.MaxRecordBytes
	in, err := format.Open(f.In, opts)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := in.CheckTurnsColumn(f.In, r.cfg.Input.TurnsKey); err != nil {
		return err
	}
	var src pipeline.Source = in
	if s := r.spec.Sample; s != nil {
		keep, err := sampleLines(ctx, f.In, s.Percent, s.Seed, t.File, r.spec.MaxRecordBytes)
		if err != nil {
			return err
		}
		src = &sampledSource{src: in, keep: keep}
	}
	m := &marker{Version: runVersion, Task: t.Index, File: t.File, Part: t.Part, Parts: t.Parts, Relative: !known}
	a, _ := t.Blocks()
	m.FirstBlock = a

	// Where the records go: the file's own format, when the task is the
	// whole file (renamed into place at the end); else JSON lines.
	var out format.Writer
	var outSeg *segFile
	var outFrom int64
	var whole string // the whole-file segment's path
	var wholeVouch *vouched
	if !r.spec.DryRun {
		if t.Parts == 1 {
			whole = r.dir.segPath(fmt.Sprintf("f%06d.whole%s", t.File, format.Ext(f.OutFormat)))
			var extra format.Column
			if r.cfg.Metrics.PerTrajectory {
				extra = trajectoryColumn
			}
			if out, err = format.Create(whole, f.OutFormat, in.Schema, extra); err != nil {
				return renamed(err, whole, f.Out)
			}
			wholeVouch = &vouched{path: f.Out, staged: whole}
			if f.OutFormat == format.JSONL {
				wholeVouch.h = xxh3.New()
				out = hashing{out, wholeVouch}
			}
			out = namedWriter{out, whole, f.Out}
			defer func() {
				if err != nil {
					out.Abort()
				}
			}()
		} else {
			if outSeg, err = r.segment(r.segName(t, "out")); err != nil {
				return err
			}
			outFrom, out = outSeg.end, segWriter{outSeg}
		}
	}
	var rejSeg, ocSeg *segFile
	var rejFrom, ocFrom int64
	if r.wantRejects && r.directRejects == nil {
		if rejSeg, err = r.segment(r.segName(t, "rejects")); err != nil {
			return err
		}
		rejFrom = rejSeg.end
	}
	if r.plan.Outcomes != "" && r.directOutcomes == nil {
		if ocSeg, err = r.segment(r.segName(t, "outcomes")); err != nil {
			return err
		}
		ocFrom = ocSeg.end
	}
	var worst *report.Worst
	if r.plan.Report != "" {
		worst = report.NewWorst(report.DefaultWorst)
	}
	var llmBefore llm.Stats
	if r.client != nil {
		llmBefore = r.client.Stats()
	}
	cfg := pipeline.Config{Workers: r.workers, Network: r.cfg.Processing.MaxConcurrentRequests}
	cfg.OnResult = func(res pipeline.Result) error {
		if res.Reject != nil && r.wantRejects {
			line := jobcore.RejectLine(res.Reject)
			var werr error
			if r.directRejects != nil {
				werr = r.directRejects.Write(line)
			} else {
				werr = rejSeg.Write(line)
			}
			if werr != nil {
				return fmt.Errorf("rejects %s: %w", r.plan.Rejects, werr)
			}
		}
		if r.plan.Outcomes != "" {
			line := res.Obs.AppendJSON(nil)
			var werr error
			if r.directOutcomes != nil {
				werr = r.directOutcomes.Write(line)
			} else {
				werr = ocSeg.Write(line)
			}
			if werr != nil {
				return fmt.Errorf("outcomes %s: %w", r.plan.Outcomes, werr)
			}
		}
		if worst != nil {
			worst.Observe(res.Obs)
		}
		r.progress.Record(res, in.BytesRead())
		return nil
	}
	var sink pipeline.Sink
	if out != nil {
		sink = out
	}
	sum, err := pipeline.Run(ctx, f.In, src, sink, r.comp, cfg)
	if err != nil {
		return err
	}
	if taskHook != nil {
		taskHook(t, "read")
	}
	if err := r.checkInput(t.Index, t.File, "ended"); err != nil {
		return err
	}
	if lines, ok := in.Lines(); ok {
		m.Lines = lines - first
	} else {
		m.Lines = sum.RecordsIn() // rows; whole files never need a line count
	}
	m.Blocks = hasher.Done()
	// Make everything durable, then commit the marker.
	if whole != "" {
		if err := out.Close(); err != nil {
			return fmt.Errorf("output %s: %w", f.Out, err)
		}
		m.Output = &span{Seg: filepath.Base(whole), Format: f.OutFormat}
		if st, err := os.Stat(whole); err == nil {
			m.Output.End = st.Size()
		}
		if wholeVouch.h != nil {
			b := wholeVouch.h.Sum128().Bytes()
			m.Output.XXH3 = hex.EncodeToString(b[:])
		}
	} else if outSeg != nil {
		if m.Output, err = outSeg.checkpoint(outFrom); err != nil {
			return fmt.Errorf("output %s: %w", f.Out, err)
		}
	}
	if rejSeg != nil {
		if m.Rejects, err = rejSeg.checkpoint(rejFrom); err != nil {
			return fmt.Errorf("rejects %s: %w", r.plan.Rejects, err)
		}
	}
	if ocSeg != nil {
		if m.Outcomes, err = ocSeg.checkpoint(ocFrom); err != nil {
			return fmt.Errorf("outcomes %s: %w", r.plan.Outcomes, err)
		}
	}
	if r.spec.GroupBy == "" {
		sum.Label(r.sourceName(f))
	}
	if m.State, err = sum.MarshalState(); err != nil {
		return err
	}
	m.RowsOut = sum.RecordsOut()
	m.Worst = worst
	if r.client != nil {
		m.LLM = llmDelta(llmBefore, r.client.Stats())
	}
	m.Input = r.stamps[t.File]
	m.Start, m.End = start.UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano)
	if err := r.dir.commitMarker(m); err != nil {
		return fmt.Errorf("task %d: %w", t.Index, err)
	}
	if taskHook != nil {
		taskHook(t, "committed")
	}
	r.markers[t.Index] = m
	for _, sp := range []*span{m.Output, m.Rejects, m.Outcomes} {
		if sp != nil && sp.Format == format.JSONL && sp.Seg != "" {
			r.committed[sp.Seg] = max(r.committed[sp.Seg], sp.End)
		}
	}
	if r.shard.Count > 1 {
		return r.closeSegs()
	}
	return nil
}

// segWriter writes records to a segment; Close and Abort leave it to the
// task (it is made durable by the task's checkpoint).
type segWriter struct{ s *segFile }

func (w segWriter) Write(rec []byte) error { return w.s.Write(rec) }
func (w segWriter) Close() error           { return nil }
func (w segWriter) Abort() error           { return nil }

// directSide opens a rejects or outcomes output that is a device, a FIFO
// or "-": its lines are written as they come, by the process that reads
// the records (no segment, no atomicity).
func directSide(path string) (*jsonl.Writer, error) { return jsonl.NewDirect(path) }
