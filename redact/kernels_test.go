package redact

import (
	"os"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// requireAVX512Env, set to 1, makes the tests of the AVX-512 and AVX2
// kernels fail instead of skipping when this CPU or build does not run
// them (make test sets it where /proc/cpuinfo shows AVX-512 VBMI), so a
// kernel that silently stopped being used fails CI.
const requireAVX512Env = "TRAJCOMPRESS_REQUIRE_AVX512"

var (
	kernelMu        sync.Mutex
	kernelRedactors = map[*kernel]*Redactor{}
)

// onKernel returns a Redactor of the built-in rules that runs kern (one
// per kernel, compiled once), after requireKernel.
func onKernel(t testing.TB, kern *kernel) *Redactor {
	t.Helper()
	requireKernel(t, kern)
	kernelMu.Lock()
	defer kernelMu.Unlock()
	r := kernelRedactors[kern]
	if r == nil {
		var err error
		if r, err = newOn(kern); err != nil {
			t.Fatal(err)
		}
		kernelRedactors[kern] = r
	}
	return r
}

// requireKernel skips the test when kern does not run here, or fails it
// when the environment asks for the assembly kernels (requireAVX512Env)
// and the build has them (amd64, not purego).
func requireKernel(t testing.TB, kern *kernel) {
	t.Helper()
	if kern.ok {
		return
	}
	if os.Getenv(requireAVX512Env) == "1" && assemblyBuilt {
		t.Fatalf("%s=1 but this CPU does not run the %s kernel", requireAVX512Env, kern.name)
		return
	}
	t.Skipf("no %s on this machine (or build)", kern.name)
}

// kernelNamed is the kernel called name.
func kernelNamed(name string) *kernel {
	for _, k := range kernels {
		if k.name == name {
			return k
		}
	}
	panic("no kernel " + name)
}

// TestKernels: the last kernel is plain Go and always runs; Default runs
// the first kernel that does; with the environment asking for AVX-512,
// every kernel runs, and the filter takes the default keywords.
func TestKernels(t *testing.T) {
	last := kernels[len(kernels)-1]
	if !last.ok || last.avx512 || last.avx2 {
		t.Fatalf("the last kernel %+v is not plain Go", last)
	}
	if got := Default().kw.kern; got != bestKernel() {
		t.Fatalf("Default runs %s, the best kernel here is %s", got.name, bestKernel().name)
	}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			r := onKernel(t, k)
			if k.avx512 && !r.kw.filterOK {
				t.Fatal("the default keywords do not fit the AVX-512 filter")
			}
		})
	}
}

// TestRequireKernel: a kernel this CPU does not run skips its tests, or
// fails them when the environment asks for the assembly kernels in a
// build that has them.
func TestRequireKernel(t *testing.T) {
	missing := &kernel{name: "missing"}
	for _, env := range []string{"", "1"} {
		t.Setenv(requireAVX512Env, env)
		f := &testenv.Recorder{TB: t}
		requireKernel(f, missing)
		wantFail := env == "1" && assemblyBuilt
		if f.FatalCalled != wantFail || f.SkipCalled == wantFail {
			t.Errorf("%s=%q: failed %v, skipped %v; want failed %v", requireAVX512Env, env, f.FatalCalled, f.SkipCalled, wantFail)
		}
		f = &testenv.Recorder{TB: t}
		requireKernel(f, kernelNamed("purego"))
		if f.FatalCalled || f.SkipCalled {
			t.Errorf("%s=%q: the plain Go kernel not run", requireAVX512Env, env)
		}
	}
}
