//go:build unix

package tokenize

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pathologicalInputs are 1 MiB inputs for the normalizer and
// pre-tokenizer kinds: ordinary text to compare with, and the shapes
// that make a splitter or a merge superlinear if anything does.
func pathologicalInputs(n int) []struct{ name, text string } {
	rng := rand.New(rand.NewPCG(5, 5))
	words := strings.Fields("the quick brown fox jumps over the lazy dog; it's 12 o'clock, and we'll see—maybe. " +
		"func main() { fmt.Println(\"héllo\") } // 東京 ﬁn x² ＡＢ Ümlaut İstanbul")
	var ord strings.Builder
	for ord.Len() < n {
		ord.WriteString(words[rng.IntN(len(words))])
		ord.WriteByte(" \n\t "[rng.IntN(4)])
	}
	rnd := make([]byte, n)
	for i := range rnd {
		rnd[i] = byte(rng.Uint32())
	}
	lower := make([]byte, n)
	for i := range lower {
		lower[i] = 'a' + byte(rng.IntN(26))
	}
	return []struct{ name, text string }{
		{"ordinary", ord.String()[:n]},
		{"one_letter", strings.Repeat("a", n)},
		{"spaces", strings.Repeat(" ", n)},
		{"metaspace", strings.Repeat("\u2581", n/3)},
		{"random_bytes", string(rnd)},
		{"no_spaces", string(lower)},
		{"punctuation", strings.Repeat("!?.,", n/4)},
		{"digits", strings.Repeat("1234567890", n/10)},
	}
}

// BenchmarkHFKindsPathological counts each pathological input, at 256 KiB
// and at 1 MiB, with Llama-3's tokenizer (for reference) and with a
// tokenizer of each new normalizer or pre-tokenizer kind (warm: one count
// first). Run with
//
//	go test ./tokenize -run '^$' -bench HFKindsPathological -benchtime 5x
//
// and compare each input's time with "ordinary", and each 1 MiB time with
// four times the 256 KiB one (bench/README.md). Besides ns/op (wall), each
// reports its least process CPU time per count (best-cpu-ms/op).
func BenchmarkHFKindsPathological(b *testing.B) {
	variants := loadKindsVariants(b)
	for _, key := range []string{"llama3", "claude", "gpt4o", "n_llama2", "n_nfkc_lower_strip", "p_metaspace_always",
		"p_gemma", "p_split_re_mergedwithnext_inv", "p_whitespace", "p_punctuation_contiguous", "p_bytelevel_then_digits"} {
		var tk *HFTokenizer
		if key == "llama3" {
			tk = hfTokenizer(b, key)
		} else {
			tk = kindsTokenizer(b, variants[key])
		}
		for _, n := range []int{1 << 18, 1 << 20} {
			for _, in := range pathologicalInputs(n) {
				b.Run(fmt.Sprintf("%s/%s/%dK", key, in.name, n>>10), func(b *testing.B) {
					tk.Count(in.text)
					b.SetBytes(int64(len(in.text)))
					best := time.Duration(1 << 62)
					for b.Loop() {
						c0 := processCPU()
						tk.Count(in.text)
						best = min(best, processCPU()-c0)
					}
					// The machine is shared: the least process CPU time
					// of a count is steadier than wall time.
					b.ReportMetric(float64(best.Microseconds())/1000, "best-cpu-ms/op")
				})
			}
		}
	}
}

// processCPU is the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
