package summary

import (
	"testing"

	"github.com/trajcompress/trajcompress/traj"
)

func TestSummaryHelpers(t *testing.T) {
	s := "\n" + Prefix + " did A, then B.\n" + EndMarker + "\ntrailing"
	if !IsSummary(s) || IsSummary("text "+Prefix) || SummaryBody(s) != "did A, then B." {
		t.Fatalf("IsSummary/SummaryBody wrong: %q", SummaryBody(s))
	}
	turns := []traj.Turn{{Text: "sys"}, {Text: "ask"}, {Text: Prefix + " old"}, {Text: "a"}, {Text: "b"}, {Text: "c"}}
	tests := []struct{ minLo, lo, hi, want int }{
		{2, 3, 5, 2},  // the earlier summary just before the region is taken in
		{2, 4, 6, 2},  // also with turns between
		{3, 4, 6, 4},  // the summary is in the protected head: left alone
		{2, 2, 5, 2},  // already inside
		{2, 5, 5, 5},  // empty region
		{0, 9, 10, 9}, // out of range
	}
	for _, tt := range tests {
		if got := WidenToSummary(turns, tt.minLo, tt.lo, tt.hi); got != tt.want {
			t.Errorf("WidenToSummary(%d, %d, %d) = %d, want %d", tt.minLo, tt.lo, tt.hi, got, tt.want)
		}
	}
}
