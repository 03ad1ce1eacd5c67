package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/traj"
)

// Formats: records are JSON objects everywhere inside trajcompress; the
// Parquet and Arrow readers and writers convert rows to and from them,
// carrying the schema through.
const (
	fmtJSONL   = "jsonl"
	fmtParquet = "parquet"
	fmtArrow   = "arrow"
)

// formatOf names the format of a file by its extension ("" if unknown).
func formatOf(path string) string {
	switch {
	case strings.HasSuffix(path, ".jsonl"), strings.HasSuffix(path, ".jsonl.gz"):
		return fmtJSONL
	case strings.HasSuffix(path, ".parquet"):
		return fmtParquet
	case strings.HasSuffix(path, ".arrow"):
		return fmtArrow
	}
	return ""
}

func extOf(format string) string {
	if format == fmtJSONL {
		return ".jsonl"
	}
	return "." + format
}

// stem strips a known data extension: runs/a.jsonl.gz → a.
func stem(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".jsonl.gz", ".jsonl", ".json", ".parquet", ".arrow"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

// source is an opened input: records as JSON objects, 1-based line or row.
type source interface {
	Next() ([]byte, int64, error)
	Close() error
}

// rowSource adapts a Parquet or Arrow reader: its rows are 0-based and its
// bytes are reused, the pipeline's are 1-based and owned.
type rowSource struct {
	next  func() ([]byte, int64, error)
	close func() error
}

func (s rowSource) Next() ([]byte, int64, error) {
	b, row, err := s.next()
	if err != nil {
		return nil, 0, err
	}
	return bytes.Clone(b), row + 1, nil
}

func (s rowSource) Close() error { return s.close() }

// inputSchema is the schema of a tabular input (nil for JSONL).
type inputSchema struct {
	parquet *parquet.Schema
	arrow   *arrow.Schema
}

func openTabular(path, format string) (source, inputSchema, error) {
	switch format {
	case fmtParquet:
		r, err := parquet.Open(path)
		if err != nil {
			return nil, inputSchema{}, err
		}
		return rowSource{r.Next, r.Close}, inputSchema{parquet: r.Schema()}, nil
	case fmtArrow:
		r, err := arrow.Open(path)
		if err != nil {
			return nil, inputSchema{}, err
		}
		return rowSource{r.Next, r.Close}, inputSchema{arrow: r.Schema()}, nil
	}
	return nil, inputSchema{}, fmt.Errorf("%s: unknown format %q", path, format)
}

// sink is an output being written: Close commits, Abort discards.
type sink interface {
	Write([]byte) error
	Close() error
	Abort() error
}

// schemaSample is how many records a tabular writer without an input
// schema of its format buffers to infer one.
const schemaSample = 1000

// tabularSink writes Parquet or Arrow. With the input's schema in the same
// format it writes at once; otherwise it buffers the first records, infers
// the schema from them, then streams. A later record with a field the
// schema lacks is an error naming the field, never a silent drop.
type tabularSink struct {
	path, format string
	schema       inputSchema
	extra        string // extra JSON column, e.g. compression_metrics
	buf          [][]byte
	w            sink
}

func newTabularSink(path, format string, in inputSchema, extra string) (*tabularSink, error) {
	s := &tabularSink{path: path, format: format, schema: in, extra: extra}
	if (format == fmtParquet && in.parquet != nil) || (format == fmtArrow && in.arrow != nil) {
		if err := s.open(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *tabularSink) open() error {
	var w sink
	var err error
	switch s.format {
	case fmtParquet:
		sch := s.schema.parquet
		if sch == nil {
			if sch, err = parquet.InferSchema(s.buf); err != nil {
				return fmt.Errorf("%s: %w", s.path, err)
			}
		}
		var pw *parquet.Writer
		if pw, err = parquet.Create(s.path, sch, parquet.WriterOptions{ExtraJSONColumn: s.extraFor(sch.Columns())}); err == nil {
			w = pw
		}
	case fmtArrow:
		sch := s.schema.arrow
		if sch == nil {
			if sch, err = arrow.InferSchema(s.buf); err != nil {
				return fmt.Errorf("%s: %w", s.path, err)
			}
		}
		var aw *arrow.Writer
		if aw, err = arrow.Create(s.path, sch, arrow.WriterOptions{ExtraJSONColumn: s.extraFor(sch.Columns())}); err == nil {
			w = aw
		}
	}
	if err != nil {
		return err
	}
	s.w = w
	for _, b := range s.buf {
		if err := s.w.Write(b); err != nil {
			return err
		}
	}
	s.buf = nil
	return nil
}

// extraFor returns the extra column to add to a schema with these
// columns: none when the schema has it already (an input compressed
// before, or a schema inferred from records that carry it).
func (s *tabularSink) extraFor(columns []string) string {
	if slices.Contains(columns, s.extra) {
		return ""
	}
	return s.extra
}

func (s *tabularSink) Write(rec []byte) error {
	if s.w != nil {
		return s.w.Write(rec)
	}
	s.buf = append(s.buf, bytes.Clone(rec))
	if len(s.buf) >= schemaSample {
		return s.open()
	}
	return nil
}

func (s *tabularSink) Close() error {
	if s.w == nil && len(s.buf) == 0 && s.schema.parquet == nil && s.schema.arrow == nil {
		return fmt.Errorf("%s: no record to write, and a %s file needs one to infer its schema from (write JSONL instead)", s.path, s.format)
	}
	if s.w == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	return s.w.Close()
}

func (s *tabularSink) Abort() error {
	if s.w == nil {
		return nil
	}
	return s.w.Abort()
}

// createSink creates the output for one input file.
func createSink(path, format string, in inputSchema, extra string) (sink, error) {
	if format == fmtJSONL {
		return jsonl.Create(path)
	}
	return newTabularSink(path, format, in, extra)
}

// decodable keeps the lines a tabular file can hold: Parquet and Arrow
// rows are objects, so a line that is not a valid trajectory object (the
// generator's malformed profile) is left out.
func decodable(line []byte) bool {
	_, err := traj.Decode(line, traj.Pos{}, traj.Schema{})
	return err == nil
}

// checkTurnsColumn fails early, naming the file, when a tabular input has
// no column a trajectory could be read from: every row would be rejected.
func checkTurnsColumn(path string, in inputSchema, turnsKey string) error {
	var cols []string
	switch {
	case in.parquet != nil:
		cols = in.parquet.Columns()
	case in.arrow != nil:
		cols = in.arrow.Columns()
	}
	want := []string{"conversations", "messages"}
	if turnsKey != "" {
		want = []string{turnsKey}
	}
	for _, w := range want {
		if slices.Contains(cols, w) {
			return nil
		}
	}
	return fmt.Errorf("%s: no %s column to read trajectories from (columns: %s; set input.turns_key for a renamed one)",
		path, strings.Join(want, " or "), strings.Join(cols, ", "))
}
