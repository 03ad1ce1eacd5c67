package trajbeam

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/tokenize"
)

// finalizeFn commits the run once every bundle has: it renames the part
// files the committed bundles wrote to part-NNNNN-of-NNNNN.jsonl (in the
// order of their temporary names), writes the rejects of every source,
// in input order, to rejects.jsonl, writes the metrics (the peer's
// report of the merged Summary, vouching for those files with their sizes
// and hashes) last, and removes the temporary directory with whatever
// failed bundles left in it. Every step can be done again: a retried
// commit finds the parts already renamed.
type finalizeFn struct {
	Plan        Plan          `json:"plan"`
	Config      config.Config `json:"config"`
	GroupBy     string        `json:"group_by"`
	ToolVersion string        `json:"tool_version"`
	Overwrite   bool          `json:"overwrite"`
	Start       time.Time     `json:"start"`
}

func (fn *finalizeFn) ProcessElement(ctx context.Context, _ []byte, sums func(**metrics.Summary) bool, parts, rejects func(*Part) bool, blocks func(*Blocks) bool) error {
	total := summaryOf(sums)
	fp, err := inputFingerprint(fn.Plan.Sources, blocks)
	if err != nil {
		return err
	}
	outputs, err := fn.commitParts(ctx, collect(parts))
	if err != nil {
		return err
	}
	rej, err := fn.writeRejects(ctx, collect(rejects))
	if err != nil {
		return err
	}
	outputs = append(outputs, rej)
	if err := fn.writeMetrics(ctx, total, fp, outputs); err != nil {
		return err
	}
	return removeTemp(ctx, fn.Plan.Temp)
}

func collect(iter func(*Part) bool) []Part {
	var out []Part
	var p Part
	for iter(&p) {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Part) int {
		if a.Source != b.Source {
			return a.Source - b.Source
		}
		return strings.Compare(a.Temp, b.Temp)
	})
	return out
}

// commitParts renames the parts into the output directory and, with
// Overwrite, removes the part files of an earlier run that these did not
// replace.
func (fn *finalizeFn) commitParts(ctx context.Context, parts []Part) ([]metrics.OutputFile, error) {
	var outputs []metrics.OutputFile
	mine := map[string]bool{}
	for i, p := range parts {
		name := fmt.Sprintf("%s%05d-of-%05d.jsonl", partPrefix, i, len(parts))
		final := join(fn.Plan.Output, name)
		if err := moveOnce(ctx, p.Temp, final); err != nil {
			return nil, err
		}
		mine[final] = true
		outputs = append(outputs, metrics.OutputFile{Path: name, Bytes: p.Bytes, XXH3: p.XXH3})
	}
	if fn.Overwrite {
		old, err := listGlob(ctx, escapeGlob(join(fn.Plan.Output, partPrefix))+"*")
		if err != nil {
			return nil, err
		}
		for _, o := range old {
			if !mine[o] && !mine[textKey(o)] {
				if err := remove(ctx, o); err != nil {
					return nil, err
				}
			}
		}
	}
	return outputs, nil
}

// moveOnce renames from to to, unless a retried commit already did.
func moveOnce(ctx context.Context, from, to string) error {
	ok, err := exists(ctx, from)
	if err != nil {
		return err
	}
	if !ok {
		if done, _ := exists(ctx, to); done {
			return nil
		}
		return fmt.Errorf("part file %s is missing: the run's temporary directory was changed", from)
	}
	return rename(ctx, from, to)
}

// writeRejects concatenates the rejects of every source, in source
// order, into the rejects file (written whole, then renamed into place).
func (fn *finalizeFn) writeRejects(ctx context.Context, parts []Part) (metrics.OutputFile, error) {
	tmp := join(fn.Plan.Temp, RejectsName)
	w, err := newPartWriter(ctx, tmp, -1)
	if err != nil {
		return metrics.OutputFile{}, err
	}
	for _, p := range parts {
		if err := copyLines(ctx, w, p.Temp); err != nil {
			w.abort(ctx)
			return metrics.OutputFile{}, err
		}
	}
	done, err := w.close()
	if err != nil {
		return metrics.OutputFile{}, err
	}
	if err := rename(ctx, tmp, fn.Plan.Rejects); err != nil {
		return metrics.OutputFile{}, err
	}
	return metrics.OutputFile{Path: RejectsName, Bytes: done.Bytes, XXH3: done.XXH3}, nil
}

// copyLines appends the lines of the JSONL file p to w.
func copyLines(ctx context.Context, w *partWriter, p string) error {
	r, err := openAt(ctx, p, 0)
	if err != nil {
		return err
	}
	defer r.Close()
	return w.copyFrom(r)
}

// writeMetrics writes the report of the merged Summary, as compress
// writes it: same sections and run block.
func (fn *finalizeFn) writeMetrics(ctx context.Context, total *metrics.Summary, inputFP string, outputs []metrics.OutputFile) error {
	comp, counter, err := jobcore.NewCompressor(fn.Config, false, fn.GroupBy)
	if err != nil {
		return err
	}
	budget := jobcore.BudgetOf(fn.Config)
	info := metrics.RunInfo{
		Tokenizer:    fn.Config.Tokenizer.Name,
		TurnOverhead: fn.Config.Tokenizer.TurnOverhead,
		Budget:       &budget,
		Start:        fn.Start,
		End:          time.Now(),
		Summarizer:   fn.Config.Summarization.Method,
		ToolVersion:  fn.ToolVersion,
		Outputs:      outputs,
		GroupBy:      fn.GroupBy,
		Prepass:      fn.Config.Compression.Prepass || fn.Config.Compression.DropOldImages,
		Redaction:    fn.Config.Redaction.Enabled,

		InputFingerprint: inputFP,
		ImageTokens:      comp.ImageRule().String(),
	}
	if ti := tokenize.Describe(counter); ti.Hash != "" {
		info.TokenizerKind, info.TokenizerSplit, info.TokenizerSHA256 = ti.Kind, ti.Split, ti.Hash
	}
	info.Config, info.ConfigFingerprint = jobcore.ConfigFingerprint(fn.Config)
	var doc bytes.Buffer
	if err := total.Report(info).WriteJSON(&doc); err != nil {
		return err
	}
	tmp := join(fn.Plan.Temp, "metrics.json")
	err = withFS(ctx, tmp, func(fs filesystem.Interface) error { return filesystem.Write(ctx, fs, tmp, doc.Bytes()) })
	if err != nil {
		return err
	}
	return rename(ctx, tmp, fn.Plan.Metrics)
}

// removeTemp removes the run's temporary directory and everything in it
// (files of failed or retried bundles).
func removeTemp(ctx context.Context, dir string) error {
	left, err := listGlob(ctx, escapeGlob(joinDir(dir, ""))+"*")
	if err != nil {
		return err
	}
	for _, f := range left {
		if err := remove(ctx, f); err != nil {
			return err
		}
	}
	if !isRemote(dir) {
		return removeLocalDir(dir)
	}
	return nil
}
