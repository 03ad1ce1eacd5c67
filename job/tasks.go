package job

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/check/checkfile"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/task"
)

// segFile is a segment being appended to: JSON lines, made durable at the
// end of each task.
type segFile struct {
	name   string
	f      *atomicfile.File
	bw     *bufio.Writer
	end    int64
	synced int64        // bytes made durable by the last checkpoint
	h      *xxh3.Hasher // every byte of the segment, when this process wrote them all
	// task hashes the bytes of the task writing now, from taskFrom on (the
	// span's Sum, which a later run verifies before it reuses the span).
	task     *xxh3.Hasher
	taskFrom int64
}

func (s *segFile) Write(rec []byte) error {
	s.bw.Write(rec)
	err := s.bw.WriteByte('\n')
	s.end += int64(len(rec)) + 1
	if s.h != nil {
		s.h.Write(rec)
		s.h.Write(newline)
	}
	s.task.Write(rec)
	s.task.Write(newline)
	return err
}

// begin starts a task's span of the segment: where it starts, and its
// hash.
func (s *segFile) begin() int64 {
	s.task.Reset()
	s.taskFrom = s.end
	return s.end
}

// checkpoint makes the segment durable and returns the span [from, end)
// a task wrote (from is where begin started it).
func (s *segFile) checkpoint(from int64) (*span, error) {
	if err := s.bw.Flush(); err != nil {
		return nil, err
	}
	if from != s.taskFrom {
		return nil, fmt.Errorf("segment %s: a task's span starts at %d, its hash at %d", s.name, from, s.taskFrom)
	}
	if s.end != s.synced { // nothing new: no sync (a rejects segment, mostly)
		if err := s.f.Checkpoint(); err != nil {
			return nil, err
		}
		s.synced = s.end
	}
	sp := &span{Seg: s.name, Start: from, End: s.end, Format: format.JSONL, Sum: hexSum(s.task)}
	if s.h != nil {
		sp.XXH3 = hexSum(s.h)
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

// taskHook, when set (by this package's tests only), is called with each
// task when it has read its input ("read", before its input is checked
// again) and when its marker is committed ("committed").
var taskHook func(t task.Task, at string)

// taskRun is one task being run: its input, where its records, rejects
// and outcome lines go, and its marker.
type taskRun struct {
	t      task.Task
	start  time.Time
	first  int64 // lines of the file before the task (see firstLine)
	in     *format.Input
	hasher *jobcore.BlockHasher
	src    pipeline.Source // in, or its sample
	rec    recordOut
	rej    sideOut
	oc     sideOut
	worst  *report.Worst // for the HTML report; nil without one
	llm    llm.Stats     // the LLM client's before the task
	m      *marker
}

// recordOut is where a task's records go: the file's own format, when the
// task is the whole file (renamed into place at the end); else JSON lines
// appended to a segment. A dry run writes none (out is nil).
type recordOut struct {
	out    format.Writer
	seg    *segFile
	from   int64
	whole  string // the whole-file segment's path
	format string // of the whole-file segment
	vouch  *vouched
}

// sideOut is the segment a task appends rejects or outcome lines to, and
// where it started; seg is nil when the lines go elsewhere (a file written
// in place) or nowhere.
type sideOut struct {
	seg  *segFile
	from int64
}

// runTask reads task t through the pipeline into its segments and commits
// its marker, in steps: open the input, open the outputs, read, check the
// input again, make the outputs durable, commit the marker.
func (r *runner) runTask(ctx context.Context, t task.Task) (err error) {
	tr := &taskRun{t: t, start: time.Now()}
	if err := r.checkInput(t.Index, t.File, "started"); err != nil {
		return err
	}
	if err := r.openTaskInput(ctx, tr); err != nil {
		return err
	}
	defer tr.in.Close()
	if err := r.openTaskOutputs(tr); err != nil {
		return err
	}
	defer func() {
		if err != nil && tr.rec.whole != "" {
			tr.rec.out.Abort()
		}
	}()
	sum, err := r.readTask(ctx, tr)
	if err != nil {
		return err
	}
	if taskHook != nil {
		taskHook(t, "read")
	}
	if err := r.checkInput(t.Index, t.File, "ended"); err != nil {
		return err
	}
	if err := r.finishTask(tr, sum); err != nil {
		return err
	}
	return r.commitTask(tr)
}

// openTaskInput opens the input of the task (its sample, when sampled)
// and starts its marker.
func (r *runner) openTaskInput(ctx context.Context, tr *taskRun) error {
	t, f := tr.t, r.plan.Files[tr.t.File]
	first, known := r.firstLine(t, r.dir.markers)
	tr.first, tr.hasher = first, jobcore.NewBlockHasher()
	opts := jobcore.InputOptions(r.spec.Config)
	opts.Hash, opts.Ctx, opts.Stdin, opts.Task, opts.FirstLine = tr.hasher, ctx, r.spec.Stdin, &t, first
	opts.MaxRecordBytes = r.spec.MaxRecordBytes
	in, err := format.Open(f.In, opts)
	if err != nil {
		return err
	}
	if err := in.CheckTurnsColumn(f.In, r.spec.Config.Input.TurnsKey); err != nil {
		in.Close()
		return err
	}
	tr.in, tr.src = in, in
	if s := r.spec.Sample; s != nil {
		keep, err := sampleLines(ctx, f.In, s.Percent, s.Seed, t.File, r.spec.MaxRecordBytes)
		if err != nil {
			in.Close()
			return err
		}
		tr.src = &sampledSource{src: in, keep: keep}
	}
	tr.m = &marker{Version: runVersion, taskRef: taskRef{Task: t.Index, File: t.File, Part: t.Part, Parts: t.Parts}, Relative: !known}
	if r.shard.Count > 1 {
		tr.m.Shard = &shardRef{Index: r.shard.Index, Count: r.shard.Count}
	}
	tr.m.FirstBlock, _ = t.Blocks()
	return nil
}

// openTaskOutputs opens where the task's records, rejects and outcome
// lines go, and starts what the report and the metrics need of it.
func (r *runner) openTaskOutputs(tr *taskRun) (err error) {
	if err := r.openRecords(tr); err != nil {
		return err
	}
	defer func() {
		if err != nil && tr.rec.whole != "" {
			tr.rec.out.Abort()
		}
	}()
	if r.out.wantRejects && r.out.directRejects == nil {
		if tr.rej, err = r.sideSegment(tr.t, "rejects"); err != nil {
			return err
		}
	}
	if r.plan.Outcomes != "" && r.out.directOutcomes == nil {
		if tr.oc, err = r.sideSegment(tr.t, "outcomes"); err != nil {
			return err
		}
	}
	if r.plan.Report != "" {
		tr.worst = report.NewWorst(report.DefaultWorst)
	}
	if r.client != nil {
		tr.llm = r.client.Stats()
	}
	return nil
}

// sideSegment opens the segment task t appends what ("rejects",
// "outcomes") lines to.
func (r *runner) sideSegment(t task.Task, what string) (sideOut, error) {
	seg, err := r.dir.segment(r.segName(t, what))
	if err != nil {
		return sideOut{}, err
	}
	return sideOut{seg: seg, from: seg.begin()}, nil
}

// openRecords opens where the task's records go (see recordOut).
func (r *runner) openRecords(tr *taskRun) (err error) {
	t, f := tr.t, r.plan.Files[tr.t.File]
	switch {
	case r.spec.DryRun:
		return nil
	case t.Parts > 1:
		seg, err := r.dir.segment(r.segName(t, "out"))
		if err != nil {
			return err
		}
		var extra format.Column
		if r.spec.Config.Metrics.PerTrajectory {
			extra = trajectoryColumn
		}
		// The parts are put together in f.OutFormat at the end (assemble.go),
		// with the input's schema: a record that file cannot hold is refused
		// now, as the writer would refuse it, so that the pipeline rejects it
		// rather than the assembly failing.
		check, err := format.Checker(f.Out, f.OutFormat, tr.in.Schema, extra)
		if err != nil {
			return err
		}
		tr.rec = recordOut{out: segWriter{seg, check}, seg: seg, from: seg.begin()}
		return nil
	}
	whole := r.dir.segPath(fmt.Sprintf("f%06d.whole%s", t.File, format.Ext(f.OutFormat)))
	var extra format.Column
	if r.spec.Config.Metrics.PerTrajectory {
		extra = trajectoryColumn
	}
	out, err := format.Create(whole, f.OutFormat, tr.in.Schema, extra)
	if err != nil {
		return renamed(err, whole, f.Out)
	}
	v := &vouched{path: f.Out, staged: whole}
	if f.OutFormat == format.JSONL {
		v.h = xxh3.New()
		out = hashing{out, v}
	}
	tr.rec = recordOut{out: namedWriter{out, whole, f.Out}, whole: whole, format: f.OutFormat, vouch: v}
	return nil
}

// readTask runs the task's records through the pipeline: the records to
// their output, each rejected line and outcome to its own.
func (r *runner) readTask(ctx context.Context, tr *taskRun) (*metrics.Summary, error) {
	cfg := pipeline.Config{Workers: r.workers, Network: r.spec.Config.Processing.MaxConcurrentRequests}
	cfg.OnResult = func(res pipeline.Result) error {
		if err := r.writeSideLines(tr, res); err != nil {
			return err
		}
		if tr.worst != nil {
			tr.worst.Observe(res.Obs)
		}
		r.progress.Record(res, tr.in.BytesRead())
		return nil
	}
	var sink pipeline.Sink
	if tr.rec.out != nil {
		sink = tr.rec.out
	}
	return pipeline.Run(ctx, r.plan.Files[tr.t.File].In, tr.src, sink, r.comp, cfg)
}

// writeSideLines writes the rejects line and the outcome line of a
// record: to the task's segments, or to the files written in place.
func (r *runner) writeSideLines(tr *taskRun, res pipeline.Result) error {
	if res.Reject != nil && r.out.wantRejects {
		if err := writeLine(r.out.directRejects, tr.rej.seg, jobcore.RejectLine(res.Reject)); err != nil {
			return fmt.Errorf("rejects %s: %w", r.plan.Rejects, err)
		}
	}
	if r.plan.Outcomes != "" {
		if err := writeLine(r.out.directOutcomes, tr.oc.seg, res.Obs.AppendJSON(nil)); err != nil {
			return fmt.Errorf("outcomes %s: %w", r.plan.Outcomes, err)
		}
	}
	return nil
}

// writeLine writes line to direct when it is open, else to seg.
func writeLine(direct *jsonl.Writer, seg *segFile, line []byte) error {
	if direct != nil {
		return direct.Write(line)
	}
	return seg.Write(line)
}

// finishTask makes everything the task wrote durable and fills in its
// marker.
func (r *runner) finishTask(tr *taskRun, sum *metrics.Summary) (err error) {
	f, m := r.plan.Files[tr.t.File], tr.m
	if lines, ok := tr.in.Lines(); ok {
		m.Lines = lines - tr.first
	} else {
		m.Lines = sum.RecordsIn() // rows; whole files never need a line count
	}
	m.Blocks = tr.hasher.Done()
	if m.Output, err = tr.rec.finish(); err != nil {
		return fmt.Errorf("output %s: %w", f.Out, err)
	}
	if m.Rejects, err = tr.rej.checkpoint(); err != nil {
		return fmt.Errorf("rejects %s: %w", r.plan.Rejects, err)
	}
	if m.Outcomes, err = tr.oc.checkpoint(); err != nil {
		return fmt.Errorf("outcomes %s: %w", r.plan.Outcomes, err)
	}
	if r.spec.GroupBy == "" {
		sum.Label(r.sourceName(f))
	}
	if m.State, err = sum.MarshalState(); err != nil {
		return err
	}
	m.RowsOut = sum.RecordsOut()
	m.Worst = tr.worst
	if r.client != nil {
		m.LLM = llmDelta(tr.llm, r.client.Stats())
	}
	m.Input = r.stamps[tr.t.File]
	m.Start, m.End = tr.start.UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano)
	return nil
}

// finish makes the records durable and returns the span they are in: the
// whole-file segment closed (its size, and its hash when JSON Lines), or
// the task's span of the segment; nil in a dry run.
func (o recordOut) finish() (*span, error) {
	switch {
	case o.whole != "":
		if err := o.out.Close(); err != nil {
			return nil, err
		}
		sp := &span{Seg: filepath.Base(o.whole), Format: o.format}
		if o.vouch.h != nil {
			if st, err := os.Stat(o.whole); err == nil {
				sp.End = st.Size()
			}
			sp.XXH3 = hexSum(o.vouch.h)
		} else {
			// Another format: hashed once closed, for its marker (a later
			// run verifies the segment before it reuses it) and for the
			// metrics, which vouch for the file linked into place by it.
			n, sum, err := checkfile.Hash(o.whole)
			if err != nil {
				return nil, err
			}
			sp.End, sp.XXH3 = n, sum
		}
		sp.Sum = sp.XXH3
		return sp, nil
	case o.seg != nil:
		return o.seg.checkpoint(o.from)
	}
	return nil, nil
}

// checkpoint makes the side lines durable and returns the task's span of
// them; nil when they went elsewhere.
func (o sideOut) checkpoint() (*span, error) {
	if o.seg == nil {
		return nil, nil
	}
	return o.seg.checkpoint(o.from)
}

// commitTask commits the task's marker: the task is done.
func (r *runner) commitTask(tr *taskRun) error {
	if err := r.dir.commitMarker(tr.m); err != nil {
		return fmt.Errorf("task %d: %w", tr.t.Index, err)
	}
	if taskHook != nil {
		taskHook(tr.t, "committed")
	}
	r.dir.done(tr.m)
	if r.shard.Count > 1 {
		return r.dir.closeSegs()
	}
	return nil
}

// segWriter writes records to a segment; Close and Abort leave it to the
// task (it is made durable by the task's checkpoint).
// check, when set, refuses a record the output put together from the
// segments could not hold (see format.Checker).
type segWriter struct {
	s     *segFile
	check func([]byte) error
}

func (w segWriter) Write(rec []byte) error {
	if w.check != nil {
		if err := w.check(rec); err != nil {
			return err
		}
	}
	return w.s.Write(rec)
}

func (w segWriter) Close() error { return nil }
func (w segWriter) Abort() error { return nil }

// directSide opens a rejects or outcomes output that is a device, a FIFO
// or "-": its lines are written as they come, by the process that reads
// the records (no segment, no atomicity).
func directSide(path string) (*jsonl.Writer, error) { return jsonl.NewDirect(path) }
