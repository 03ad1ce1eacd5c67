package format

import (
	"bytes"
	"fmt"

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

// Column is a top-level field the records may carry beyond the input's
// columns (compression_metrics): Name, and Sample, a JSON value whose type
// the column gets in a Parquet or Arrow output that lacks it (nil: a
// string column of JSON text).
type Column struct {
	Name   string
	Sample []byte
}

// HFMetadata is the schema metadata key of the `datasets` features.
const HFMetadata = "huggingface"

// Create makes the writer of a file at path in format. A Parquet or Arrow
// output keeps the input's schema when the input was of the same format
// (and an Arrow output the input's IPC format, file or stream); otherwise
// it infers one from the first records (see [SchemaSample]) and carries
// over the input's "huggingface" metadata (Arrow → Parquet, Parquet →
// Arrow), typing the columns it declares as datasets Image values as
// datasets does (struct<bytes: binary, path: string>, not base64 text). extra is a column to add when the schema lacks it (Name "" for
// none): it is left out of the inference and gets its own type, so that
// its type does not depend on the records (see the parquet and arrow
// WriterOptions.Extra).
func Create(path, format string, in Schema, extra Column) (Writer, error) {
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
	return nil, fmt.Errorf("%s: unknown output format: %w", path, CheckName(format))
}

// Checker returns the check of the records a writer made by [Create]
// with the same arguments takes: an error (a RowError of format/parquet or
// format/arrow, a per-record error) for a record it would refuse, as its
// Write would, without writing. It is nil when there is nothing to check
// before writing: JSON output, or a Parquet or Arrow output whose schema
// is inferred from the records themselves. A check is not safe for
// concurrent use.
func Checker(path, format string, in Schema, extra Column) (func(rec []byte) error, error) {
	switch {
	case format == Parquet && in.parquet != nil:
		c, err := parquet.NewChecker(path, in.parquet, parquet.WriterOptions{Extra: parquet.Column(extra)})
		if err != nil {
			return nil, err
		}
		return c.Check, nil
	case format == Arrow && in.arrow != nil:
		c, err := arrow.NewChecker(path, in.arrow, arrow.WriterOptions{Extra: arrow.Column(extra)})
		if err != nil {
			return nil, err
		}
		return c.Check, nil
	}
	return nil, nil
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
	extra        Column
	buf          [][]byte
	w            Writer
}

func (s *tabular) open() error {
	var w Writer
	var err error
	var except []string
	if s.extra.Name != "" {
		except = []string{s.extra.Name}
	}
	hf, carry := s.schema.Metadata(HFMetadata)
	switch s.format {
	case Parquet:
		sch := s.schema.parquet
		if sch == nil {
			if sch, err = parquet.InferSchemaFeatures(s.buf, hf, except...); err != nil {
				return fmt.Errorf("%s: %w", s.path, err)
			}
			if carry {
				sch = sch.WithKeyValues(parquet.KeyValue{Key: HFMetadata, Value: hf})
			}
		}
		var pw *parquet.Writer
		if pw, err = parquet.Create(s.path, sch, parquet.WriterOptions{Extra: parquet.Column(s.extra)}); err == nil {
			w = pw
		}
	case Arrow:
		sch := s.schema.arrow
		o := arrow.WriterOptions{Extra: arrow.Column(s.extra)}
		if sch == nil {
			if sch, err = arrow.InferSchemaFeatures(s.buf, hf, except...); err != nil {
				return fmt.Errorf("%s: %w", s.path, err)
			}
			if carry {
				sch = sch.WithMetadata(map[string]string{HFMetadata: hf})
			}
		} else if s.schema.arrowFile {
			o.Format = "file" // Arrow file format in, file format out
		}
		var aw *arrow.Writer
		if aw, err = arrow.Create(s.path, sch, o); err == nil {
			w = aw
		}
	}
	if err != nil {
		return err
	}
	s.w = w
	for _, b := range s.buf {
		if err := s.w.Write(b); err != nil {
			// Not the error of the record being written now (nor
			// expected: the schema was inferred from these): fatal, so
			// that it is never taken for a per-record error.
			return fmt.Errorf("a record of the schema sample: %s", err)
		}
	}
	s.buf = nil
	return nil
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
