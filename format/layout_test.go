package format

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/task"
)

// TestTasksReadTheWholeFile: for each format, the tasks of a file at
// several target sizes read exactly the records (and positions) one
// reader over the whole file reads, and their hashes together see the
// file's bytes once, in order.
func TestTasksReadTheWholeFile(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	var recs [][]byte
	for i := range 3000 {
		pad := make([]byte, r.IntN(3000)) // random letters: Parquet compression must not shrink the file to one block
		for j := range pad {
			pad[j] = 'a' + byte(r.IntN(26))
		}
		recs = append(recs, fmt.Appendf(nil, `{"id":%d,"conversations":[{"from":"human","value":"%s"}]}`, i, pad))
	}
	files := map[string]string{}
	for _, f := range []string{JSONL, Parquet, Arrow, "arrow-file"} {
		path := filepath.Join(dir, f+".in")
		// Small row groups and batches, so that a file has many.
		w, err := createWithGroups(path, f, 256<<10)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[f] = path
	}
	for f, path := range files {
		want, wantHash := readTask(t, path, nil, 0)
		data, _ := os.ReadFile(path)
		if !bytes.Equal(wantHash, data) {
			t.Fatalf("%s: the whole file's hash input is not its bytes", f)
		}
		l, err := LayoutOf(path)
		if err != nil {
			t.Fatal(err)
		}
		if l.Format != map[string]string{"arrow-file": Arrow}[f] && f == "arrow-file" {
			t.Fatalf("%s: detected as %s", f, l.Format)
		}
		if f != JSONL && len(l.Offsets) < 4 {
			t.Fatalf("%s: only %d units", f, len(l.Offsets))
		}
		for _, target := range []int64{1, 2, 3, 7} {
			tasks := task.Split([]task.Input{l.Input}, target*task.BlockSize)
			var got []string
			var hashed []byte
			first := int64(0)
			for i := range tasks {
				tk := tasks[i]
				if l.Kind == task.Units {
					first = 0
					for _, n := range l.Rows[:tk.Start] {
						first += n
					}
				}
				recs, h := readTask(t, path, &tk, first)
				got = append(got, recs...)
				hashed = append(hashed, h...)
				if l.Kind == task.Lines {
					first += int64(countLines(t, path, &tk, first))
				}
			}
			if len(tasks) < 2 && target == 1 {
				t.Fatalf("%s: %d tasks at 1 MiB for %d bytes", f, len(tasks), len(data))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s at %d MiB (%d tasks): records differ", f, target, len(tasks))
			}
			if !bytes.Equal(hashed, data) {
				t.Fatalf("%s at %d MiB: the tasks' hashes saw %d bytes, not the file's %d", f, target, len(hashed), len(data))
			}
		}
	}
}

func readTask(t *testing.T, path string, tk *task.Task, first int64) ([]string, []byte) {
	var h bytes.Buffer
	in, err := Open(path, Options{Hash: &h, Task: tk, FirstLine: first})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out []string
	for {
		b, pos, err := in.Next()
		if err == io.EOF {
			return out, h.Bytes()
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%s", pos, b))
	}
}

func countLines(t *testing.T, path string, tk *task.Task, first int64) int64 {
	in, err := Open(path, Options{Task: tk, FirstLine: first})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for {
		if _, _, err := in.Next(); err == io.EOF {
			n, _ := in.Lines()
			return n - first
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// recordsWriter writes records as format.Writer does; createWithGroups
// makes one with row groups or record batches of about groupBytes, and
// (Arrow) the IPC file format when the name says so.
func createWithGroups(path, f string, groupBytes int64) (interface {
	Write([]byte) error
	Close() error
}, error) {
	if f == JSONL {
		return Create(path, JSONL, Schema{}, Column{})
	}
	return &deferred{path: path, format: f, groupBytes: groupBytes}, nil
}

// deferred buffers the records, then writes them with a schema inferred
// from them all.
type deferred struct {
	path, format string
	groupBytes   int64
	recs         [][]byte
}

func (d *deferred) Write(rec []byte) error { d.recs = append(d.recs, bytes.Clone(rec)); return nil }

func (d *deferred) Close() error {
	var w interface {
		Write([]byte) error
		Close() error
	}
	switch d.format {
	case Parquet:
		s, err := parquet.InferSchema(d.recs)
		if err != nil {
			return err
		}
		if w, err = parquet.Create(d.path, s, parquet.WriterOptions{RowGroupBytes: d.groupBytes}); err != nil {
			return err
		}
	case Arrow, "arrow-file":
		s, err := arrow.InferSchema(d.recs)
		if err != nil {
			return err
		}
		o := arrow.WriterOptions{BatchBytes: d.groupBytes}
		if d.format == "arrow-file" {
			o.Format = "file"
		}
		if w, err = arrow.Create(d.path, s, o); err != nil {
			return err
		}
	}
	for _, r := range d.recs {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return w.Close()
}
