// Package format is the one way trajcompress opens record files and
// creates them: [Open] chooses the reader for JSONL, a JSON array of
// records (".json"), Parquet or Arrow by the file's name (extensions in
// any case) or, for a name it does not know, by its content; JSON text
// may be gzip, zstd, bzip2 or xz, told by its magic bytes whatever the
// name says, and streamed; [Create]
// makes the writer for an output format. The per-format packages (jsonl,
// parquet, arrow) do the work.
//
// A ".json" file, a file of unknown name and standard input are told apart
// by content: a JSON array when the first byte that is not white space is
// '[' (LLaMA-Factory's datasets, datasets' to_json(lines=False)), JSON
// Lines otherwise (a ".json" file is often JSON Lines under another name).
//
// Every [Reader] keeps one contract, whatever the format:
//
//   - Next returns one record as the bytes of a JSON object (a JSONL line
//     as written, an element of a JSON array compacted to one line, a
//     Parquet or Arrow row converted to JSON), its position — the 1-based
//     line where it starts (JSONL: the physical line, blank lines counted;
//     a JSON array: the line of the element's first byte) or row number —
//     and io.EOF after the last record; for a JSON array, [Input.Record]
//     is the record's 1-based index in the file, which tells apart
//     records that start on the same line;
//   - the returned bytes belong to the caller (never reused by the reader);
//   - text is handed on as the file holds it: ill-formed UTF-8 in a JSONL
//     line or in a Parquet or Arrow string value is neither repaired nor
//     dropped here (the record path repairs and counts it, the same way for
//     every format);
//   - read errors name the file (and line, where there is one);
//   - memory is one record (one row group or batch for Parquet and
//     Arrow), never the file: a JSON array is streamed too;
//   - Close releases the file.
//
// A task of a file (package task; [Options].Task) is read by the same
// contract: a byte range of a JSON Lines file (the lines that start in
// it), or a run of Parquet row groups or Arrow record batches, rows
// numbered as in the whole file. [LayoutOf] reads what splitting needs.
package format

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/task"
)

// The formats, by the names the CLI and config use.
const (
	JSONL   = "jsonl"
	JSON    = "json" // one JSON array of records
	Parquet = "parquet"
	Arrow   = "arrow"
)

// Names are the formats, in the order the CLI lists them.
var Names = []string{JSONL, JSON, Parquet, Arrow}

// CheckName says which names there are unless name is one of [Names]:
// "must be jsonl, json, parquet or arrow, got "x"".
func CheckName(name string) error {
	if slices.Contains(Names, name) {
		return nil
	}
	return fmt.Errorf("must be %s or %s, got %q", strings.Join(Names[:len(Names)-1], ", "), Names[len(Names)-1], name)
}

// Reader is an opened input; see the package doc for its contract.
type Reader interface {
	Next() ([]byte, int64, error)
	Close() error
}

// Schema is the schema of a Parquet or Arrow input, carried to an output of
// the same format so it keeps its columns; the zero Schema (JSONL input)
// makes a tabular writer infer one from the records.
type Schema struct {
	parquet   *parquet.Schema
	arrow     *arrow.Schema
	arrowFile bool // the Arrow input is in the IPC file format
}

// Metadata is the schema's key/value metadata entry for key (for example
// "huggingface"); none for JSONL.
func (s Schema) Metadata(key string) (string, bool) {
	switch {
	case s.parquet != nil:
		return s.parquet.Metadata(key)
	case s.arrow != nil:
		return s.arrow.Metadata(key)
	}
	return "", false
}

// Columns lists a tabular input's columns (nil for JSONL).
func (s Schema) Columns() []string {
	switch {
	case s.parquet != nil:
		return s.parquet.Columns()
	case s.arrow != nil:
		return s.arrow.Columns()
	}
	return nil
}

// Input is an opened input file.
type Input struct {
	Reader
	Format string // JSONL, JSON, Parquet or Arrow
	Schema Schema
	// BytesRead is how far into the file reading has come, for progress
	// (compressed bytes for gzip); safe to call from another goroutine.
	// Parquet and Arrow report 0 until the file is done.
	BytesRead func() int64
}

