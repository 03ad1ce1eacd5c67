// Package task splits a run's inputs into tasks: the units a run reads,
// compresses and commits one at a time, that a resumed run skips once
// done, and that shards divide among themselves. It is pure: the caller
// lists the inputs (their sizes, and the row groups or record batches of
// tabular files) and this package computes the same tasks from the same
// listing in every process, so that shard 3 of 8 on one machine and a
// single process on another agree on what task 17 is.
//
// A task is one of:
//
//   - a whole file ([Whole]): gzip JSONL, a JSON array, standard input,
//     a sampled file, or any file at most the target size;
//   - a byte range [Start, End) of an uncompressed JSONL file ([Lines]),
//     ranges of exactly the target size (the last one shorter); a line
//     belongs to the range where it starts, as in Hadoop's and Beam's text
//     sources, so every line is read by exactly one task whatever the
//     target;
//   - a run of consecutive row groups (Parquet) or record batches (Arrow)
//     [Start, End) ([Units]), grouped until their bytes reach the target.
//
// A file always has at least one task, an empty file included, so that its
// output exists. Tasks are numbered in input order, files first.
//
// The inputs' fingerprint is computed in blocks of [BlockSize] bytes that
// do not depend on the target: each task hashes the blocks that start in
// its byte span ([Task.Blocks]), so the same input has the same
// fingerprint whatever the task size, however the tasks are shared out.
package task

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind says how a file may be split.
type Kind int

// The kinds of split.
const (
	Whole Kind = iota // read as one task
	Lines             // uncompressed JSONL: byte ranges, split at line starts
	Units             // Parquet row groups or Arrow record batches
)

// BlockSize is the unit of the input fingerprint, and of task sizes: a
// target task size is rounded up to a whole number of blocks, so byte
// ranges start and end on block boundaries.
const BlockSize = 1 << 20

// DefaultSize is the default target task size.
const DefaultSize = 256 << 20

// Input is one input file as listed.
type Input struct {
	Kind Kind
	Size int64 // bytes on disk
	// Offsets are, for Units, the byte offset at which each row group or
	// record batch starts, ascending; the bytes before the first (a
	// header) belong to the first unit, and those after the last unit's
	// start (its data, then the footer) to the last.
	Offsets []int64
}

// Task is one task.
type Task struct {
	Index int // in the run, from 0
	File  int // index of its input in the listing
	Part  int // index among its file's tasks, from 0
	Parts int // how many tasks its file has
	// Start and End: for Lines, the byte range [Start, End); for Units,
	// the units [Start, End); for Whole, 0 and the file's size.
	Start, End int64
	// SpanStart and SpanEnd are the bytes of the file this task accounts
	// for in the fingerprint: the byte range (Lines, Whole), or from the
	// first unit's offset (0 for the first task) to the next task's first
	// unit (the file's size for the last).
	SpanStart, SpanEnd int64
}

// Split divides inputs into tasks of about target bytes (rounded up to a
// whole number of [BlockSize]; a target <= 0 means [DefaultSize]).
func Split(inputs []Input, target int64) []Task {
	target = Round(target)
	var tasks []Task
	add := func(file int, parts []Task) {
		for i := range parts {
			parts[i].Index = len(tasks) + i
			parts[i].File, parts[i].Part, parts[i].Parts = file, i, len(parts)
		}
		tasks = append(tasks, parts...)
	}
	for fi, in := range inputs {
		switch {
		case in.Kind == Lines && in.Size > target:
			var parts []Task
			for s := int64(0); s < in.Size; s += target {
				e := min(s+target, in.Size)
				parts = append(parts, Task{Start: s, End: e, SpanStart: s, SpanEnd: e})
			}
			add(fi, parts)
		case in.Kind == Units && len(in.Offsets) > 0:
			n := int64(len(in.Offsets))
			end := func(u int64) int64 { // where unit u's bytes end
				if u+1 < n {
					return in.Offsets[u+1]
				}
				return in.Size
			}
			var parts []Task
			for u := int64(0); u < n; {
				v, bytes := u, int64(0)
				for v < n && (v == u || bytes < target) {
					bytes += end(v) - in.Offsets[v]
					v++
				}
				parts = append(parts, Task{Start: u, End: v, SpanStart: in.Offsets[u], SpanEnd: end(v - 1)})
				u = v
			}
			parts[0].SpanStart = 0
			add(fi, parts)
		default:
			end := int64(0)
			if in.Kind == Units {
				end = int64(len(in.Offsets)) // 0: an empty table
			} else {
				end = in.Size
			}
			add(fi, []Task{{Start: 0, End: end, SpanStart: 0, SpanEnd: in.Size}})
		}
	}
	return tasks
}

// Round rounds a target task size up to a whole number of [BlockSize]
// (at least one); a size <= 0 gives [DefaultSize].
func Round(target int64) int64 {
	if target <= 0 {
		return DefaultSize
	}
	return (target + BlockSize - 1) / BlockSize * BlockSize
}

// Blocks returns the fingerprint blocks [first, end) the task hashes:
// those whose first byte lies in its span. A block may extend past the
// span's end; the task reads those bytes for the hash only.
func (t Task) Blocks() (first, end int64) {
	first = (t.SpanStart + BlockSize - 1) / BlockSize
	end = (t.SpanEnd + BlockSize - 1) / BlockSize
	return first, max(first, end)
}

// Mine reports whether the task belongs to shard of n: Index % n == shard.
func (t Task) Mine(shard, n int) bool { return n <= 1 || t.Index%n == shard }

// ParseSize parses a size: a whole number of bytes, optionally followed by
// a unit: B; KiB, MiB, GiB, TiB (powers of 1024); KB, MB, GB, TB (powers of
// 1000). Case and a space before the unit do not matter ("256MiB",
// "256 mib", "1GB").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a whole number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, errors.Unwrap(err))
	}
	mult := map[string]int64{"": 1, "b": 1,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}
	m, ok := mult[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, strings.TrimSpace(t[i:]))
	}
	if n > (1<<62)/m {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * m, nil
}
