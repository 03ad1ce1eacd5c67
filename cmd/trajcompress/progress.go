package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/pipeline"
)

// progress shows a bar on a terminal: bytes read, records/s, ETA, and live
// counts per outcome. It is a no-op when stderr is not a terminal or with
// --quiet. The job calls it from one goroutine at a time.
type progress struct {
	out     io.Writer
	bar     *progressbar.ProgressBar
	done    int64 // bytes of finished tasks
	records int64
	counts  map[outcome.Outcome]int64
	calls   int64 // summarizer requests
	hits    int64 // summaries served from the cache
	width   int   // terminal columns, measured now and then
}

// barRest is what the bar takes besides its description at most: the
// percentage, a bar of at least 8 cells (the library narrows it to fit),
// "(999 MB/999 MB, 99 MB/s)" and "[59m59s:59m59s]", with their spaces.
const barRest = 62

// fitDesc joins the leading parts that fit in width columns (the first
// always, cut to width), so that the bar stays on one line: a line longer
// than the terminal wraps, and every refresh then adds a line.
func fitDesc(parts []string, width int) string {
	width = max(width, 8)
	desc := parts[0]
	if len(desc) > width {
		return desc[:width]
	}
	for _, p := range parts[1:] {
		if len(desc)+1+len(p) > width {
			break
		}
		desc += " " + p
	}
	return desc
}

// short writes n in at most 5 characters: 999, 12.3k, 4.5M.
func short(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// termCols is the width of the terminal w writes to; 80 when unknown.
func termCols(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

func newProgress(stderr io.Writer, quiet bool) job.Progress {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{out: stderr, counts: map[outcome.Outcome]int64{}}
}

func (p *progress) Start(total int64) {
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.out),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
	)
}

func (p *progress) Record(res pipeline.Result, taskBytes int64) {
	p.records++
	p.counts[res.Obs.Outcome]++
	p.calls += int64(res.Obs.SummaryCalls)
	if res.Obs.CacheHit {
		p.hits++
	}
	if p.bar == nil {
		return
	}
	if p.records%1024 == 1 {
		p.width = termCols(p.out)
	}
	elapsed := p.bar.State().SecondsSince
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.records) / elapsed
	}
	parts := []string{
		fmt.Sprintf("%s rec %s/s", short(p.records), short(int64(rate))),
		"comp " + short(p.counts[outcome.Compressed]), "over " + short(p.counts[outcome.CompressedOverLimit]),
		"skip " + short(p.counts[outcome.SkippedUnderTarget]), "uncomp " + short(p.counts[outcome.Uncompressible]),
		"fail " + short(p.counts[outcome.SummaryFailed]), "rej " + short(p.counts[outcome.Invalid]),
	}
	if p.calls > 0 || p.hits > 0 {
		parts = append(parts, "api "+short(p.calls), "cache "+short(p.hits))
	}
	desc := fitDesc(parts, p.width-barRest)
	p.bar.Describe(desc)
	p.bar.Set64(p.done + taskBytes)
}

func (p *progress) Done(bytes int64) { p.done += bytes }

func (p *progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
