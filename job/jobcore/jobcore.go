// Package jobcore is what a runner of records needs from a compress run
// besides its outputs: the record path of a config ([NewCompressor],
// [Compressor], [BudgetOf]), the options inputs are opened with, the
// lines of the rejects file, the config and input fingerprints, and the
// walk of an input directory. Package job runs them on its tasks; the
// Apache Beam pipeline (module beam/) runs them on its workers, so that
// both write the same bytes. It holds no run state and writes no file.
package jobcore

import "fmt"

// UsageError is a mistake in the spec or configuration.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

func usagef(f string, a ...any) error { return UsageError{Err: fmt.Errorf(f, a...)} }

// Sample is a reproducible sample: Percent (0 < p <= 100) of each file's
// records, chosen from Seed and the file's index, in input order.
type Sample struct {
	Percent float64
	Seed    uint64
}
