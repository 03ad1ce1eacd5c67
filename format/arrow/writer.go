package arrow

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// Column is a top-level column a writer makes sure its schema has.
type Column struct {
	Name string
	// Sample is a JSON value of the column, whose type (by the rules of
	// [InferSchema]) the column gets; nil: a utf8 column of JSON text.
	Sample []byte
}

// WriterOptions configure [Create]. The zero value is valid.
type WriterOptions struct {
	// Extra, if its Name is set, is a column the records may carry beyond
	// the schema's (for example "compression_metrics"). A schema without
	// it gets it appended, nullable, typed from Extra.Sample. In a utf8
	// column (appended so, or already in the schema, as files written
	// before kept it), Write stores any JSON value as its JSON text; a
	// column of another type in the schema is kept, and values must fit it.
	Extra Column
	// Format is "stream" (default: what `datasets` save_to_disk writes) or
	// "file" (Arrow IPC file / Feather v2).
	Format string
	// Compression is "none" (default, as datasets writes), "zstd" or "lz4"
	// (IPC body compression).
	Compression string
	// BatchRows flushes a record batch after this many rows; zero means
	// 1000, the `datasets` writer_batch_size default. A batch is also
	// flushed once BatchBytes of JSON input were written to it.
	BatchRows int
	// BatchBytes: zero means 64 MiB.
	BatchBytes int64
}

// Writer writes JSON objects as rows of an Arrow IPC file through a
// temporary file that [Writer.Close] syncs and renames into place. It is
// not safe for concurrent use.
type Writer struct {
	path      string
	f         *atomicfile.File
	stream    *ipc.Writer
	file      *ipc.FileWriter
	schema    *Schema
	b         *array.RecordBuilder
	extra     string // WriterOptions.Extra.Name
	extraText bool   // the extra column is a utf8 column
	maxRows   int
	maxBytes  int64
	n         int
	size      int64
	rows      int64
	err       error // sticky
}

