package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/internal/readfile"
)

// The metadata files of a `datasets` save_to_disk directory: a Dataset
// directory holds state.json and dataset_info.json beside its
// data-0000x-of-0000n.arrow files (Arrow IPC streams); a DatasetDict
// directory holds dataset_dict.json and one such directory per split.
const (
	StateFile       = "state.json"
	DatasetInfoFile = "dataset_info.json"
	DatasetDictFile = "dataset_dict.json"
)

// DiskDataset is the metadata of a `datasets` save_to_disk directory, read
// so that a compressed copy of its data files can be loaded the same way
// (datasets.load_from_disk): see [DiskDataset.Updated].
type DiskDataset struct {
	Dir         string
	state, info *jsonval.Object
}

// DiskDatasetError says why a directory holding a state.json is not read
// as a save_to_disk directory: its state.json or dataset_info.json is
// missing or not what datasets writes. It names the file.
type DiskDatasetError struct{ Err error }

func (e DiskDatasetError) Error() string { return e.Err.Error() }
func (e DiskDatasetError) Unwrap() error { return e.Err }

// OpenDiskDataset reads the state.json and dataset_info.json of dir; it
// returns nil and no error when dir has no state.json, or one without
// datasets' "_data_files" (not a save_to_disk directory: a state.json of
// something else). A state.json with "_data_files" whose files are not
// the JSON objects datasets writes, or a missing dataset_info.json, is a
// [DiskDatasetError] naming the file; the data files are records all the
// same.
func OpenDiskDataset(dir string) (*DiskDataset, error) {
	d := &DiskDataset{Dir: dir}
	for _, f := range []struct {
		name string
		obj  **jsonval.Object
	}{{StateFile, &d.state}, {DatasetInfoFile, &d.info}} {
		p := filepath.Join(dir, f.name)
		b, err := readfile.Read(p, "dataset metadata file", readfile.SmallLimit)
		if errors.Is(err, fs.ErrNotExist) && f.name == StateFile {
			return nil, nil
		}
		if err != nil {
			return nil, DiskDatasetError{fmt.Errorf("save_to_disk directory %s: %w", dir, err)}
		}
		if *f.obj, err = jsonval.DecodeObject(b); err != nil {
			if f.name == StateFile {
				return nil, nil // not datasets' state.json
			}
			return nil, DiskDatasetError{fmt.Errorf("%s: not a datasets %s: %w", p, f.name, err)}
		}
		if f.name == StateFile {
			if _, ok := d.state.Get("_data_files"); !ok {
				return nil, nil
			}
		}
	}
	return d, nil
}

// DataFiles lists the data files state.json names (its "_data_files"), in
// order, relative to Dir.
func (d *DiskDataset) DataFiles() ([]string, error) {
	v, _ := d.state.Get("_data_files")
	list, ok := v.([]any)
	bad := DiskDatasetError{fmt.Errorf("%s: _data_files is not a list of {\"filename\": …}", filepath.Join(d.Dir, StateFile))}
	if !ok {
		return nil, bad
	}
	var out []string
	for _, e := range list {
		o, ok := e.(*jsonval.Object)
		if !ok {
			return nil, bad
		}
		name, _ := o.Get("filename")
		s, ok := name.(string)
		if !ok || s == "" || filepath.IsAbs(s) || !filepath.IsLocal(s) {
			return nil, bad
		}
		out = append(out, s)
	}
	return out, nil
}

// Fingerprint is state.json's "_fingerprint" ("" when absent).
func (d *DiskDataset) Fingerprint() string {
	v, _ := d.state.Get("_fingerprint")
	s, _ := v.(string)
	return s
}

