package job

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/format"
)

// stamp is what a run knows of an input file's identity: its size and
// modification time, and where the system gives them its device and inode
// (fileID) on the host that saw it. An input replaced by another of the
// same size while a run read it (mv) made tasks of two files one output,
// with records duplicated and missing: the run stamps each input when it
// plans, and each task checks its input against that stamp when it starts
// and before it commits; each marker keeps the stamp of the file its task
// read, for a later run (a resume, a merge) to check.
type stamp struct {
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Dev   uint64 `json:"dev,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Host  string `json:"host,omitempty"`
}

var hostname = func() string { h, _ := os.Hostname(); return h }()

// stampOf stamps the file at path; nil for standard input.
func stampOf(path string) (*stamp, error) {
	if path == format.Stdin {
		return nil, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	s := &stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Host: hostname}
	s.Dev, s.Ino = fileID(fi)
	return s, nil
}

// diff says how the file stamped now differs from the one stamped was,
// "" when it is the same file as far as the stamps tell: device and inode
// are compared when both stamps have them from one host (another
// machine, given a copy of the inputs, sees other numbers).
func (was *stamp) diff(now *stamp) string {
	if was == nil || now == nil {
		return ""
	}
	var d []string
	if was.Host == now.Host && was.Ino != 0 && now.Ino != 0 && (was.Dev != now.Dev || was.Ino != now.Ino) {
		d = append(d, fmt.Sprintf("it is another file (device %d inode %d, now device %d inode %d)", was.Dev, was.Ino, now.Dev, now.Ino))
	}
	if was.Size != now.Size {
		d = append(d, fmt.Sprintf("%d bytes, now %d", was.Size, now.Size))
	}
	if was.Mtime != now.Mtime {
		t := func(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
		d = append(d, fmt.Sprintf("modified %s, now %s", t(was.Mtime), t(now.Mtime)))
	}
	return strings.Join(d, ", ")
}

// checkInput fails task (index t) when its input is no longer the file
// the run planned with (at: "started", "ended").
func (r *runner) checkInput(t int, file int, at string) error {
	path := r.plan.Files[file].In
	was := r.stamps[file]
	if was == nil {
		return nil
	}
	now, err := stampOf(path)
	if err != nil {
		return fmt.Errorf("input %s: task %d %s: %w", path, t, at, err)
	}
	if d := was.diff(now); d != "" {
		return fmt.Errorf("input %s changed during the run (when task %d %s): %s; what was read of it is not put together with the rest: run again once it stays unchanged (with --overwrite if tasks were done from the file it was)", path, t, at, d)
	}
	return nil
}

// stampInputs stamps every input file, when the run plans.
func (r *runner) stampInputs() error {
	r.stamps = make([]*stamp, len(r.plan.Files))
	for i, f := range r.plan.Files {
		s, err := stampOf(f.In)
		if err != nil {
			return fmt.Errorf("input %s: %w", f.In, err)
		}
		r.stamps[i] = s
	}
	return nil
}

// checkMarkers refuses the tasks an earlier process did (a resumed run,
// a shard, a merge) from an input that is no longer the file they read.
func (r *runner) checkMarkers() error {
	for _, m := range r.markers {
		if m == nil || m.Input == nil {
			continue
		}
		if d := m.Input.diff(r.stamps[m.File]); d != "" {
			return usagef("input %s changed since task %d of the unfinished run in %s read it: %s; its tasks cannot be put together with the rest: pass --overwrite to start over (a sharded run: remove that directory and run the shards again)", r.plan.Files[m.File].In, m.Task, r.dir.path, d)
		}
	}
	return nil
}
