package jsonx

import "testing"

// Python 3: repr(x) for each x.
func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 1e-5: "1e-05",
		0.0001: "0.0001", -2.5: "-2.5", 123456789.125: "123456789.125",
	} {
		if got := PyFloat(f); got != want {
			t.Errorf("PyFloat(%v) = %s, want %s", f, got, want)
		}
	}
}