// DiskUpdate is what a compressed copy of a save_to_disk directory holds.
type DiskUpdate struct {
	// HF is the "huggingface" schema metadata of the written Arrow files
	// ({"info":{"features":…}}); its features replace dataset_info.json's,
	// which must name exactly the files' columns for load_from_disk.
	HF string
	// Rows are the records written over all data files, Bytes their size.
	Rows, Bytes int64
	// Fingerprint is the new "_fingerprint": the data changed.
	Fingerprint string
	// Extra is the column the run added, if any: when the files carry no
	// features (HF is empty), its feature is added to dataset_info.json's.
	Extra Column
}

// Updated returns the state.json and dataset_info.json of the compressed
// copy: the same files with, in state.json, the new fingerprint (the data
// file names are kept: the copy's files have the same names); in
// dataset_info.json, the features of the written files, and, where they
// are recorded, the split's num_examples and num_bytes (the size of the
// Arrow files, which for uncompressed IPC is within a few percent of the
// in-memory size datasets records), dataset_size and size_in_bytes. Keys
// keep their order; the layout is datasets' (json.dump, indent=2).
func (d *DiskDataset) Updated(u DiskUpdate) (state, info []byte, err error) {
	set(d.state, "_fingerprint", u.Fingerprint)
	if hf, err := jsonval.DecodeObject([]byte(u.HF)); err == nil {
		if i, _ := hf.Get("info"); i != nil {
			if io, ok := i.(*jsonval.Object); ok {
				if f, ok := io.Get("features"); ok && f != nil {
					set(d.info, "features", f)
				}
			}
		}
	} else if feats, ok := get[*jsonval.Object](d.info, "features"); ok && u.Extra.Name != "" && u.Extra.Sample != nil {
		if _, has := feats.Get(u.Extra.Name); !has {
			if t, err := jsonval.TypeOf(u.Extra.Sample); err == nil {
				set(feats, u.Extra.Name, jsonval.HFFeature(t))
			}
		}
	}
	split, _ := d.state.Get("_split")
	if splits, ok := get[*jsonval.Object](d.info, "splits"); ok {
		if name, ok := split.(string); ok {
			if s, ok := get[*jsonval.Object](splits, name); ok {
				setIfPresent(s, "num_examples", json.Number(fmt.Sprint(u.Rows)))
				setIfPresent(s, "num_bytes", json.Number(fmt.Sprint(u.Bytes)))
			}
		}
		var total int64
		all := true
		for _, v := range splits.Vals {
			s, ok := v.(*jsonval.Object)
			if !ok {
				all = false
				break
			}
			n, _ := s.Get("num_bytes")
			x, err := jsonval.ParseInt(n, 64)
			if err != nil {
				all = false
				break
			}
			total += x
		}
		if all {
			setIfPresent(d.info, "dataset_size", json.Number(fmt.Sprint(total)))
			if dl, ok := d.info.Get("download_size"); ok {
				if x, err := jsonval.ParseInt(dl, 64); err == nil {
					setIfPresent(d.info, "size_in_bytes", json.Number(fmt.Sprint(total+x)))
				}
			}
		}
	}
	return indent(d.state), indent(d.info), nil
}

func get[T any](o *jsonval.Object, key string) (T, bool) {
	v, _ := o.Get(key)
	t, ok := v.(T)
	return t, ok
}

// set replaces key's value in place, or appends the key.
func set(o *jsonval.Object, key string, v any) {
	for i, k := range o.Keys {
		if k == key {
			o.Vals[i] = v
			return
		}
	}
	o.Keys = append(o.Keys, key)
	o.Vals = append(o.Vals, v)
}

// setIfPresent replaces key's value when the key is there and not null.
func setIfPresent(o *jsonval.Object, key string, v any) {
	if old, ok := o.Get(key); ok && old != nil {
		set(o, key, v)
	}
}

// indent is o as Python's json.dump(o, f, indent=2) lays it out.
func indent(o *jsonval.Object) []byte {
	var b bytes.Buffer
	json.Indent(&b, jsonval.Append(nil, o), "", "  ") //nolint:errcheck // valid JSON: cannot fail
	return b.Bytes()
}
