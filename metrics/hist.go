package metrics

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
)

// subBuckets is the number of linear sub-buckets per power of two. Values
// below 2·subBuckets are recorded exactly; above, a bucket [low, low+w) has
// w/low <= 1/subBuckets.
const subBuckets = 128

// Hist is a mergeable log-linear (HDR-style) histogram of non-negative
// integers with an exact count and maximum.
//
// Values 0..255 have their own bucket. A value v >= 256 falls in the
// power of two [2^k, 2^(k+1)) split into 128 equal sub-buckets of width
// w = 2^(k−7); [Hist.Quantile] reports the midpoint low + w/2 of the bucket,
// so its relative error is at most 1/256 (< 0.4%, well under 1%). Memory is
// at most 57 buckets × 128 int64 (about 58 KiB) whatever the number of
// values, and grows only as large values are seen.
//
// The zero Hist is empty and ready to use. A Hist is not safe for concurrent
// use; give each goroutine its own and [Hist.Merge] them.
type Hist struct {
	counts []int64 // counts[bucket(v)]; len = 1 + the largest bucket seen
	n      int64
	max    int64
}

// bucket returns the bucket index of v >= 0.
func bucket(v int64) int {
	if v < subBuckets {
		return int(v)
	}
	k := bits.Len64(uint64(v)) - 1 // 2^k <= v < 2^(k+1), k >= 7
	shift := k - 7
	sub := int(v>>shift) - subBuckets // 0..127
	return (k-6)*subBuckets + sub
}

// bucketRange returns the lowest value and the width of bucket i.
func bucketRange(i int) (low, width int64) {
	if i < subBuckets {
		return int64(i), 1
	}
	k := i/subBuckets + 6
	sub := int64(i % subBuckets)
	return (subBuckets + sub) << (k - 7), 1 << (k - 7)
}

// Add records v. A negative v is recorded as 0.
func (h *Hist) Add(v int64) {
	v = max(v, 0)
	b := bucket(v)
	if b >= len(h.counts) {
		h.counts = append(h.counts, make([]int64, b+1-len(h.counts))...)
	}
	h.counts[b]++
	h.n++
	h.max = max(h.max, v)
}

// Merge adds every value recorded in o to h. The result is exactly the
// histogram of both value sets, whatever the merge order. o is not modified.
func (h *Hist) Merge(o *Hist) {
	if len(o.counts) > len(h.counts) {
		h.counts = append(h.counts, make([]int64, len(o.counts)-len(h.counts))...)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count returns the number of values recorded.
func (h *Hist) Count() int64 { return h.n }

// Max returns the exact largest value recorded, 0 when empty.
func (h *Hist) Max() int64 { return h.max }

// Quantile returns the perMille/1000 quantile: the value at rank
// r = ceil(perMille·N/1000) (at least 1) of the N recorded values in
// ascending order, so Quantile(500) is the lower median and Quantile(1000)
// the maximum. The value is exact below 256 and otherwise the midpoint of its
// bucket (relative error <= 1/256), never above [Hist.Max]; rank N gives the
// exact maximum. It returns 0 when the histogram is empty; perMille is
// clamped to [0, 1000].
func (h *Hist) Quantile(perMille int) int64 {
	if h.n == 0 {
		return 0
	}
	perMille = min(max(perMille, 0), 1000)
	rank := max((h.n*int64(perMille)+999)/1000, 1)
	if rank == h.n {
		return h.max // the largest value is known exactly
	}
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, w := bucketRange(i)
			return min(low+w/2, h.max)
		}
	}
	return h.max // unreachable: the counts sum to n
}

// equal reports whether h and o hold the same values.
func (h *Hist) equal(o *Hist) bool {
	a, b := h.counts, o.counts
	for len(a) > 0 && a[len(a)-1] == 0 {
		a = a[:len(a)-1]
	}
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return h.n == o.n && h.max == o.max && slices.Equal(a, b)
}

// Bin is one non-empty bucket of a [Hist]: the values Low..Low+Width−1
// and how many were recorded.
type Bin struct {
	Low, Width, Count int64
}

// Bins returns the non-empty buckets of h in ascending order. Their counts
// sum to [Hist.Count]; the last one holds [Hist.Max].
func (h *Hist) Bins() []Bin {
	var out []Bin
	for i, c := range h.counts {
		if c > 0 {
			low, w := bucketRange(i)
			out = append(out, Bin{Low: low, Width: w, Count: c})
		}
	}
	return out
}

// histJSON is the JSON form of a Hist: the count, the exact max, and the
// non-empty buckets as [low, count] pairs in ascending order of low (the
// bucket's width follows from low: 1 below 256, else 1/128 of the power of
// two it lies in).
type histJSON struct {
	Count int64      `json:"count"`
	Max   int64      `json:"max"`
	Bins  [][2]int64 `json:"bins"`
}

// MarshalJSON implements [json.Marshaler]: {"count": N, "max": M, "bins":
// [[low, count], ...]}, only the non-empty buckets, in ascending order.
// [Hist.UnmarshalJSON] reads it back exactly, so histograms written by
// several runs (shards) can be parsed and merged with [Hist.Merge].
func (h *Hist) MarshalJSON() ([]byte, error) {
	j := histJSON{Count: h.n, Max: h.max, Bins: [][2]int64{}}
	for _, b := range h.Bins() {
		j.Bins = append(j.Bins, [2]int64{b.Low, b.Count})
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements [json.Unmarshaler] for the form
// [Hist.MarshalJSON] writes. It refuses, naming the bin, a low that is not
// the start of a bucket, bins out of order or repeated, a count below 1,
// counts that do not sum to count, and a max outside the last bin.
func (h *Hist) UnmarshalJSON(b []byte) error {
	var j histJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("metrics: histogram: %w", err)
	}
	var out Hist
	var sum int64
	prev := -1
	for k, bin := range j.Bins {
		low, c := bin[0], bin[1]
		if low < 0 {
			return fmt.Errorf("metrics: histogram: bin %d: negative low %d", k, low)
		}
		i := bucket(low)
		if l, _ := bucketRange(i); l != low {
			return fmt.Errorf("metrics: histogram: bin %d: %d is not where a bucket starts (that bucket starts at %d)", k, low, l)
		}
		if i <= prev {
			return fmt.Errorf("metrics: histogram: bin %d: low %d is not above the previous bin's", k, low)
		}
		if c < 1 {
			return fmt.Errorf("metrics: histogram: bin %d: count %d (only non-empty bins are listed)", k, c)
		}
		if sum += c; sum < 0 {
			return fmt.Errorf("metrics: histogram: bin %d: counts overflow", k)
		}
		if i >= len(out.counts) {
			out.counts = append(out.counts, make([]int64, i+1-len(out.counts))...)
		}
		out.counts[i] = c
		prev = i
	}
	if sum != j.Count {
		return fmt.Errorf("metrics: histogram: bins hold %d values, count says %d", sum, j.Count)
	}
	switch {
	case j.Count == 0 && j.Max != 0:
		return fmt.Errorf("metrics: histogram: max %d with no values", j.Max)
	case j.Count > 0 && (j.Max < 0 || bucket(j.Max) != prev):
		return fmt.Errorf("metrics: histogram: max %d is not in the last bin", j.Max)
	}
	out.n, out.max = j.Count, j.Max
	*h = out
	return nil
}
