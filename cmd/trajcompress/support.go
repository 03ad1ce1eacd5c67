package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/pipeline"
)

// rejectLine is one line of the rejects file: where the line came from, why
// it was rejected, and the line itself ("raw" when it is valid UTF-8,
// "raw_base64" otherwise, so nothing is lost).
func rejectLine(r *pipeline.Reject) []byte {
	type line struct {
		File      string `json:"file"`
		Line      int64  `json:"line"`
		Reason    string `json:"reason"`
		Detail    string `json:"detail,omitempty"`
		Raw       string `json:"raw,omitempty"`
		RawBase64 string `json:"raw_base64,omitempty"`
	}
	l := line{File: r.Pos.File, Line: r.Pos.Line, Reason: r.Reason, Detail: r.Detail}
	if utf8.Valid(r.Raw) {
		l.Raw = string(r.Raw)
	} else {
		l.RawBase64 = base64.StdEncoding.EncodeToString(r.Raw)
	}
	b, _ := json.Marshal(l) // strings only: cannot fail
	return b
}

// sampleLines picks k = max(1, ⌊n·pct/100⌋) of the n records of path,
// reproducibly from (seed, file index), and returns their 0-based record
// indices as a set. Records keep their input order.
func sampleLines(ctx context.Context, path string, pct float64, seed uint64, fileIdx int) (map[int64]bool, error) {
	rd, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		_, _, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		n++
	}
	keep := map[int64]bool{}
	if n == 0 {
		return keep, nil
	}
	k := max(1, int64(float64(n)*pct/100))
	rng := rand.New(rand.NewPCG(seed, uint64(fileIdx)))
	// Floyd's algorithm: k distinct indices in O(k).
	for j := n - k; j < n; j++ {
		t := rng.Int64N(j + 1)
		if keep[t] {
			keep[j] = true
		} else {
			keep[t] = true
		}
	}
	return keep, nil
}

// sampledSource passes on only the records whose index is in keep.
type sampledSource struct {
	src  pipeline.Source
	keep map[int64]bool
	idx  int64
}

func (s *sampledSource) Next() ([]byte, int64, error) {
	for {
		b, line, err := s.src.Next()
		if err != nil {
			return nil, 0, err
		}
		i := s.idx
		s.idx++
		if s.keep[i] {
			return b, line, nil
		}
	}
}

// progress shows a bar on a terminal: bytes read, records/s, ETA, and live
// counts per outcome. It is a no-op when stderr is not a terminal or with
// --quiet. All methods are called from the pipeline's single writer
// goroutine or between runs.
type progress struct {
	bar     *progressbar.ProgressBar
	done    int64 // bytes of finished files
	records int64
	counts  map[outcome.Outcome]int64
	calls   int64 // summarizer requests
	hits    int64 // summaries served from the cache
}

func newProgress(stderr io.Writer, quiet bool, jobs []job) *progress {
	p := &progress{counts: map[outcome.Outcome]int64{}}
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return p
	}
	var total int64
	for _, j := range jobs {
		if st, err := os.Stat(j.in); err == nil {
			total += st.Size()
		}
	}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
	)
	return p
}

func (p *progress) observe(res pipeline.Result, fileBytes int64) {
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

func (p *progress) fileDone(fileBytes int64) { p.done += fileBytes }

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
