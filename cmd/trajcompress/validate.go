package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

const validateUsage = `Usage: trajcompress validate --dialect llamafactory|openai [flags] FILE|DIR...

Reports the records a trainer would reject for their role order, one line
each (file:line: reason), before you spend a training run finding out:

  llamafactory  LLaMA-Factory's sharegpt converter: after an optional system
                turn, user-side (human, observation, tool) and assistant-side
                (gpt, function_call) turns alternate, starting with the user
                side, and their count is even.
  openai        strict chat templates (Mistral: "Conversation roles must
                alternate"): user and assistant alternate after the system
                prompt; tool messages follow an assistant message with tool
                calls; tool results pair with calls by id.

"trajcompress compress --alternation" places summaries so that the output
passes these checks. Files may be JSONL (plain, gzip, zstd, bzip2 or xz), JSON
arrays, Parquet or Arrow; a directory is walked as compress walks it
(recursively, hidden files left out). A JSON Lines record longer than 256 MiB
is counted as not a trajectory, without being read whole.

Exit status: 0 every record accepted; 1 some would be rejected, or some
lines are not trajectories at all (counted separately); 2 usage or an
unreadable file.

Flags:
`

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr, validateUsage, "")
	dialect := fs.String("dialect", "", "llamafactory or openai (required)")
	format := fs.String("format", "", "record dialect of the input: sharegpt or openai (default: detected per record)")
	limit := fs.Int("max-report", 100, "print at most this many rejected records (all are counted)")
	noRecursive := fs.Bool("no-recursive", false, "for a directory, read only its own files, not its subdirectories")
	if err := parse(fs, args); err != nil {
		return err
	}
	c := validate.Consumer(*dialect)
	if _, err := validate.Check(nil, c); err != nil {
		return usagef("validate: --dialect: %v", err)
	}
	if fs.NArg() == 0 {
		return usagef("validate: no input files (see trajcompress validate -h)")
	}
	schema := traj.Schema{Dialect: traj.Dialect(*format)}
	if err := schema.Validate(); err != nil {
		return usagef("validate: --format: %v", err)
	}
	v, err := job.Validate(fs.Args(), c, schema, job.ValidateOptions{
		Limit: *limit, NoRecursive: *noRecursive, MaxRecordBytes: job.DefaultMaxRecordBytes, Notes: prefixed{stderr}}, stdout)
	if err != nil {
		return usageError{err} // a file that cannot be opened or read to its end: exit 2, as the help says
	}
	fmt.Fprintf(stderr, "%d records: %d accepted, %d would be rejected by %s, %d not trajectories\n",
		v.Total, v.Total-v.Rejected-v.Unreadable, v.Rejected, c, v.Unreadable)
	if v.Rejected > 0 || v.Unreadable > 0 {
		return errWouldReject
	}
	return nil
}

var errWouldReject = errors.New("validate: some records would be rejected")
