package outcome

import "testing"

// checkIndex checks that list has no empty or repeated value and that
// index gives each value's position, and -1 for an unknown one.
func checkIndex[T ~string](t *testing.T, list []T, index func(T) int) {
	t.Helper()
	seen := map[T]bool{}
	for i, v := range list {
		if v == "" || seen[v] {
			t.Fatalf("list[%d] = %q: empty or repeated", i, v)
		}
		seen[v] = true
		if got := index(v); got != i {
			t.Errorf("%s.Index() = %d, want %d", v, got, i)
		}
	}
	if index("nope") != -1 {
		t.Error("unknown value has an index")
	}
}

func TestIndex(t *testing.T) {
	all, reasons := All(), AllReasons()
	checkIndex(t, all[:], Outcome.Index)
	checkIndex(t, reasons[:], Reason.Index)
}

func TestPredicates(t *testing.T) {
	for _, tc := range []struct {
		o                                        Outcome
		failed, compressed, unchanged, overLimit bool
	}{
		{SkippedUnderTarget, false, false, true, false},
		{Compressed, false, true, false, false},
		{CompressedOverLimit, true, true, false, true},
		{Uncompressible, true, false, true, true},
		{SummaryFailed, false, false, true, true},
		{Invalid, false, false, false, false},
	} {
		t.Run(string(tc.o), func(t *testing.T) {
			if got := tc.o.FailedToFit(); got != tc.failed {
				t.Errorf("FailedToFit = %v", got)
			}
			if got := tc.o.WasCompressed(); got != tc.compressed {
				t.Errorf("WasCompressed = %v", got)
			}
			if got := tc.o.Unchanged(); got != tc.unchanged {
				t.Errorf("Unchanged = %v", got)
			}
			if got := tc.o.OverLimit(); got != tc.overLimit {
				t.Errorf("OverLimit = %v", got)
			}
		})
	}
}
