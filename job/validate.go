package job

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

// Validated counts the records of a [Validate] run.
type Validated struct {
	Total, Rejected, Unreadable int
	// OverLength counts the records whose templated length is over
	// ValidateOptions.MaxLength, Refused those the template refused (both
	// among Rejected).
	OverLength, Refused int
	// With a trainer: the rows it cuts (LLaMA-Factory's infer_seqlen,
	// truncation), drops (or raises on), and skips for their shape, and
	// the tokens it does not train on (the whole of a dropped row).
	Cut, Dropped, Skipped int
	TokensLost            int64
	// Repairable counts the skipped (or unmapped) rows compress repairs.
	Repairable int
	// Unmapped counts the rows axolotl gives its template with messages
	// under roles the template does not render.
	Unmapped int
}

// ValidateOptions are the settings of [Validate] beyond what it checks.
type ValidateOptions struct {
	// Limit is how many rejected records are printed (all are counted).
	Limit int
	// NoRecursive reads only a directory's own files, not its
	// subdirectories'.
	NoRecursive bool
	// MaxRecordBytes is the longest JSON Lines record read: a longer one
	// counts as not a trajectory, unread (0: no limit).
	MaxRecordBytes int64
	// Notes receives a line for each file of a directory left out (see
	// [WalkInputs]); nil discards them.
	Notes io.Writer
	// Length, when set, counts each record as the trainer sees it (its
	// chat template) and rejects the ones over MaxLength tokens, what a
	// trainer's cutoff_len / max_seq_length would cut or drop, and the
	// ones the template refuses.
	// Images found in a record are read beside its file when
	// Length.Images is set with no Finder (see [TemplateImages]).
	Length    trainview.RecordCounter
	MaxLength int
	// Trainer, when set, is the trainer whose rules say what happens to a
	// row over MaxLength (jobcore.FateOf); nil is hf's wording.
	Trainer *trainercfg.Spec
	// ToolsKey is the record field of tool schemas for Length ("" tools).
	ToolsKey string
}

// Validate reads every record of paths (any format [format.Open] reads; a
// directory is walked as compress walks it) and checks it as consumer c
// would; it prints the first o.Limit rejected records to report as
// "file:line: reason". A file or directory that cannot be opened or read
// is a [UsageError]; a read error (a truncated gzip, say) stops the run
// and names the file and line.
func Validate(paths []string, c validate.Consumer, schema traj.Schema, o ValidateOptions, report io.Writer) (Validated, error) {
	var v Validated
	files, err := expandDirs(paths, !o.NoRecursive, o.Notes)
	if err != nil {
		return v, UsageError{Err: err}
	}
	length := o.Length
	for _, path := range files {
		if l, ok := o.Length.(*trainview.Counter); ok && l.Images != nil && l.Images.Finder == nil {
			fl, im := *l, *l.Images
			im.Finder = &imagetok.Finder{Dir: filepath.Dir(path)}
			fl.Images = &im
			o.Length = &fl
		}
		src, err := format.Open(path, format.Options{MaxRecordBytes: o.MaxRecordBytes})
		if err != nil {
			return v, UsageError{Err: err}
		}
		for {
			line, n, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil && tooLarge(err) {
				v.Total++
				v.Unreadable++
				if o.Notes != nil {
					fmt.Fprintf(o.Notes, "note: %v: counted as not a trajectory\n", err)
				}
				continue
			}
			if err != nil {
				src.Close()
				return v, err
			}
			v.Total++
			pos := traj.Pos{File: path, Line: n, Record: src.Record()}
			rec, err := traj.Decode(line, pos, schema)
			if err != nil {
				v.Unreadable++
				continue
			}
			why := ""
			if c != "" {
				if ps, _ := validate.Check(rec.Turns, c); len(ps) > 0 {
					why = ps[0].String()
				}
			}
			if why == "" && o.Length != nil {
				why = overLength(rec, schema, o, &v)
			}
			if why == "" {
				continue
			}
			v.Rejected++
			if v.Rejected <= o.Limit {
				fmt.Fprintf(report, "%s: %s\n", pos, why)
			}
		}
		src.Close()
		o.Length = length
	}
	return v, nil
}

