package format

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// Writer is an output being written, one JSON object per Write: Close
// puts the complete file in place, Abort discards it.
type Writer interface {
	Write(rec []byte) error
	Close() error
	Abort() error
}

// Create makes the writer of a file at path in format. A Parquet or Arrow
// output keeps the input's schema when the input was of the same format;
// otherwise it infers one from the first records (see [SchemaSample]).
// extra names a JSON column to add when the schema lacks it (e.g.
// "compression_metrics"; "" for none).
func Create(path, format string, in Schema, extra string) (Writer, error) {
	switch format {
	case JSONL:
		return jsonl.Create(path)
	case JSON:
		return jsonl.CreateArray(path)
	case Parquet, Arrow:
		s := &tabular{path: path, format: format, schema: in, extra: extra}
		if (format == Parquet && in.parquet != nil) || (format == Arrow && in.arrow != nil) {
			if err := s.open(); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: unknown output format %q (want jsonl, json, parquet or arrow)", path, format)
}

// SchemaSample is how many records a tabular writer without an input
// schema of its format buffers to infer one.
const SchemaSample = 1000

// tabular writes Parquet or Arrow. With the input's schema in the same
// format it writes at once; otherwise it buffers the first records, infers
// the schema from them, then streams. A later record with a field the
// schema lacks is an error naming the field, never a silent drop.
type tabular struct {
	path, format string
	schema       Schema
	extra        string
	buf          [][]byte
	w            Writer
}

func (s *tabular) open() error {
	var w Writer
	var err error
	switch s.format {
	case Parquet:
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
	case Arrow:
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
func (s *tabular) extraFor(columns []string) string {
	if slices.Contains(columns, s.extra) {
		return ""
	}
	return s.extra
}

func (s *tabular) Write(rec []byte) error {
	if s.w != nil {
		return s.w.Write(rec)
	}
	s.buf = append(s.buf, bytes.Clone(rec))
	if len(s.buf) >= SchemaSample {
		return s.open()
	}
	return nil
}

func (s *tabular) Close() error {
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

func (s *tabular) Abort() error {
	if s.w == nil {
		return nil
	}
	return s.w.Abort()
}
