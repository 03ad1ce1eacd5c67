package parquet

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// readBatch is how many rows Next decodes from the current row group at a
// time. Rows are small next to a row group; 64 amortises the per-call cost.
const readBatch = 64

// Reader streams the rows of one Parquet file as JSON objects, one row
// group at a time. It is not safe for concurrent use.
type Reader struct {
	path   string
	f      *os.File
	file   *pq.File
	schema *Schema
	plan   *pnode
	ncols  int

	rg      int     // index of the current row group
	rgEnd   int     // read row groups before this one (Groups), or all (-1)
	rows    pq.Rows // rows of the current row group, nil between groups
	rgRow   int64   // 0-based row inside the current row group
	row     int64   // 0-based row in the file of the next row to return
	buf     []pq.Row
	n, next int // rows held in buf, index of the next one

	cols   [][]pq.Value
	cursor []int
	out    []byte
	err    error // sticky
}

// Open opens a Parquet file for reading. Only the footer is read here; rows
// are read lazily by [Reader.Next]. Errors name the file. A top-level
// string column named in jsonText is read like a JSON-annotated one: its
// text, when it is one JSON value, is embedded as that value (for
// compression_metrics, which versions before the struct column wrote as
// JSON text).
func Open(path string, jsonText ...string) (r *Reader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil { // a corrupt footer can trip decoder checks
			f.Close()
			r, err = nil, fmt.Errorf("%s: not a readable Parquet file: corrupt footer: %v", path, p)
		}
	}()
	// LZ4_RAW pages are read around a parquet-go bug (see lz4raw.go):
	// through pf, whose patches are found from the footer OpenFile reads.
	// OpenFile reads no page (it skips the page index and bloom filters),
	// so the footer is parsed once.
	pf := &patchedFile{r: f}
	file, err := pq.OpenFile(pf, st.Size(), pq.SkipPageIndex(true), pq.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	pf.patches = lz4RawPatches(f, file)
	root := ownNode(file.Root())
	plan, ncols, err := compile(root)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, c := range plan.children {
		if c.kind == kLeaf && c.enc == eString && slices.Contains(jsonText, c.name) {
			c.enc = eJSON
		}
	}
	s := &Schema{root: root}
	for _, kv := range file.Metadata().KeyValueMetadata {
		s.metadata = append(s.metadata, KeyValue{Key: kv.Key, Value: kv.Value})
	}
	return &Reader{
		path: path, f: f, file: file, schema: s, plan: plan, ncols: ncols, rgEnd: -1,
		buf: make([]pq.Row, readBatch), cols: make([][]pq.Value, ncols), cursor: make([]int, ncols),
	}, nil
}

// Schema returns the file's schema and key/value metadata; pass it to
// [Create] to write the same layout back.
func (r *Reader) Schema() *Schema { return r.schema }

// Groups restricts the reader to the row groups [start, end), before the
// first Next: rows keep their indexes in the file.
func (r *Reader) Groups(start, end int) error {
	groups := r.file.RowGroups()
	if start < 0 || end < start || end > len(groups) {
		return fmt.Errorf("%s: row groups [%d, %d) of %d", r.path, start, end, len(groups))
	}
	r.rg, r.rgEnd, r.row = start, end, 0
	for _, g := range groups[:start] {
		r.row += g.NumRows()
	}
	return nil
}

// Layout describes how the Parquet file at path may be split into tasks:
// where each row group starts (the smallest offset of its column chunks'
// pages) and how many rows it holds, from the footer alone.
func Layout(path string) (offsets, rows []int64, err error) {
	r, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	for i, g := range r.file.Metadata().RowGroups {
		start := int64(-1)
		for _, c := range g.Columns {
			off := c.MetaData.DataPageOffset
			if c.MetaData.DictionaryPageOffset > 0 && c.MetaData.DictionaryPageOffset < off {
				off = c.MetaData.DictionaryPageOffset
			}
			if start < 0 || off < start {
				start = off
			}
		}
		if start < 0 || (i > 0 && start <= offsets[i-1]) {
			return nil, nil, fmt.Errorf("%s: row group %d: its column chunks do not follow the previous group's", path, i)
		}
		offsets = append(offsets, start)
		rows = append(rows, g.NumRows)
	}
	return offsets, rows, nil
}

// NumRows returns the row count recorded in the file footer.
func (r *Reader) NumRows() int64 { return r.file.NumRows() }

