//go:build race

package main

// raceEnabled: the race detector's shadow memory multiplies a process's
// resident memory (2-4× measured on the hostile-template runs).
const raceEnabled = true
