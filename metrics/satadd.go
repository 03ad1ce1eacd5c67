package metrics

import "math"

// addSat adds v to *dst, saturating at the int64 limits instead of
// wrapping: the token totals of a run are sums over its records, and no
// input (however many records, however large their counts) may turn a
// total negative. Saturation keeps Merge exact for the counts that are
// never negative (every token total but the saved-tokens sum): the
// saturated sum of non-negative values is min(sum, MaxInt64) whatever
// their order.
func addSat(dst *int64, v int64) {
	s := *dst + v
	switch {
	case v > 0 && s < *dst:
		s = math.MaxInt64
	case v < 0 && s > *dst:
		s = math.MinInt64
	}
	*dst = s
}
