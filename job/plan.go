package job

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/summary/llm"
)

// File is one input file and where its records go.
type File struct {
	In, Out             string
	InFormat, OutFormat string
}

// Plan is where a run reads and writes: the input files, each with its
// output, and the side files.
type Plan struct {
	Files                      []File
	Dir                        string // output directory (directory input) or ""
	Metrics, Rejects, Outcomes string
	Report                     string // the HTML report, or "" for none
	// Profile, Export and Cache are the other paths a run writes: the CPU
	// profile (Spec.CPUProfile), the Batch export (Spec.BatchExport) and
	// the LLM summary cache directory; "" for none.
	Profile, Export, Cache string
	// LeftOut names the files and links of a directory input that could
	// look like data but are not read, each with the reason (see
	// walkInputs); Run notes each.
	LeftOut []string
	// Notes say what the plan made of compressed inputs and of an output
	// named as compressed; Run notes each.
	Notes []string
}

// NewPlan resolves spec's input into files and every output path, and
// refuses, before anything is read, outputs that would overwrite an input
// or each other (see checkPaths). Defaults follow the peer's naming:
//
//	file a.jsonl → a_compressed.jsonl, a_compressed_metrics.json, a_compressed_rejects.jsonl
//	dir  runs/   → runs_compressed/<same names> (x.jsonl.gz → x.jsonl, x.NDJSON.ZST → x.jsonl),
//	               runs_compressed/compression_metrics.json, runs_compressed_rejects.jsonl
//
// A metrics.output_file other than the default names the metrics file in
// file mode too (beside the output); --metrics (Spec.Metrics) overrides both.
func NewPlan(spec Spec) (Plan, error) {
	var p Plan
	if spec.Input == format.Stdin {
		return stdinPlan(spec)
	}
	st, err := os.Stat(spec.Input)
	if err != nil {
		return p, UsageError{Err: fmt.Errorf("--input: %w", err)}
	}
	if st.IsDir() {
		err = p.dirFiles(spec)
	} else {
		err = p.file(spec)
	}
	if err != nil {
		return p, err
	}
	if err := readable(p.Files); err != nil {
		return p, err
	}
	p, err = p.finish(spec)
	if err == nil && st.IsDir() {
		err = insideInput(p, spec.Input, !spec.NoRecursive)
	}
	return p, err
}

// outFormat is the output format of an input in format in under cfg.
func outFormat(cfg config.Config, in string) string {
	if cfg.Output.Format != "" {
		return cfg.Output.Format
	}
	return in
}

// file plans the run of the input file spec.Input.
func (p *Plan) file(spec Spec) error {
	cfg := spec.Config
	inF, err := format.Detect(spec.Input)
	if err != nil {
		return UsageError{Err: fmt.Errorf("--input: %w", err)}
	}
	outF := outFormat(cfg, inF)
	out := spec.Output
	if out == "" {
		out = filepath.Join(filepath.Dir(spec.Input), atomicfile.FitName(format.Stem(spec.Input), cfg.Output.OutputSuffix+format.Ext(outF)))
	} else if !spec.OutputFormatSet && cfg.Output.Format == "" {
		if of := format.Of(out); of != "" {
			outF = of // --output b.parquet means Parquet
		}
	}
	out = p.uncompressedOutput(out)
	if c := format.CompressionOf(spec.Input); c != "" {
		p.Notes = append(p.Notes, fmt.Sprintf("--input %s is %s-compressed: it is read decompressed, and its output %s is written uncompressed", spec.Input, c, out))
	}
	p.Files = []File{{In: spec.Input, Out: out, InFormat: inF, OutFormat: outF}}
	p.besideOutput(out)
	p.metricsFile(cfg)
	return nil
}

