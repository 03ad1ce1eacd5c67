//go:build race

package traj

// raceEnabled: the race detector's instrumentation allocates on its
// own, so allocation counts are checked only without -race.
const raceEnabled = true