// Next returns the next row as a JSON object (no trailing newline) and its
// 0-based index in the file. It returns io.EOF after the last row. The
// returned bytes are valid until the next call to Next. An error names the
// file, the row group and the row; it is sticky.
//
// Memory: Next holds at most readBatch decoded rows plus the pages of the
// current row group that the decoder has open; row groups are never loaded
// whole, so files larger than RAM stream.
func (r *Reader) Next() (obj []byte, row int64, err error) {
	if r.err != nil {
		return nil, r.row, r.err
	}
	defer func() {
		// Corrupt input can trip index checks deep in the decoder; report
		// it like any other corruption instead of crashing the run.
		if p := recover(); p != nil {
			r.err = fmt.Errorf("%s: row group %d, row %d: corrupt data: %v", r.path, r.rg, r.row, p)
			obj, row, err = nil, r.row, r.err
		}
	}()
	for r.next >= r.n {
		if err := r.fill(); err != nil {
			if err != io.EOF {
				r.err = err
			} else {
				r.err = io.EOF
			}
			return nil, r.row, r.err
		}
	}
	flat := r.buf[r.next]
	r.next++
	out, err := r.assemble(flat)
	if err != nil {
		r.err = fmt.Errorf("%s: row group %d, row %d: %w", r.path, r.rg, r.row, err)
		return nil, r.row, r.err
	}
	idx := r.row
	r.row++
	r.rgRow++
	return out, idx, nil
}

// fill reads the next batch of rows, moving to the next row group as needed.
func (r *Reader) fill() error {
	groups := r.file.RowGroups()
	for {
		if r.rows == nil {
			if r.rgEnd >= 0 && r.rg >= r.rgEnd {
				return io.EOF
			}
			if r.rg >= len(groups) {
				if r.row != r.file.NumRows() {
					return fmt.Errorf("%s: footer says %d rows but the row groups hold %d", r.path, r.file.NumRows(), r.row)
				}
				return io.EOF
			}
			r.rows = groups[r.rg].Rows()
			r.rgRow = 0
		}
		n, err := r.rows.ReadRows(r.buf)
		r.n, r.next = n, 0
		if n > 0 {
			return nil
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: row group %d, row %d: %w", r.path, r.rg, r.row, err)
		}
		if want := groups[r.rg].NumRows(); r.rgRow != want {
			return fmt.Errorf("%s: row group %d: read %d rows, footer says %d", r.path, r.rg, r.rgRow, want)
		}
		if err := r.rows.Close(); err != nil {
			return fmt.Errorf("%s: row group %d: %w", r.path, r.rg, err)
		}
		r.rows = nil
		r.rg++
	}
}

// Close releases the file. It is safe to call more than once.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	if r.rows != nil {
		r.rows.Close()
		r.rows = nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// assemble turns one flat row (leaf values with levels) into a JSON object.
func (r *Reader) assemble(row pq.Row) ([]byte, error) {
	for i := range r.cols {
		r.cols[i] = r.cols[i][:0]
		r.cursor[i] = 0
	}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= r.ncols {
			return nil, fmt.Errorf("value for column %d outside the schema's %d columns", c, r.ncols)
		}
		r.cols[c] = append(r.cols[c], v)
	}
	a := assembler{cols: r.cols, cursor: r.cursor, out: r.out[:0]}
	if err := a.instance(r.plan); err != nil {
		return nil, err
	}
	for i, vs := range r.cols {
		if r.cursor[i] != len(vs) {
			return nil, fmt.Errorf("column %d: %d values left over after assembly", i, len(vs)-r.cursor[i])
		}
	}
	r.out = a.out
	return a.out, nil
}

type assembler struct {
	cols   [][]pq.Value
	cursor []int
	out    []byte
}

var errShort = errors.New("row ends early: repetition/definition levels do not match the schema")

// peek returns the current value of leaf column c.
func (a *assembler) peek(c int) (pq.Value, error) {
	if a.cursor[c] >= len(a.cols[c]) {
		return pq.Value{}, fmt.Errorf("column %d: %w", c, errShort)
	}
	return a.cols[c][a.cursor[c]], nil
}

// more reports whether the next value of leaf column c continues a
// repetition at level rep.
func (a *assembler) more(c, rep int) bool {
	i := a.cursor[c]
	return i < len(a.cols[c]) && a.cols[c][i].RepetitionLevel() == rep
}