// dirFiles plans the run of the input directory spec.Input: the files
// the walk finds, each with its output in the output directory.
func (p *Plan) dirFiles(spec Spec) error {
	cfg := spec.Config
	in := filepath.Clean(spec.Input)
	p.Dir = spec.Output
	if p.Dir == "" {
		p.Dir = fitPath(in, cfg.Output.OutputSuffix)
		if abs, err := filepath.Abs(in); err == nil && (in == "." || in == "..") {
			p.Dir = fitPath(abs, cfg.Output.OutputSuffix) // "--input ." names its output after the directory, beside it
		}
	}
	files, found, leftOut, err := jobcore.Walk(in, !spec.NoRecursive, spec.FollowLinks)
	if errors.Is(err, fs.ErrPermission) {
		return UsageError{Err: err} // unreadable input: exit 2, as -h says
	}
	if err != nil {
		return err
	}
	p.LeftOut = leftOut
	if len(files) == 0 {
		what := "this directory"
		if !spec.NoRecursive {
			what += " or below it"
		}
		return usagef("--input %s: no .jsonl, .ndjson, .json (JSON array or JSON Lines; each also .gz, .zst, .bz2 or .xz), .parquet or .arrow files in %s", in, what)
	}
	seen := make(map[string]string, len(files))
	for _, rel := range files {
		inF := found[rel].Format
		outF := outFormat(cfg, inF)
		out := filepath.Join(p.Dir, filepath.Dir(rel), atomicfile.FitName(format.Stem(rel), format.Ext(outF)))
		if prev, dup := seen[out]; dup {
			return usagef("--input %s: %s and %s would both be written to %s", in, prev, rel, out)
		}
		seen[out] = rel
		p.Files = append(p.Files, File{In: filepath.Join(in, rel), Out: out, InFormat: inF, OutFormat: outF})
	}
	p.noteCompressed(in, files, found)
	p.Metrics = filepath.Join(p.Dir, cfg.Metrics.OutputFile)
	p.Rejects = fitPath(filepath.Clean(p.Dir), "_rejects.jsonl")
	return nil
}

// noteCompressed notes the compressed files of the input directory in,
// which are read decompressed and written uncompressed: how many, the
// compressions, and the first as an example.
func (p *Plan) noteCompressed(in string, files []string, found map[string]format.Found) {
	var compressed []string
	n := 0
	for k, rel := range files {
		c := found[rel].Compression
		if c == "" {
			continue
		}
		n++
		if len(compressed) == 0 {
			r, _ := filepath.Rel(p.Dir, p.Files[k].Out)
			compressed = append(compressed, fmt.Sprintf("%s → %s", rel, r))
		}
		if !slices.Contains(compressed[1:], c) {
			compressed = append(compressed, c)
		}
	}
	if n > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("--input %s: %d compressed %s (%s) read decompressed; outputs are written uncompressed, without the compression extension (%s)",
			in, n, plural(n, "file", "files"), strings.Join(compressed[1:], ", "), compressed[0]))
	}
}

