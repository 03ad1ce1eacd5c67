package arrow

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// fileMagic opens an Arrow IPC file (Feather v2); a stream has no magic.
var fileMagic = []byte("ARROW1")

// Reader streams the rows of one Arrow IPC file (stream or file format) as
// JSON objects, one record batch at a time. It is not safe for concurrent
// use.
type Reader struct {
	path   string
	f      *os.File
	stream *ipc.Reader     // stream format
	file   *ipc.FileReader // file format
	schema *Schema
	layout ipcLayout // from the validation walk
	size   int64
	end    int // read batches before this one (Batches), or all (-1)

	jsonText []bool // per top-level field: string text embedded as JSON
	batch    int    // 0-based index of the current batch
	rec      arrow.Record
	recOwned bool // rec must be released by us (file format)
	i        int  // next row in rec
	row      int64
	out      []byte
	err      error // sticky
}

// Open opens an Arrow IPC file. It tries the stream format first (what
// `datasets` writes for data-*.arrow cache files) and falls back to the
// file format, like the datasets arrow loader. Errors name the file. A
// top-level utf8 field named in jsonText is read like an arrow.json one:
// its text, when it is one JSON value, is embedded as that value (for
// compression_metrics, which versions before the struct column wrote as
// JSON text).
func Open(path string, jsonText ...string) (_ *Reader, err error) {
	r, err := open(path)
	if err != nil {
		return nil, err
	}
	for _, f := range r.schema.s.Fields() {
		r.jsonText = append(r.jsonText, slices.Contains(jsonText, f.Name))
	}
	return r, nil
}

// Format is the IPC format of the file: "file" or "stream".
func (r *Reader) Format() string {
	if r.file != nil {
		return "file"
	}
	return "stream"
}

func open(path string) (_ *Reader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil { // a corrupt schema can trip decoder checks
			f.Close()
			err = fmt.Errorf("%s: not a readable Arrow IPC stream or file: %v", path, p)
		}
	}()
	r := &Reader{path: path, f: f, end: -1}
	head := make([]byte, len(fileMagic))
	n, _ := io.ReadFull(f, head)
	isFile := n == len(fileMagic) && bytes.Equal(head, fileMagic)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r.size = st.Size()
	if err := validateIPC(f, st.Size(), isFile, &r.layout); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a readable Arrow IPC %s: %w", path, map[bool]string{true: "file", false: "stream"}[isFile], err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if isFile {
		fr, err := ipc.NewFileReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: not a readable Arrow IPC file: %w", path, err)
		}
		r.file, r.schema = fr, &Schema{s: fr.Schema()}
		return r, nil
	}
	sr, err := ipc.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a readable Arrow IPC stream or file: %w", path, err)
	}
	r.stream, r.schema = sr, &Schema{s: sr.Schema()}
	return r, nil
}

// Schema returns the file's schema with its metadata; pass it to [Create]
// to write the same layout back.
func (r *Reader) Schema() *Schema { return r.schema }

// Next returns the next row as a JSON object (no trailing newline) and its
// 0-based index in the file; io.EOF after the last row. The returned bytes
// are valid until the next call. Errors name the file, the record batch
// and the row, and are sticky. At most one record batch is held in memory.
func (r *Reader) Next() (obj []byte, row int64, err error) {
	if r.err != nil {
		return nil, r.row, r.err
	}
	defer func() {
		// Offsets or lengths in a corrupt batch can trip index checks;
		// report it like the ipc package does instead of crashing the run.
		if p := recover(); p != nil {
			r.err = fmt.Errorf("%s: batch %d, row %d: corrupt data: %v", r.path, r.batch, r.row, p)
			obj, row, err = nil, r.row, r.err
		}
	}()
	for r.rec == nil || r.i >= int(r.rec.NumRows()) {
		if err := r.nextBatch(); err != nil {
			r.err = err
			return nil, r.row, err
		}
	}
	out, err := r.appendRow(r.out[:0], r.rec, r.i)
	if err != nil {
		r.err = fmt.Errorf("%s: batch %d, row %d: %w", r.path, r.batch, r.row, err)
		return nil, r.row, r.err
	}
	r.out = out
	r.i++
	idx := r.row
	r.row++
	return out, idx, nil
}

