package task

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	const M = BlockSize
	inputs := []Input{
		{Kind: Whole, Size: 10 * M},  // gzip: one task whatever its size
		{Kind: Lines, Size: 5*M + 3}, // split at 2 MiB
		{Kind: Lines, Size: 2 * M},   // exactly the target: one task
		{Kind: Lines, Size: 0},       // empty: one task
		{Kind: Units, Size: 9 * M, Offsets: []int64{4, M, 3 * M, 4 * M, 8 * M}}, // row groups of 1, 2, 1, 4 and 1 MiB
		{Kind: Units, Size: 100, Offsets: nil},                                  // an empty table
	}
	got := Split(inputs, 2*M)
	var b strings.Builder
	for _, tk := range got {
		fmt.Fprintf(&b, "%d:f%d %d/%d [%d,%d) span [%d,%d)\n", tk.Index, tk.File, tk.Part, tk.Parts, tk.Start, tk.End, tk.SpanStart, tk.SpanEnd)
	}
	want := `0:f0 0/1 [0,10485760) span [0,10485760)
1:f1 0/3 [0,2097152) span [0,2097152)
2:f1 1/3 [2097152,4194304) span [2097152,4194304)
3:f1 2/3 [4194304,5242883) span [4194304,5242883)
4:f2 0/1 [0,2097152) span [0,2097152)
5:f3 0/1 [0,0) span [0,0)
6:f4 0/3 [0,2) span [0,3145728)
7:f4 1/3 [2,4) span [3145728,8388608)
8:f4 2/3 [4,5) span [8388608,9437184)
9:f5 0/1 [0,0) span [0,100)
`
	if b.String() != want {
		t.Errorf("tasks:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestBlocksCoverEachFileOnce: whatever the target, every block of every
// file is hashed by exactly one task, and the tasks of a file cover its
// bytes (and units) contiguously.
func TestBlocksCoverEachFileOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var inputs []Input
		for range 1 + r.IntN(5) {
			size := r.Int64N(40 * BlockSize)
			switch r.IntN(3) {
			case 0:
				inputs = append(inputs, Input{Kind: Whole, Size: size})
			case 1:
				inputs = append(inputs, Input{Kind: Lines, Size: size})
			case 2:
				var offs []int64
				for o := int64(4); o < size; o += 1 + r.Int64N(6*BlockSize) {
					offs = append(offs, o)
				}
				inputs = append(inputs, Input{Kind: Units, Size: size, Offsets: offs})
			}
		}
		target := 1 + r.Int64N(20*BlockSize)
		tasks := Split(inputs, target)
		next := 0
		for fi, in := range inputs {
			var blocks []int64
			span, unit := int64(0), int64(0)
			parts := 0
			for ; next < len(tasks) && tasks[next].File == fi; next++ {
				tk := tasks[next]
				if tk.Index != next || tk.Part != parts || tk.SpanStart != span {
					t.Fatalf("trial %d file %d: task %+v after span %d", trial, fi, tk, span)
				}
				if in.Kind != Whole && tk.Start != map[bool]int64{true: span, false: unit}[in.Kind == Lines] {
					t.Fatalf("trial %d file %d: task %+v not contiguous", trial, fi, tk)
				}
				span, unit, parts = tk.SpanEnd, tk.End, parts+1
				a, e := tk.Blocks()
				for k := a; k < e; k++ {
					blocks = append(blocks, k)
				}
			}
			if parts == 0 || tasks[next-1].Parts != parts || span != in.Size {
				t.Fatalf("trial %d file %d: %d tasks cover [0,%d) of %d", trial, fi, parts, span, in.Size)
			}
			if in.Kind == Units && unit != int64(len(in.Offsets)) {
				t.Fatalf("trial %d file %d: units to %d of %d", trial, fi, unit, len(in.Offsets))
			}
			want := (in.Size + BlockSize - 1) / BlockSize
			for k, b := range blocks {
				if b != int64(k) {
					t.Fatalf("trial %d file %d: blocks %v", trial, fi, blocks)
				}
			}
			if int64(len(blocks)) != want {
				t.Fatalf("trial %d file %d: %d blocks, want %d", trial, fi, len(blocks), want)
			}
		}
		if next != len(tasks) {
			t.Fatalf("trial %d: %d tasks, %d accounted", trial, len(tasks), next)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"8MiB", 8 << 20, ""}, {"256MiB", 256 << 20, ""}, {"1GiB", 1 << 30, ""}, {"1 gib", 1 << 30, ""},
		{"1000", 1000, ""}, {"5MB", 5e6, ""}, {"2KiB", 2048, ""}, {"3B", 3, ""},
		{"", 0, "want a whole number"}, {"1.5GiB", 0, "unknown unit"}, {"-1MiB", 0, "want a whole number"},
		{"10 parsecs", 0, "unknown unit"}, {"99999999999TiB", 0, "too large"},
	} {
		got, err := ParseSize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if Round(1) != BlockSize || Round(0) != DefaultSize || Round(3*BlockSize) != 3*BlockSize {
		t.Errorf("Round")
	}
}

func TestShardOf(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name         string
		index, count int
		getenv       func(string) string
		want         string
		err          string
	}{
		{"none", -1, -1, env(), "0/1", ""},
		{"flags", 2, 4, env("SLURM_ARRAY_TASK_ID", "7"), "2/4 --shard", ""},
		{"slurm", -1, -1, env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"), "3/4 SLURM_ARRAY_TASK_ID", ""},
		{"slurm_from_1", -1, -1, env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1"), "3/4 SLURM_ARRAY_TASK_ID", ""},
		{"slurm_step", -1, -1, env("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "4"), "2/4 SLURM_ARRAY_TASK_ID", ""},
		{"slurm_num_shards", -1, 2, env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "4"), "1/2 SLURM_ARRAY_TASK_ID", ""},
		{"slurm_step_from_1", -1, -1, env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_STEP", "2"), "2/3 SLURM_ARRAY_TASK_ID", ""},
		{"slurm_out_of_range", -1, -1, env("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "1"), "", "want 0 <= shard < num-shards"},
		{"k8s", -1, 3, env("JOB_COMPLETION_INDEX", "2"), "2/3 JOB_COMPLETION_INDEX", ""},
		{"k8s_no_count", -1, -1, env("JOB_COMPLETION_INDEX", "2"), "", "pass --num-shards"},
		{"aws", -1, 5, env("AWS_BATCH_JOB_ARRAY_INDEX", "4"), "4/5 AWS_BATCH_JOB_ARRAY_INDEX", ""},
		{"bad_env", -1, 3, env("JOB_COMPLETION_INDEX", "x"), "", "not a whole number"},
		{"shard_without_count", 1, -1, env(), "", "without --num-shards"},
		{"count_without_shard", -1, 3, env(), "", "without --shard"},
		{"out_of_range", 3, 3, env(), "", "want 0 <= shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ShardOf(tc.index, tc.count, tc.getenv)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%+v, %v; want an error containing %q", s, err, tc.err)
				}
				return
			}
			got := strings.TrimSpace(fmt.Sprintf("%d/%d %s", s.Index, s.Count, s.From))
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
