package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

const validateUsage = `Usage: trajcompress validate --dialect llamafactory|openai [flags] FILE|DIR...
       trajcompress validate --tokenizer T [--chat-template auto|PATH] --max-length N [flags] FILE|DIR...
       trajcompress validate --trainer-config FILE [--max-length N] [flags] FILE|DIR...
       trajcompress validate --trainer llamafactory|axolotl|trl|hf [--template NAME] --tokenizer T --max-length N [flags] FILE|DIR...

Reports the records a trainer would reject for their role order, or (with
--max-length) cut or drop for their length once the model's chat template
renders them with their tools, one line each (file:line: reason), before you
spend a training run finding out. Both checks may be given together.
Images count as compress counts them: by default (--image-tokens auto) as
the model's processor counts them when the template renders them as the
Qwen2-VL family does (each <|image_pad|> expanded to the image's grid by
the preprocessor_config.json beside the tokenizer, else OpenAI's rule), or
by the --image-tokens rule given; a template with another family's
image placeholder refuses records with images.
With --trainer-config (a LLaMA-Factory, axolotl or TRL training YAML, read as
the trainer reads it; see docs/trainers.md) or --trainer, each line says what
that trainer does to the row at its own limit (cutoff_len, sequence_len,
max_length; --max-length overrides it), counted as it counts:
LLaMA-Factory cuts each (prompt, response) pair by infer_seqlen (the tokens,
trained tokens, pairs and turns lost), and skips a row its converter refuses
(with its reason, and the repairs compress makes unless --no-repair: turns of
one role merged, a trailing turn with no answer dropped, ShareGPT tool turns
renamed observation); axolotl drops the row (truncates it under
excess_length_strategy: truncate); TRL cuts it at the end, and drops it when
no trained token is left (assistant_only_loss). The last line counts the rows
cut, dropped and skipped and the tokens lost.

Role orders (--dialect):

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
	dialect := fs.String("dialect", "", "llamafactory or openai: check the role order")
	maxLength := fs.Int("max-length", 0, "report the records whose templated length is over this many tokens (a trainer's cutoff_len / max_seq_length)")
	limit := fs.Int("max-report", 100, "print at most this many rejected records (all are counted)")
	noRecursive := fs.Bool("no-recursive", false, "for a directory, read only its own files, not its subdirectories")
	cf := config.AddFlags(fs, config.ValidateGroups...)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := config.Default()
	cf.Apply(&cfg)
	if err := cfg.Validate(); err != nil {
		return usagef("validate: %v", err)
	}
	c := validate.Consumer(*dialect)
	if *dialect != "" || (*maxLength == 0 && !cf.Set("trainer-config") && !cf.Set("trainer")) {
		if _, err := validate.Check(nil, c); err != nil {
			return usagef("validate: --dialect: %v", err)
		}
	}
	if *maxLength < 0 {
		return usagef("validate: --max-length must be > 0, got %d", *maxLength)
	}
	var lc *job.LengthCheck
	if *maxLength > 0 || cf.Set("trainer-config") || cf.Set("trainer") {
		var err error
		if lc, err = job.NewLengthCheck(&cfg, cf.Set("tokenizer"), *maxLength); err != nil {
			return usagef("validate: %v", err)
		}
		for _, n := range lc.Notes {
			fmt.Fprintln(stderr, n)
		}
	}
	if fs.NArg() == 0 {
		return usagef("validate: no input files (see trajcompress validate -h)")
	}
	in := cfg.Input
	schema := traj.Schema{Dialect: traj.Dialect(in.Format), TurnsKey: in.TurnsKey, RoleKey: in.RoleKey, ContentKey: in.ContentKey}
	o := job.ValidateOptions{Limit: *limit, NoRecursive: *noRecursive, MaxRecordBytes: job.DefaultMaxRecordBytes, Notes: prefixed{stderr}, ToolsKey: in.ToolsKey}
	if lc != nil {
		o.Length, o.MaxLength, o.Trainer = lc.Counter, lc.MaxLength, lc.Trainer
	}
	v, err := job.Validate(fs.Args(), c, schema, o, stdout)
	if err != nil {
		return usageError{err} // a file that cannot be opened or read to its end: exit 2, as the help says
	}
	fmt.Fprintln(stderr, v.Summary(c, lc))
	if v.Rejected > 0 || v.Unreadable > 0 {
		return errWouldReject
	}
	return nil
}

var errWouldReject = errors.New("validate: some records would be rejected")
