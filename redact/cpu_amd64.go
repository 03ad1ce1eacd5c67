//go:build amd64 && !purego

package redact

import "golang.org/x/sys/cpu"

// The CPU features the kernels need, with the OS's support for their
// registers (x/sys/cpu checks XCR0 too): AVX-512 F, BW and VBMI for
// filter_amd64.s, AVX2 for probe_amd64.s.
var (
	cpuAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI
	cpuAVX2   = cpu.X86.HasAVX2
)

// assemblyBuilt: this build has the assembly kernels.
const assemblyBuilt = true