func (a *assembler) skip(p *pnode) {
	for _, c := range p.leaves {
		a.cursor[c]++
	}
}

// field writes the value of p, whose parent is present.
func (a *assembler) field(p *pnode) error {
	if p.repeated {
		return a.repeated(p, p, func() error { return a.instance(p) })
	}
	if p.optional {
		v, err := a.peek(p.leaves[0])
		if err != nil {
			return err
		}
		if v.DefinitionLevel() < p.def {
			a.out = append(a.out, "null"...)
			a.skip(p)
			return nil
		}
	}
	return a.instance(p)
}

// repeated writes a JSON array whose elements are the repetitions of rp
// (a repeated node), each written by elem; p owns the leaves.
func (a *assembler) repeated(p, rp *pnode, elem func() error) error {
	first := p.leaves[0]
	v, err := a.peek(first)
	if err != nil {
		return err
	}
	if v.DefinitionLevel() < rp.def {
		a.out = append(a.out, "[]"...)
		a.skip(p)
		return nil
	}
	a.out = append(a.out, '[')
	for i := 0; ; i++ {
		if i > 0 {
			a.out = append(a.out, ',')
		}
		if err := elem(); err != nil {
			return err
		}
		if !a.more(first, rp.rep) {
			break
		}
	}
	a.out = append(a.out, ']')
	return nil
}

// instance writes a present value of p.
func (a *assembler) instance(p *pnode) error {
	switch p.kind {
	case kLeaf:
		v, err := a.peek(p.col)
		if err != nil {
			return err
		}
		a.cursor[p.col]++
		if v.IsNull() {
			return fmt.Errorf("column %q: null value at a defined level", p.name)
		}
		a.out = appendLeaf(a.out, p, v)
		return nil
	case kStruct:
		a.out = append(a.out, '{')
		for i, c := range p.children {
			if i > 0 {
				a.out = append(a.out, ',')
			}
			a.out = jsonx.AppendString(a.out, c.name)
			a.out = append(a.out, ':')
			if err := a.field(c); err != nil {
				return err
			}
		}
		a.out = append(a.out, '}')
		return nil
	case kList:
		return a.repeated(p, p.middle, func() error { return a.field(p.elem) })
	case kList2:
		return a.field(p.children[0])
	case kMap:
		first := p.leaves[0]
		v, err := a.peek(first)
		if err != nil {
			return err
		}
		if v.DefinitionLevel() < p.middle.def {
			a.out = append(a.out, "{}"...)
			a.skip(p)
			return nil
		}
		a.out = append(a.out, '{')
		for i := 0; ; i++ {
			if i > 0 {
				a.out = append(a.out, ',')
			}
			kv, err := a.peek(p.key.col)
			if err != nil {
				return err
			}
			a.cursor[p.key.col]++
			if p.key.enc == eString {
				a.out = jsonx.AppendStringKeep(a.out, string(kv.ByteArray()))
			} else {
				a.out = jsonx.AppendString(a.out, string(appendLeaf(nil, p.key, kv)))
			}
			a.out = append(a.out, ':')
			if err := a.field(p.value); err != nil {
				return err
			}
			if !a.more(first, p.middle.rep) {
				break
			}
		}
		a.out = append(a.out, '}')
		return nil
	}
	return fmt.Errorf("column %q: unknown node kind", p.name)
}

func appendLeaf(dst []byte, p *pnode, v pq.Value) []byte {
	switch p.enc {
	case eBool:
		return strconv.AppendBool(dst, v.Boolean())
	case eInt32:
		return strconv.AppendInt(dst, int64(v.Int32()), 10)
	case eUint32:
		return strconv.AppendUint(dst, uint64(v.Uint32()), 10)
	case eInt64:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case eUint64:
		return strconv.AppendUint(dst, v.Uint64(), 10)
	case eFloat:
		return jsonval.AppendFloat(dst, float64(v.Float()), 32)
	case eDouble:
		return jsonval.AppendFloat(dst, v.Double(), 64)
	case eString:
		return jsonx.AppendStringKeep(dst, string(v.ByteArray()))
	case eJSON:
		return jsonval.AppendEmbedded(dst, v.ByteArray())
	case eInt96:
		return jsonx.AppendString(dst, v.Int96().String())
	default:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.ByteArray())
		return append(dst, '"')
	}
}
