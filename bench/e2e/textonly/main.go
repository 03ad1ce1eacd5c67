// Command textonly measures the tokenizer alone on the turn texts of a
// JSONL corpus, for the end-to-end benchmark (bench/e2e/run.sh): it reads
// every record, extracts its turn texts (not timed), then counts them with
// the raw tokenizer (no memo) on N goroutines (timed) and prints the
// turn-text bytes and MB/s. Texts are held in memory in batches of -batch
// MB so the corpus does not have to fit.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

func main() {
	enc := flag.String("tokenizer", "o200k_base", "encoding")
	workers := flag.Int("workers", 2, "goroutines counting")
	batchMB := flag.Int("batch", 256, "MB of turn text held per timed batch")
	memo := flag.Int("memo", 0, "count through tokenize.Memo with this many entries (0: no memo)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed counting to this file")
	flag.Parse()
	var c tokenize.Counter
	c, err := tokenize.New(*enc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *memo > 0 {
		c = tokenize.Memo(c, *memo)
	}
	var textBytes, tokens int64
	var timed time.Duration
	for _, path := range flag.Args() {
		r, err := format.Open(path, format.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			var texts []string
			size := 0
			for size < *batchMB<<20 {
				line, n, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				rec, err := traj.Decode(line, traj.Pos{File: path, Line: n}, traj.Schema{})
				if err != nil {
					continue // rejected lines are not tokenized end to end either
				}
				for _, t := range rec.Turns {
					texts = append(texts, t.Text)
					size += len(t.Text)
				}
			}
			if len(texts) == 0 {
				break
			}
			if *cpuprofile != "" && timed == 0 {
				f, err := os.Create(*cpuprofile)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile() //nolint:revive // defer in a loop: on the first timed round only, to stop at exit
			}
			start := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			for w := range *workers {
				wg.Go(func() {
					n := 0
					for i := w; i < len(texts); i += *workers {
						n += c.Count(texts[i])
					}
					mu.Lock()
					tokens += int64(n)
					mu.Unlock()
				})
			}
			wg.Wait()
			timed += time.Since(start)
			textBytes += int64(size)
		}
		r.Close()
	}
	fmt.Printf("tokenizer-only %s workers=%d text_bytes=%d tokens=%d seconds=%.2f MBps=%.1f\n",
		*enc, *workers, textBytes, tokens, timed.Seconds(), float64(textBytes)/1e6/timed.Seconds())
}
