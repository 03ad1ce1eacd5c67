package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/task"
)

// What a run reads back from its run directory is verified before it is
// reused, never trusted: a resumed run and a merge take the tasks an
// earlier process did only once each has passed [runDir.verify]:
//
//   - its marker matches its checksum (Sum: the xxh3-128 of the marker's
//     JSON without it, written last), and names the task it is the marker
//     of;
//   - every segment span it names is there in full and hashes to the Sum
//     its marker recorded (a same-length change, a cut, a segment swapped
//     for another or removed);
//   - its counts agree: its metrics state reads, its records out are the
//     marker's rows out and at most the lines it read, and the lines of its
//     JSON Lines spans are those counts (records written, records
//     rejected, one outcome per record).
//
// A resumed run runs a task that fails again, saying which and why; a
// merge refuses, naming the shard, the task and what differs. A marker
// without a checksum (written before markers had one) cannot be verified:
// it fails like a changed one. The checksums catch damage and edits, not
// a forger: anyone who can write the run directory can write a marker
// that passes, as they could write the outputs.

// seal sets the marker's checksum and returns the marker's bytes: its
// JSON without Sum, with Sum then added as its last key.
func (m *marker) seal() ([]byte, error) {
	m.Sum = ""
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	m.Sum = hexSum128(b)
	return json.Marshal(m)
}

// unsealed says why b, a marker as read (decoded into m), does not match
// its checksum; "" when it does.
func (m *marker) unsealed(b []byte) string {
	if m.Sum == "" {
		return "its marker has no checksum (written by an older trajcompress, or edited): it cannot be verified"
	}
	b = bytes.TrimRight(b, "\n")
	last := `,"sum":"` + m.Sum + `"}`
	if !bytes.HasSuffix(b, []byte(last)) {
		return "its marker's checksum is not its last key, where trajcompress writes it: the marker was edited"
	}
	body := append(bytes.Clone(b[:len(b)-len(last)]), '}')
	if got := hexSum128(body); got != m.Sum {
		return fmt.Sprintf("its marker does not match its checksum (xxh3-128 %s, recorded %s): it was changed after the task wrote it", got, m.Sum)
	}
	return ""
}

// hexSum128 is the hex xxh3-128 of b.
func hexSum128(b []byte) string {
	h := xxh3.New()
	h.Write(b)
	return hexSum(h)
}

// verify says why the marker m of task t, as read back, cannot be reused;
// "" when it can (see above). buf is where segments are read (nil: one
// is made).
func (d *runDir) verify(m *marker, t task.Task, buf []byte) string {
	if m.bad != "" {
		return m.bad
	}
	if m.File != t.File || m.Part != t.Part || m.Parts != t.Parts {
		return fmt.Sprintf("its marker is of file %d part %d of %d, the task is file %d part %d of %d", m.File, m.Part, m.Parts, t.File, t.Part, t.Parts)
	}
	s, err := m.summary()
	if err != nil {
		return fmt.Sprintf("its metrics state cannot be read (%v)", err)
	}
	in, rejected := s.RecordsIn(), s.RecordsRejected()
	if out := s.RecordsOut(); out != m.RowsOut || in > m.Lines || rejected < 0 || out < 0 {
		return fmt.Sprintf("its counts disagree: its metrics state has %d records in, %d out, %d rejected; its marker %d rows out of %d lines read", in, out, rejected, m.RowsOut, m.Lines)
	}
	for _, c := range []struct {
		sp    *span
		what  string
		lines int64
		whole bool
	}{
		{m.Output, "records", m.RowsOut, m.Parts == 1},
		{m.Rejects, "rejected", rejected, false},
		{m.Outcomes, "outcome", in, false},
	} {
		if c.sp == nil {
			continue
		}
		lines, why := d.checkSpan(c.sp, c.whole, buf)
		if why != "" {
			return why
		}
		if c.sp.Format == format.JSONL && lines != c.lines {
			return fmt.Sprintf("segment %s bytes [%d, %d) hold %d lines, but its metrics state counts %d %s lines", c.sp.Seg, c.sp.Start, c.sp.End, lines, c.lines, c.what)
		}
	}
	return ""
}