// Options configure [Open].
type Options struct {
	// Hash, when set, receives every byte of the file exactly once: a
	// stream is copied to it as it is read; a Parquet or Arrow file (read
	// by offset, not as a stream) is copied in a first pass, which heeds
	// Ctx.
	Hash io.Writer
	Ctx  context.Context
	// Stdin is what [Stdin] reads; nil means os.Stdin.
	Stdin io.Reader
	// JSONText names top-level string columns of a Parquet or Arrow input
	// that hold JSON text, read as the JSON values they hold
	// (compression_metrics, which earlier versions wrote as text).
	JSONText []string
	// Task, when set, reads one task of the file (package task): a task of
	// a file split in several reads its byte range (JSONL), or its row
	// groups or record batches (Parquet, Arrow). Hash then receives only
	// the bytes of the task's fingerprint blocks ([task.Task.Blocks]).
	Task *task.Task
	// FirstLine is the number of lines (rows, for Parquet and Arrow: set
	// by the reader itself) before the task's first one, when known; 0
	// numbers a JSONL range's lines from 1.
	FirstLine int64
	// MaxRecordBytes is the longest JSON Lines record read: a longer line
	// is read past, never held whole, and Next returns a
	// *jsonl.TooLargeError for it (a per-record error: reading goes on).
	// 0: no limit. JSON arrays, Parquet and Arrow are not bounded by it.
	MaxRecordBytes int64
}

// Of names the format of a file by its name, case-insensitively: JSONL
// for .jsonl and .ndjson, JSON for .json, either compressed (.gz, .zst,
// .bz2, .xz: see [Compressed]), Parquet for .parquet, Arrow for .arrow;
// "" for any other name. (A .json input may hold JSON Lines: [Detect]
// reads it to tell.)
func Of(path string) string {
	_, data, comp := splitName(path)
	switch data {
	case ".jsonl", ".ndjson":
		return JSONL
	case ".json":
		return JSON
	case ".parquet":
		if comp == "" {
			return Parquet
		}
	case ".arrow":
		if comp == "" {
			return Arrow
		}
	}
	return ""
}

// compressExts are the extensions of compressed JSON text, as [Of] and
// [Stem] know them (lower case), with the compression each names.
var compressExts = []struct{ ext, name string }{
	{".gz", jsonl.Gzip}, {".zst", jsonl.Zstd}, {".zstd", jsonl.Zstd}, {".bz2", jsonl.Bzip2}, {".xz", jsonl.XZ},
}

// Compressed names the compression a file's name says it is in (by its
// last extension, case-insensitively: .gz, .zst, .bz2, .xz), or "".
// Reading goes by content ([jsonl.Compression]), not by this.
func Compressed(path string) string {
	_, _, comp := splitName(path)
	for _, c := range compressExts {
		if c.ext == comp {
			return c.name
		}
	}
	return ""
}

// splitName splits the base of path into its stem, its data extension
// (".jsonl", ".ndjson", ".json", ".parquet" or ".arrow", lower case, or
// "") and its compression extension (".gz", … lower case, or ""),
// matching extensions whatever their case: "x.JSONL.ZST" is "x", ".jsonl",
// ".zst".
func splitName(path string) (stem, data, comp string) {
	base := filepath.Base(path)
	rest := base
	lower := strings.ToLower(base)
	for _, c := range compressExts {
		if strings.HasSuffix(lower, c.ext) {
			comp = c.ext
			rest, lower = rest[:len(rest)-len(c.ext)], lower[:len(lower)-len(c.ext)]
			break
		}
	}
	for _, d := range []string{".jsonl", ".ndjson", ".json", ".parquet", ".arrow"} {
		if strings.HasSuffix(lower, d) && len(lower) > len(d) {
			return rest[:len(rest)-len(d)], d, comp
		}
	}
	return base, "", comp
}

// Stdin is the path that names standard input: JSONL (plain or gzip),
// read as a stream.
const Stdin = "-"

// Detect names the format of the file at path: by its name (see [Of]),
// except that a .json file holding JSON Lines is JSONL; else by its first
// bytes (Parquet's "PAR1", Arrow's "ARROW1" or an Arrow stream's
// 0xffffffff, a JSON array's '[', also inside gzip, zstd, bzip2 or xz),
// else JSONL (plain or compressed, told apart by content when it is
// read). [Stdin] is JSONL (a JSON array on standard input is read as one
// all the same: see [Open]). A Git LFS pointer file, and an empty file
// named as Parquet or Arrow, are errors that say what the file is.
func Detect(path string) (string, error) {
	if path == Stdin {
		return JSONL, nil
	}
	f := Of(path)
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	head, size, err := sniff(fh)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if why := notData(path, f, head, size); why != "" {
		return "", fmt.Errorf("%s: %s", path, why)
	}
	if f != "" && f != JSON {
		return f, nil
	}
	if f == "" {
		if m := byMagic(head); m != "" {
			return m, nil
		}
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if array, err := jsonl.IsArray(fh); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	} else if array {
		return JSON, nil
	}
	return JSONL, nil
}