func (r *Reader) nextBatch() error {
	if r.rec != nil {
		if r.recOwned {
			r.rec.Release()
		}
		r.rec = nil
		r.batch++
	}
	r.i = 0
	if r.end >= 0 && r.batch >= r.end {
		return io.EOF
	}
	if r.file != nil {
		if r.batch >= r.file.NumRecords() {
			return io.EOF
		}
		rec, err := r.file.RecordAt(r.batch)
		if err != nil {
			return fmt.Errorf("%s: batch %d, row %d: %w", r.path, r.batch, r.row, err)
		}
		r.rec, r.recOwned = rec, true
		return nil
	}
	if !r.stream.Next() {
		if err := r.stream.Err(); err != nil && err != io.EOF {
			return fmt.Errorf("%s: batch %d, row %d: %w", r.path, r.batch, r.row, err)
		}
		return io.EOF
	}
	r.rec, r.recOwned = r.stream.Record(), false // owned by the stream reader until its next Next
	return nil
}

// Layout describes how the Arrow file at path may be split into tasks:
// where each record batch starts and how many rows it holds (from the
// footer of an IPC file, or the message headers of a stream, bodies
// skipped). splittable is false when the file holds dictionary batches:
// their batches are read in one piece.
func Layout(path string) (offsets, rows []int64, splittable bool, err error) {
	r, err := open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer r.Close()
	return r.layout.offsets, r.layout.rows, r.layout.dicts == 0, nil
}

// Batches restricts the reader to the record batches [start, end), before
// the first Next: rows keep their indexes in the file. A file with
// dictionary batches is read whole (see [Layout]).
func (r *Reader) Batches(start, end int) error {
	lay := &r.layout
	if start < 0 || end < start || end > len(lay.offsets) || (lay.dicts > 0 && (start != 0 || end != len(lay.offsets))) {
		return fmt.Errorf("%s: record batches [%d, %d) of %d", r.path, start, end, len(lay.offsets))
	}
	r.batch, r.end, r.row = start, end, 0
	for _, n := range lay.rows[:start] {
		r.row += n
	}
	if r.stream == nil || start == 0 {
		return nil
	}
	// A stream: its schema message, then the messages from batch start on.
	r.stream.Release()
	from := lay.offsets[start]
	sr, err := ipc.NewReader(io.MultiReader(io.NewSectionReader(r.f, 0, lay.afterSchema), io.NewSectionReader(r.f, from, r.size-from)))
	if err != nil {
		return fmt.Errorf("%s: batch %d: %w", r.path, start, err)
	}
	r.stream = sr
	return nil
}

// Close releases the file. It is safe to call more than once.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	if r.rec != nil && r.recOwned {
		r.rec.Release()
	}
	r.rec = nil
	if r.stream != nil {
		r.stream.Release()
	}
	if r.file != nil {
		r.file.Close()
	}
	err := r.f.Close()
	r.f = nil
	return err
}

func (r *Reader) appendRow(dst []byte, rec arrow.Record, i int) ([]byte, error) {
	dst = append(dst, '{')
	fields := rec.Schema().Fields()
	for j, f := range fields {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, f.Name)
		dst = append(dst, ':')
		if r.jsonText[j] && !isJSON(f) {
			switch f.Type.ID() {
			case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
				f = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable, Metadata: arrow.NewMetadata([]string{extNameKey}, []string{jsonExt})}
			}
		}
		var err error
		if dst, err = appendValue(dst, f, rec.Column(j), i); err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
	}
	return append(dst, '}'), nil
}

// appendValue writes element i of arr (described by field f) as JSON.
func appendValue(dst []byte, f arrow.Field, arr arrow.Array, i int) ([]byte, error) {
	if arr.IsNull(i) {
		return append(dst, "null"...), nil
	}
	if out, ok := appendPlain(dst, f, arr, i); ok {
		return out, nil
	}
	if out, ok := appendNumber(dst, arr, i); ok {
		return out, nil
	}
	switch a := arr.(type) {
	case *array.Map:
		return appendMap(dst, a, i)
	case array.ListLike:
		return appendList(dst, a, i)
	case *array.Struct:
		return appendStruct(dst, a, i)
	case *array.Dictionary:
		vf := arrow.Field{Name: f.Name, Type: a.Dictionary().DataType(), Nullable: true, Metadata: f.Metadata}
		return appendValue(dst, vf, a.Dictionary(), a.GetValueIndex(i))
	case array.ExtensionArray:
		sf := arrow.Field{Name: f.Name, Type: a.Storage().DataType(), Nullable: f.Nullable}
		if a.ExtensionType().ExtensionName() == jsonExt {
			sf.Metadata = arrow.NewMetadata([]string{extNameKey}, []string{jsonExt})
		}
		return appendValue(dst, sf, a.Storage(), i)
	}
	// Decimals, intervals and other rare types: their canonical text form.
	return jsonx.AppendString(dst, arr.ValueStr(i)), nil
}

