package crash

import (
	"errors"
	"strings"
	"testing"
)

func panics(v any) (err error) {
	defer Recover(&err)
	panic(v)
}

func TestRecoverKeepsValueAndStack(t *testing.T) {
	err := panics("boom")
	e := As(err)
	if e == nil {
		t.Fatalf("err %v is no *Error", err)
	}
	if e.Value != "boom" || !strings.Contains(string(e.Stack), "panics") {
		t.Fatalf("value %v, stack %q", e.Value, e.Stack)
	}
	if !strings.HasPrefix(err.Error(), "internal error: boom") {
		t.Fatalf("message %q", err)
	}
}

func TestRecoverUnwrapsRuntimeErrors(t *testing.T) {
	err := func() (err error) {
		defer Recover(&err)
		var s []int
		_ = s[3]
		return nil
	}()
	var re interface{ RuntimeError() }
	if !errors.As(err, &re) {
		t.Fatalf("%v does not unwrap to the runtime error", err)
	}
}

func TestNoPanicLeavesErr(t *testing.T) {
	want := errors.New("x")
	err := func() (err error) {
		defer Recover(&err)
		return want
	}()
	if err != want {
		t.Fatalf("err %v", err)
	}
}
