package tokenize

import "testing"

// The package's code starts no goroutine: the race detector can only find
// something where a test shares a tokenizer between goroutines (the
// *Concurrent tests, TestHFPieceCacheExact, the fuzz targets' seeds), and
// those run whole under -race. The heavy single-goroutine goldens and
// property checks (the tokenizers' ids against Hugging Face's and
// tiktoken's, the backtracking tables, the split lemma) run 5-10 times
// slower there and find nothing the plain run does not, so under -race
// they take a sample, still through every tokenizer kind, so that the
// detector's pointer checks (checkptr, on with -race) see the unsafe code
// paths; the non-race pass of make test (go test ./tokenize, without
// -short) runs each whole.

// raceEvery is the stride of raceSample.
const raceEvery = 8

// raceSample returns every raceEvery-th element of xs (the first
// included) under -race, and xs otherwise.
func raceSample[T any](xs []T) []T {
	return everyNth(xs, raceOr(raceEvery, 1))
}

// everyNth returns every n-th element of xs, the first included.
func everyNth[T any](xs []T, n int) []T {
	if n <= 1 {
		return xs
	}
	out := make([]T, 0, len(xs)/n+1)
	for i := 0; i < len(xs); i += n {
		out = append(out, xs[i])
	}
	return out
}

// raceOr returns race under -race, and plain otherwise: the size of a
// heavy single-goroutine check.
func raceOr[T any](race, plain T) T {
	if raceEnabled {
		return race
	}
	return plain
}

// skipUnderRace skips a single-goroutine check whose cost under -race is
// a tokenizer load (33 MB of tokenizer.json and more) rather than its
// cases, saying where it runs.
func skipUnderRace(t *testing.T, what string) {
	t.Helper()
	if raceEnabled {
		t.Skipf("%s: single-goroutine, run whole by the non-race pass (go test ./tokenize); under -race its tokenizer load alone takes seconds", what)
	}
}
