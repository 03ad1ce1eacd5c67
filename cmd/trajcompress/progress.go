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
	done    int64 // bytes of finished files
	records int64
	counts  map[outcome.Outcome]int64
	calls   int64 // summarizer requests
	hits    int64 // summaries served from the cache
}

func newProgress(stderr io.Writer, quiet bool) job.Progress {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{out: stderr, counts: map[outcome.Outcome]int64{}}
}

func (p *progress) Start(files []job.File) {
	var total int64
	for _, f := range files {
		if st, err := os.Stat(f.In); err == nil {
			total += st.Size()
		}
	}
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

func (p *progress) Record(res pipeline.Result, fileBytes int64) {
	p.records++
	p.counts[res.Obs.Outcome]++
	p.calls += int64(res.Obs.SummaryCalls)
	if res.Obs.CacheHit {
		p.hits++
	}
	if p.bar == nil {
		return
	}
	elapsed := p.bar.State().SecondsSince
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.records) / elapsed
	}
	desc := fmt.Sprintf("%d rec %.0f/s | comp %d over %d skip %d uncomp %d fail %d rej %d",
		p.records, rate, p.counts[outcome.Compressed], p.counts[outcome.CompressedOverLimit],
		p.counts[outcome.SkippedUnderTarget], p.counts[outcome.Uncompressible],
		p.counts[outcome.SummaryFailed], p.counts[outcome.Invalid])
	if p.calls > 0 || p.hits > 0 {
		desc += fmt.Sprintf(" | api %d cache %d", p.calls, p.hits)
	}
	p.bar.Describe(desc)
	p.bar.Set64(p.done + fileBytes)
}

func (p *progress) FileDone(fileBytes int64) { p.done += fileBytes }

func (p *progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
