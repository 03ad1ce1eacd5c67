package summary

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// ErrFatal marks summarizer errors that must stop the whole run (bad
// credentials, exhausted quota): retrying other records cannot succeed.
var ErrFatal = errors.New("summarizer: fatal")

// TimeoutError is a time limit that ran out: "timed out after N s
// (setting)", naming the setting that controls it. It matches
// [context.DeadlineExceeded] with [errors.Is]; as a context's cause
// ([context.WithDeadlineCause]) it is what [context.Cause] reports.
type TimeoutError struct {
	After   time.Duration
	Setting string // e.g. "processing.per_trajectory_timeout"; "" names none
}

func (e *TimeoutError) Error() string {
	s := "timed out after " + Seconds(e.After) + " s"
	if e.Setting != "" {
		s += " (" + e.Setting + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// Seconds writes d in seconds, as short as it is exact to the millisecond:
// "300", "0.5", "0.25".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64)
}