// checkSpan re-reads the span's bytes of its segment and says why they
// are not those its marker recorded ("" when they are), with the lines
// they hold (JSON Lines: each ends with a newline). A whole-file
// segment (put in place by a link) must end where the span does. buf
// is where they are read (nil: one is made).
func (d *runDir) checkSpan(sp *span, whole bool, buf []byte) (lines int64, why string) {
	name := sp.Seg
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return 0, fmt.Sprintf("its marker names a segment %q", name)
	}
	if sp.Sum == "" {
		return 0, fmt.Sprintf("its marker records no checksum of segment %s (written by an older trajcompress, or edited): it cannot be verified", name)
	}
	f, err := os.Open(d.segPath(name))
	if err != nil {
		return 0, fmt.Sprintf("segment %s cannot be read (%v)", name, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, fmt.Sprintf("segment %s is not a regular file", name)
	}
	switch size := st.Size(); {
	case sp.Start < 0 || sp.Start > sp.End || (whole && sp.Start != 0):
		return 0, fmt.Sprintf("its marker names bytes [%d, %d) of segment %s", sp.Start, sp.End, name)
	case size < sp.End:
		return 0, fmt.Sprintf("segment %s is %d bytes, cut short of the [%d, %d) its marker names", name, size, sp.Start, sp.End)
	case whole && size != sp.End:
		return 0, fmt.Sprintf("segment %s is %d bytes, its marker recorded %d", name, size, sp.End)
	}
	h := xxh3.New()
	var last byte
	if len(buf) == 0 {
		buf = make([]byte, 1<<20)
	}
	r := io.NewSectionReader(f, sp.Start, sp.End-sp.Start)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			lines += int64(bytes.Count(buf[:n], newline))
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Sprintf("segment %s cannot be read (%v)", name, err)
		}
	}
	if got := hexSum(h); got != sp.Sum {
		return 0, fmt.Sprintf("segment %s bytes [%d, %d) have xxh3-128 %s, its marker recorded %s: changed since the task wrote them", name, sp.Start, sp.End, got, sp.Sum)
	}
	if sp.Format == format.JSONL && sp.End > sp.Start && last != '\n' {
		return 0, fmt.Sprintf("segment %s bytes [%d, %d) end inside a line", name, sp.Start, sp.End)
	}
	return lines, ""
}

// maxFaultNotes is how many tasks that fail verification a run or a
// merge names one by one (markers of an older trajcompress all fail).
const maxFaultNotes = 20

// taskFault is a task whose marker failed verification.
type taskFault struct {
	task  int
	shard *shardRef
	why   string
}

// verifyMarkers verifies the markers read: in full those of the tasks
// for which deep is true (nil: all), the others against their own
// checksum only; it forgets those that fail (so that no segment is taken
// as covered by them), returning them.
func (d *runDir) verifyMarkers(tasks []task.Task, deep func(task.Task) bool) []taskFault {
	var faults []taskFault
	buf := make([]byte, 1<<20)
	for _, t := range tasks {
		m := d.markers[t.Index]
		if m == nil {
			continue
		}
		why := m.bad
		if deep == nil || deep(t) {
			why = d.verify(m, t, buf)
		}
		if why != "" {
			faults = append(faults, taskFault{task: t.Index, shard: m.Shard, why: why})
			d.markers[t.Index] = nil
		}
	}
	if faults != nil {
		d.cover()
	}
	return faults
}

// describe names task t of the run (its file, which part) for a message.
func (in *inputs) describe(t int) string {
	tk := in.tasks[t]
	name := filepath.Base(in.plan.Files[tk.File].In)
	if tk.Parts > 1 {
		return fmt.Sprintf("task %d (%s, part %d of %d)", t, name, tk.Part+1, tk.Parts)
	}
	return fmt.Sprintf("task %d (%s)", t, name)
}

// name names the shard that did a task, for a merge's refusal.
func (s *shardRef) name() string {
	if s == nil {
		return "a shard its marker does not name (task i is shard i mod --num-shards's)"
	}
	return fmt.Sprintf("shard %d of %d (--shard %d --num-shards %d)", s.Index, s.Count, s.Index, s.Count)
}
