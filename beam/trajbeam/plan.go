package trajbeam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/task"
)

// Options are what a user asks of one run of the pipeline.
type Options struct {
	// Config is the effective configuration (config file, then flags).
	Config config.Config
	// Input is a local file or directory (walked as `trajcompress
	// compress` walks it), or a glob on a Beam file system
	// (gs://bucket/runs/*.jsonl).
	Input string
	// NoRecursive keeps a local directory input to its own files.
	NoRecursive bool
	// Output is the output directory, local or on a Beam file system.
	Output string
	// Overwrite replaces the outputs of an earlier run in Output.
	Overwrite bool
	// GroupBy names the record field of the metrics' per-source
	// breakdown; "" groups by input file, as compress does.
	GroupBy     string
	ToolVersion string
	// Start is when the run started, for the metrics.
	Start time.Time
	// TaskSize is the target size of a unit of work of a Parquet or
	// Arrow file, a run of its row groups or record batches (compress's
	// --target-task-size; 0: task.DefaultSize). Plain JSONL is split by
	// textio, gzip JSONL and JSON arrays are read whole.
	TaskSize int64
}

// Source is one input file.
type Source struct {
	// Path is how the pool names the file: the input itself, or the input
	// directory joined with the file's relative path (rejects name it).
	Path string `json:"path"`
	// Name is the file in the metrics' per-source breakdown: its path
	// relative to the input directory, or its base name.
	Name   string `json:"name"`
	Format string `json:"format"` // format.JSONL, format.Parquet or format.Arrow
	// Text says the file is read with Beam's textio: plain (uncompressed)
	// JSONL. Gzip JSONL, Parquet and Arrow are read through our readers.
	Text bool  `json:"text"`
	Size int64 `json:"size"` // bytes, for the input fingerprint
}

// Plan is where a run reads and writes.
type Plan struct {
	Sources []Source `json:"sources"`
	// Units are the units of work of the sources textio does not read:
	// runs of row groups or record batches of a local Parquet or Arrow
	// file (task.Split of its format.LayoutOf), else whole files.
	Units []Unit `json:"units"`
	// Spans are the runs of fingerprint blocks the input fingerprint is
	// hashed in, in parallel.
	Spans []Span `json:"spans"`
	// Output is the output directory; Metrics and Rejects are the files
	// in it, Temp the hidden directory the bundles write to until the
	// end of the run.
	Output, Metrics, Rejects, Temp string
}

// Output file names inside the output directory.
const (
	partPrefix  = "part-"
	RejectsName = "rejects.jsonl"
	tempPrefix  = ".trajcompress-beam-"
)

// NewPlan lists the inputs and names the outputs. runID names the run's
// temporary directory; it must be unique (the main program uses the
// time and its process id).
func NewPlan(ctx context.Context, o Options, runID string) (Plan, error) {
	var p Plan
	if o.Output == "" {
		return p, errors.New("--output: name the output directory (the pipeline writes part files, rejects and metrics into it)")
	}
	if f := o.Config.Output.Format; f != "" && f != format.JSONL {
		return p, fmt.Errorf("output.format %s: the Beam pipeline writes JSONL part files (Parquet and Arrow rows are written as their JSON objects); use `trajcompress compress` for %s output", f, f)
	}
	if o.Config.Summarization.Method == "llm" {
		return p, errors.New("summarization.method llm: the Beam pipeline runs the deterministic summarizer only (each worker would hold its own rate limits, cache and API key); for LLM summaries use `trajcompress compress`, sharded with --shard/--num-shards")
	}
	var err error
	if isRemote(o.Input) {
		p.Sources, err = listRemote(ctx, o.Input)
	} else {
		p.Sources, err = listLocal(o.Input, !o.NoRecursive)
	}
	if err != nil {
		return p, err
	}
	if err := p.split(ctx, o.TaskSize); err != nil {
		return p, err
	}
	p.Output = o.Output
	p.Metrics = join(o.Output, o.Config.Metrics.OutputFile)
	p.Rejects = join(o.Output, RejectsName)
	p.Temp = join(o.Output, tempPrefix+runID)
	if err := p.checkOutput(ctx, o); err != nil {
		return p, err
	}
	return p, nil
}

// isRemote says whether path names a Beam file system other than the
// local one (a scheme such as gs:// or memfs://).
func isRemote(path string) bool { return strings.Contains(path, "://") }

