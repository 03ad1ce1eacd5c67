package format

import (
	"io"
	"os"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/task"
)

// Layout is what splitting a file into tasks needs to know of it (see
// package task): its format, its size and how it may be split, and for
// Parquet and Arrow the rows of each row group or record batch.
type Layout struct {
	Format string
	task.Input
	Rows []int64 // task.Units: rows in each row group or record batch
}

// LayoutOf reads the layout of the file at path: uncompressed JSON Lines
// split by byte range; compressed JSON Lines (gzip, zstd, bzip2, xz, told
// by content), JSON arrays and standard input are read
// whole; Parquet by row groups and Arrow by record batches (an Arrow file
// with dictionary batches whole), read from the footer or the message
// headers alone.
func LayoutOf(path string) (Layout, error) {
	if path == Stdin {
		return Layout{Format: JSONL, Input: task.Input{Kind: task.Whole}}, nil
	}
	f, err := Detect(path)
	if err != nil {
		return Layout{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return Layout{}, err
	}
	l := Layout{Format: f, Input: task.Input{Kind: task.Whole, Size: st.Size()}}
	switch f {
	case JSONL:
		fh, err := os.Open(path)
		if err != nil {
			return l, err
		}
		magic := make([]byte, jsonl.MagicLen)
		n, _ := io.ReadFull(fh, magic)
		fh.Close()
		if jsonl.Compression(magic[:n]) == "" {
			l.Kind = task.Lines // a compressed stream cannot be entered mid-way
		}
	case Parquet:
		offs, rows, err := parquet.Layout(path)
		if err != nil {
			return l, err
		}
		l.Kind, l.Offsets, l.Rows = task.Units, offs, rows
	case Arrow:
		offs, rows, splittable, err := arrow.Layout(path)
		if err != nil {
			return l, err
		}
		if splittable {
			l.Kind, l.Offsets, l.Rows = task.Units, offs, rows
		}
	}
	return l, nil
}
