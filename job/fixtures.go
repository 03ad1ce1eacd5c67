package job

import (
	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/traj"
)

// Fixtures writes the records gen makes from o to output in format
// (format.JSONL, JSON, Parquet or Arrow) through format.Create. Lines that
// are not trajectory objects (the malformed profile) cannot be elements
// of a JSON array nor Parquet or Arrow rows: they are left out there, and
// counted in skipped.
func Fixtures(o gen.Options, fmtName, output string) (written, skipped int, err error) {
	if err := format.CheckName(fmtName); err != nil {
		return 0, 0, usagef("fixtures: --format %v", err)
	}
	w, err := format.Create(output, fmtName, format.Schema{}, format.Column{})
	if err != nil {
		return 0, 0, err
	}
	err = gen.Generate(o, func(line []byte) error {
		if fmtName != format.JSONL {
			if _, derr := traj.Decode(line, traj.Pos{}, traj.Schema{}); derr != nil {
				skipped++
				return nil
			}
		}
		written++
		return w.Write(line)
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		w.Abort()
		return 0, 0, err
	}
	return written, skipped, nil
}
