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
