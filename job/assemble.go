package job

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/task"
)

// missingTasks lists the tasks without a marker.
func (r *runner) missingTasks() []int {
	var missing []int
	for i, m := range r.markers {
		if m == nil {
			missing = append(missing, i)
		}
	}
	return missing
}

// lineBases is, for each task, the number of lines of its file before it
// (the sum of the lines its file's earlier tasks read).
func (r *runner) lineBases() []int64 {
	bases := make([]int64, len(r.tasks))
	for i, t := range r.tasks {
		if t.Part > 0 {
			bases[i] = bases[i-1] + r.markers[i-1].Lines
		}
	}
	return bases
}

// assemble finishes a run whose every task is done: it puts the outputs
// together from the tasks' segments — a rename when one segment holds a
// whole output as it must be, else a copy in task order (JSON Lines; line
// numbers of tasks that counted from their own start made the file's) or
// a pass through the output format's writer — merges the tasks' metrics,
// writes the metrics and the report, and commits them all together.
func (r *runner) assemble(start time.Time) (*Result, error) {
	p := r.plan
	bases := r.lineBases()
	for _, m := range r.markers {
		if t, err := time.Parse(time.RFC3339Nano, m.Start); err == nil && t.Before(start) {
			start = t
		}
	}
	// The side files first, then the records: the order the metrics
	// list the outputs in.
	if r.wantRejects && !commit.IsDirect(p.Rejects) {
		if err := r.assembleLines(p.Rejects, "rejects", func(m *marker) *span { return m.Rejects }, bases); err != nil {
			return nil, err
		}
	}
	if p.Outcomes != "" && !commit.IsDirect(p.Outcomes) {
		if err := r.assembleLines(p.Outcomes, "outcomes", func(m *marker) *span { return m.Outcomes }, bases); err != nil {
			return nil, err
		}
	}
	r.rows, r.staged = make([]int64, len(p.Files)), make([]string, len(p.Files))
	for _, m := range r.markers {
		r.rows[m.File] += m.RowsOut
	}
	if !r.spec.DryRun {
		for i := range p.Files {
			if err := r.assembleOutput(i); err != nil {
				return nil, err
			}
		}
	}
	if err := r.closeDirect(); err != nil {
		return nil, err
	}
	if err := r.diskDatasets(); err != nil {
		return nil, err
	}
	// The metrics: the tasks' states merged, the fingerprint from their blocks.
	r.total = metrics.Summary{}
	var worst *report.Worst
	if p.Report != "" {
		worst = report.NewWorst(report.DefaultWorst)
	}
	r.llm = llmStats{}
	fp := jobcore.NewFingerprint()
	next := int64(0)
	for i, m := range r.markers {
		s, err := m.summary()
		if err != nil {
			return nil, err
		}
		r.total.Merge(s)
		if worst != nil && m.Worst != nil {
			shift := int64(0)
			if m.Relative {
				shift = bases[i]
			}
			worst.Merge(m.Worst, shift)
		}
		r.llm.add(m.LLM)
		if m.Part == 0 {
			fp.File(p.Files[m.File].In)
			next = 0
		}
		if m.FirstBlock != next {
			return nil, fmt.Errorf("task %d: its fingerprint blocks start at %d, %d expected", m.Task, m.FirstBlock, next)
		}
		for _, b := range m.Blocks {
			if err := fp.Block(b); err != nil {
				return nil, fmt.Errorf("task %d: %w", m.Task, err)
			}
		}
		next += int64(len(m.Blocks))
	}
	r.worst = worst
	r.inputFP = fp.String()
	return r.finishMetrics(start)
}

// assembleLines puts together a JSON Lines side file (rejects, outcomes)
// from the tasks' spans of it.
func (r *runner) assembleLines(path, what string, spanOf func(*marker) *span, bases []int64) error {
	if err := r.mkdirs(filepath.Dir(path)); err != nil {
		return err
	}
	staged, err := r.stageSide(path)
	if err != nil {
		return err
	}
	var spans []*span
	var shifts []int64
	for i, m := range r.markers {
		sp := spanOf(m)
		if sp == nil {
			return fmt.Errorf("%s %s: task %d wrote none (was it run with other options?)", what, path, m.Task)
		}
		spans = append(spans, sp)
		shift := int64(0)
		if m.Relative {
			shift = bases[i]
		}
		shifts = append(shifts, shift)
	}
	v, err := r.place(staged, path, spans, shifts)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, renamed(err, staged, path))
	}
	r.vouched = append(r.vouched, v)
	return nil
}

