package job

import (
	"fmt"
	"io"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

// Validated counts the records of a [Validate] run.
type Validated struct {
	Total, Rejected, Unreadable int
}

// Validate reads every record of paths (any format [format.Open] reads)
// and checks it as consumer c would; it prints the first limit rejected
// records to report as "file:line: reason". A file that cannot be opened
// is a [UsageError]; a read error (a truncated gzip, say) stops the run and
// names the file and line.
func Validate(paths []string, c validate.Consumer, schema traj.Schema, limit int, report io.Writer) (Validated, error) {
	var v Validated
	for _, path := range paths {
		src, err := format.Open(path, format.Options{})
		if err != nil {
			return v, UsageError{err}
		}
		for {
			line, n, err := src.Next()
			if err == io.EOF {
				break
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
			ps, _ := validate.Check(rec.Turns, c)
			if len(ps) == 0 {
				continue
			}
			v.Rejected++
			if v.Rejected <= limit {
				fmt.Fprintf(report, "%s: %s\n", pos, ps[0])
			}
		}
		src.Close()
	}
	return v, nil
}
