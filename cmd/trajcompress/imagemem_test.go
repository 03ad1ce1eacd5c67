package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok/imagetest"
)

// BenchmarkCompressImageFile measures what `trajcompress compress`
// allocates, whole path (JSONL reader, redaction, the record path, the
// writer, outcome lines, metrics, the run directory), on a file of three
// records each holding a 20 MiB PNG as base64 (imagetest.Cases: skipped,
// compressed, dropped; OpenAI and Anthropic parts), with --workers 1.
// x-image is the bytes allocated per record beyond a run on one record
// without images, over the image's base64 length; see bench/README.md,
// "Images". The peak RSS of the binary on such files is bench/imgmem's.
func BenchmarkCompressImageFile(b *testing.B) {
	const records = 3
	dir := b.TempDir()
	allocs := func(args []string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if code := run(context.Background(), args, nil, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d: %v", code, args)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	base := filepath.Join(dir, "base.jsonl")
	if err := os.WriteFile(base, imagetest.File("", false, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	baseArgs := []string{"compress", "--quiet", "--workers", "1", "--input", base, "--output", filepath.Join(dir, "base.out.jsonl")}
	allocs(baseArgs) // warm: the tokenizer's tables are built once per process
	fixed := allocs(baseArgs)
	img := float64(imagetest.ImageLen())
	for _, layout := range []string{imagetest.OpenAI, imagetest.Anthropic} {
		for _, c := range imagetest.Cases {
			b.Run(layout+"/"+c.Name, func(b *testing.B) {
				in := filepath.Join(dir, layout+"-"+c.Name+".jsonl")
				if err := os.WriteFile(in, imagetest.File(layout, c.Old, records), 0o644); err != nil {
					b.Fatal(err)
				}
				outcomes := in + ".outcomes"
				args := append([]string{"compress", "--quiet", "--workers", "1", "--input", in,
					"--output", in + ".out", "--outcomes", outcomes}, c.Args...)
				allocs(args)
				data, err := os.ReadFile(outcomes)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Check(data, records); err != nil {
					b.Fatal(err)
				}
				var n, total uint64
				for b.Loop() {
					total += allocs(args)
					n++
				}
				b.ReportMetric(float64(total/n), "B/run")
				b.ReportMetric((float64(total/n)-float64(fixed))/records/img, "x-image")
			})
		}
	}
}
