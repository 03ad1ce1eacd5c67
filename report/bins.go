package report

import (
	"math"
	"math/bits"
	"sort"

	"github.com/trajcompress/trajcompress/metrics"
)

// maxDisplayBins bounds the bars of one series on the length chart.
const maxDisplayBins = 48

// displayBin is one bar position of the length chart: the token counts
// Low..High−1 and, per series, how many records had one of them.
type displayBin struct {
	Low, High int64
	Counts    []int64
}

// edgesPerOctave are the candidate resolutions of the chart, finest first:
// display edges at 2^k·(1 + j/b). Each divides 128, the histogram's
// sub-buckets per power of two, so every histogram bucket lies inside one
// display bin and a bin's count is an exact sum of the metrics' counts.
var edgesPerOctave = []int{8, 4, 2, 1}

// edges returns the display edges of resolution b from the one at or below
// lo up to the first above hi: 0, 1, then 2^k + j·2^k/b where that is an
// integer (below 2^3 there are fewer than b integers per octave).
func edges(b int, lo, hi int64) []int64 {
	var all []int64
	all = append(all, 0)
	for k := 0; k < 62; k++ {
		p := int64(1) << k
		for j := int64(0); j < int64(b); j++ {
			if p*j%int64(b) == 0 {
				all = append(all, p+p*j/int64(b))
			}
		}
		if p > hi {
			break
		}
	}
	// Keep [last edge <= lo, first edge > hi].
	i := sort.Search(len(all), func(i int) bool { return all[i] > lo }) - 1
	j := sort.Search(len(all), func(i int) bool { return all[i] > hi })
	return dedupe(all[max(i, 0) : min(j, len(all)-1)+1])
}

func dedupe(s []int64) []int64 {
	out := s[:0:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// displayBins groups the histograms' buckets into log-scaled bins covering
// every recorded value and mark (the target), at the finest resolution
// that keeps at most maxDisplayBins bins. It returns nil when every
// histogram is empty.
func displayBins(hists []*metrics.Hist, marks ...int64) []displayBin {
	lo, hi := int64(math.MaxInt64), int64(-1)
	for _, h := range hists {
		if h == nil || h.Count() == 0 {
			continue
		}
		bins := h.Bins()
		lo = min(lo, bins[0].Low)
		hi = max(hi, h.Max())
	}
	if hi < 0 {
		return nil
	}
	for _, m := range marks {
		if m > 0 {
			lo, hi = min(lo, m), max(hi, m)
		}
	}
	var e []int64
	for _, b := range edgesPerOctave {
		if e = edges(b, lo, hi); len(e)-1 <= maxDisplayBins {
			break
		}
	}
	out := make([]displayBin, len(e)-1)
	for i := range out {
		out[i] = displayBin{Low: e[i], High: e[i+1], Counts: make([]int64, len(hists))}
	}
	for s, h := range hists {
		if h == nil {
			continue
		}
		for _, b := range h.Bins() {
			i := sort.Search(len(e), func(i int) bool { return e[i] > b.Low }) - 1
			out[i].Counts[s] += b.Count
		}
	}
	return out
}

// log2 is the chart's x coordinate of a token count: 0 is drawn at ½.
func log2(v int64) float64 {
	if v <= 0 {
		return -1
	}
	if v&(v-1) == 0 {
		return float64(bits.Len64(uint64(v)) - 1)
	}
	return math.Log2(float64(v))
}
