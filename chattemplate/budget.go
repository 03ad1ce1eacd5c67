package chattemplate

import (
	"context"
	"fmt"

	"github.com/ardanlabs/jinja"
)

// Budget bounds one render, so that no template (they come from third-party
// model repositories: untrusted input) can run without end, ignore the
// run's cancellation or exhaust the process's memory. A render over its
// budget fails with an ErrTemplate that wraps jinja.ErrBudget and says
// which bound it passed: "template exceeded N steps" or "template output
// over N bytes"; package pipeline reports the record as refused by the
// template (uncompressible, reason chat_template) with that message.
//
// Steps are the engine's evaluation steps: one per template node executed
// ({{ }}, text, {% if %}, {% set %}, …), one per loop iteration, one per
// call of a filter, function, method or macro, and one per KiB of string
// (or 64 items of a list) a call or comparison scans. Bytes are the bytes
// of every string and list the render makes and of its output, counted
// cumulatively and checked before each allocation (third_party/jinja's
// budget.go). The context passed to RenderContext is polled every 1024
// steps.
//
// A zero field takes its default, sized from the record: n the bytes of
// the messages' and tools' JSON, DefaultSteps(n) and DefaultBytes(n).
type Budget struct {
	Steps int64 // the most evaluation steps a render takes (0: DefaultSteps)
	Bytes int64 // the most bytes of strings, lists and output it makes (0: DefaultBytes)
}

// The default budget of a render of n bytes of JSON: a constant for the
// template's own work (its framing, its tool schemas printed, a date)
// plus a few times the record, what printing it and its parts takes.
const (
	BaseSteps    = 2_000_000
	StepsPerByte = 4
	BaseBytes    = 64 << 20
	BytesPerByte = 16
)

// DefaultSteps is the step budget of a render of n bytes of JSON.
func DefaultSteps(n int) int64 { return BaseSteps + StepsPerByte*int64(n) }

// DefaultBytes is the byte budget of a render of n bytes of JSON.
func DefaultBytes(n int) int64 { return BaseBytes + BytesPerByte*int64(n) }

// Check says what is wrong with b: a negative bound.
func (b Budget) Check() error {
	if b.Steps < 0 || b.Bytes < 0 {
		return fmt.Errorf("chat template budget: steps and bytes must be 0 (sized from the record) or positive, not %d and %d", b.Steps, b.Bytes)
	}
	return nil
}

// limits are the engine's limits for a render of n bytes of JSON under
// ctx.
func (b Budget) limits(ctx context.Context, n int) jinja.Limits {
	l := jinja.Limits{Steps: b.Steps, Bytes: b.Bytes}
	if l.Steps == 0 {
		l.Steps = DefaultSteps(n)
	}
	if l.Bytes == 0 {
		l.Bytes = DefaultBytes(n)
	}
	if ctx != nil && ctx.Done() != nil {
		l.Ctx = ctx
	}
	return l
}

// budgetUsed, when set (by a test), is told what each render of n bytes of
// JSON used.
var budgetUsed func(n int, u jinja.Usage)
