package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

const validateUsage = `Usage: trajcompress validate --dialect llamafactory|openai [flags] FILE|DIR...
       trajcompress validate --tokenizer T [--chat-template auto|PATH] --max-length N [flags] FILE|DIR...

Reports the records a trainer would reject for their role order, or (with
--max-length) cut or drop for their length once the model's chat template
renders them with their tools, one line each (file:line: reason), before you
spend a training run finding out. Both checks may be given together.
Images count as the model's processor counts them when the template renders
them as the Qwen2-VL family does (each <|image_pad|> expanded to the image's
grid by the preprocessor_config.json beside the tokenizer, else OpenAI's
rule), as compress --image-tokens auto; a template with another family's
image placeholder refuses records with images.
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
	tokenizer := fs.String("tokenizer", "", "with --max-length: the tokenizer (as compress --tokenizer: a tokenizer.json, model directory or cached model id)")
	chatTemplate := fs.String("chat-template", "auto", "with --max-length: auto (the tokenizer's template) or a .jinja / tokenizer_config.json path")
	maxLength := fs.Int("max-length", 0, "report the records whose templated length is over this many tokens (a trainer's cutoff_len / max_seq_length)")
	toolsKey := fs.String("tools-key", "", "record field holding the tool schemas (default tools)")
	format := fs.String("format", "", "record dialect of the input: sharegpt or openai (default: detected per record)")
	limit := fs.Int("max-report", 100, "print at most this many rejected records (all are counted)")
	noRecursive := fs.Bool("no-recursive", false, "for a directory, read only its own files, not its subdirectories")
	if err := parse(fs, args); err != nil {
		return err
	}
	c := validate.Consumer(*dialect)
	if *dialect != "" || *maxLength == 0 {
		if _, err := validate.Check(nil, c); err != nil {
			return usagef("validate: --dialect: %v", err)
		}
	}
	var length *trainview.Counter
	if *maxLength < 0 {
		return usagef("validate: --max-length must be > 0, got %d", *maxLength)
	}
	if *maxLength > 0 {
		if *tokenizer == "" {
			return usagef("validate: --max-length needs --tokenizer")
		}
		if *chatTemplate == trainview.TemplateNone {
			return usagef("validate: --max-length counts records as their chat template renders them: --chat-template none has nothing to check")
		}
		tok, err := tokenize.New(*tokenizer)
		if err != nil {
			return usagef("validate: --tokenizer: %v", err)
		}
		tmpl, err := trainview.Resolve(*chatTemplate, tok)
		if err != nil {
			return usagef("validate: --chat-template: %v", err)
		}
		length = &trainview.Counter{Template: tmpl, Tokens: tok}
		if err := job.TemplateImages(length); err != nil {
			return usagef("validate: %v", err)
		}
	}
	if fs.NArg() == 0 {
		return usagef("validate: no input files (see trajcompress validate -h)")
	}
	schema := traj.Schema{Dialect: traj.Dialect(*format)}
	if err := schema.Validate(); err != nil {
		return usagef("validate: --format: %v", err)
	}
	v, err := job.Validate(fs.Args(), c, schema, job.ValidateOptions{
		Limit: *limit, NoRecursive: *noRecursive, MaxRecordBytes: job.DefaultMaxRecordBytes, Notes: prefixed{stderr},
		Length: length, MaxLength: *maxLength, ToolsKey: *toolsKey}, stdout)
	if err != nil {
		return usageError{err} // a file that cannot be opened or read to its end: exit 2, as the help says
	}
	if length == nil {
		fmt.Fprintf(stderr, "%d records: %d accepted, %d would be rejected by %s, %d not trajectories\n",
			v.Total, v.Total-v.Rejected-v.Unreadable, v.Rejected, c, v.Unreadable)
	} else {
		by := string(c)
		lt := fmt.Sprintf("%d over --max-length %d once templated by %s", v.OverLength, *maxLength, length.Template.Path)
		if v.Refused > 0 {
			lt += fmt.Sprintf(", %d refused by the template", v.Refused)
		}
		if c != "" {
			by += "; " + lt
		} else {
			by = lt
		}
		fmt.Fprintf(stderr, "%d records: %d accepted, %d would be rejected (%s), %d not trajectories\n",
			v.Total, v.Total-v.Rejected-v.Unreadable, v.Rejected, by, v.Unreadable)
	}
	if v.Rejected > 0 || v.Unreadable > 0 {
		return errWouldReject
	}
	return nil
}

var errWouldReject = errors.New("validate: some records would be rejected")
