package job

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/task"
	"github.com/trajcompress/trajcompress/trainview"
)

// assembler puts together the outputs of a run whose every task is done,
// from the run directory's segments, and puts them in place by the
// output set's commit (its commit point); a run of every task and [Merge]
// both finish with it.
type assembler struct {
	spec Spec
	*inputs
	dir   *runDir
	out   *outputSet
	batch batchIO

	vouched []*vouched // the outputs the metrics vouch for
	rows    []int64    // records written to each file's output
	staged  []string   // where each file's output is staged in the commit
	total   metrics.Summary
	llm     llmStats
	inputFP string
	worst   *report.Worst // for the HTML report; nil without one
	// template names the chat template the records were counted with
	// (its path and SHA-256), for the run block; nil for none, and in a
	// merge, which builds no counter.
	template trainview.RecordCounter
}

// assemble finishes a run whose every task is done: it puts the outputs
// together from the tasks' segments — a rename when one segment holds a
// whole output as it must be, else a copy in task order (JSON Lines; line
// numbers of tasks that counted from their own start made the file's) or
// a pass through the output format's writer — merges the tasks' metrics,
// writes the metrics and the report, and commits them all together.
func (a *assembler) assemble(start time.Time) (*Result, error) {
	bases := a.lineBases(a.dir.markers)
	for _, m := range a.dir.markers {
		if t, err := time.Parse(time.RFC3339Nano, m.Start); err == nil && t.Before(start) {
			start = t
		}
	}
	if err := a.assembleFiles(bases); err != nil {
		return nil, err
	}
	if err := a.mergeMetrics(bases); err != nil {
		return nil, err
	}
	return a.finishMetrics(start)
}

// assembleFiles puts the side files and the records together, staged in
// the commit: the side files first, then the records (the order the
// metrics list the outputs in), then the datasets' files.
func (a *assembler) assembleFiles(bases []int64) error {
	p := a.plan
	if a.out.wantRejects && !commit.IsDirect(p.Rejects) {
		if err := a.assembleLines(p.Rejects, "rejects", func(m *marker) *span { return m.Rejects }, bases); err != nil {
			return err
		}
	}
	if p.Outcomes != "" && !commit.IsDirect(p.Outcomes) {
		if err := a.assembleLines(p.Outcomes, "outcomes", func(m *marker) *span { return m.Outcomes }, bases); err != nil {
			return err
		}
	}
	a.rows, a.staged = make([]int64, len(p.Files)), make([]string, len(p.Files))
	for _, m := range a.dir.markers {
		a.rows[m.File] += m.RowsOut
	}
	if !a.spec.DryRun {
		for i := range p.Files {
			if err := a.assembleOutput(i); err != nil {
				return err
			}
		}
	}
	if err := a.out.closeDirect(); err != nil {
		return err
	}
	return a.diskDatasets()
}

// mergeMetrics merges the tasks' metrics states, worst cases and LLM
// figures, and computes the input fingerprint from their blocks.
func (a *assembler) mergeMetrics(bases []int64) error {
	a.total = metrics.Summary{}
	if a.plan.Report != "" {
		a.worst = report.NewWorst(report.DefaultWorst)
	}
	a.llm = llmStats{}
	fp := jobcore.NewFingerprint()
	next := int64(0)
	for i, m := range a.dir.markers {
		s, err := m.summary()
		if err != nil {
			return err
		}
		a.total.Merge(s)
		if a.worst != nil && m.Worst != nil {
			shift := int64(0)
			if m.Relative {
				shift = bases[i]
			}
			a.worst.Merge(m.Worst, shift)
		}
		a.llm.add(m.LLM)
		if m.Part == 0 {
			fp.File(a.plan.Files[m.File].In)
			next = 0
		}
		if next, err = m.fingerprint(fp, next); err != nil {
			return err
		}
	}
	a.inputFP = fp.String()
	return nil
}

// fingerprint adds the task's blocks to fp, the file's blocks before it
// being next; it returns the file's blocks up to the task's end.
func (m *marker) fingerprint(fp *jobcore.Fingerprint, next int64) (int64, error) {
	if m.FirstBlock != next {
		return 0, fmt.Errorf("task %d: its fingerprint blocks start at %d, %d expected", m.Task, m.FirstBlock, next)
	}
	for _, b := range m.Blocks {
		if err := fp.Block(b); err != nil {
			return 0, fmt.Errorf("task %d: %w", m.Task, err)
		}
	}
	return next + int64(len(m.Blocks)), nil
}

// assembleLines puts together a JSON Lines side file (rejects, outcomes)
// from the tasks' spans of it.
func (a *assembler) assembleLines(path, what string, spanOf func(*marker) *span, bases []int64) error {
	if err := a.out.mkdirs(filepath.Dir(path)); err != nil {
		return err
	}
	staged, err := a.out.stageSide(path)
	if err != nil {
		return err
	}
	var spans []*span
	var shifts []int64
	for i, m := range a.dir.markers {
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
	v, err := a.place(staged, path, spans, shifts)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, renamed(err, staged, path))
	}
	a.vouched = append(a.vouched, v)
	return nil
}