// uncompressedOutput is the output path named out, without the
// compression extension it may end with: outputs are written
// uncompressed, and the plan notes so.
func (p *Plan) uncompressedOutput(out string) string {
	c := format.Compressed(out)
	if c == "" {
		return out
	}
	plain := strings.TrimSuffix(out, filepath.Ext(out))
	p.Notes = append(p.Notes, fmt.Sprintf("--output %s: %s output is not written (compressed input is read): the output is written uncompressed to %s", out, c, plain))
	return plain
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// readable makes sure each input file can be opened, before any work: an
// unreadable input is a usage error (exit 2, as -h says), not a failure
// found when its task comes.
func readable(files []File) error {
	for _, f := range files {
		fh, err := os.Open(f.In)
		if err != nil {
			return usagef("--input: %v", err)
		}
		fh.Close()
	}
	return nil
}

// besideOutput names the metrics and rejects after the output file.
func (p *Plan) besideOutput(out string) {
	p.Metrics = filepath.Join(filepath.Dir(out), atomicfile.FitName(format.Stem(out), "_metrics.json"))
	p.Rejects = filepath.Join(filepath.Dir(out), atomicfile.FitName(format.Stem(out), "_rejects.jsonl"))
}

// fitPath is path with tail added to its last element, that element cut
// (atomicfile.FitName) when it would be longer than a file name may be:
// the default names made of an input's name work for any input name the
// file system accepts.
func fitPath(path, tail string) string {
	return filepath.Join(filepath.Dir(path), atomicfile.FitName(filepath.Base(path), tail))
}

// metricsFile honours a metrics.output_file other than the peer's default
// for a file input: that name, beside the output. The default keeps the
// peer's file-mode name, <output stem>_metrics.json.
func (p *Plan) metricsFile(cfg config.Config) {
	if name := cfg.Metrics.OutputFile; name != config.Default().Metrics.OutputFile {
		p.Metrics = filepath.Join(filepath.Dir(p.Files[0].Out), name)
	}
}

// finish applies the side-file paths the spec names, and checks the plan.
func (p Plan) finish(spec Spec) (Plan, error) {
	if spec.Metrics != "" {
		p.Metrics = spec.Metrics
	}
	if spec.Rejects != "" {
		p.Rejects = spec.Rejects
	}
	p.Outcomes, p.Report = spec.Outcomes, spec.Report
	p.Profile, p.Export = spec.CPUProfile, spec.BatchExport
	if s := spec.Config.Summarization; s.Method == "llm" && s.CacheDir != llm.CacheDisabled {
		p.Cache, _ = llm.CachePath(s.CacheDir) // an error is the client's to report
	}
	if err := checkPaths(p, spec); err != nil {
		return p, err
	}
	return p, checkWritable(spec)
}

// checkWritable makes sure, before any work, that the outputs named on
// the command line can be written (commit.Writable): a run that could not
// put its outcomes, report or metrics in place failed only at its end.
func checkWritable(spec Spec) error {
	paths := []struct{ what, path string }{
		{"--metrics", spec.Metrics}, {"--rejects", spec.Rejects}, {"--outcomes", spec.Outcomes}, {"--report", spec.Report}}
	if !spec.DryRun && spec.BatchExport == "" {
		paths = append(paths, struct{ what, path string }{"--output", spec.Output})
	}
	for _, p := range paths {
		if p.path == "" || p.path == "-" {
			continue
		}
		if err := commit.Writable(p.path); err != nil {
			return usagef("%s %v", p.what, err)
		}
	}
	return nil
}

// stdinPlan is the plan of a run reading standard input: JSONL, read
// once, so the output must be named and there is no sample.
func stdinPlan(spec Spec) (Plan, error) {
	var p Plan
	if spec.Output == "" {
		return p, usagef("--input -: name the output with --output (there is no input file name to derive it from)")
	}
	if spec.Sample != nil {
		return p, usagef("--input -: --sample-percent reads the input twice, which standard input cannot be")
	}
	outF := spec.Config.Output.Format
	if outF == "" {
		outF = format.JSONL
		if of := format.Of(spec.Output); of != "" && !spec.OutputFormatSet {
			outF = of
		}
	}
	out := p.uncompressedOutput(spec.Output)
	p.Files = []File{{In: format.Stdin, Out: out, InFormat: format.JSONL, OutFormat: outF}}
	p.besideOutput(out)
	p.metricsFile(spec.Config)
	return p.finish(spec)
}

// insideInput refuses side files, and an output directory, that a later
// run over the input directory in would read as input: a path under in
// that the walk would list (see walkInputs).
func insideInput(p Plan, in string, recursive bool) error {
	root := jobcore.AbsClean(in)
	check := func(what, path string, dir bool) error {
		if path == "" || path == format.Stdin {
			return nil
		}
		rel, err := filepath.Rel(root, jobcore.AbsClean(path))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
		walked := !dir || rel == "." || recursive
		if !dir && !recursive && strings.ContainsRune(rel, filepath.Separator) {
			walked = false
		}
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			if strings.HasPrefix(part, ".") && part != "." {
				walked = false
			}
		}
		if walked {
			return usagef("%s %s is inside the input directory %s: a later run over it would read it as input (write it elsewhere)", what, path, in)
		}
		return nil
	}
	if err := check("the output directory (--output)", p.Dir, true); err != nil {
		return err
	}
	for _, s := range []struct{ what, path string }{{"the metrics file (--metrics)", p.Metrics}, {"the rejects file (--rejects)", p.Rejects}, {"the outcomes file (--outcomes)", p.Outcomes}, {"the report (--report)", p.Report},
		{"the CPU profile (--cpuprofile)", p.Profile}, {"the Batch export (--batch-export)", p.Export}} {
		if err := check(s.what, s.path, false); err != nil {
			return err
		}
	}
	return check("the summary cache (--cache-dir, summarization.cache_dir)", p.Cache, true)
}