// TemplateImages sets c.Images for the images of records counted with c
// (validate --max-length), as compress does with --image-tokens auto
// (jobcore.ImageRule, jobcore.TemplateImages): a Qwen2-VL-family template's
// <|image_pad|> expanded to each image's grid under the model's
// preprocessor_config.json, or to OpenAI's rule without one; another
// family's placeholder refuses records with images. It leaves c.Images nil
// when the template does not mention images: such a template's count is
// its rendered text (an image it does not render adds nothing there,
// unlike compress, which adds each image's rule tokens). A
// preprocessor_config.json that cannot be read, or a template whose
// <|image_pad|> the tokenizer splits, is a [UsageError].
func TemplateImages(c *trainview.Counter) error {
	rule, _, err := jobcore.ImageRule(jobcore.ImageTokensAuto, c.Tokens)
	if err != nil {
		return err // a UsageError
	}
	im, err := jobcore.TemplateImages(c, c.Tokens, rule)
	if err != nil {
		return usagef("chat template: %v", err)
	}
	c.Images = im
	return nil
}

// overLength says what the trainer does to a record over o.MaxLength
// (jobcore.FateOf), or why the template refuses it; "" when it is trained
// on whole.
func overLength(rec *traj.Record, schema traj.Schema, o ValidateOptions, v *Validated) string {
	view, err := trainview.Mapper{Schema: schema, ToolsKey: o.ToolsKey}.View(rec, rec.Turns, rec.System)
	var f jobcore.Fate
	if err == nil {
		f, err = jobcore.FateOf(o.Trainer, o.Length, view, o.MaxLength)
	}
	if err != nil {
		v.Refused++
		if o.Trainer != nil && o.Trainer.Kind != trainercfg.HF {
			return fmt.Sprintf("%s (%s): %v", o.Trainer.Kind, o.Length.Name(), err)
		}
		return fmt.Sprintf("chat template %s: %v", o.Length.Name(), err)
	}
	switch f.Action {
	case "":
		return ""
	case "skip":
		v.Skipped++
		if f.Repairable {
			v.Repairable++
		}
		return f.Why
	case jobcore.ActionUnmapped:
		v.Unmapped++
		if f.Repairable {
			v.Repairable++
		}
		return f.Why
	case trainercfg.OverDrop, trainercfg.OverRaise:
		v.Dropped++
	case "over":
	default:
		v.Cut++
	}
	v.OverLength++
	v.TokensLost += int64(f.Lost)
	return f.Why
}

// expandDirs replaces each directory of paths by the input files under it,
// in the order compress reads them (walkInputs), noting what it leaves
// out; a directory with no input file is an error.
func expandDirs(paths []string, recursive bool, notes io.Writer) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			out = append(out, p) // format.Open says what is wrong with it
			continue
		}
		files, _, leftOut, err := jobcore.Walk(p, recursive, false) // a link out of the directory is left out, with a note, as compress does by default
		if err != nil {
			return nil, err
		}
		if notes != nil {
			for _, l := range leftOut {
				fmt.Fprintf(notes, "note: left out %s\n", l)
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no JSON Lines, JSON, Parquet or Arrow files in this directory (every file left out is named in a note)", p)
		}
		for _, f := range files {
			out = append(out, filepath.Join(p, f))
		}
	}
	return out, nil
}

// Trainer reads the trainer cfg names (jobcore.Trainer): nil for none.
func Trainer(cfg config.Config) (*trainercfg.Spec, error) { return jobcore.Trainer(cfg) }

// ApplyTrainer makes cfg the run trainer s describes (jobcore.ApplyTrainer)
// and returns the warnings to show once.
func ApplyTrainer(cfg *config.Config, s *trainercfg.Spec, tokenizerSet, targetSet bool) []string {
	return jobcore.ApplyTrainer(cfg, s, tokenizerSet, targetSet)
}

// TrainerCounter is the counter of rows as trainer s counts them with tok
// (jobcore.TrainerCounter).
func TrainerCounter(s *trainercfg.Spec, tok tokenize.Counter, toolsKey string) (trainview.RecordCounter, error) {
	return jobcore.TrainerCounter(s, tok, toolsKey)
}
