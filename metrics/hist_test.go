package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// exactQuantile is the value at rank ceil(pm·N/1000) of sorted.
func exactQuantile(sorted []int64, pm int) int64 {
	n := int64(len(sorted))
	rank := max((n*int64(pm)+999)/1000, 1)
	return sorted[rank-1]
}

func TestHistBuckets(t *testing.T) {
	// every bucket's range must contain exactly the values mapped to it,
	// and consecutive buckets must tile the integers without gaps
	next := int64(0)
	for i := 0; i < 57*subBuckets; i++ {
		low, w := bucketRange(i)
		if low != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, low, next)
		}
		if bucket(low) != i || bucket(low+w-1) != i {
			t.Fatalf("bucket %d [%d,%d) maps back to %d/%d", i, low, low+w, bucket(low), bucket(low+w-1))
		}
		if low >= 2*subBuckets && float64(w)/float64(low) > 1.0/subBuckets {
			t.Fatalf("bucket %d width %d / low %d exceeds 1/128", i, w, low)
		}
		next = low + w
		if next < 0 { // covered all of int64
			break
		}
	}
	if got := bucket(math.MaxInt64); got != 57*subBuckets-1 {
		t.Errorf("bucket(MaxInt64) = %d, want %d", got, 57*subBuckets-1)
	}
}

func TestHistQuantileAccuracy(t *testing.T) {
	cases := []struct {
		name string
		gen  func(r *rand.Rand) int64
		n    int
	}{
		{"small_exact", func(r *rand.Rand) int64 { return r.Int64N(256) }, 1000},
		{"log_uniform_to_1e7", func(r *rand.Rand) int64 { return int64(math.Exp(r.Float64() * math.Log(1e7))) }, 20000},
		{"token_like", func(r *rand.Rand) int64 { return 5000 + int64(r.NormFloat64()*3000) }, 5000},
		{"single_value", func(*rand.Rand) int64 { return 123456 }, 7},
		{"one_value", func(*rand.Rand) int64 { return 99999 }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			var h Hist
			vals := make([]int64, tc.n)
			for i := range vals {
				vals[i] = max(tc.gen(r), 0)
				h.Add(vals[i])
			}
			slices.Sort(vals)
			if h.Count() != int64(tc.n) || h.Max() != vals[len(vals)-1] {
				t.Fatalf("Count/Max = %d/%d, want %d/%d", h.Count(), h.Max(), tc.n, vals[len(vals)-1])
			}
			for _, pm := range []int{0, 1, 100, 500, 900, 990, 999, 1000} {
				want := exactQuantile(vals, pm)
				got := h.Quantile(pm)
				if want < 2*subBuckets {
					if got != want {
						t.Errorf("Quantile(%d) = %d, want exactly %d", pm, got, want)
					}
					continue
				}
				if rel := math.Abs(float64(got-want)) / float64(want); rel > 1.0/256 {
					t.Errorf("Quantile(%d) = %d, exact %d: relative error %.5f > 1/256", pm, got, want, rel)
				}
			}
			if got := h.Quantile(1000); got != vals[len(vals)-1] {
				t.Errorf("Quantile(1000) = %d, want the max %d", got, vals[len(vals)-1])
			}
		})
	}
}

func TestHistEmptyAndNegative(t *testing.T) {
	var h Hist
	if h.Quantile(500) != 0 || h.Max() != 0 || h.Count() != 0 {
		t.Errorf("empty hist: Quantile %d Max %d Count %d, want zeros", h.Quantile(500), h.Max(), h.Count())
	}
	h.Add(-5)
	if h.Quantile(500) != 0 || h.Count() != 1 {
		t.Errorf("Add(-5): Quantile %d Count %d, want 0 and 1", h.Quantile(500), h.Count())
	}
}

func TestHistMergeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var all, a, b Hist
	for i := range 5000 {
		v := int64(math.Exp(r.Float64() * 20))
		all.Add(v)
		if i%3 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	b.Merge(&a)
	if !all.equal(&b) {
		t.Fatal("merged histogram differs from the one built from all values")
	}
	for _, pm := range []int{500, 900, 990} {
		if all.Quantile(pm) != b.Quantile(pm) {
			t.Errorf("Quantile(%d): all %d, merged %d", pm, all.Quantile(pm), b.Quantile(pm))
		}
	}
}

// TestHistJSONMergeOfParsedParts: histograms written as JSON by several
// parts (shards), parsed back and merged, equal the histogram of all the
// values, and every field survives the round trip.
func TestHistJSONMergeOfParsedParts(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 15))
		var all Hist
		parts := make([]Hist, 1+r.IntN(6))
		for range r.IntN(3000) {
			v := int64(math.Exp(r.Float64() * math.Log(3e6)))
			if r.IntN(50) == 0 {
				v = r.Int64N(300) // exact region too
			}
			all.Add(v)
			parts[r.IntN(len(parts))].Add(v)
		}
		var merged Hist
		for _, i := range r.Perm(len(parts)) {
			b, err := json.Marshal(&parts[i])
			if err != nil {
				t.Fatal(err)
			}
			var p Hist
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("seed %d: parsing %s: %v", seed, b, err)
			}
			if !p.equal(&parts[i]) {
				t.Fatalf("seed %d: part %d does not round-trip: %s", seed, i, b)
			}
			merged.Merge(&p)
		}
		if !merged.equal(&all) {
			t.Fatalf("seed %d: merge of %d parsed parts differs from the whole", seed, len(parts))
		}
		a, _ := json.Marshal(&all)
		m, _ := json.Marshal(&merged)
		if !bytes.Equal(a, m) {
			t.Fatalf("seed %d: JSON of the merge differs:\n%s\n%s", seed, a, m)
		}
	}
}

func TestHistJSONForm(t *testing.T) {
	var h Hist
	for _, v := range []int64{0, 5, 5, 300, 301, 100000} {
		h.Add(v)
	}
	b, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	// 300 and 301 share the bucket [300, 302); 100000 is in [99840, 100352).
	if want := `{"count":6,"max":100000,"bins":[[0,1],[5,2],[300,2],[99840,1]]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var empty Hist
	if b, _ := json.Marshal(&empty); string(b) != `{"count":0,"max":0,"bins":[]}` {
		t.Errorf("empty: %s", b)
	}
	bins := h.Bins()
	if len(bins) != 4 || bins[2] != (Bin{Low: 300, Width: 2, Count: 2}) || bins[3].Width != 512 {
		t.Errorf("Bins() = %+v", bins)
	}
}

func TestHistUnmarshalRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"count":1,"max":301,"bins":[[301,1]]}`, "not where a bucket starts"},
		{`{"count":2,"max":9,"bins":[[9,1],[5,1]]}`, "not above the previous"},
		{`{"count":2,"max":5,"bins":[[5,1],[5,1]]}`, "not above the previous"},
		{`{"count":0,"max":0,"bins":[[5,0]]}`, "only non-empty"},
		{`{"count":3,"max":5,"bins":[[5,2]]}`, "count says 3"},
		{`{"count":2,"max":7,"bins":[[5,2]]}`, "not in the last bin"},
		{`{"count":0,"max":4,"bins":[]}`, "with no values"},
		{`{"count":1,"max":-1,"bins":[[-1,1]]}`, "negative"},
		{`{"count":"x"}`, "cannot unmarshal"},
	} {
		var h Hist
		err := json.Unmarshal([]byte(tc.in), &h)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.in, err, tc.want)
		}
	}
}
