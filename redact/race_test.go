//go:build race

package redact

// raceEnabled: sync.Pool drops items at random under -race, so the
// pooled scratch allocates there.
const raceEnabled = true