// checkPaths refuses, before anything is written, paths the run would
// write (outputs, side files, the profile, the Batch export) that are an
// input (by any name: --batch-import files too) or each other, an output
// that is a directory, gzip output, a summary cache that is an input file,
// and a symbolic link at a name the run chose rather than one spec names
// (see [commit.NotLink]). It stats each path once (a directory of
// thousands of files is checked in linear time).
func checkPaths(p Plan, spec Spec) error {
	type named struct {
		what, path string
		given      bool // named by the user: a link there is followed
	}
	var outs []named
	for _, f := range p.Files {
		outs = append(outs, named{"output", f.Out, p.Dir == "" && spec.Output != ""})
	}
	outs = append(outs, named{"--metrics", p.Metrics, spec.Metrics != ""}, named{"--rejects", p.Rejects, spec.Rejects != ""},
		named{"--outcomes", p.Outcomes, true}, named{"--report", p.Report, true},
		named{"--cpuprofile", p.Profile, true}, named{"--batch-export", p.Export, true})
	inputs := make(map[fileKey]string, len(p.Files)+len(spec.BatchImport))
	for _, f := range p.Files {
		if f.In != format.Stdin {
			k, _ := keyOf(f.In)
			inputs[k] = f.In
		}
	}
	for _, in := range spec.BatchImport {
		k, _ := keyOf(in)
		inputs[k] = in
	}
	if err := p.chosenDirs(spec); err != nil {
		return err
	}
	written := make(map[fileKey]string, len(outs))
	for _, a := range outs {
		if a.path == "" {
			continue
		}
		if !a.given {
			if err := commit.NotLink(a.path); err != nil {
				flag := a.what
				if flag == "output" {
					flag = "--output"
				}
				return usagef("%s: %w; remove it, or name the path with %s to write where it points", a.what, err, flag)
			}
		}
		k, isDir := keyOf(a.path)
		if isDir {
			return usagef("%s %s is a directory", a.what, a.path)
		}
		if a.what == "output" && commit.IsDirect(a.path) {
			return usagef("output %s is not a regular file: record outputs are written to files (rejects, outcomes and metrics may go to a device, a FIFO or -)", a.path)
		}
		if a.path == "-" {
			continue
		}
		if in, ok := inputs[k]; ok {
			return usagef("refusing to write %s %s over its own input %s (choose another path)", a.what, a.path, in)
		}
		if prev, ok := written[k]; ok {
			return usagef("%s and %s are the same file %s", prev, a.what, a.path)
		}
		written[k] = a.what
	}
	if p.Cache != "" {
		if k, _ := keyOf(p.Cache); inputs[k] != "" {
			return usagef("refusing to write the summary cache (--cache-dir, summarization.cache_dir) %s over the input %s (choose another directory)", p.Cache, inputs[k])
		}
	}
	return nil
}

// chosenDirs refuses a symbolic link at a directory a directory run
// chose: the output directory when not named, and the subdirectories in
// it that its outputs keep from the input.
func (p Plan) chosenDirs(spec Spec) error {
	if p.Dir == "" {
		return nil
	}
	if spec.Output == "" {
		if err := commit.NotLink(p.Dir); err != nil {
			return usagef("the output directory: %w; remove it, or name the directory with --output to write where it points", err)
		}
	}
	seen := map[string]bool{}
	for _, f := range p.Files {
		for d := filepath.Dir(f.Out); d != filepath.Clean(p.Dir) && d != filepath.Dir(d) && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			if err := commit.NotLink(d); err != nil {
				return usagef("a directory in the output directory: %w; remove it", err)
			}
		}
	}
	return nil
}

// fileKey names a file: its device and inode when it exists (hard and
// symbolic links to one file are one key), else its absolute path.
type fileKey struct {
	dev, ino uint64
	path     string
}

// keyOf is path's key, and whether it is an existing directory.
func keyOf(path string) (fileKey, bool) {
	if st, err := os.Stat(path); err == nil {
		if dev, ino := fileID(st); dev != 0 || ino != 0 {
			return fileKey{dev: dev, ino: ino}, st.IsDir()
		}
		return fileKey{path: jobcore.AbsClean(path)}, st.IsDir()
	}
	return fileKey{path: jobcore.AbsClean(path)}, false
}
