package outcome

import "testing"

func TestIndexRoundTrip(t *testing.T) {
	seen := map[Outcome]bool{}
	for i, o := range All() {
		if o == "" || seen[o] {
			t.Fatalf("All()[%d] = %q: empty or repeated", i, o)
		}
		seen[o] = true
		if o.Index() != i {
			t.Errorf("%s.Index() = %d, want %d", o, o.Index(), i)
		}
	}
	if Outcome("nope").Index() != -1 {
		t.Error("unknown outcome has an index")
	}
	seenR := map[Reason]bool{}
	for i, r := range AllReasons() {
		if r == "" || seenR[r] {
			t.Fatalf("AllReasons()[%d] = %q: empty or repeated", i, r)
		}
		seenR[r] = true
		if r.Index() != i {
			t.Errorf("%s.Index() = %d, want %d", r, r.Index(), i)
		}
	}
	if Reason("nope").Index() != -1 {
		t.Error("unknown reason has an index")
	}
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
