package trajbeam

import (
	"context"
	"fmt"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/traj"
)

// rejectsFn writes the rejects of one source, numbered and in input
// order, as the pool writes them (jobcore.RejectLine: file, line, reason,
// detail, the raw line). textio does not number lines, so the rejected
// records are found again by their hash: the source is read once more
// through our reader (only a source with rejects, at reading speed), and
// every record whose hash a reject carries is written with its line. The
// compressor's decision depends on the record's bytes alone, so the
// records with such a hash are exactly the rejected ones; a count that
// does not match means the file changed during the run, an error.
type rejectsFn struct {
	Sources []Source      `json:"sources"`
	Temp    string        `json:"temp"`
	Config  config.Config `json:"config"`
}

type rejectInfo struct {
	reason, detail string
	left           int
}

func (fn *rejectsFn) ProcessElement(ctx context.Context, source int, rejected func(*Rejected) bool, emit func(Part)) error {
	if source < 0 || source >= len(fn.Sources) {
		return fmt.Errorf("trajbeam: rejects of unknown source %d", source)
	}
	src := fn.Sources[source]
	want := map[string]*rejectInfo{}
	total := 0
	var r Rejected
	for rejected(&r) {
		if ri, ok := want[r.Hash]; ok {
			ri.left++
		} else {
			want[r.Hash] = &rejectInfo{reason: r.Reason, detail: r.Detail, left: 1}
		}
		total++
	}
	w, err := newPartWriter(ctx, join(fn.Temp, fmt.Sprintf("rejects-%06d-%s.jsonl", source, randomID())), source)
	if err != nil {
		return err
	}
	err = eachRecord(ctx, src, fn.Config, nil, func(raw []byte, line, record int64) error {
		ri, ok := want[hashOf(raw)]
		if !ok {
			return nil
		}
		if ri.left == 0 {
			return fmt.Errorf("%s:%d: rejected, but the run rejected fewer such records: the file changed during the run", src.Path, line)
		}
		ri.left--
		total--
		return w.write(jobcore.RejectLine(&pipeline.Reject{Pos: traj.Pos{File: src.Path, Line: line, Record: record}, Reason: ri.reason, Detail: ri.detail, Raw: raw}))
	})
	if err == nil && total != 0 {
		err = fmt.Errorf("%s: %d rejected records are no longer in the file: it changed during the run", src.Path, total)
	}
	if err != nil {
		w.abort(ctx)
		return err
	}
	p, err := w.close()
	if err != nil {
		return err
	}
	emit(p)
	return nil
}