// byMagic names the format whose magic number head starts with: Parquet's
// "PAR1", or Arrow's file format "ARROW1" or stream format (datasets'
// save_to_disk, and what we write), which starts with a continuation
// marker 0xffffffff (JSON text cannot start with 0xff); else "".
func byMagic(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("PAR1")):
		return Parquet
	case bytes.HasPrefix(head, []byte("ARROW1")), bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff}):
		return Arrow
	}
	return ""
}

// lfsPointer starts a Git LFS pointer file, which a clone without git-lfs
// (or with GIT_LFS_SKIP_SMUDGE) leaves in place of the data.
const lfsPointer = "version https://git-lfs.github.com/spec/v1"

// sniff reads the first bytes of a file (enough for [lfsPointer] and the
// magic numbers), and its size.
func sniff(fh *os.File) (head []byte, size int64, err error) {
	st, err := fh.Stat()
	if err != nil {
		return nil, 0, err
	}
	head = make([]byte, 64)
	n, err := io.ReadFull(fh, head)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return head[:n], st.Size(), err
}

// notData says why a file whose name says format f (or "") holds no data
// to read, or "": a Git LFS pointer, or an empty Parquet or Arrow file.
func notData(path, f string, head []byte, size int64) string {
	switch {
	case bytes.HasPrefix(head, []byte(lfsPointer)):
		return "a Git LFS pointer file, not the data it stands for (the repository was cloned without git-lfs): fetch the data with git lfs pull --include " + shellQuote(path)
	case size == 0 && (f == Parquet || f == Arrow):
		return "an empty file (0 bytes), not " + map[string]string{Parquet: "a Parquet", Arrow: "an Arrow"}[f] + " file (an interrupted download or copy?)"
	}
	return ""
}

// shellQuote quotes a path for a command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CompressionOf names the compression the content of the file at path is
// in ([jsonl.Compression]), or "" (also when it cannot be read: opening
// it will say why).
func CompressionOf(path string) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	head, _, _ := sniff(fh)
	return jsonl.Compression(head)
}

// Found is what [Member] finds of a file in a directory input.
type Found struct {
	// Format is how the file is read, or "" when it is left out.
	Format string
	// Why says why the file is left out (Format "").
	Why string
	// Compression is the compression the file's content is in
	// ([jsonl.Compression]), whatever its name says, or "".
	Compression string
}

