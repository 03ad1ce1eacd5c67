package parquet

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// Column is a top-level column a writer makes sure its schema has.
type Column struct {
	Name string
	// Sample is a JSON value of the column, whose type (by the rules of
	// [InferSchema]) the column gets; nil: a string column of JSON text.
	Sample []byte
}

// WriterOptions configure [Create]. The zero value is valid.
type WriterOptions struct {
	// Extra, if its Name is set, is a column the records may carry beyond
	// the schema's (for example "compression_metrics"). A schema without
	// it gets it appended, optional, typed from Extra.Sample. In a string
	// column (appended so, or already in the schema, as files written
	// before kept it), Write stores any JSON value as its JSON text; a
	// column of another type in the schema is kept, and values must fit it.
	Extra Column
	// Compression is "snappy" (default, as pyarrow and the hub use), "zstd",
	// "gzip" or "none".
	Compression string
	// RowGroupBytes flushes a row group once this many bytes of JSON input
	// have been written since the last one. Zero means 64 MiB, which bounds
	// the writer's buffered memory to a few times that; `datasets` uses
	// 100 MB row groups.
	RowGroupBytes int64
}

const defaultRowGroupBytes = 64 << 20

// Writer writes JSON objects as rows of a Parquet file. Output goes to a
// temporary file next to the destination that [Writer.Close] syncs and
// renames into place, so a failed or aborted write leaves nothing at the
// destination. It is not safe for concurrent use.
type Writer struct {
	path string
	f    *atomicfile.File
	// pq.Writer is deprecated in favour of GenericWriter[any], but that
	// one panics at construction on a schema with a MAP column ("cannot
	// construct parquet schema from value of type map[string]interface
	// {}", parquet-go v0.32.0; upstream issues 304, 417 are its kin), and
	// GenericWriter[any] is this same Writer underneath, so the bytes are
	// the same. TestGenericWriterStillPanicsOnMaps says when to switch.
	w         *pq.Writer //nolint:staticcheck // SA1019: see above
	schema    *Schema
	chk       *Checker // the schema's plan, the extra column, the row's leaf values
	groupMax  int64
	groupSize int64
	rows      int64

	row pq.Row
	err error // sticky
}

// Create starts writing a Parquet file at path with schema s (from
// [Reader.Schema] or [InferSchema]) plus the optional extra column.
func Create(path string, s *Schema, o WriterOptions) (*Writer, error) {
	if s == nil {
		return nil, fmt.Errorf("%s: nil schema", path)
	}
	codec, err := codecOf(o.Compression)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	chk, err := NewChecker(path, s, o)
	if err != nil {
		return nil, err
	}
	out := chk.out
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	opts := []pq.WriterOption{pq.NewSchema("schema", out.root), pq.Compression(codec), pq.CreatedBy("trajcompress", "", "")}
	for _, kv := range out.metadata {
		opts = append(opts, pq.KeyValueMetadata(kv.Key, kv.Value))
	}
	for _, path := range binaryColumns(out.root, nil, nil) {
		opts = append(opts, pq.SkipPageStatistics(path...), pq.SkipPageBounds(path...))
	}
	groupMax := o.RowGroupBytes
	if groupMax <= 0 {
		groupMax = defaultRowGroupBytes
	}
	return &Writer{path: path, f: f, w: pq.NewWriter(f, opts...), schema: out, chk: chk, groupMax: groupMax}, nil
}

// binaryColumns lists the paths of the binary leaf columns under n (byte
// arrays without a STRING, ENUM or JSON annotation: a datasets Image's
// bytes). Their values get no min/max statistics and no page bounds:
// parquet-go would otherwise copy the whole value, a 20 MB screenshot, into
// the page header and twice into the footer (pyarrow likewise leaves out
// statistics of values over 4 KiB), and min/max of image bytes help no
// query.
func binaryColumns(n pq.Node, path []string, out [][]string) [][]string {
	if n.Leaf() {
		if n.Type().Kind() == pq.ByteArray && encOf(n.Type()) == eBytes {
			out = append(out, slices.Clone(path))
		}
		return out
	}
	for _, f := range n.Fields() {
		out = binaryColumns(f, append(path, f.Name()), out)
	}
	return out
}

func codecOf(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return &pq.Snappy, nil
	case "zstd":
		return &pq.Zstd, nil
	case "gzip":
		return &pq.Gzip, nil
	case "none", "uncompressed":
		return &pq.Uncompressed, nil
	}
	return nil, fmt.Errorf("unknown parquet compression %q (want snappy, zstd, gzip or none)", name)
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

