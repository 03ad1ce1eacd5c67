package pipeline

import (
	"context"
	"runtime"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok/imagetest"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/summary"
)

// BenchmarkCompressImage measures what one record holding a 20 MiB PNG as
// base64 (an OpenAI image_url data: URL, or an Anthropic base64 block)
// allocates through Compress, with the CLI's defaults (redaction on,
// per-record metrics, the deterministic summarizer): under target
// (skipped: written as read), over target with the image in the protected
// tail (compressed: the middle summarised, the image kept), and over
// target with the image in the middle removed by the image step
// (dropped). x-image is the bytes allocated per record over the image's
// base64 length (the image as the record holds it); see bench/README.md,
// "Images".
func BenchmarkCompressImage(b *testing.B) {
	for _, layout := range []string{imagetest.OpenAI, imagetest.Anthropic} {
		for _, bc := range []struct {
			name   string
			old    bool
			target int
			want   outcome.Outcome
			mod    func(*Options)
		}{
			{"skipped", false, 1 << 30, outcome.SkippedUnderTarget, nil},
			{"compressed", false, 1800, outcome.Compressed, nil},
			{"dropped", true, 2000, outcome.Compressed, func(o *Options) {
				o.Prepass = &prepass.Config{DropOldImages: true, ImagesOnly: true}
			}},
		} {
			b.Run(layout+"/"+bc.name, func(b *testing.B) {
				line := imagetest.Record("run-1", layout, bc.old)
				c := newComp(b, func(o *Options) {
					o.Budget.Target, o.Budget.SummaryTokens = bc.target, 100
					o.Counting.Counter = charCounter{}
					o.Summarizing.Summarizer = summary.Deterministic{Counter: charCounter{}}
					o.Redactor = redact.Default()
					o.PerRecordMetrics = true
					o.Placement.NoticeText = DefaultNotice
					if bc.mod != nil {
						bc.mod(o)
					}
				})
				res, err := c.Compress(context.Background(), line, pos)
				if err != nil {
					b.Fatal(err)
				}
				images := 1
				if bc.old {
					images = 2
				}
				if o := res.Obs; o.Outcome != bc.want || o.Images != images || bc.old != (o.ImagesRemoved == 1) {
					b.Fatalf("outcome %s %s, images %d, removed %d", o.Outcome, o.Reason, o.Images, o.ImagesRemoved)
				}
				img := int64(imagetest.ImageLen())
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				n := 0
				for b.Loop() {
					if _, err := c.Compress(context.Background(), line, pos); err != nil {
						b.Fatal(err)
					}
					n++
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(img), "x-image")
			})
		}
	}
}