// Create starts writing an Arrow IPC file at path with schema s (from
// [Reader.Schema] or [InferSchema]) plus the optional extra column.
func Create(path string, s *Schema, o WriterOptions) (*Writer, error) {
	if s == nil {
		return nil, fmt.Errorf("%s: nil schema", path)
	}
	out, text, err := s.withExtraColumn(o.Extra)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	opts := []ipc.Option{ipc.WithSchema(out.s)}
	switch strings.ToLower(o.Compression) {
	case "", "none":
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	default:
		return nil, fmt.Errorf("%s: unknown arrow compression %q (want none, zstd or lz4)", path, o.Compression)
	}
	format := strings.ToLower(o.Format)
	if format != "" && format != "stream" && format != "file" {
		return nil, fmt.Errorf("%s: unknown arrow format %q (want stream or file)", path, o.Format)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		path: path, f: f, schema: out, extra: o.Extra.Name, extraText: text,
		b: array.NewRecordBuilder(memory.DefaultAllocator, out.s), maxRows: o.BatchRows, maxBytes: o.BatchBytes,
	}
	if w.maxRows <= 0 {
		w.maxRows = 1000
	}
	if w.maxBytes <= 0 {
		w.maxBytes = 64 << 20
	}
	if format == "file" {
		if w.file, err = ipc.NewFileWriter(f, opts...); err != nil {
			w.Abort()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	} else {
		w.stream = ipc.NewWriter(f, opts...)
	}
	return w, nil
}

// Schema returns the schema being written, including the extra column.
func (w *Writer) Schema() *Schema { return w.schema }

// RowError is the error [Writer.Write] returns for a row it did not write
// because the row does not fit the schema (a key that is not a column, a
// value of the wrong kind) or is not a JSON object. It is not sticky: the
// next row is written. Its RecordUnfit method marks it as a per-record
// error to the pipeline, which rejects that record and goes on.
type RowError struct{ Err error }

func (e *RowError) Error() string { return e.Err.Error() }
func (e *RowError) Unwrap() error { return e.Err }

// RecordUnfit marks e as an error of the row alone.
func (e *RowError) RecordUnfit() {}

// Write appends one JSON object as a row. A key that is not a column or a
// value that does not fit its column is an error naming the key path and
// the 0-based row; the row is then not written and the error is not
// sticky. I/O errors are sticky.
func (w *Writer) Write(obj []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.f == nil {
		return fmt.Errorf("%s: write after Close or Abort", w.path)
	}
	o, err := jsonval.DecodeObjectBorrowed(obj) // not kept past Write
	if err != nil {
		return &RowError{fmt.Errorf("%s: row %d: %w", w.path, w.rows, err)}
	}
	fields := w.schema.s.Fields()
	// Validate the whole row before touching the builders, so a bad row
	// leaves no partial values behind.
	if err := checkRow(w.schema.s, w.extra, w.extraText, o); err != nil {
		return &RowError{fmt.Errorf("%s: row %d: %w", w.path, w.rows, err)}
	}
	for j, f := range fields {
		v, _ := o.Get(f.Name)
		if err := appendTo(w.b.Field(j), f, v, f.Name); err != nil {
			// check accepted the row, so this is a bug; the builders are now
			// inconsistent and the output must not be trusted.
			w.err = fmt.Errorf("%s: row %d: %w", w.path, w.rows, err)
			return w.err
		}
	}
	w.rows++
	w.n++
	w.size += int64(len(obj))
	if w.n >= w.maxRows || w.size >= w.maxBytes {
		return w.flush()
	}
	return nil
}

// checkRow validates the row o against schema s, the extra column's value
// taken as JSON text in a string column.
func checkRow(s *arrow.Schema, extra string, extraText bool, o *jsonval.Object) error {
	for _, k := range o.Keys {
		if len(s.FieldIndices(k)) == 0 {
			return fmt.Errorf("key %q: not a column of the schema", k)
		}
	}
	for _, f := range s.Fields() {
		v, _ := o.Get(f.Name)
		if extra != "" && f.Name == extra && v != nil {
			v = jsonval.AsColumn(v, extraText)
			o.Vals[slices.Index(o.Keys, f.Name)] = v
		}
		if err := check(f, v, f.Name); err != nil {
			return err
		}
	}
	return nil
}

// Checker tells whether rows fit a schema as [Writer.Write] takes them
// (the same checks and the same coercions), without writing anything:
// for records that are written to a file of that schema later. It is
// safe for concurrent use.
type Checker struct {
	path      string
	s         *arrow.Schema
	extra     string
	extraText bool
}

// NewChecker returns the checker of the rows that a [Writer] created at
// path with s and o takes (path only names the file in errors).
func NewChecker(path string, s *Schema, o WriterOptions) (*Checker, error) {
	out, text, err := s.withExtraColumn(o.Extra)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Checker{path: path, s: out.s, extra: o.Extra.Name, extraText: text}, nil
}

// Check returns the [*RowError] Write would return for the row obj, or
// nil when Write takes it.
func (c *Checker) Check(obj []byte) error {
	o, err := jsonval.DecodeObjectBorrowed(obj)
	if err == nil {
		err = checkRow(c.s, c.extra, c.extraText, o)
	}
	if err != nil {
		return &RowError{fmt.Errorf("%s: %w", c.path, err)}
	}
	return nil
}

func (w *Writer) flush() error {
	if w.n == 0 {
		return nil
	}
	rec := w.b.NewRecord()
	defer rec.Release()
	var err error
	if w.file != nil {
		err = w.file.Write(rec)
	} else {
		err = w.stream.Write(rec)
	}
	w.n, w.size = 0, 0
	if err != nil {
		w.err = fmt.Errorf("%s: write batch ending at row %d: %w", w.path, w.rows, err)
	}
	return w.err
}

// Close flushes the last batch, writes the end-of-stream marker (or the
// file footer), syncs and renames the file into place. After a failed
// Close nothing is left at the destination. Close after Abort or a second
// Close is a no-op.
func (w *Writer) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.err
	if err == nil {
		err = w.flush()
	}
	if err == nil {
		if w.file != nil {
			err = w.file.Close()
		} else {
			err = w.stream.Close()
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", w.path, err)
		}
	}
	w.b.Release()
	f := w.f
	w.f = nil
	return f.Finish(err)
}

// Abort discards the output: the temporary file is removed and nothing is
// left at the destination. Safe to call after Close (no-op).
func (w *Writer) Abort() error {
	if w.f == nil {
		return nil
	}
	w.b.Release()
	f := w.f
	w.f = nil
	return f.Abort()
}

func join(path, name string) string { return path + "." + name }

// check validates v against field f without building anything.
func check(f arrow.Field, v any, path string) error {
	if v == nil {
		if !f.Nullable {
			return fmt.Errorf("key %q: null or missing in a non-nullable column", path)
		}
		return nil
	}
	return walk(nil, f, v, path)
}

// appendTo appends v (already checked) to builder b.
func appendTo(b array.Builder, f arrow.Field, v any, path string) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	return walk(b, f, v, path)
}