// Member tells whether and how a file found in a directory input is read.
// It is read when its name is one of [Of] (whatever the case of its
// extensions), it holds data (not a Git LFS pointer, not an empty Parquet
// or Arrow file), and, for a .json file, when it holds records: a JSON
// array, or JSON Lines. Other .json files beside data are metadata —
// datasets' dataset_info.json, state.json and dataset_dict.json (left out
// by name, as are metrics files, "*metrics.json"), LLaMA-Factory's
// dataset_info.json, a config — which hold one object spread over lines;
// an empty one holds nothing. Every file left out gets a reason in Why,
// which for a name [Of] does not know says what its content looks like
// when that is data (compressed, Parquet, Arrow).
func Member(path string) (Found, error) {
	f := Of(path)
	base := filepath.Base(path)
	if f == JSON {
		switch {
		case base == DatasetInfoFile || base == StateFile || base == DatasetDictFile:
			return Found{Why: "datasets metadata, not records"}, nil
		case strings.HasSuffix(base, "metrics.json"):
			return Found{Why: "a metrics file, not records (by its name)"}, nil
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return Found{}, err
	}
	defer fh.Close()
	head, size, err := sniff(fh)
	if err != nil {
		return Found{}, fmt.Errorf("%s: %w", path, err)
	}
	if why := notData(path, f, head, size); why != "" {
		return Found{Why: why}, nil
	}
	comp := jsonl.Compression(head)
	if f == "" {
		return Found{Why: unknownName(path, head, comp)}, nil
	}
	if f != JSON {
		return Found{Format: f, Compression: comp}, nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return Found{}, err
	}
	switch k, err := jsonl.KindOf(fh); {
	case err != nil:
		return Found{}, fmt.Errorf("%s: %w", path, err)
	case k == jsonl.KindArray:
		return Found{Format: JSON, Compression: comp}, nil
	case k == jsonl.KindLines:
		return Found{Format: JSONL, Compression: comp}, nil
	case k == jsonl.KindEmpty:
		return Found{Why: "empty"}, nil
	default:
		return Found{Why: "one JSON object over several lines (metadata or a config?), not an array or JSON Lines of records: give it as --input to read it as one record"}, nil
	}
}

// unknownName is why a file whose name [Of] does not know is left out,
// saying what its content is when it looks like data.
func unknownName(path string, head []byte, comp string) string {
	_, data, ext := splitName(path)
	base := filepath.Base(path)
	switch {
	case ext != "" && (data == ".parquet" || data == ".arrow"):
		return fmt.Sprintf("a compressed %s file: it cannot be read compressed (its format compresses its own data); decompress it first", strings.TrimPrefix(data, "."))
	case comp != "":
		return fmt.Sprintf("%s-compressed data under a name that does not say it holds JSON Lines or a JSON array: rename it %s.jsonl%s (or .json%s), or give it as --input to read it by its content",
			comp, strings.TrimSuffix(base, ext), extOf(comp), extOf(comp))
	case byMagic(head) == Parquet:
		return "Parquet data (by its first bytes) under a name that does not end in .parquet: rename it, or give it as --input"
	case byMagic(head) == Arrow:
		return "Arrow data (by its first bytes) under a name that does not end in .arrow: rename it, or give it as --input"
	case ext != "":
		return "compressed by its name, but not a data file name (.jsonl" + ext + ", .json" + ext + ")"
	}
	return "not a data file name"
}

// extOf is the usual file extension of a compression.
func extOf(comp string) string {
	for _, c := range compressExts {
		if c.name == comp {
			return c.ext
		}
	}
	return ""
}

// Ext is the file extension of a format's outputs.
func Ext(format string) string { return "." + format }

// Stem strips a known data extension, and a compression extension after
// it, whatever their case: runs/a.jsonl.gz → a, b.NDJSON.ZST → b.
func Stem(path string) string {
	stem, _, _ := splitName(path)
	return stem
}

// Open opens the file at path in its format (see [Detect]); [Stdin]
// reads standard input, JSON Lines or a JSON array told apart by content.
func Open(path string, o Options) (*Input, error) {
	f, err := Detect(path)
	if err != nil {
		return nil, err
	}
	split := o.Task != nil && o.Task.Parts > 1
	switch {
	case f == JSONL && split:
		return openRange(path, o)
	case f == JSONL || f == JSON:
		return openText(path, f, o)
	}
	if o.Hash != nil {
		from, to := int64(0), int64(-1)
		if o.Task != nil {
			from, to = hashWindow(o.Task)
		}
		if err := hashFile(o.Ctx, o.Hash, path, from, to); err != nil {
			return nil, err
		}
	}
	in := &Input{Format: f, BytesRead: func() int64 { return 0 }}
	switch f {
	case Parquet:
		err = in.openParquet(path, o, split)
	case Arrow:
		err = in.openArrow(path, o, split)
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

// openRange opens the byte range of a JSON Lines file that o.Task is.
func openRange(path string, o Options) (*Input, error) {
	// The range's bytes are its blocks' (ranges start and end on
	// block boundaries, but for the file's end).
	var h io.Writer
	if a, e := hashWindow(o.Task); o.Hash != nil && e > a {
		h = o.Hash
	}
	rd, err := jsonl.OpenRange(path, o.Task.Start, o.Task.End, o.FirstLine, h)
	if err != nil {
		return nil, err
	}
	rd.SetMaxRecordBytes(o.MaxRecordBytes)
	return &Input{Reader: rangeReader{rd}, Format: JSONL, BytesRead: rd.BytesRead}, nil
}

// openText opens a whole JSON Lines or JSON file, or standard input.
func openText(path, f string, o Options) (*Input, error) {
	var r io.Reader
	var fh *os.File // nil for standard input, which is not ours to close
	if path == Stdin {
		if r = o.Stdin; r == nil {
			r = os.Stdin
		}
	} else {
		var err error
		if fh, err = os.Open(path); err != nil {
			return nil, err
		}
		r = fh
	}
	if o.Hash != nil {
		r = io.TeeReader(r, o.Hash)
	}
	var rd jsonl.Records
	var err error
	if f == JSONL && path != Stdin {
		rd, err = jsonl.NewReader(r, path) // a .jsonl name is JSON Lines, whatever its first byte
	} else {
		rd, err = jsonl.NewJSON(r, path)
	}
	if err != nil {
		if fh != nil {
			fh.Close()
		}
		return nil, err
	}
	if _, array := rd.(*jsonl.ArrayReader); array {
		f = JSON
	}
	if lr, ok := rd.(*jsonl.Reader); ok {
		lr.SetMaxRecordBytes(o.MaxRecordBytes)
	}
	return &Input{Reader: closeBoth{rd, fh}, Format: f, BytesRead: rd.BytesRead}, nil
}

// openParquet opens a Parquet file (its row groups of the task, when
// split) as in's reader.
func (in *Input) openParquet(path string, o Options, split bool) error {
	r, err := parquet.Open(path, o.JSONText...)
	if err == nil && split {
		if err = r.Groups(int(o.Task.Start), int(o.Task.End)); err != nil {
			r.Close()
		}
	}
	if err != nil {
		return err
	}
	in.Reader, in.Schema.parquet = rowReader{r.Next, r.Close}, r.Schema()
	return nil
}

// openArrow opens an Arrow file or stream (its record batches of the
// task, when split) as in's reader.
func (in *Input) openArrow(path string, o Options, split bool) error {
	r, err := arrow.Open(path, o.JSONText...)
	if err == nil && split {
		if err = r.Batches(int(o.Task.Start), int(o.Task.End)); err != nil {
			r.Close()
		}
	}
	if err != nil {
		return err
	}
	in.Reader, in.Schema.arrow = rowReader{r.Next, r.Close}, r.Schema()
	in.Schema.arrowFile = r.Format() == "file"
	return nil
}

// rangeReader is a JSONL byte range: lines are caller-owned already.
type rangeReader struct{ *jsonl.Reader }

// Lines reports how many lines of the file a range reader has read, plus
// its FirstLine; see jsonl.Reader.Lines.
func (in *Input) Lines() (int64, bool) {
	if rr, ok := in.Reader.(rangeReader); ok {
		return rr.Lines(), true
	}
	return 0, false
}

// closeBoth closes a JSONL or JSON array reader and the file under it.
type closeBoth struct {
	jsonl.Records
	f *os.File
}

func (c closeBoth) Close() error {
	c.Records.Close()
	if c.f == nil {
		return nil
	}
	return c.f.Close()
}

// rowReader adapts a Parquet or Arrow reader to the contract: their rows
// are 0-based and their bytes reused.
type rowReader struct {
	next  func() ([]byte, int64, error)
	close func() error
}

func (r rowReader) Next() ([]byte, int64, error) {
	b, row, err := r.next()
	if err != nil {
		return nil, 0, err
	}
	return bytes.Clone(b), row + 1, nil
}

func (r rowReader) Close() error { return r.close() }

// Record is, for a JSON array, the 1-based index in the file of the
// record Next returned last: several records may start on one line. It is
// 0 for the other formats, whose line or row number names a record.
func (in *Input) Record() int64 {
	if cb, ok := in.Reader.(closeBoth); ok && in.Format == JSON {
		return cb.Records.Record()
	}
	return 0
}

// hashWindow is the byte range [from, to) of a task's fingerprint blocks
// (to may lie past the end of the file, which ends the last block).
func hashWindow(t *task.Task) (from, to int64) {
	a, e := t.Blocks()
	return a * task.BlockSize, e * task.BlockSize
}

// hashFile copies the bytes [from, to) of a file (to -1: to its end) to
// h, stopping once ctx is done so that a long pre-pass heeds Ctrl-C.
func hashFile(ctx context.Context, h io.Writer, path string, from, to int64) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if to >= 0 {
		r = io.NewSectionReader(f, from, to-from) // reads stop at the end of the file
	}
	_, err = io.Copy(h, ctxReader{ctx, r})
	return err
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// CheckTurnsColumn fails early, naming the file, when a tabular input has
// no column a trajectory could be read from: every row would be rejected.
// JSONL inputs pass.
func (in *Input) CheckTurnsColumn(path, turnsKey string) error {
	cols := in.Schema.Columns()
	if in.Format == JSONL || in.Format == JSON {
		return nil
	}
	want := []string{"conversations", "messages"}
	if turnsKey != "" {
		want = []string{turnsKey}
	}
	for _, w := range want {
		for _, c := range cols {
			if c == w {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: no %s column to read trajectories from (columns: %s; set input.turns_key for a renamed one)",
		path, strings.Join(want, " or "), strings.Join(cols, ", "))
}
