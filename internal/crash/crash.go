// Package crash turns a panic, a bug of ours, into an error that says so:
// [Recover] in a deferred call stores an [*Error] holding the panic's value
// and the goroutine's stack in the function's error result, so that a
// panic in any goroutine of a run ends the run as a failure (exit 1, "internal
// error: … please report") instead of killing the process with exit 2,
// which the CLI documents as a usage mistake. The CLI writes the stack
// to a file for the report. Pure: no I/O.
//
// Every goroutine the record path starts defers Recover (pipeline.Run's
// reader, writer and workers), and so do the CLI's run and job's runner, the
// two places a panic of the main goroutine passes through.
package crash

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Error is a recovered panic.
type Error struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack, from debug.Stack
	// Dir is the run directory when the panic happened in a run that has
	// one (where the CLI writes the stack); "" otherwise.
	Dir string
}

func (e *Error) Error() string {
	return fmt.Sprintf("internal error: %v (a bug in trajcompress: please report it with the stack trace)", e.Value)
}

// Unwrap returns the panic's value when it is an error (a runtime error
// such as an index out of range), else nil.
func (e *Error) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Recover turns a panic of its goroutine into an *Error stored in *err
// (replacing what was there: the panic is the story). It must be the
// deferred call itself (defer crash.Recover(&err)), where recover works.
func Recover(err *error) {
	if r := recover(); r != nil { //nolint:revive // Recover is only ever deferred (the doc says so): recover runs in the deferred call
		*err = &Error{Value: r, Stack: debug.Stack()}
	}
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