// assembleOutput puts together the records of input file i.
func (r *runner) assembleOutput(i int) error {
	f := r.plan.Files[i]
	if err := r.mkdirs(filepath.Dir(f.Out)); err != nil {
		return err
	}
	staged, err := r.stage(f.Out)
	if err != nil {
		return err
	}
	r.staged[i] = staged
	var ms []*marker
	for _, m := range r.markers {
		if m.File == i {
			ms = append(ms, m)
		}
	}
	if len(ms) == 1 && ms[0].Parts == 1 { // the whole output, in its format
		sp := ms[0].Output
		if err := linkOrCopy(r.dir.segPath(sp.Seg), staged); err != nil {
			return fmt.Errorf("output %s: %w", f.Out, err)
		}
		v := &vouched{path: f.Out, staged: staged, n: sp.End}
		if sp.XXH3 != "" {
			v.sum = sp.XXH3
		}
		r.vouched = append(r.vouched, v)
		return nil
	}
	spans := make([]*span, len(ms))
	for k, m := range ms {
		spans[k] = m.Output
	}
	if f.OutFormat == format.JSONL {
		v, err := r.place(staged, f.Out, spans, make([]int64, len(spans)))
		if err != nil {
			return fmt.Errorf("output %s: %w", f.Out, renamed(err, staged, f.Out))
		}
		r.vouched = append(r.vouched, v)
		return nil
	}
	// Another format: the records through its writer, with the input's
	// schema (read from its footer) as a single-task run would.
	in, err := format.Open(f.In, format.Options{Task: &task.Task{Parts: 1}})
	if err != nil {
		return err
	}
	schema := in.Schema
	in.Close()
	var extra format.Column
	if r.cfg.Metrics.PerTrajectory {
		extra = trajectoryColumn
	}
	w, err := format.Create(staged, f.OutFormat, schema, extra)
	if err != nil {
		return renamed(err, staged, f.Out)
	}
	w = r.vouch(f.Out, staged, f.OutFormat, namedWriter{w, staged, f.Out})
	for _, sp := range spans {
		if err := r.eachLine(sp, func(line []byte) error { return w.Write(line) }); err != nil {
			w.Abort()
			return fmt.Errorf("output %s: %w", f.Out, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("output %s: %w", f.Out, err)
	}
	return nil
}

// linkOrCopy makes dst (a staged output) a hard link to the segment src
// — no byte is copied, and the segment stays for a resumed run should the
// commit fail — or, where the file system has no hard links, a copy.
func linkOrCopy(src, dst string) error {
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := atomicfile.Append(dst, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}

// place writes the spans, in order, to the staged file: by linking the
// segment when it is one span from the segment's start to its end with
// nothing to shift, else by copying (adding shifts[k] to the "line" of
// every line of span k). It returns the file as the metrics vouch for it.
func (r *runner) place(staged, target string, spans []*span, shifts []int64) (*vouched, error) {
	whole := len(spans) > 0
	for k, sp := range spans {
		if sp.Seg != spans[0].Seg || shifts[k] != 0 || (k == 0 && sp.Start != 0) || (k > 0 && sp.Start != spans[k-1].End) {
			whole = false
		}
	}
	if whole {
		last := spans[len(spans)-1]
		seg := r.dir.segPath(last.Seg)
		if st, err := os.Stat(seg); err == nil && st.Size() == last.End {
			if s, ok := r.segs[last.Seg]; ok { // still open in this process
				if err := s.close(); err != nil {
					return nil, err
				}
				delete(r.segs, last.Seg)
			}
			if err := linkOrCopy(seg, staged); err != nil {
				return nil, err
			}
			return &vouched{path: target, staged: staged, n: last.End, sum: last.XXH3}, nil
		}
	}
	f, err := atomicfile.Append(staged, 0)
	if err != nil {
		return nil, err
	}
	v := &vouched{path: target, staged: staged, h: xxh3.New()}
	bw := bufio.NewWriterSize(io.MultiWriter(f, v.h), 1<<20)
	for k, sp := range spans {
		err = r.eachLine(sp, func(line []byte) error {
			if shifts[k] != 0 {
				line = shiftLine(line, shifts[k])
			}
			bw.Write(line)
			v.n += int64(len(line)) + 1
			return bw.WriteByte('\n')
		})
		if err != nil {
			f.Abort()
			return nil, err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return nil, err
	}
	return v, f.Commit()
}

// eachLine calls fn with each line of the span (without its "\n").
func (r *runner) eachLine(sp *span, fn func([]byte) error) error {
	if s, ok := r.segs[sp.Seg]; ok {
		if err := s.bw.Flush(); err != nil {
			return err
		}
	}
	seg, err := os.Open(r.dir.segPath(sp.Seg))
	if err != nil {
		return err
	}
	defer seg.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(seg, sp.Start, sp.End-sp.Start), 1<<20)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return fmt.Errorf("segment %s: the span [%d, %d) ends inside a line", sp.Seg, sp.Start, sp.End)
			}
			if ferr := fn(line[:len(line)-1]); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// shiftLine adds shift to the "line" of a rejects or outcomes line: the
// first `,"line":` of such a line is its key (a JSON string cannot hold a
// raw quote, so the text cannot occur inside one).
func shiftLine(line []byte, shift int64) []byte {
	key := []byte(`,"line":`)
	i := bytes.Index(line, key)
	if i < 0 {
		return line
	}
	j := i + len(key)
	k := j
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	n, err := strconv.ParseInt(string(line[j:k]), 10, 64)
	if err != nil {
		return line
	}
	out := append([]byte{}, line[:j]...)
	out = strconv.AppendInt(out, n+shift, 10)
	return append(out, line[k:]...)
}

// closeDirect ends the side files written directly to a device, a FIFO
// or "-".
func (r *runner) closeDirect() error {
	for _, w := range []struct {
		w    **jsonl.Writer
		what string
	}{{&r.directRejects, "rejects"}, {&r.directOutcomes, "outcomes"}} {
		if *w.w == nil {
			continue
		}
		err := (*w.w).Close()
		*w.w = nil
		if err != nil {
			return fmt.Errorf("%s: %w", w.what, err)
		}
	}
	return nil
}

// finishMetrics writes the metrics and the report and commits the run.
func (r *runner) finishMetrics(start time.Time) (*Result, error) {
	p := r.plan
	res := &Result{Plan: p, rejects: r.wantRejects, Import: r.imported}
	if r.export != nil {
		st, err := r.writeExport()
		if err != nil {
			return nil, err
		}
		res.Export = &st
	}
	// An export made nothing final: its metrics only if asked for.
	metricsOn := r.export == nil && r.cfg.Metrics.Enabled || r.spec.Metrics != ""
	if metricsOn || p.Report != "" {
		info := r.runInfo(start)
		var err error
		if info.Outputs, err = r.outputs(p.Metrics); err != nil {
			return nil, err
		}
		var doc bytes.Buffer
		if err := r.total.Report(info).WriteJSON(&doc); err != nil {
			return nil, err
		}
		if metricsOn {
			if err := r.writeSide(p.Metrics, "metrics", doc.Bytes()); err != nil {
				return nil, err
			}
			res.Metrics = true
		}
		if p.Report != "" {
			var page bytes.Buffer
			if err := report.Render(&page, report.Input{Name: filepath.Base(p.Metrics), Metrics: doc.Bytes(), Worst: r.worst}); err != nil {
				return nil, err
			}
			if err := r.writeSide(p.Report, "report", page.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	// The run directory goes with the commit: exactly when the outputs are
	// in place (a kill after the commit point is rolled forward by the next
	// run on the output, removal included).
	r.tx.RemoveAfter(r.dir.path)
	if err := r.tx.Commit(); err != nil {
		return nil, err
	}
	r.dropScratch()
	res.Total = r.total
	res.Partial = r.total.RecordsRejected() > 0 || r.total.Count(outcome.SummaryFailed) > 0
	return res, nil
}

// stageSide stages a JSON Lines side file in the commit.
func (r *runner) stageSide(path string) (string, error) {
	sp, err := r.stage(path)
	if err != nil && strings.Contains(err.Error(), "not a regular file") {
		return "", err
	}
	return sp, err
}