// Write appends one JSON object as a row. A key that is not a column, or a
// value whose JSON kind does not fit the column, is an error naming the
// key path (for example `messages[2].tool_calls[0].id`) and the 0-based row;
// such an error is not sticky (the row is not written). I/O errors are
// sticky.
func (w *Writer) Write(obj []byte) error {
	if w.err != nil {
		return w.err
	}
	o, err := jsonval.DecodeObjectBorrowed(obj) // not kept past Write
	if err != nil {
		return &RowError{fmt.Errorf("%s: row %d: %w", w.path, w.rows, err)}
	}
	if err := w.chk.shred(o); err != nil {
		return &RowError{fmt.Errorf("%s: row %d: %w", w.path, w.rows, err)}
	}
	w.row = w.row[:0]
	for _, c := range w.chk.cols {
		w.row = append(w.row, c...)
	}
	if _, err := w.w.WriteRows([]pq.Row{w.row}); err != nil {
		w.err = fmt.Errorf("%s: row %d: %w", w.path, w.rows, err)
		return w.err
	}
	w.rows++
	w.groupSize += int64(len(obj))
	if w.groupSize >= w.groupMax {
		w.groupSize = 0
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("%s: flush row group: %w", w.path, err)
			return w.err
		}
	}
	return nil
}

// Checker tells whether rows fit a schema as [Writer.Write] takes them
// (the same checks and the same coercions: Write uses one), without
// writing anything: for records that are written to a file of that
// schema later. It is not safe for concurrent use.
type Checker struct {
	path      string
	out       *Schema // with the extra column
	plan      *pnode
	cols      [][]pq.Value // the leaf values of the last row shredded
	extra     string
	extraText bool // the extra column is a string column
}

// NewChecker returns the checker of the rows that a [Writer] created at
// path with s and o takes (path only names the file in errors).
func NewChecker(path string, s *Schema, o WriterOptions) (*Checker, error) {
	out, text, err := s.withExtraColumn(o.Extra)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	plan, ncols, err := compile(out.root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Checker{path: path, out: out, plan: plan, cols: make([][]pq.Value, ncols), extra: o.Extra.Name, extraText: text}, nil
}

// Check returns the [*RowError] Write would return for the row obj, or
// nil when Write takes it.
func (c *Checker) Check(obj []byte) error {
	o, err := jsonval.DecodeObjectBorrowed(obj)
	if err == nil {
		err = c.shred(o)
	}
	if err != nil {
		return &RowError{fmt.Errorf("%s: %w", c.path, err)}
	}
	return nil
}

// shred shreds the row o into c.cols (emptied first), the extra column's
// value taken as JSON text in a string column.
func (c *Checker) shred(o *jsonval.Object) error {
	if c.extra != "" {
		if i := slices.Index(o.Keys, c.extra); i >= 0 {
			o.Vals[i] = jsonval.AsColumn(o.Vals[i], c.extraText)
		}
	}
	for i := range c.cols {
		c.cols[i] = c.cols[i][:0]
	}
	s := shredder{cols: c.cols}
	return s.instance(c.plan, o, 0, "")
}

// Close writes the footer, syncs the file and renames it into place. After
// a failed Close nothing is left at the destination. Close after Abort or
// a second Close is a no-op returning nil.
func (w *Writer) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.err
	if err == nil {
		if cerr := w.w.Close(); cerr != nil {
			err = fmt.Errorf("%s: %w", w.path, cerr)
		}
	}
	f := w.f
	w.f = nil
	return f.Finish(err)
}

// Abort discards the output: the temporary file is removed and nothing is
// left at the destination. It is safe to call after Close (no-op).
func (w *Writer) Abort() error {
	if w.f == nil {
		return nil
	}
	f := w.f
	w.f = nil
	return f.Abort()
}

// shredder turns a decoded JSON value into leaf values with repetition and
// definition levels (the inverse of assembler).
type shredder struct {
	cols [][]pq.Value
}

