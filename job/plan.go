package job

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
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
}

// NewPlan resolves spec's input into files and every output path, and
// refuses, before anything is read, outputs that would overwrite an input
// or each other (see checkPaths). Defaults follow the peer's naming:
//
//	file a.jsonl → a_compressed.jsonl, a_compressed_metrics.json, a_compressed_rejects.jsonl
//	dir  runs/   → runs_compressed/<same names> (x.jsonl.gz → x.jsonl),
//	               runs_compressed/compression_metrics.json, runs_compressed_rejects.jsonl
//
// A metrics.output_file other than the default names the metrics file in
// file mode too (beside the output); --metrics (Spec.Metrics) overrides both.
func NewPlan(spec Spec) (Plan, error) {
	var p Plan
	cfg := spec.Config
	if spec.Input == format.Stdin {
		return stdinPlan(spec)
	}
	st, err := os.Stat(spec.Input)
	if err != nil {
		return p, UsageError{fmt.Errorf("--input: %w", err)}
	}
	suffix := cfg.Output.OutputSuffix
	outFormat := func(in string) string {
		if cfg.Output.Format != "" {
			return cfg.Output.Format
		}
		return in
	}
	if st.IsDir() {
		in := filepath.Clean(spec.Input)
		p.Dir = spec.Output
		if p.Dir == "" {
			p.Dir = in + suffix
			if abs, err := filepath.Abs(in); err == nil && (in == "." || in == "..") {
				p.Dir = abs + suffix // "--input ." names its output after the directory, beside it
			}
		}
		ents, err := os.ReadDir(in)
		if err != nil {
			return p, err
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && format.Of(e.Name()) != "" {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return p, usagef("--input %s: no .jsonl, .jsonl.gz, .parquet or .arrow files in this directory", in)
		}
		seen := map[string]string{}
		for _, n := range names {
			inF := format.Of(n)
			outF := outFormat(inF)
			out := filepath.Join(p.Dir, format.Stem(n)+format.Ext(outF))
			if prev, dup := seen[out]; dup {
				return p, usagef("--input %s: %s and %s would both be written to %s", in, prev, n, out)
			}
			seen[out] = n
			p.Files = append(p.Files, File{In: filepath.Join(in, n), Out: out, InFormat: inF, OutFormat: outF})
		}
		p.Metrics = filepath.Join(p.Dir, cfg.Metrics.OutputFile)
		p.Rejects = filepath.Clean(p.Dir) + "_rejects.jsonl"
	} else {
		inF, err := format.Detect(spec.Input)
		if err != nil {
			return p, UsageError{fmt.Errorf("--input: %w", err)}
		}
		outF := outFormat(inF)
		out := spec.Output
		if out == "" {
			out = filepath.Join(filepath.Dir(spec.Input), format.Stem(spec.Input)+suffix+format.Ext(outF))
		} else if !spec.OutputFormatSet && cfg.Output.Format == "" {
			if of := format.Of(out); of != "" {
				outF = of // --output b.parquet means Parquet
			}
		}
		p.Files = []File{{In: spec.Input, Out: out, InFormat: inF, OutFormat: outF}}
		p.besideOutput(out)
		p.metricsFile(cfg)
	}
	return p.finish(spec)
}

// besideOutput names the metrics and rejects after the output file.
func (p *Plan) besideOutput(out string) {
	p.Metrics = filepath.Join(filepath.Dir(out), format.Stem(out)+"_metrics.json")
	p.Rejects = filepath.Join(filepath.Dir(out), format.Stem(out)+"_rejects.jsonl")
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
	return p, checkPaths(p)
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
	p.Files = []File{{In: format.Stdin, Out: spec.Output, InFormat: format.JSONL, OutFormat: outF}}
	p.besideOutput(spec.Output)
	p.metricsFile(spec.Config)
	return p.finish(spec)
}

// checkPaths refuses outputs that would overwrite an input or each other,
// an output that is a directory, and gzip output.
func checkPaths(p Plan) error {
	type named struct{ what, path string }
	var outs []named
	for _, f := range p.Files {
		outs = append(outs, named{"output", f.Out})
	}
	outs = append(outs, named{"--metrics", p.Metrics}, named{"--rejects", p.Rejects}, named{"--outcomes", p.Outcomes}, named{"--report", p.Report})
	for i, a := range outs {
		if a.path == "" {
			continue
		}
		if st, err := os.Stat(a.path); err == nil && st.IsDir() {
			return usagef("%s %s is a directory", a.what, a.path)
		}
		if a.what == "output" && strings.HasSuffix(a.path, ".gz") {
			return usagef("output %s: gzip output is not supported (gzip input is); name it .jsonl", a.path)
		}
		for _, f := range p.Files {
			if f.In != format.Stdin && a.path != "-" && samePath(a.path, f.In) {
				return usagef("refusing to write %s %s over its own input %s (choose another path)", a.what, a.path, f.In)
			}
		}
		for _, b := range outs[i+1:] {
			if b.path != "" && samePath(a.path, b.path) {
				return usagef("%s and %s are the same file %s", a.what, b.what, a.path)
			}
		}
	}
	return nil
}

func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}
