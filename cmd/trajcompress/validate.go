package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainview"
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
Images count as the model's processor counts them when the template renders
them as the Qwen2-VL family does (each <|image_pad|> expanded to the image's
grid by the preprocessor_config.json beside the tokenizer, else OpenAI's
rule), as compress --image-tokens auto; a template with another family's
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
	tokenizer := fs.String("tokenizer", "", "with --max-length: the tokenizer (as compress --tokenizer: a tokenizer.json, model directory or cached model id)")
	chatTemplate := fs.String("chat-template", "auto", "with --max-length: auto (the tokenizer's template) or a .jinja / tokenizer_config.json path")
	maxLength := fs.Int("max-length", 0, "report the records whose templated length is over this many tokens (a trainer's cutoff_len / max_seq_length)")
	toolsKey := fs.String("tools-key", "", "record field holding the tool schemas (default tools)")
	format := fs.String("format", "", "record dialect of the input: sharegpt or openai (default: detected per record)")
	limit := fs.Int("max-report", 100, "print at most this many rejected records (all are counted)")
	noRecursive := fs.Bool("no-recursive", false, "for a directory, read only its own files, not its subdirectories")
	trainerConfig := fs.String("trainer-config", "", "a LLaMA-Factory, axolotl or TRL training YAML: count and judge each row as that trainer will (its model is the tokenizer, its limit the --max-length, unless given)")
	trainer := fs.String("trainer", "", "llamafactory, axolotl, trl or hf: the trainer whose rules judge a row over --max-length (without --trainer-config: its defaults)")
	template := fs.String("template", "", "with --trainer: LLaMA-Factory's template name, or for axolotl, trl and hf a chat template path")
	if err := parse(fs, args); err != nil {
		return err
	}
	c := validate.Consumer(*dialect)
	if *dialect != "" || (*maxLength == 0 && *trainerConfig == "" && *trainer == "") {
		if _, err := validate.Check(nil, c); err != nil {
			return usagef("validate: --dialect: %v", err)
		}
	}
	var length trainview.RecordCounter
	if *maxLength < 0 {
		return usagef("validate: --max-length must be > 0, got %d", *maxLength)
	}
	var ts *trainercfg.Spec
	if *trainerConfig != "" || *trainer != "" {
		var cfg config.Config
		cfg.Tokenizer.TrainerConfig, cfg.Tokenizer.Trainer, cfg.Tokenizer.Template = *trainerConfig, *trainer, *template
		var err error
		if ts, err = job.Trainer(cfg); err != nil {
			return usagef("validate: %v", err)
		}
		for _, n := range job.ApplyTrainer(&cfg, ts, false, false) {
			fmt.Fprintln(stderr, n)
		}
		if *maxLength == 0 {
			*maxLength = ts.Limit
		}
		if *maxLength == 0 {
			return usagef("validate: the trainer has no length limit (max_length: null): give --max-length")
		}
		if *tokenizer == "" {
			*tokenizer = ts.Model
		}
		if *tokenizer == "" {
			return usagef("validate: --trainer needs --tokenizer (the trainer's config names no model)")
		}
		tok, err := tokenize.New(*tokenizer)
		if err != nil {
			return usagef("validate: tokenizer %s: %v", *tokenizer, err)
		}
		if length, err = job.TrainerCounter(ts, tok, *toolsKey); err != nil {
			return usagef("validate: %s: %v", ts.Kind, err)
		}
		if tc, ok := length.(*trainview.Counter); ok {
			if err := job.TemplateImages(tc); err != nil {
				return usagef("validate: %v", err)
			}
		}
	} else if *maxLength > 0 {
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
		tc := &trainview.Counter{Template: tmpl, Tokens: tok}
		if err := job.TemplateImages(tc); err != nil {
			return usagef("validate: %v", err)
		}
		length = tc
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
		Length: length, MaxLength: *maxLength, ToolsKey: *toolsKey, Trainer: ts}, stdout)
	if err != nil {
		return usageError{err} // a file that cannot be opened or read to its end: exit 2, as the help says
	}
	if length == nil {
		fmt.Fprintf(stderr, "%d records: %d accepted, %d would be rejected by %s, %d not trajectories\n",
			v.Total, v.Total-v.Rejected-v.Unreadable, v.Rejected, c, v.Unreadable)
	} else {
		by := string(c)
		lt := fmt.Sprintf("%d over --max-length %d once templated by %s", v.OverLength, *maxLength, length.Name())
		if ts != nil && ts.Kind != trainercfg.HF {
			lt = fmt.Sprintf("%s at %d: %d cut, %d dropped, %d skipped for their shape (%d repairable by compress), %d tokens lost; counted by %s",
				ts.Kind, *maxLength, v.Cut, v.Dropped, v.Skipped, v.Repairable, v.TokensLost, length.Name())
		}
		if v.Unmapped > 0 {
			lt += fmt.Sprintf(", %d with roles the template does not render", v.Unmapped)
		}
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