// join joins a file name to a directory, local or a URL.
func join(dir, name string) string {
	if isRemote(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return filepath.Join(dir, name)
}

// listLocal lists a local file or directory as compress does
// (jobcore.WalkInputs).
func listLocal(in string, recursive bool) ([]Source, error) {
	dir, err := isDir(in)
	if err != nil {
		return nil, fmt.Errorf("--input: %w", err)
	}
	if !dir {
		src, err := sourceOf(context.Background(), in, filepath.Base(in))
		if err != nil {
			return nil, err
		}
		return []Source{src}, nil
	}
	rels, leftOut, err := jobcore.WalkInputs(in, recursive)
	if err != nil {
		return nil, err
	}
	for _, l := range leftOut {
		fmt.Fprintf(os.Stderr, "note: --input: left out %s\n", l)
	}
	if len(rels) == 0 {
		return nil, fmt.Errorf("--input %s: no .jsonl, .jsonl.gz, .parquet or .arrow files in it", in)
	}
	var out []Source
	for _, rel := range rels {
		src, err := sourceOf(context.Background(), filepath.Join(in, rel), filepath.ToSlash(rel))
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, nil
}

// listRemote lists a glob on a Beam file system, in name order.
func listRemote(ctx context.Context, glob string) ([]Source, error) {
	names, err := listGlob(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("--input %s: %w", glob, err)
	}
	slices.Sort(names)
	var out []Source
	for _, n := range names {
		if format.Of(n) == "" || strings.HasPrefix(path.Base(n), ".") {
			continue
		}
		src, err := sourceOf(ctx, n, path.Base(n))
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--input %s: no .jsonl, .jsonl.gz, .parquet or .arrow files match", glob)
	}
	return out, nil
}

// sourceOf detects a file's format as format.Detect does (by name, else
// by content). Only plain JSONL is read with textio: not compressed (gzip,
// zstd, bzip2, xz, told by content), and
// without a byte order mark, which our reader skips (UTF-8) or refuses
// (UTF-16) at the start of the file, where textio cannot tell a line is.
func sourceOf(ctx context.Context, p, name string) (Source, error) {
	src := Source{Path: p, Name: name, Format: format.Of(p)}
	if src.Format == "" && !isRemote(p) {
		f, err := format.Detect(p)
		if err != nil {
			return src, fmt.Errorf("--input: %w", err)
		}
		src.Format = f
	}
	head, err := readHead(ctx, p, 6)
	if err != nil {
		return src, fmt.Errorf("--input: %w", err)
	}
	h := string(head)
	switch {
	case src.Format != "":
	case strings.HasPrefix(h, "PAR1"):
		src.Format = format.Parquet
	case strings.HasPrefix(h, "ARROW1"), strings.HasPrefix(h, "\xff\xff\xff\xff"):
		src.Format = format.Arrow
	default:
		src.Format = format.JSONL // a remote file of unknown name: our reader tells an array apart
	}
	marked := jsonl.Compression(head) != "" || strings.HasPrefix(h, "\xef\xbb\xbf") ||
		strings.HasPrefix(h, "\xff\xfe") || strings.HasPrefix(h, "\xfe\xff")
	src.Text = src.Format == format.JSONL && strings.HasSuffix(p, ".jsonl") && !marked
	return src, nil
}

// checkOutput refuses an output directory that holds another run's
// outputs (unless Overwrite), and, for a local directory input, one that
// a later run over the input would read as input.
func (p Plan) checkOutput(ctx context.Context, o Options) error {
	if !isRemote(o.Input) && !isRemote(o.Output) {
		if dir, _ := isDir(o.Input); dir && inside(o.Output, o.Input) {
			return fmt.Errorf("--output %s is inside the input directory %s: a later run over it would read the part files as input (write it elsewhere)", o.Output, o.Input)
		}
	}
	if o.Overwrite {
		return nil
	}
	old, err := earlierOutputs(ctx, p)
	if err != nil {
		return err
	}
	if len(old) > 0 {
		return fmt.Errorf("--output %s holds the outputs of an earlier run (%s): pass --overwrite to replace them", o.Output, strings.Join(old, ", "))
	}
	return nil
}

// earlierOutputs lists the files of an earlier run in the output
// directory: part files, rejects, metrics.
func earlierOutputs(ctx context.Context, p Plan) ([]string, error) {
	var old []string
	for _, glob := range []string{escapeGlob(join(p.Output, partPrefix)) + "*", escapeGlob(p.Rejects), escapeGlob(p.Metrics)} {
		names, err := listGlob(ctx, glob)
		if err != nil {
			return nil, fmt.Errorf("--output %s: %w", p.Output, err)
		}
		old = append(old, names...)
	}
	return old, nil
}

// escapeGlob escapes the glob metacharacters of a path, so that a glob
// built from it matches the path itself (filepath.Match syntax, which the
// local and in-memory file systems use).
func escapeGlob(p string) string {
	if !strings.ContainsAny(p, `*?[\`) {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inside reports whether path is dir or lies under it (both local).
func inside(path, dir string) bool {
	a, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, a)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isDir reports whether the local path is a directory.
func isDir(p string) (bool, error) {
	st, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	return st.IsDir(), nil
}

// spanBlocks is how many fingerprint blocks a span of a local file holds
// (64 MiB): spans are read in parallel, each from its offset.
const spanBlocks = 64

// split plans the units of work of the sources not read with textio, and
// the spans of every source's fingerprint blocks.
func (p *Plan) split(ctx context.Context, size int64) error {
	for i := range p.Sources {
		src := &p.Sources[i]
		n, err := fileSize(ctx, src.Path)
		if err != nil {
			return fmt.Errorf("--input: %w", err)
		}
		src.Size = n
		blocks := (n + task.BlockSize - 1) / task.BlockSize
		step := int64(spanBlocks)
		if isRemote(src.Path) {
			step = max(blocks, 1) // a remote file is read from its start: one span
		}
		for b := int64(0); b < blocks; b += step {
			p.Spans = append(p.Spans, Span{Source: i, First: b, End: min(b+step, blocks)})
		}
		if src.Text {
			continue
		}
		if isRemote(src.Path) || (src.Format != format.Parquet && src.Format != format.Arrow) {
			p.Units = append(p.Units, Unit{Source: i})
			continue
		}
		l, err := format.LayoutOf(src.Path)
		if err != nil {
			return fmt.Errorf("--input: %w", err)
		}
		if l.Kind != task.Units {
			p.Units = append(p.Units, Unit{Source: i})
			continue
		}
		for _, t := range task.Split([]task.Input{l.Input}, size) {
			p.Units = append(p.Units, Unit{Source: i, Task: t})
		}
	}
	return nil
}
