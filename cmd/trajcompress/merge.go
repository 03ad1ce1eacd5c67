package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/job"
)

const mergeUsage = `Usage: trajcompress merge --output OUTPUT [flags]

Finishes a run that shards ran (compress --shard I --num-shards N, or a
Slurm, Kubernetes or AWS Batch array): once every task is done, puts the
outputs together from the tasks' parts, in input order — the same bytes
one process would have written — with the metrics merged from the tasks'
exact states (the peer's sections, outcomes, distributions, the run
block), and the rejects, outcomes and report the run was asked for. All
go in place together, and the run's hidden directory goes with them.

OUTPUT is the --output the shards were given: the output file or
directory (for a dry run, the metrics file); with no --output, the name
compress derived, which each shard prints at its end. The run's settings
are read from its directory: no other flag is needed.

While tasks are missing (or no shard has started), merge names them and
changes nothing (exit 2); run again after the merge, it finds nothing to
do and says so (exit 0). Every task's marker and segments are verified
before they are put together (checksums, hashes, counts): if one fails,
merge names the task, the shard that did it and what differs, and
changes nothing (exit 1); run that shard again, then merge.

`

func cmdMerge(args []string, stdout, stderr io.Writer) error {
	var output string
	var wait, quiet bool
	fs := newFlagSet("merge", stderr, mergeUsage, "\nExit status: 0 merged (or nothing to merge), 1 failed (or a task failed verification), 2 usage, tasks missing or shards still running, 3 partial (rejects or failed summaries), 4 mostly rejected.\n")
	fs.StringVar(&output, "output", "", "the `OUTPUT` the shards were given (required)")
	fs.BoolVar(&wait, "wait", false, "wait for shards still running on the output instead of failing at once")
	fs.BoolVar(&quiet, "quiet", false, "no summary on stderr")
	maxReject := fs.Float64("max-reject-rate", 0.5, "exit 4 instead of 3 when more than this fraction of the records is rejected")
	if err := parse(fs, args); err != nil {
		return err
	}
	if output == "" || fs.NArg() > 0 {
		return usagef("merge: --output OUTPUT is required, and nothing else (see trajcompress merge -h)")
	}
	res, err := job.Merge(job.MergeSpec{Output: output, Wait: wait, Notes: prefixed{stderr}})
	if errors.Is(err, job.ErrNothingToMerge) {
		fmt.Fprintln(stderr, "trajcompress:", err)
		return nil
	}
	if err != nil {
		return err
	}
	if !quiet {
		res.WriteHuman(stderr)
	}
	return resultCode(res, *maxReject)
}
