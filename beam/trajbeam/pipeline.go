package trajbeam

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/task"
)

// Outputs are the PCollections of a built pipeline that a caller may
// observe (the tests do).
type Outputs struct {
	// Summary holds the run's merged metrics: one *metrics.Summary, or
	// none when the input has no record.
	Summary beam.PCollection
	// Parts holds the committed part files (Part) of records.
	Parts beam.PCollection
}

// Build adds the run to the scope: read every source, compress every
// record with the pool's per-record function, write part files per
// bundle, number the rejects, combine the metrics, and commit.
func Build(s beam.Scope, p Plan, o Options) Outputs {
	s = s.Scope("trajcompress")
	records := read(s.Scope("read"), p, o)
	comp := &compressFn{Config: o.Config, GroupBy: o.GroupBy, Sources: p.Sources}
	outs, rejects, sums := beam.ParDo3(s.Scope("compress"), comp, records)
	parts := beam.ParDo(s.Scope("write"), &writeFn{Temp: p.Temp}, outs)
	rejectParts := beam.ParDo(s.Scope("rejects"), &rejectsFn{Sources: p.Sources, Temp: p.Temp, Config: o.Config}, beam.GroupByKey(s.Scope("rejects"), rejects))
	summary := beam.Combine(s.Scope("metrics"), &summaryFn{}, sums)
	spans := beam.Reshuffle(s.Scope("fingerprint"), beam.CreateList(s.Scope("fingerprint"), p.Spans))
	blocks := beam.ParDo(s.Scope("fingerprint"), &hashFn{Sources: p.Sources}, spans)
	fin := &finalizeFn{Plan: p, Config: o.Config, GroupBy: o.GroupBy, ToolVersion: o.ToolVersion, Overwrite: o.Overwrite, Start: o.Start}
	beam.ParDo0(s.Scope("commit"), fin, beam.Impulse(s),
		beam.SideInput{Input: summary}, beam.SideInput{Input: parts}, beam.SideInput{Input: rejectParts}, beam.SideInput{Input: blocks})
	return Outputs{Summary: summary, Parts: parts}
}

// read is every record of the plan's sources, as Record elements: plain
// JSONL through textio (split by byte ranges at line starts), the other
// formats through our readers, a unit of work at a time.
func read(s beam.Scope, p Plan, o Options) beam.PCollection {
	var cols []beam.PCollection
	index := map[string]int{}
	for i, src := range p.Sources {
		if src.Text {
			index[textKey(src.Path)] = i
		}
	}
	for _, glob := range textGlobs(p.Sources) {
		lines := textio.ReadWithFilename(s, glob, textio.ReadUncompressed())
		cols = append(cols, beam.ParDo(s, &textFn{Index: index}, lines))
	}
	if len(p.Units) > 0 {
		// A reshuffle of the units (not of records): a runner that fuses
		// the created list with its reader would read every unit in one
		// bundle.
		units := beam.Reshuffle(s, beam.CreateList(s, p.Units))
		cols = append(cols, beam.ParDo(s, &readUnitFn{Sources: p.Sources, Config: o.Config}, units))
	}
	if len(cols) == 1 {
		return cols[0]
	}
	return beam.Flatten(s, cols...)
}

// textKey is the key of a text file in textFn's index: the path as the
// file system lists it.
func textKey(p string) string {
	if isRemote(p) {
		return p
	}
	return filepath.Clean(p)
}

// textGlobs are the globs textio reads the text sources with: a
// directory's *.jsonl when that matches exactly its text sources (the
// pipeline stays small for thousands of files), else each file's own
// path.
func textGlobs(srcs []Source) []string {
	byDir := map[string][]string{}
	var dirs []string
	for _, src := range srcs {
		if !src.Text {
			continue
		}
		d := dirOf(src.Path)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], src.Path)
	}
	var globs []string
	for _, d := range dirs {
		files := byDir[d]
		glob := escapeGlob(joinDir(d, "")) + "*.jsonl"
		if len(files) > 1 && sameFiles(glob, files) {
			globs = append(globs, glob)
			continue
		}
		for _, f := range files {
			globs = append(globs, escapeGlob(f))
		}
	}
	return globs
}

// dirOf is the directory of a local path or a URL.
func dirOf(p string) string {
	if isRemote(p) {
		return path.Dir(p)
	}
	return filepath.Dir(p)
}

// joinDir is dir with a trailing separator, then name.
func joinDir(dir, name string) string {
	if isRemote(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator) + name
}

// sameFiles reports whether glob lists exactly files (as keys).
func sameFiles(glob string, files []string) bool {
	got, err := listGlob(context.Background(), glob)
	if err != nil || len(got) != len(files) {
		return false
	}
	want := make([]string, len(files))
	for i, f := range files {
		want[i] = textKey(f)
	}
	for i, g := range got {
		got[i] = textKey(g)
	}
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// Record is one input record on its way to the compressor.
type Record struct {
	Source int    // index in the plan's sources
	Line   int64  // 1-based line or row; 0 when textio read it (it does not number lines)
	Record int64  // in a JSON array, the record's 1-based index; else 0
	Raw    []byte // the record: a JSONL line, or a row as its JSON object
}

// Unit is a unit of work of a source read through our readers: a task
// of package task (a run of row groups or record batches) when Task.Parts
// > 1, else the whole file.
type Unit struct {
	Source int
	Task   task.Task
}

// Span is a run of fingerprint blocks [First, End) of a source.
type Span struct {
	Source     int
	First, End int64
}

// Blocks are the hashes of a span's fingerprint blocks.
type Blocks struct {
	Source int
	First  int64
	Hashes []string
}

// Rejected is what the compressor says of a rejected record: the record
// is found again, and numbered, by its hash (see rejectsFn).
type Rejected struct {
	Hash   string // xxh3-128 of the record's bytes, hex
	Reason string
	Detail string
}

// Part is one file the pipeline wrote and committed at the end.
type Part struct {
	Temp    string // where it was written
	Source  int    // rejects: the source it holds the rejects of; -1 for records
	Records int64
	Bytes   int64
	XXH3    string // xxh3-128 of its bytes, hex
}

// summaryOf merges the summaries a side input holds (none or one).
func summaryOf(iter func(**metrics.Summary) bool) *metrics.Summary {
	total := &metrics.Summary{}
	var s *metrics.Summary
	for iter(&s) {
		total.Merge(s)
	}
	return total
}
