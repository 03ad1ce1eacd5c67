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
	// TrainedUnknown counts the rows whose trained tokens, on which the
	// trainer's fate depends (axolotl under sample_packing, or a row over
	// the limit), could not be counted (jobcore.Fate.TrainedErr); an
	// accepted one is printed as a note.
	TrainedUnknown int
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
			note := ""
			if why == "" && o.Length != nil {
				why, note = overLength(rec, schema, o, &v)
			}
			if why == "" {
				if note != "" && v.TrainedUnknown <= o.Limit {
					fmt.Fprintf(report, "%s: note: %s\n", pos, note)
				}
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

// LengthCheck is what `validate --max-length` judges a record's length
// with: its counter, the trainer whose rules say what happens to a row
// over MaxLength (nil: hf's wording), and the warnings to show once.
type LengthCheck struct {
	Counter   trainview.RecordCounter
	Trainer   *trainercfg.Spec
	MaxLength int
	Notes     []string
}

// NewLengthCheck builds the length check of cfg's tokenizer, chat
// template or trainer, image rule and template bounds, as compress counts
// (jobcore.Compressor), and makes cfg the trainer's (jobcore.ApplyTrainer:
// its model, an axolotl dataset's field names); tokenizerSet says whether
// --tokenizer was given (a trainer with no model of its own needs it),
// maxLength 0 takes the trainer's limit. Without a
// trainer, the chat template "" is auto: a record is judged as its
// template renders it. Images are counted as compress counts them
// (TemplateImages). Every error is a [UsageError].
func NewLengthCheck(cfg *config.Config, tokenizerSet bool, maxLength int) (*LengthCheck, error) {
	lc := &LengthCheck{MaxLength: maxLength}
	ts, err := jobcore.Trainer(*cfg)
	if err != nil {
		return nil, err
	}
	if ts == nil {
		if cfg.Tokenizer.ChatTemplate == trainview.TemplateNone {
			return nil, usagef("--max-length counts records as their chat template renders them: --chat-template none has nothing to check")
		}
	} else {
		lc.Trainer = ts
		if !tokenizerSet && (ts.Source == "" || ts.Model == "") {
			// Counting a trainer's rows with the default tokenizer
			// (o200k_base, no model's) would judge them by counts the
			// trainer never makes.
			return nil, usagef("--trainer needs --tokenizer (the trainer's config names no model)")
		}
		lc.Notes = jobcore.ApplyTrainer(cfg, ts, tokenizerSet, maxLength > 0)
		if lc.MaxLength == 0 {
			lc.MaxLength = ts.Limit
		}
		if lc.MaxLength == 0 {
			return nil, usagef("the trainer has no length limit (max_length: null): give --max-length")
		}
	}
	tok, err := tokenize.NewRevision(cfg.Tokenizer.Name, cfg.Tokenizer.Revision)
	if err != nil {
		return nil, usagef("tokenizer %s: %v", cfg.Tokenizer.Name, err)
	}
	var tc *trainview.Counter
	if ts != nil {
		if lc.Counter, err = jobcore.TrainerCounter(ts, tok, cfg.Input.ToolsKey); err != nil {
			return nil, usagef("%s: %v", ts.Kind, err)
		}
		tc, _ = lc.Counter.(*trainview.Counter)
	} else {
		spec := cfg.Tokenizer.ChatTemplate
		if spec == "" {
			spec = "auto"
		}
		tmpl, err := trainview.Resolve(spec, tok)
		if err != nil {
			return nil, usagef("--chat-template: %v", err)
		}
		tc = &trainview.Counter{Template: tmpl, Tokens: tok}
		lc.Counter = tc
	}
	if tc != nil {
		tc.Template.Budget = cfg.Tokenizer.TemplateBudget()
		if err := TemplateImages(tc, cfg.Tokenizer.ImageTokens); err != nil {
			return nil, err
		}
	}
	return lc, nil
}

// TemplateImages sets c.Images for the images of records counted with c
// (validate --max-length), as compress does under rule spec
// (tokenizer.image_tokens; jobcore.ImageRule, jobcore.TemplateImages): a
// Qwen2-VL-family template's <|image_pad|> expanded to each image's grid
// under the model's preprocessor_config.json with auto, or to the rule's
// count; another family's placeholder refuses records with images. It
// leaves c.Images nil when the template does not mention images: such a
// template's count is its rendered text (an image it does not render adds
// nothing there, unlike compress, which adds each image's rule tokens). A
// preprocessor_config.json that cannot be read, or a template whose
// <|image_pad|> the tokenizer splits, is a [UsageError].
func TemplateImages(c *trainview.Counter, spec string) error {
	rule, _, err := jobcore.ImageRule(spec, c.Tokens)
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

// Summary is the last line of `validate`: the records accepted, rejected
// by consumer c's role order and, with lc, judged by their length.
func (v Validated) Summary(c validate.Consumer, lc *LengthCheck) string {
	if lc == nil {
		return fmt.Sprintf("%d records: %d accepted, %d would be rejected by %s, %d not trajectories",
			v.Total, v.Total-v.Rejected-v.Unreadable, v.Rejected, c, v.Unreadable)
	}
	by := string(c)
	lt := fmt.Sprintf("%d over --max-length %d once templated by %s", v.OverLength, lc.MaxLength, lc.Counter.Name())
	if ts := lc.Trainer; ts != nil && ts.Kind != trainercfg.HF {
		lt = fmt.Sprintf("%s at %d: %d cut, %d dropped, %d skipped for their shape (%d repairable by compress), %d tokens lost; counted by %s",
			ts.Kind, lc.MaxLength, v.Cut, v.Dropped, v.Skipped, v.Repairable, v.TokensLost, lc.Counter.Name())
	}
	if v.Unmapped > 0 {
		lt += fmt.Sprintf(", %d with roles the template does not render", v.Unmapped)
	}
	if v.Refused > 0 {
		lt += fmt.Sprintf(", %d refused by the template", v.Refused)
	}
	if v.TrainedUnknown > 0 {
		lt += fmt.Sprintf(", %d whose trained tokens could not be counted", v.TrainedUnknown)
	}
	if c != "" {
		by += "; " + lt
	} else {
		by = lt
	}
	return fmt.Sprintf("%d records: %d accepted, %d would be rejected (%s), %d not trajectories",
		v.Total, v.Total-v.Rejected-v.Unreadable, v.Rejected, by, v.Unreadable)
}

// overLength says what the trainer does to a record over o.MaxLength
// (jobcore.FateOf), or why the template refuses it; "" when it is trained
// on whole. note is said of a row trained on whole as far as is known:
// why its trained tokens, which decide its fate, could not be counted.
func overLength(rec *traj.Record, schema traj.Schema, o ValidateOptions, v *Validated) (why, note string) {
	view, err := trainview.Mapper{Schema: schema, ToolsKey: o.ToolsKey, Axolotl: trainview.ReadsAsAxolotl(o.Length)}.View(rec, rec.Turns, rec.System)
	var f jobcore.Fate
	if err == nil {
		f, err = jobcore.FateOf(o.Trainer, o.Length, view, o.MaxLength)
	}
	if err != nil {
		v.Refused++
		if o.Trainer != nil && o.Trainer.Kind != trainercfg.HF {
			return fmt.Sprintf("%s (%s): %v", o.Trainer.Kind, o.Length.Name(), err), ""
		}
		return fmt.Sprintf("chat template %s: %v", o.Length.Name(), err), ""
	}
	if f.TrainedErr != nil {
		v.TrainedUnknown++
	}
	switch f.Action {
	case "":
		return "", f.Why
	case "skip":
		v.Skipped++
		if f.Repairable {
			v.Repairable++
		}
		return f.Why, ""
	case jobcore.ActionUnmapped:
		v.Unmapped++
		if f.Repairable {
			v.Repairable++
		}
		return f.Why, ""
	case trainercfg.OverDrop, trainercfg.OverRaise:
		v.Dropped++
	case "over":
	default:
		v.Cut++
	}
	if o.MaxLength <= 0 || f.Tokens > o.MaxLength { // TRL raises on a row with no assistant turn at any length
		v.OverLength++
	}
	v.TokensLost += int64(f.Lost)
	return f.Why, ""
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

// Effective is the config a command line asks for: the config file, the
// flags given, the trainer's settings (jobcore.Effective).
func Effective(path string, f *config.Flags) (config.Config, []string, error) {
	return jobcore.Effective(path, f)
}
