package job

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/job/jobcore"
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
	Length    *trainview.Counter
	MaxLength int
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
	for _, path := range files {
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
	}
	return v, nil
}

// overLength says why a record is over o.MaxLength once templated, or
// refused by the template; "" when it fits.
func overLength(rec *traj.Record, schema traj.Schema, o ValidateOptions, v *Validated) string {
	view, err := trainview.Mapper{Schema: schema, ToolsKey: o.ToolsKey}.View(rec, rec.Turns, rec.System)
	n := 0
	if err == nil {
		n, err = o.Length.Count(view)
	}
	if err != nil {
		v.Refused++
		return fmt.Sprintf("chat template %s: %v", o.Length.Template.Path, err)
	}
	if n > o.MaxLength {
		v.OverLength++
		return fmt.Sprintf("%d tokens once templated, over --max-length %d by %d", n, o.MaxLength, n-o.MaxLength)
	}
	return ""
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