// assembleOutput puts together the records of input file i.
func (a *assembler) assembleOutput(i int) error {
	f := a.plan.Files[i]
	if err := a.out.mkdirs(filepath.Dir(f.Out)); err != nil {
		return err
	}
	staged, err := a.out.stage(f.Out)
	if err != nil {
		return err
	}
	a.staged[i] = staged
	var ms []*marker
	for _, m := range a.dir.markers {
		if m.File == i {
			ms = append(ms, m)
		}
	}
	if len(ms) == 1 && ms[0].Parts == 1 { // the whole output, in its format
		sp := ms[0].Output
		if err := linkOrCopy(a.dir.segPath(sp.Seg), staged); err != nil {
			return fmt.Errorf("output %s: %w", f.Out, err)
		}
		v := &vouched{path: f.Out, staged: staged, n: sp.End}
		if sp.XXH3 != "" {
			v.sum = sp.XXH3
		}
		a.vouched = append(a.vouched, v)
		return nil
	}
	spans := make([]*span, len(ms))
	for k, m := range ms {
		spans[k] = m.Output
	}
	if f.OutFormat == format.JSONL {
		v, err := a.place(staged, f.Out, spans, make([]int64, len(spans)))
		if err != nil {
			return fmt.Errorf("output %s: %w", f.Out, renamed(err, staged, f.Out))
		}
		a.vouched = append(a.vouched, v)
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
	if a.spec.Config.Metrics.PerTrajectory {
		extra = trajectoryColumn
	}
	w, err := format.Create(staged, f.OutFormat, schema, extra)
	if err != nil {
		return renamed(err, staged, f.Out)
	}
	w = a.vouch(f.Out, staged, f.OutFormat, namedWriter{w, staged, f.Out})
	for _, sp := range spans {
		if err := a.dir.eachLine(sp, func(line []byte) error { return w.Write(line) }); err != nil {
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
func (a *assembler) place(staged, target string, spans []*span, shifts []int64) (*vouched, error) {
	whole := len(spans) > 0
	for k, sp := range spans {
		if sp.Seg != spans[0].Seg || shifts[k] != 0 || (k == 0 && sp.Start != 0) || (k > 0 && sp.Start != spans[k-1].End) {
			whole = false
		}
	}
	if whole {
		last := spans[len(spans)-1]
		seg := a.dir.segPath(last.Seg)
		if st, err := os.Stat(seg); err == nil && st.Size() == last.End {
			if s, ok := a.dir.segs[last.Seg]; ok { // still open in this process
				if err := s.close(); err != nil {
					return nil, err
				}
				delete(a.dir.segs, last.Seg)
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
		err = a.dir.eachLine(sp, func(line []byte) error {
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

// finishMetrics writes the metrics and the report and commits the run.
func (a *assembler) finishMetrics(start time.Time) (*Result, error) {
	p := a.plan
	res := &Result{Plan: p, rejects: a.out.wantRejects, Import: a.batch.imported}
	if a.batch.export != nil {
		st, err := a.writeExport()
		if err != nil {
			return nil, err
		}
		res.Export = &st
	}
	// An export made nothing final: its metrics only if asked for.
	metricsOn := a.batch.export == nil && a.spec.Config.Metrics.Enabled || a.spec.Metrics != ""
	if metricsOn || p.Report != "" {
		info := a.runInfo(start)
		var err error
		if info.Outputs, err = a.outputs(p.Metrics); err != nil {
			return nil, err
		}
		var doc bytes.Buffer
		if err := a.total.Report(info).WriteJSON(&doc); err != nil {
			return nil, err
		}
		if metricsOn {
			if err := a.out.writeSide(p.Metrics, "metrics", doc.Bytes()); err != nil {
				return nil, err
			}
			res.Metrics = true
		}
		if p.Report != "" {
			var page bytes.Buffer
			if err := report.Render(&page, report.Input{Name: filepath.Base(p.Metrics), Metrics: doc.Bytes(), Worst: a.worst}); err != nil {
				return nil, err
			}
			if err := a.out.writeSide(p.Report, "report", page.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	// The run directory goes with the commit: exactly when the outputs are
	// in place.
	if err := a.out.commit(a.dir.path); err != nil {
		return nil, err
	}
	res.Total = a.total
	res.Partial = a.total.RecordsRejected() > 0 || a.total.Count(outcome.SummaryFailed) > 0
	return res, nil
}

// runInfo is the run block of the metrics.
func (a *assembler) runInfo(start time.Time) metrics.RunInfo {
	budget := jobcore.BudgetOf(a.spec.Config)
	info := metrics.RunInfo{
		Tokenizer:        a.spec.Config.Tokenizer.Name,
		TurnOverhead:     a.spec.Config.Tokenizer.TurnOverhead,
		Budget:           &budget,
		Start:            start,
		End:              time.Now(),
		Summarizer:       a.spec.Config.Summarization.Method,
		PriceIn:          a.spec.PriceIn,
		PriceOut:         a.spec.PriceOut,
		ToolVersion:      a.spec.ToolVersion,
		InputFingerprint: a.inputFP,
		DryRun:           a.spec.DryRun,
		GroupBy:          a.spec.GroupBy,
		Prepass:          a.spec.Config.Compression.Prepass || a.spec.Config.Compression.DropOldImages,
		Redaction:        a.spec.Config.Redaction.Enabled,
	}
	if ti := a.dir.man.Tokenizer; ti.Hash != "" {
		info.TokenizerKind, info.TokenizerSplit, info.TokenizerSHA256 = ti.Kind, ti.Split, ti.Hash
	}
	if a.template != nil {
		info.ChatTemplate, info.ChatTemplateSHA256 = a.template.Name(), a.template.Hash()
	}
	info.ImageTokens = a.dir.man.ImageTokens
	info.Config, info.ConfigFingerprint = jobcore.SampledConfigFingerprint(a.spec.Config, a.spec.Sample)
	if a.spec.Config.Summarization.Method == "llm" {
		info.Model = a.spec.Config.Summarization.Model
		info.Estimated = a.spec.DryRun
		if !a.spec.DryRun {
			info.RetriesByCause, info.ErrorsByCause = a.llm.Retries, a.llm.ErrorsByCause
			info.CacheMisses = &a.llm.CacheMisses
		}
	}
	return info
}
