package redact

// kernel is one way keywords are found and the escape view is made: the
// AVX-512 filter and escape view (filter_amd64.s), the AVX2 gram probe and
// position search (probe_amd64.s), or plain Go. A Redactor takes the first
// of kernels this CPU and build run (New); tests iterate kernels, each on
// a Redactor of its own (newOn), instead of switching a global.
type kernel struct {
	name string
	// ok: this CPU, its OS and the build (not purego, amd64) run it.
	ok bool
	// avx512: keywords found by filterBlocks (when the keywords fit its
	// tables: keywordIndex.filterOK) and the escape view made by
	// unescapeBlocks.
	avx512 bool
	// avx2: walk probes eight positions at a time (probe8) and
	// eachPosition finds bytes 32 at a time (positions).
	avx2 bool
}

// kernels, fastest first; the last, plain Go, runs everywhere.
var kernels = []*kernel{
	{name: "avx512", ok: cpuAVX512 && cpuAVX2, avx512: true, avx2: true},
	{name: "avx2", ok: cpuAVX2, avx2: true},
	{name: "purego", ok: true},
}

// bestKernel is the first kernel this CPU runs.
func bestKernel() *kernel {
	for _, k := range kernels {
		if k.ok {
			return k
		}
	}
	panic("redact: no kernel") // purego is always ok
}
