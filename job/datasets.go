package job

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/job/jobcore"
)

// diskDatasets writes, for a directory input, the metadata that makes each
// compressed `datasets` save_to_disk directory loadable again with
// datasets.load_from_disk: beside the Arrow data files, the input's
// state.json and dataset_info.json updated for what was written (new
// fingerprint, the written files' features, rows and sizes; see
// format.DiskDataset.Updated), and a DatasetDict's dataset_dict.json as
// it was. They are staged in the run's commit like every output, and
// vouched for by the metrics. A save_to_disk directory whose files are
// written in another format than Arrow (load_from_disk reads only Arrow),
// or whose state.json names files the run did not write, gets none, with
// a note saying why.
func (a *assembler) diskDatasets() error {
	p := a.plan
	if p.Dir == "" || a.spec.DryRun {
		return nil
	}
	type dirFiles struct {
		in, out string
		files   []int // indices in p.Files
	}
	var dirs []*dirFiles
	byDir := map[string]*dirFiles{}
	for i, f := range p.Files {
		d := filepath.Dir(f.In)
		if byDir[d] == nil {
			byDir[d] = &dirFiles{in: d, out: filepath.Dir(f.Out)}
			dirs = append(dirs, byDir[d])
		}
		byDir[d].files = append(byDir[d].files, i)
	}
	parents := map[string]string{} // input dir of a DatasetDict → its output dir
	for _, d := range dirs {
		ds, err := format.OpenDiskDataset(d.in)
		if err != nil {
			// A state.json beside data that is not datasets' own (a
			// training state, a half-copied save_to_disk directory): the
			// records are written all the same, only no metadata.
			note(a.spec.Notes, "note: %v: the output directory is not made a save_to_disk dataset\n", err)
			continue
		}
		if ds == nil {
			continue
		}
		why, err := a.diskDataset(ds, d.out, d.files)
		var bad format.DiskDatasetError
		if errors.As(err, &bad) {
			why, err = bad.Error(), nil
		}
		if err != nil {
			return err
		}
		if why != "" {
			note(a.spec.Notes, "note: %s: not written in the output: %s, so the output directory is not a save_to_disk dataset\n", filepath.Join(d.in, format.StateFile), why)
			continue
		}
		if d.in != filepath.Clean(a.spec.Input) { // the parent is inside the input
			parents[filepath.Dir(d.in)] = filepath.Dir(d.out)
		}
	}
	for _, in := range slices.Sorted(maps.Keys(parents)) {
		out := parents[in]
		b, err := readfile.Read(filepath.Join(in, format.DatasetDictFile), "dataset metadata file", readfile.SmallLimit)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := a.writeMeta(filepath.Join(out, format.DatasetDictFile), b); err != nil {
			return err
		}
	}
	return nil
}

// diskDataset writes the metadata of one save_to_disk directory whose
// data files are p.Files[files] (see diskDatasets); why says why it wrote
// none.
func (a *assembler) diskDataset(ds *format.DiskDataset, out string, files []int) (why string, err error) {
	p := a.plan
	names, err := ds.DataFiles()
	if err != nil {
		return "", err
	}
	written := map[string]int{}
	for _, i := range files {
		if p.Files[i].OutFormat != format.Arrow {
			return "the data files are written as " + p.Files[i].OutFormat + ", and load_from_disk reads Arrow", nil
		}
		written[filepath.Base(p.Files[i].In)] = i
	}
	u := format.DiskUpdate{}
	if a.spec.Config.Metrics.PerTrajectory {
		u.Extra = trajectoryColumn
	}
	for _, n := range names {
		i, ok := written[n]
		if !ok {
			return fmt.Sprintf("it names %s, which this run did not write", n), nil
		}
		st, err := os.Stat(a.staged[i])
		if err != nil {
			return "", err
		}
		u.Rows += a.rows[i]
		u.Bytes += st.Size()
		if u.HF == "" {
			in, err := format.Open(a.staged[i], format.Options{})
			if err != nil {
				return "", renamed(err, a.staged[i], p.Files[i].Out)
			}
			u.HF, _ = in.Schema.Metadata(format.HFMetadata)
			in.Close()
		}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(written)), slices.Sorted(slices.Values(names))) {
		return "its _data_files do not list every data file of the directory", nil
	}
	// The data changed, so the fingerprint must: derived from the old one
	// and the settings that shape the output, so that the same run gives
	// the same bytes.
	_, cfp := jobcore.SampledConfigFingerprint(a.spec.Config, a.spec.Sample)
	sum := xxh3.HashString(ds.Fingerprint() + "\x00" + cfp)
	var b [8]byte
	for k := range b {
		b[k] = byte(sum >> (56 - 8*k))
	}
	u.Fingerprint = hex.EncodeToString(b[:])
	state, info, err := ds.Updated(u)
	if err != nil {
		return "", err
	}
	if err := a.writeMeta(filepath.Join(out, format.StateFile), state); err != nil {
		return "", err
	}
	return "", a.writeMeta(filepath.Join(out, format.DatasetInfoFile), info)
}

// writeMeta writes a save_to_disk metadata file, staged in the commit and vouched
// for by the metrics.
func (a *assembler) writeMeta(path string, b []byte) error {
	sp, err := a.out.stage(path)
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(sp)
	if err == nil {
		_, werr := f.Write(b)
		err = f.Finish(werr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	a.vouched = append(a.vouched, &vouched{path: path, staged: sp})
	return nil
}

// note writes one line to the spec's Notes.
func (r *runner) note(f string, a ...any) { note(r.spec.Notes, f, a...) }

// note writes a note to w, if any.
func note(w io.Writer, f string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, f, a...)
	}
}