// walk validates a non-null v against f and, when b is non-nil, appends it.
func walk(b array.Builder, f arrow.Field, v any, path string) error {
	if isJSON(f) {
		if b != nil {
			b.(array.StringLikeBuilder).Append(string(jsonval.Append(nil, v)))
		}
		return nil
	}
	fail := func(err error) error { return fmt.Errorf("key %q: %w", path, err) }
	switch dt := f.Type.(type) {
	case *arrow.MapType:
		return walkMap(b, dt, v, path, fail)
	case arrow.ListLikeType:
		return walkList(b, dt, v, path, fail)
	case *arrow.StructType:
		return walkStruct(b, dt, v, path, fail)
	}
	if err := appendScalar(b, f.Type, v); err != nil {
		return fail(err)
	}
	return nil
}

// appendScalar appends the JSON value v to b (nil: only check v) as a
// value of the non-nested type dt.
func appendScalar(b array.Builder, dt arrow.DataType, v any) error {
	switch dt := dt.(type) {
	case *arrow.NullType:
		return fmt.Errorf("want null, got %s", jsonval.KindName(v))
	case *arrow.BooleanType:
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want a boolean, got %s", jsonval.KindName(v))
		}
		if b != nil {
			b.(*array.BooleanBuilder).Append(x)
		}
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Date32Type, *arrow.Date64Type, *arrow.TimestampType, *arrow.Time32Type,
		*arrow.Time64Type, *arrow.DurationType:
		x, err := jsonval.ParseInt(v, dt.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return err
		}
		if b != nil {
			appendInt(b, x)
		}
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		x, err := jsonval.ParseUint(v, dt.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return err
		}
		if b != nil {
			appendUint(b, x)
		}
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		return appendFloat(b, dt, v)
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a string, got %s", jsonval.KindName(v))
		}
		if b != nil {
			b.(array.StringLikeBuilder).Append(s)
		}
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		return appendBinary(b, dt, v)
	default:
		return fmt.Errorf("writing %s columns is not supported", dt)
	}
	return nil
}

// appendFloat appends v to a floating-point column.
func appendFloat(b array.Builder, dt arrow.DataType, v any) error {
	bits := 64
	if dt.ID() != arrow.FLOAT64 {
		bits = 32
	}
	x, err := jsonval.ParseFloat(v, bits)
	if err != nil {
		return err
	}
	switch bb := b.(type) {
	case *array.Float16Builder:
		bb.Append(float16.New(float32(x)))
	case *array.Float32Builder:
		bb.Append(float32(x))
	case *array.Float64Builder:
		bb.Append(x)
	}
	return nil
}

// appendBinary appends v, a base64 string, to a binary column.
func appendBinary(b array.Builder, dt arrow.DataType, v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a base64 string, got %s", jsonval.KindName(v))
	}
	if b == nil {
		// Only checking (Write checks a row before appending it): the
		// value is decoded again to be appended, so do not keep a copy of
		// what may be a whole screenshot.
		n, err := checkBase64(s)
		if err != nil {
			return fmt.Errorf("want a base64 string: %w", err)
		}
		if fs, ok := dt.(*arrow.FixedSizeBinaryType); ok && n != fs.ByteWidth {
			return fmt.Errorf("want %d bytes, got %d", fs.ByteWidth, n)
		}
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("want a base64 string: %w", err)
	}
	if fs, ok := dt.(*arrow.FixedSizeBinaryType); ok && len(raw) != fs.ByteWidth {
		return fmt.Errorf("want %d bytes, got %d", fs.ByteWidth, len(raw))
	}
	switch bb := b.(type) {
	case *array.BinaryBuilder:
		bb.ReserveData(len(raw)) // one allocation, not a doubling series
		bb.Append(raw)
	case *array.BinaryViewBuilder:
		bb.Append(raw)
	case *array.FixedSizeBinaryBuilder:
		bb.Append(raw)
	}
	return nil
}

