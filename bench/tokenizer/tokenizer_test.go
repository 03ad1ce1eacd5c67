package tokenizer

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/tokenize"
)

var (
	corpusOnce  sync.Once
	corpusTexts []string
	corpusSize  int64
)

func corpus(b *testing.B) []string {
	corpusOnce.Do(func() {
		texts, source, err := Corpus()
		if err != nil {
			b.Fatal(err)
		}
		corpusTexts = texts
		for _, t := range texts {
			corpusSize += int64(len(t))
		}
		b.Logf("corpus: %s, %d texts, %d bytes", source, len(texts), corpusSize)
	})
	return corpusTexts
}

// cpuTime is the process's user+system CPU time. The machine is shared, so
// the benchmarks also report throughput per CPU-second ("cpuMB/s"), which
// other processes competing for the cores do not dilute the way they dilute
// wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(corpusSize)*float64(b.N)/1e6/d.Seconds(), "cpuMB/s")
	}
}

func encoding(b *testing.B, name string) tokenize.Counter {
	c, err := tokenize.New(name)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCount counts the whole corpus per iteration: one goroutine, then
// two goroutines sharing the texts.
func BenchmarkCount(b *testing.B) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		b.Run(name+"/1g", func(b *testing.B) {
			texts, enc := corpus(b), encoding(b, name)
			b.SetBytes(corpusSize)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				for _, t := range texts {
					enc.Count(t)
				}
			}
			reportCPU(b, cpu)
		})
		b.Run(name+"/2g", func(b *testing.B) {
			texts, enc := corpus(b), encoding(b, name)
			b.SetBytes(corpusSize)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				// Texts are handed out in small batches from a shared
				// counter, as a worker pool would, so one long text does
				// not leave the other goroutine idle.
				var next atomic.Int64
				var wg sync.WaitGroup
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := int(next.Add(8)) - 8
							if i >= len(texts) {
								return
							}
							for _, t := range texts[i:min(i+8, len(texts))] {
								enc.Count(t)
							}
						}
					}()
				}
				wg.Wait()
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkMemo compares counting every text directly with counting through
// Memo at several thresholds, on the corpus (whose system prompts and tool
// schemas repeat across records).
func BenchmarkMemo(b *testing.B) {
	texts, enc := corpus(b), encoding(b, "o200k_base")
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(corpusSize)
		for b.Loop() {
			for _, t := range texts {
				enc.Count(t)
			}
		}
	})
	b.Run("memo", func(b *testing.B) {
		b.SetBytes(corpusSize)
		var m *tokenize.MemoCounter
		for b.Loop() {
			m = tokenize.Memo(enc, 4096) // fresh per pass: measures in-run repeats
			for _, t := range texts {
				m.Count(t)
			}
		}
		hits, misses := m.Stats()
		b.ReportMetric(float64(hits)/float64(max(1, hits+misses)), "hitrate")
	})
}

// TestCorpusCountsAgree is a cheap guard that Count equals len(Encode) on
// the whole benchmark corpus.
func TestCorpusCountsAgree(t *testing.T) {
	texts, _, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		texts = texts[:min(len(texts), 200)]
	}
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		c, err := tokenize.New(name)
		if err != nil {
			t.Fatal(err)
		}
		enc := c.(*tokenize.Encoding)
		for i, s := range texts {
			if n, ids := enc.Count(s), enc.Encode(s); n != len(ids) {
				t.Fatalf("%s text %d: Count %d != len(Encode) %d", name, i, n, len(ids))
			}
		}
	}
}

// BenchmarkMemoBySize measures, per text size, counting directly against a
// memo hit and a memo miss (hash, lock, copy, insert on top of counting).
// It is what MemoMinBytes was chosen from.
func BenchmarkMemoBySize(b *testing.B) {
	enc := encoding(b, "o200k_base")
	base := corpus(b)
	for _, size := range []int{tokenize.MemoMinBytes, 1024, 16384} {
		var texts []string
		seen := map[string]bool{}
		for _, t := range base {
			if len(t) >= size && !seen[t[:size]] {
				seen[t[:size]] = true
				texts = append(texts, t[:size])
			}
			if len(texts) == 512 {
				break
			}
		}
		b.Run(fmt.Sprintf("%d/direct", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				enc.Count(texts[i%len(texts)])
			}
		})
		b.Run(fmt.Sprintf("%d/memo_hit", size), func(b *testing.B) {
			m := tokenize.Memo(enc, 4096)
			for _, t := range texts {
				m.Count(t)
			}
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				m.Count(texts[i%len(texts)])
			}
		})
		b.Run(fmt.Sprintf("%d/memo_miss", size), func(b *testing.B) {
			m := tokenize.Memo(enc, 32) // 1 entry per shard generation: nearly always a miss
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				m.Count(texts[i%len(texts)])
			}
		})
	}
}

// BenchmarkCountSP counts the corpus with the SentencePiece-style BPE
// tokenizer.json files (testdata/hf: npm ci there first), one goroutine.
func BenchmarkCountSP(b *testing.B) {
	for _, m := range []string{"llama2", "gemma3", "gemini"} {
		b.Run(m, func(b *testing.B) {
			path := "../../tokenize/testdata/hf/node_modules/@lenml/tokenizer-" + m + "/models/tokenizer.json"
			if _, err := os.Stat(path); err != nil {
				b.Skipf("%s: npm ci --prefix tokenize/testdata/hf first", err)
			}
			texts, enc := corpus(b), encoding(b, path)
			b.SetBytes(corpusSize)
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				for _, t := range texts {
					enc.Count(t)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
