//go:build race

package tokenize

// raceEnabled: the test binary runs under the race detector (make test's
// first pass, go test -race -short). sync.Pool drops items at random
// there, so pooled paths allocate; and the single-goroutine goldens and
// property checks take a sample (raceSample).
const raceEnabled = true