// checkBase64 decodes s as base64.StdEncoding.DecodeString would, 4 KiB
// of text at a time through scratch arrays, and returns the decoded length
// or the error DecodeString gives.
func checkBase64(s string) (int, error) {
	var src [4 << 10]byte // whole 4-character quanta
	var dst [3 << 10]byte
	n := 0
	for rest := s; ; {
		k := copy(src[:], rest)
		if k < len(rest) && strings.ContainsAny(rest[:k], "=\r\n") {
			break // padding or line breaks inside: let DecodeString judge
		}
		m, err := base64.StdEncoding.Decode(dst[:], src[:k])
		if err != nil {
			break
		}
		n += m
		if rest = rest[k:]; rest == "" {
			return n, nil
		}
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	return len(raw), err
}

// walkMap walks an object into a map column (string keys).
func walkMap(b array.Builder, dt *arrow.MapType, v any, path string, fail func(error) error) error {
	o, ok := v.(*jsonval.Object)
	if !ok {
		return fail(fmt.Errorf("want an object, got %s", jsonval.KindName(v)))
	}
	if dt.KeyType().ID() != arrow.STRING {
		return fail(errors.New("writing maps with non-string keys is not supported"))
	}
	var mb *array.MapBuilder
	if b != nil {
		mb = b.(*array.MapBuilder)
		mb.Append(true)
	}
	for i, k := range o.Keys {
		if mb != nil {
			mb.KeyBuilder().(*array.StringBuilder).Append(k)
		}
		if err := walkOrNull(itemBuilder(mb), dt.ItemField(), o.Vals[i], join(path, k)); err != nil {
			return err
		}
	}
	return nil
}

// walkList walks an array into a list column.
func walkList(b array.Builder, dt arrow.ListLikeType, v any, path string, fail func(error) error) error {
	if s, ok := v.(string); ok {
		if part, ok := textPart(dt.ElemField(), s); ok {
			v = part
		}
	}
	arr, ok := v.([]any)
	if !ok {
		return fail(fmt.Errorf("want an array, got %s", jsonval.KindName(v)))
	}
	if fl, ok := dt.(*arrow.FixedSizeListType); ok && int32(len(arr)) != fl.Len() {
		return fail(fmt.Errorf("want %d elements, got %d", fl.Len(), len(arr)))
	}
	var vb array.Builder
	if b != nil {
		lb := b.(array.ListLikeBuilder)
		lb.Append(true)
		vb = lb.ValueBuilder()
	}
	for i, e := range arr {
		if err := walkOrNull(vb, dt.ElemField(), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// walkStruct walks an object into a struct column: every key must be one
// of its fields.
func walkStruct(b array.Builder, dt *arrow.StructType, v any, path string, fail func(error) error) error {
	o, ok := v.(*jsonval.Object)
	if !ok {
		return fail(fmt.Errorf("want an object, got %s", jsonval.KindName(v)))
	}
	for _, k := range o.Keys {
		if _, ok := dt.FieldIdx(k); !ok {
			return fmt.Errorf("key %q: not a column of the schema", join(path, k))
		}
	}
	var sb *array.StructBuilder
	if b != nil {
		sb = b.(*array.StructBuilder)
		sb.Append(true)
	}
	for j, cf := range dt.Fields() {
		cv, _ := o.Get(cf.Name)
		var cb array.Builder
		if sb != nil {
			cb = sb.FieldBuilder(j)
		}
		if err := walkOrNull(cb, cf, cv, join(path, cf.Name)); err != nil {
			return err
		}
	}
	return nil
}

// textPart is s as the one-element list of content parts of a list whose
// elements are elem (see jsonval.TextPart), when elem is a struct with a
// string field "text" or "value".
func textPart(elem arrow.Field, s string) ([]any, bool) {
	st, ok := elem.Type.(*arrow.StructType)
	if !ok || isJSON(elem) {
		return nil, false
	}
	return jsonval.TextPart(s, func(name string) bool {
		i, ok := st.FieldIdx(name)
		if !ok || isJSON(st.Field(i)) {
			return false
		}
		switch st.Field(i).Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return true
		}
		return false
	})
}

func itemBuilder(mb *array.MapBuilder) array.Builder {
	if mb == nil {
		return nil
	}
	return mb.ItemBuilder()
}

func walkOrNull(b array.Builder, f arrow.Field, v any, path string) error {
	if v == nil {
		if !f.Nullable {
			return fmt.Errorf("key %q: null or missing in a non-nullable column", path)
		}
		if b != nil {
			b.AppendNull()
		}
		return nil
	}
	return walk(b, f, v, path)
}

func appendInt(b array.Builder, x int64) {
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(int8(x))
	case *array.Int16Builder:
		bb.Append(int16(x))
	case *array.Int32Builder:
		bb.Append(int32(x))
	case *array.Int64Builder:
		bb.Append(x)
	case *array.Date32Builder:
		bb.Append(arrow.Date32(x))
	case *array.Date64Builder:
		bb.Append(arrow.Date64(x))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(x))
	case *array.Time32Builder:
		bb.Append(arrow.Time32(x))
	case *array.Time64Builder:
		bb.Append(arrow.Time64(x))
	case *array.DurationBuilder:
		bb.Append(arrow.Duration(x))
	}
}

func appendUint(b array.Builder, x uint64) {
	switch bb := b.(type) {
	case *array.Uint8Builder:
		bb.Append(uint8(x))
	case *array.Uint16Builder:
		bb.Append(uint16(x))
	case *array.Uint32Builder:
		bb.Append(uint32(x))
	case *array.Uint64Builder:
		bb.Append(x)
	}
}
