package job

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/tokenize"
)

// OpenAI Batch (summary/llm, batch.go) as run modes of compress:
//
//   - Spec.BatchExport: the run writes every summary request it would
//     send, as an OpenAI Batch input file, and nothing else: no records,
//     no metrics (nothing final was made), rejects and outcomes only when
//     named. It is a dry run whose LLM summarizer is an llm.Exporter;
//     regions already in the summary cache are left out.
//   - Spec.BatchImport: before the run, each Batch output or error file is
//     read into the summary cache through the checks a live answer passes
//     (llm.Client.ImportBatch); the run then finds those summaries cached
//     and sends no request for them.
//
// Both at once import, then export what is still missing.

// checkBatch refuses batch settings that cannot work, before anything is
// read.
func checkBatch(spec Spec) error {
	if spec.BatchExport == "" && len(spec.BatchImport) == 0 {
		return nil
	}
	if spec.Config.Summarization.Method != "llm" {
		return usagef("--batch-export and --batch-import are for LLM summaries: set summarization.method: llm (--summarizer llm)")
	}
	if spec.Config.Summarization.CacheDir == llm.CacheDisabled {
		return usagef("--batch-export and --batch-import need the summary cache (summarization.cache_dir is %q): the batch's answers are read from it", llm.CacheDisabled)
	}
	if spec.BatchExport != "" {
		if commit.IsDirect(spec.BatchExport) {
			return usagef("--batch-export %s is not a regular file: the requests are written to a file, put in place when the run succeeds", spec.BatchExport)
		}
		// An export over an input (or a --batch-import file) or inside the
		// input directory is refused with the other written paths, by
		// NewPlan.
	}
	return nil
}

// importBatches reads spec.BatchImport into the summary cache, with the
// run's LLM settings and counter (an answer is checked against the region
// size its request carries, counted so).
func importBatches(spec Spec, counter tokenize.Counter) (*llm.ImportStats, error) {
	if len(spec.BatchImport) == 0 {
		return nil, nil
	}
	c, err := llm.NewOffline(jobcore.LLMConfig(spec.Config, counter))
	if err != nil {
		return nil, UsageError{Err: err}
	}
	var total llm.ImportStats
	for _, path := range spec.BatchImport {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--batch-import: %v", err)
		}
		st, err := c.ImportBatch(f, counter)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--batch-import %s: %w", path, err)
		}
		if spec.Notes != nil {
			fmt.Fprintf(spec.Notes, "%s: %s\n", path, describeImport(st))
		}
		total.Add(st)
	}
	return &total, nil
}

// describeImport says in one line what an import did.
func describeImport(st llm.ImportStats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines: %d summaries imported into the cache", st.Lines, st.Imported)
	if n := sumCounts(st.Failed); n > 0 {
		fmt.Fprintf(&b, ", %d requests failed in the batch %v", n, st.Failed)
	}
	if n := sumCounts(st.Rejected); n > 0 {
		fmt.Fprintf(&b, ", %d answers rejected by the checks of a live answer %v (not cached)", n, st.Rejected)
	}
	if st.Redacted > 0 {
		fmt.Fprintf(&b, ", %d answers had secrets redacted (redaction.enabled)", st.Redacted)
	}
	if st.Repeated > 0 {
		fmt.Fprintf(&b, ", %d repeated answers", st.Repeated)
	}
	if st.Foreign > 0 {
		fmt.Fprintf(&b, ", %d lines of requests trajcompress did not write (custom_id), skipped", st.Foreign)
	}
	if st.Malformed > 0 {
		fmt.Fprintf(&b, ", %d lines that are not Batch output lines (lines %v), skipped", st.Malformed, st.MalformedLines)
	}
	b.WriteString("; the regions without an imported summary are requested by this run (or exported again with --batch-export)")
	return b.String()
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// newExporter is the LLM summarizer of an exporting run.
func newExporter(cfg config.Config, counter tokenize.Counter) (*llm.Exporter, error) {
	e, err := llm.NewExporter(jobcore.LLMConfig(cfg, counter))
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return e, nil
}

// writeExport writes the exporter's requests to spec.BatchExport, staged
// in the run's commit like every other output.
func (a *assembler) writeExport() (llm.ExportStats, error) {
	path := a.spec.BatchExport
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return llm.ExportStats{}, err
	}
	sp, kind, err := a.out.stageFile(path)
	if err != nil {
		return llm.ExportStats{}, UsageError{Err: err}
	}
	if kind == commit.Direct {
		return llm.ExportStats{}, usagef("--batch-export %s is not a regular file", path)
	}
	f, err := atomicfile.Create(sp)
	if err != nil {
		return llm.ExportStats{}, fmt.Errorf("--batch-export %s: %w", path, err)
	}
	st, werr := a.batch.export.WriteRequests(f)
	if err := f.Finish(werr); err != nil {
		return st, fmt.Errorf("--batch-export %s: %w", path, err)
	}
	return st, nil
}
