//go:build race

package tokenize

// raceEnabled: sync.Pool drops items at random under -race, so pooled
// paths allocate there.
const raceEnabled = true