// appendPlain appends element i of a null, boolean, string or binary
// array; ok is false for an array of another type.
func appendPlain(dst []byte, f arrow.Field, arr arrow.Array, i int) (_ []byte, ok bool) {
	switch a := arr.(type) {
	case *array.Null:
		return append(dst, "null"...), true
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i)), true
	case *array.String:
		return appendText(dst, f, a.Value(i)), true
	case *array.LargeString:
		return appendText(dst, f, a.Value(i)), true
	case *array.StringView:
		return appendText(dst, f, a.Value(i)), true
	case *array.Binary:
		return appendBase64(dst, a.Value(i)), true
	case *array.LargeBinary:
		return appendBase64(dst, a.Value(i)), true
	case *array.BinaryView:
		return appendBase64(dst, a.Value(i)), true
	case *array.FixedSizeBinary:
		return appendBase64(dst, a.Value(i)), true
	}
	return dst, false
}

// appendNumber appends element i of an integer, floating-point, date,
// time or duration array; ok is false for an array of another type.
func appendNumber(dst []byte, arr arrow.Array, i int) (_ []byte, ok bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10), true
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true
	case *array.Uint64:
		return strconv.AppendUint(dst, a.Value(i), 10), true
	case *array.Float16:
		return jsonval.AppendFloat(dst, float64(a.Value(i).Float32()), 32), true
	case *array.Float32:
		return jsonval.AppendFloat(dst, float64(a.Value(i)), 32), true
	case *array.Float64:
		return jsonval.AppendFloat(dst, a.Value(i), 64), true
	case *array.Date32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Date64:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Timestamp:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Time32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Time64:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Duration:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	}
	return dst, false
}

// appendMap appends element i of a map array as a JSON object.
func appendMap(dst []byte, a *array.Map, i int) ([]byte, error) {
	keys, items := a.Keys(), a.Items()
	mt := a.DataType().(*arrow.MapType)
	start, end := a.ValueOffsets(i)
	dst = append(dst, '{')
	for k := start; k < end; k++ {
		if k > start {
			dst = append(dst, ',')
		}
		if s, ok := keys.(*array.String); ok {
			dst = jsonx.AppendStringKeep(dst, s.Value(int(k)))
		} else {
			kb, err := appendValue(nil, mt.KeyField(), keys, int(k))
			if err != nil {
				return nil, err
			}
			if len(kb) > 0 && kb[0] == '"' {
				dst = append(dst, kb...) // a string already (large_utf8, string_view, a dictionary of strings)
			} else {
				dst = jsonx.AppendString(dst, string(kb)) // a number or a bool, as JSON object keys are strings
			}
		}
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, mt.ItemField(), items, int(k)); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendList appends element i of a list array as a JSON array.
func appendList(dst []byte, a array.ListLike, i int) ([]byte, error) {
	elem := elemField(a.DataType())
	values := a.ListValues()
	start, end := a.ValueOffsets(i)
	dst = append(dst, '[')
	for k := start; k < end; k++ {
		if k > start {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, elem, values, int(k)); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendStruct appends element i of a struct array as a JSON object.
func appendStruct(dst []byte, a *array.Struct, i int) ([]byte, error) {
	st := a.DataType().(*arrow.StructType)
	dst = append(dst, '{')
	for j, cf := range st.Fields() {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, cf.Name)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, cf, a.Field(j), i); err != nil {
			return nil, fmt.Errorf("%s: %w", cf.Name, err)
		}
	}
	return append(dst, '}'), nil
}

func elemField(dt arrow.DataType) arrow.Field {
	if l, ok := dt.(arrow.ListLikeType); ok {
		return l.ElemField()
	}
	return arrow.Field{Name: "item", Nullable: true}
}

func appendText(dst []byte, f arrow.Field, s string) []byte {
	if isJSON(f) {
		return jsonval.AppendEmbedded(dst, []byte(s))
	}
	return jsonx.AppendStringKeep(dst, s)
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