func (s *shredder) nulls(p *pnode, rep, def int) {
	for _, c := range p.leaves {
		s.cols[c] = append(s.cols[c], pq.NullValue().Level(rep, def, c))
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// field shreds v (nil when null or absent) for node p whose parent is
// present at definition level parentDef.
func (s *shredder) field(p *pnode, v any, rep, parentDef int, path string) error {
	if v == nil {
		if p.repeated || p.optional {
			s.nulls(p, rep, parentDef) // a null bare repeated field reads back as []
			return nil
		}
		return fmt.Errorf("key %q: required column is null or missing", path)
	}
	if !p.repeated {
		return s.instance(p, v, rep, path)
	}
	if str, ok := v.(string); ok {
		if part, ok := textPart(p, str); ok {
			v = part
		}
	}
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("key %q: want an array, got %s", path, jsonval.KindName(v))
	}
	if len(arr) == 0 {
		s.nulls(p, rep, parentDef)
		return nil
	}
	for i, e := range arr {
		r := rep
		if i > 0 {
			r = p.rep
		}
		if e == nil {
			return fmt.Errorf("key %q: null element in a repeated column", fmt.Sprintf("%s[%d]", path, i))
		}
		if err := s.instance(p, e, r, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// instance shreds a non-null value of p at p's own definition level.
func (s *shredder) instance(p *pnode, v any, rep int, path string) error {
	switch p.kind {
	case kLeaf:
		val, err := leafValue(p, v)
		if err != nil {
			return fmt.Errorf("key %q: %w", path, err)
		}
		s.cols[p.col] = append(s.cols[p.col], val.Level(rep, p.def, p.col))
		return nil
	case kStruct:
		o, ok := v.(*jsonval.Object)
		if !ok {
			return fmt.Errorf("key %q: want an object, got %s", path, jsonval.KindName(v))
		}
		for _, k := range o.Keys {
			if p.byName[k] == nil {
				return fmt.Errorf("key %q: not a column of the schema", join(path, k))
			}
		}
		for _, c := range p.children {
			cv, _ := o.Get(c.name)
			if err := s.field(c, cv, rep, p.def, join(path, c.name)); err != nil {
				return err
			}
		}
		return nil
	case kList:
		if str, ok := v.(string); ok {
			if part, ok := textPart(p.elem, str); ok {
				v = part
			}
		}
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("key %q: want an array, got %s", path, jsonval.KindName(v))
		}
		if len(arr) == 0 {
			s.nulls(p, rep, p.def)
			return nil
		}
		for i, e := range arr {
			r := rep
			if i > 0 {
				r = p.middle.rep
			}
			if err := s.field(p.elem, e, r, p.middle.def, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case kList2:
		return s.field(p.children[0], v, rep, p.def, path)
	case kMap:
		o, ok := v.(*jsonval.Object)
		if !ok {
			return fmt.Errorf("key %q: want an object, got %s", path, jsonval.KindName(v))
		}
		if len(o.Keys) == 0 {
			s.nulls(p, rep, p.def)
			return nil
		}
		if p.key.enc != eString {
			return fmt.Errorf("key %q: writing maps with non-string keys is not supported", path)
		}
		for i, k := range o.Keys {
			r := rep
			if i > 0 {
				r = p.middle.rep
			}
			s.cols[p.key.col] = append(s.cols[p.key.col], pq.ByteArrayValue([]byte(k)).Level(r, p.key.def, p.key.col))
			if err := s.field(p.value, o.Vals[i], r, p.middle.def, join(path, k)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("key %q: unknown node kind", path)
}

// textPart is s as the one-element list of content parts of the list
// whose elements are elem (see jsonval.TextPart), when elem is a struct
// with a string field "text" or "value".
func textPart(elem *pnode, s string) ([]any, bool) {
	if elem.kind != kStruct {
		return nil, false
	}
	return jsonval.TextPart(s, func(name string) bool {
		c := elem.byName[name]
		return c != nil && c.kind == kLeaf && c.enc == eString
	})
}

func leafValue(p *pnode, v any) (pq.Value, error) {
	switch p.enc {
	case eBool:
		b, ok := v.(bool)
		if !ok {
			return pq.Value{}, fmt.Errorf("want a boolean, got %s", jsonval.KindName(v))
		}
		return pq.BooleanValue(b), nil
	case eInt32:
		i, err := jsonval.ParseInt(v, 32)
		return pq.Int32Value(int32(i)), err
	case eUint32:
		u, err := jsonval.ParseUint(v, 32)
		return pq.Int32Value(int32(uint32(u))), err
	case eInt64:
		i, err := jsonval.ParseInt(v, 64)
		return pq.Int64Value(i), err
	case eUint64:
		u, err := jsonval.ParseUint(v, 64)
		return pq.Int64Value(int64(u)), err
	case eFloat:
		f, err := jsonval.ParseFloat(v, 32)
		return pq.FloatValue(float32(f)), err
	case eDouble:
		f, err := jsonval.ParseFloat(v, 64)
		return pq.DoubleValue(f), err
	case eString:
		str, ok := v.(string)
		if !ok {
			return pq.Value{}, fmt.Errorf("want a string, got %s", jsonval.KindName(v))
		}
		return fixedLen(p, []byte(str))
	case eJSON:
		return pq.ByteArrayValue(jsonval.Append(nil, v)), nil
	case eBytes:
		str, ok := v.(string)
		if !ok {
			return pq.Value{}, fmt.Errorf("want a base64 string, got %s", jsonval.KindName(v))
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return pq.Value{}, fmt.Errorf("want a base64 string: %w", err)
		}
		return fixedLen(p, b)
	}
	return pq.Value{}, fmt.Errorf("writing %v columns is not supported", p.typ)
}

func fixedLen(p *pnode, b []byte) (pq.Value, error) {
	if p.typ.Kind() == pq.FixedLenByteArray {
		if len(b) != p.typ.Length() {
			return pq.Value{}, fmt.Errorf("want %d bytes, got %d", p.typ.Length(), len(b))
		}
		return pq.FixedLenByteArrayValue(b), nil
	}
	return pq.ByteArrayValue(b), nil
}
