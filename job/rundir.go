package job

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/report"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/task"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/zeebo/xxh3"
)

// The run directory of an output set keeps a run's tasks until its final
// outputs are in place: ".<anchor>.tc-run" beside the anchor (the output
// file, or the output directory; the metrics of a dry run), hidden so that
// no walk of an input directory reads it. It holds
//
//	run.json          the manifest: what the run is (config, inputs, task
//	                  size, tool version and build) and the spec merge
//	                  finishes it with
//	tasks/000017.json a task's marker, written last: the task's commit point
//	seg/              the segments the markers point into
//
// A task writes its records, rejects and outcome lines to segments, makes
// them durable, then renames its marker into place (internal/atomicfile:
// temporary file, fsync, rename, directory fsync). The marker records the
// byte range of each segment the task wrote and the hash of its bytes, its
// metrics state and its share of the input fingerprint, and ends with its
// own checksum (a later run verifies all of it before it reuses the task:
// verify.go); bytes past the ranges the markers name are what a killed
// task left, cut off when a later run appends. One
// process running every task (no shards) appends each file's records to
// one segment and every rejected and outcome line to one each, so that
// when the run ends they become the outputs by a rename (JSON Lines) or
// are read once (other formats); the processes of a sharded run write one
// segment per task, which merge puts together in input order.
const (
	runDirSuffix = ".tc-run"
	manifestName = "run.json"
	runVersion   = 1
)

// runClock is the clock a run directory is created at: its manifest's
// Created and TemplateNow (tests set it to create a run on another day).
var runClock = time.Now

// templateClock is the clock strftime_now reads in a run of manifest m:
// the time the run recorded, or nil (the time of rendering) when it
// recorded none.
func (m manifest) templateClock() (func() time.Time, error) {
	if m.TemplateNow == "" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339Nano, m.TemplateNow)
	if err != nil {
		return nil, fmt.Errorf("run manifest: template_now: %w", err)
	}
	return func() time.Time { return at }, nil
}

// runDirOf is the run directory of the output set anchored at anchor.
func runDirOf(anchor string) string {
	return filepath.Join(filepath.Dir(anchor), "."+atomicfile.ShortName(filepath.Base(anchor))+runDirSuffix)
}

// manifest is a run directory's run.json.
type manifest struct {
	Version int    `json:"version"`
	Tool    string `json:"tool_version"`
	// Build is the trajcompress build that started the run ([Build]):
	// only that build resumes it, joins it as a shard or merges it. A
	// run.json without it was written before builds were recorded: by
	// another build, so refused too (--overwrite starts afresh).
	Build    string `json:"build,omitempty"`
	Config   string `json:"config_fingerprint"`
	Listing  string `json:"listing_fingerprint"`
	TaskSize int64  `json:"target_task_size"`
	Tasks    int    `json:"tasks"`
	Created  string `json:"created"`
	// Tokenizer is the tokenizer file's description (tokenize.Describe),
	// for the metrics of the run however its tasks are shared out.
	Tokenizer tokenize.Info `json:"tokenizer"`
	// ImageTokens is the rule images were counted by (imagetok.Rule's
	// String, as tokenizer.image_tokens resolved: auto's rule comes from a
	// file beside the tokenizer's), for the metrics and so that a run is
	// not resumed under another rule.
	ImageTokens string `json:"image_tokens,omitempty"`
	// ChatTemplate is the SHA-256 of the chat template records were
	// counted with ("" without one): the template's setting is in the
	// config, but a file (or a model's tokenizer_config.json) may change
	// under the same setting, and a run is not resumed under another.
	ChatTemplate string `json:"chat_template_sha256,omitempty"`
	// TemplateNow is the time the chat template's strftime_now renders
	// (RFC 3339, with the zone offset of the process that created the
	// run): taken once, when the run is created with a chat template, and
	// used by every task, resume and shard of the run, so that a count
	// does not depend on the day a task ran. "" without a template, and
	// in a run directory from before it was recorded (its tasks render
	// the time they run at).
	TemplateNow string `json:"template_now,omitempty"`
	// Spec is what merge finishes the run with.
	Spec specJSON `json:"spec"`
}

// specJSON is the persisted part of a [Spec]: its config as JSON, and
// its [Settings].
type specJSON struct {
	Config json.RawMessage `json:"config"`
	Settings
}

// span is a byte range of a segment.
type span struct {
	Seg        string `json:"seg"`
	Start, End int64
	// Format of an output segment: JSONL (records appended by one task or
	// several), or the output's own format (the whole output of a file
	// read in one task).
	Format string `json:"format,omitempty"`
	// XXH3 is the hash of the segment's bytes [0, End) when the writer
	// saw them all (hex xxh3-128), for vouching without a second read.
	XXH3 string `json:"xxh3,omitempty"`
	// Sum is the hash of the span's own bytes [Start, End) (hex
	// xxh3-128): a resumed run or a merge re-reads the span and compares
	// before it reuses it (verify.go).
	Sum string `json:"sum,omitempty"`
}

// marker is a task's record of what it did: written last, it is the
// task's commit point.
type marker struct {
	Version int `json:"version"`
	taskRef
	Lines int64 `json:"lines"` // lines (rows) of the input the task read
	// Relative: the task's line numbers (in rejects, outcomes and worst
	// cases) count from its first line, not the file's; merge adds the
	// lines of the tasks before it.
	Relative bool  `json:"relative,omitempty"`
	RowsOut  int64 `json:"rows_out"`
	taskSpans
	blockShare
	// State is the task's metrics.Summary (MarshalState), labelled with
	// its file when the run groups by file.
	State json.RawMessage `json:"state"`
	Worst *report.Worst   `json:"worst,omitempty"`
	// Input is the stamp of the input file the task read (identity.go).
	Input *stamp `json:"input,omitempty"`
	// LLM is what the task's summaries cost the LLM client.
	LLM *llmStats `json:"llm,omitempty"`
	taskTimes
	// Shard is the shard that did the task, when the run was sharded (for
	// a merge to name it when the task fails verification).
	Shard *shardRef `json:"shard,omitempty"`
	// Sum is the marker's checksum: the hex xxh3-128 of the marker's JSON
	// without it, written last (seal, verify.go).
	Sum string `json:"sum,omitempty"`
	// bad says why the marker as read cannot be trusted ("" when it can
	// as far as its own bytes tell; its segments are checked by verify).
	bad string
}

// shardRef is the shard of a sharded run that did a task.
type shardRef struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// taskRef names a marker's task (package task): its index, its file, and
// which part of the file's it is.
type taskRef struct {
	Task  int `json:"task"`
	File  int `json:"file"`
	Part  int `json:"part"`
	Parts int `json:"parts"`
}

// taskSpans are the spans of the segments a task wrote its records,
// rejects and outcome lines to (nil: none written there).
type taskSpans struct {
	Output   *span `json:"output,omitempty"`
	Rejects  *span `json:"rejects,omitempty"`
	Outcomes *span `json:"outcomes,omitempty"`
}

// blockShare is a task's share of the input fingerprint: the xxh3-64 of
// each of its blocks (package task) from FirstBlock on.
type blockShare struct {
	FirstBlock int64    `json:"first_block"`
	Blocks     []string `json:"blocks"`
}

// taskTimes are when a task started and ended (RFC 3339, UTC).
type taskTimes struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// llmStats is the part of llm.Stats the metrics' run block reports.
type llmStats struct {
	Retries       map[string]int64 `json:"retries,omitempty"`
	ErrorsByCause map[string]int64 `json:"errors_by_cause,omitempty"`
	CacheMisses   int64            `json:"cache_misses"`
}

// llmDelta is what happened between two snapshots of the client's stats.
func llmDelta(before, after llm.Stats) *llmStats {
	d := &llmStats{CacheMisses: after.CacheMisses - before.CacheMisses}
	sub := func(a, b map[string]int64) map[string]int64 {
		var m map[string]int64
		for k, v := range a {
			if n := v - b[k]; n != 0 {
				if m == nil {
					m = map[string]int64{}
				}
				m[k] = n
			}
		}
		return m
	}
	d.Retries, d.ErrorsByCause = sub(after.Retries, before.Retries), sub(after.ErrorsByCause, before.ErrorsByCause)
	return d
}

func (s *llmStats) add(o *llmStats) {
	if o == nil {
		return
	}
	s.CacheMisses += o.CacheMisses
	for _, p := range []struct {
		dst *map[string]int64
		src map[string]int64
	}{{&s.Retries, o.Retries}, {&s.ErrorsByCause, o.ErrorsByCause}} {
		for k, v := range p.src {
			if *p.dst == nil {
				*p.dst = map[string]int64{}
			}
			(*p.dst)[k] += v
		}
	}
}

func (m *marker) summary() (*metrics.Summary, error) {
	var s metrics.Summary
	if err := s.UnmarshalState(m.State); err != nil {
		return nil, fmt.Errorf("task %d: %w", m.Task, err)
	}
	return &s, nil
}

// runDir is an opened run directory: its manifest, the markers of the
// tasks done, and the segments this process appends to.
type runDir struct {
	path    string
	man     manifest
	markers []*marker // per task: its marker once done
	// committed is how far the markers cover each segment; segs are the
	// segments open for appending.
	committed map[string]int64
	segs      map[string]*segFile
}

func (d *runDir) markerPath(t int) string {
	return filepath.Join(d.path, "tasks", fmt.Sprintf("%06d.json", t))
}

func (d *runDir) segPath(name string) string { return filepath.Join(d.path, "seg", name) }

// ErrNothingToResume is returned by a run with Resume set when its output
// holds no unfinished run.
var ErrNothingToResume = errors.New("nothing to resume")

// openRunDir opens the run directory beside anchor for a run described
// by want, creating it when there is none. An unfinished run there with
// another manifest is an error unless overwrite, which discards it; with
// resume, a missing one is. Several shard processes may open it at once:
// the first to link its manifest into place creates the run.
//
// A shard only holds a shared lock: its siblings may be running tasks in
// the directory, or discarding and creating it at the same moment. So a
// shard never discards a run: one with its own settings is its siblings'
// (it joins it, --overwrite or not), one with other settings is refused
// even with --overwrite (only a run without shards, which holds the
// output set's lock alone, or removing the directory, discards it).
func openRunDir(anchor string, want manifest, resume, overwrite, shard bool, notes func(string, ...any)) (*runDir, error) {
	d := &runDir{path: runDirOf(anchor), man: want}
	if err := commit.NotLink(d.path); err != nil {
		return nil, usagef("the run directory: %w; remove it", err)
	}
	have, err := readManifest(filepath.Join(d.path, manifestName))
	keep, err := d.settle(have, err, want, overwrite, shard, notes)
	if err != nil {
		return nil, err
	}
	if keep {
		d.man = have
		return d, nil
	}
	if resume {
		return nil, usagef("--resume: %w: %s holds no unfinished run of this output", ErrNothingToResume, filepath.Dir(anchor))
	}
	if err := d.create(want); err != nil {
		return nil, err
	}
	return d, nil
}

// settle decides, from the manifest found in the run directory (have, or
// rerr reading it), whether the run there goes on (keep) or a run is to
// be created: none was there, or it was discarded.
func (d *runDir) settle(have manifest, rerr error, want manifest, overwrite, shard bool, notes func(string, ...any)) (keep bool, err error) {
	switch {
	case rerr == nil && have.Spec.Input == "-":
		notes("note: %s: a run that read standard input cannot be resumed: started over\n", d.path)
		return false, os.RemoveAll(d.path)
	case rerr == nil:
		why := have.mismatch(want)
		switch {
		case why == "" && overwrite && !shard:
			return false, os.RemoveAll(d.path)
		case why == "":
			return true, nil
		case shard:
			return false, usagef("the output holds an unfinished run (%s) that differs from this one: %s; a shard does not discard it (its siblings may be starting on it): remove that directory before starting the shards, or run with the settings it was started with", d.path, why)
		case !overwrite:
			return false, usagef("the output holds an unfinished run (%s) that differs from this one: %s; pass --overwrite to discard it, or run with the settings it was started with", d.path, why)
		}
		notes("note: %s: an unfinished run with other settings was discarded (--overwrite): %s\n", d.path, why)
		return false, os.RemoveAll(d.path)
	case errors.Is(rerr, fs.ErrNotExist):
		return false, nil
	case errors.As(rerr, new(damagedManifest)):
		if shard || !overwrite {
			how := "pass --overwrite to discard it and start over"
			if shard {
				how = "remove that directory before starting the shards"
			}
			return false, usagef("the output holds an unfinished run (%s) whose manifest is %v: %s", d.path, rerr, how)
		}
		notes("note: %s: an unfinished run with a damaged manifest was discarded (--overwrite): %v\n", d.path, rerr)
		return false, os.RemoveAll(d.path)
	}
	return false, rerr
}

// create creates the run directory with the manifest want — or joins the
// run another process created there meanwhile, if it is the same.
func (d *runDir) create(want manifest) error {
	for _, sub := range []string{"tasks", "seg"} {
		if err := os.MkdirAll(filepath.Join(d.path, sub), 0o755); err != nil {
			return err
		}
	}
	now := runClock()
	want.Created = now.UTC().Format(time.RFC3339)
	if want.ChatTemplate != "" {
		want.TemplateNow = now.Format(time.RFC3339Nano)
	}
	if err := want.validate(); err != nil {
		return fmt.Errorf("run manifest: %w", err)
	}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil { // never an empty manifest that every later run trips on
		return fmt.Errorf("run manifest: %w", err)
	}
	// Linked, not renamed, into place: a link fails if another process
	// made the manifest first.
	mp := filepath.Join(d.path, manifestName)
	err = placeSynced(mp, b, os.Link)
	if errors.Is(err, fs.ErrExist) {
		have, err := readManifest(mp)
		if err != nil {
			return err
		}
		if why := have.mismatch(want); why != "" {
			return usagef("another process started a run of this output (%s) that differs from this one: %s", d.path, why)
		}
		d.man = have
		return nil
	}
	if err != nil {
		return err
	}
	syncDir(d.path)
	d.man = want
	return nil
}

// marker reads the marker of task t: nil when the task is not done. A
// marker that is not one, or does not match its checksum, is returned
// with bad saying so (verify.go): never trusted, it is a task to run
// again (a resume) or a refusal (a merge).
func (d *runDir) marker(t int) (*marker, error) {
	b, err := readfile.Read(d.markerPath(t), "task marker", readfile.MetricsLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		return &marker{taskRef: taskRef{Task: t}, bad: "its marker " + err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	var m marker
	if err := json.Unmarshal(b, &m); err != nil {
		return &marker{taskRef: taskRef{Task: t}, bad: fmt.Sprintf("its marker is damaged (%v)", err)}, nil
	}
	if m.Task != t {
		return &marker{taskRef: taskRef{Task: t}, bad: fmt.Sprintf("its marker names task %d", m.Task)}, nil
	}
	m.bad = m.unsealed(b)
	return &m, nil
}

// commitMarker puts the marker of a task in place, sealed with its
// checksum: its commit point. The marker is written under a temporary
// name, synced and renamed; the directory is not synced after the rename
// (that would be one more sync per task, felt with thousands of small
// files): a crash that loses the rename loses the marker only, and the
// task is run again — the segments it points into were made durable
// before.
func (d *runDir) commitMarker(m *marker) error {
	b, err := m.seal()
	if err != nil {
		return err
	}
	return placeSynced(d.markerPath(m.Task), b, os.Rename)
}

// placeSynced writes data and a newline to a temporary file beside path,
// syncs it, and puts it at path with place (os.Rename, or os.Link to fail
// when path exists); the temporary name never stays.
func placeSynced(path string, data []byte, place func(old, new string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp.Name(), path)
	}
	os.Remove(tmp.Name()) // after a rename: already gone
	return err
}

// lockTask keeps another process off task t while this one runs it (two
// shards given the same index by mistake, a scheduler's retry): nil and
// false when another holds it.
func (d *runDir) lockTask(t int) (*commit.Tx, bool, error) {
	tx, err := commit.Begin(strings.TrimSuffix(d.markerPath(t), ".json"), commit.Options{})
	if errors.Is(err, commit.ErrLocked) {
		return nil, false, nil
	}
	return tx, err == nil, err
}

// listingFingerprint is what a resumed run must find unchanged of its
// inputs: each file's name (relative to the input), size and modification
// time. The input fingerprint of the metrics hashes their bytes.
func listingFingerprint(p Plan, input string) string {
	h := sha256.New()
	for _, f := range p.Files {
		name := f.In
		if rel, err := filepath.Rel(input, f.In); err == nil && p.Dir != "" {
			name = rel
		}
		size, mtime := int64(0), int64(0)
		if st, err := os.Stat(f.In); err == nil {
			size, mtime = st.Size(), st.ModTime().UnixNano()
		}
		fmt.Fprintf(h, "%q %d %d %s\n", filepath.ToSlash(name), size, mtime, f.OutFormat)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// syncDir asks for dir's entries to be on disk: best effort, as the
// run directory's state is checked when it is read again (a marker or
// segment that did not survive is a task to run again).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// segment opens the segment name for appending after what the committed
// markers cover of it (a killed task's bytes past that are cut off). One
// process running every task keeps each segment open across its tasks.
func (d *runDir) segment(name string) (*segFile, error) {
	if s, ok := d.segs[name]; ok {
		return s, nil
	}
	keep := d.committed[name]
	f, err := atomicfile.Append(d.segPath(name), keep)
	if err != nil {
		return nil, err
	}
	s := &segFile{name: name, f: f, bw: bufio.NewWriterSize(f, 1<<20), end: keep, synced: keep, task: xxh3.New(), taskFrom: keep}
	if keep == 0 {
		s.h = xxh3.New()
	}
	d.segs[name] = s
	return s, nil
}

// closeSegs closes the open segments (a shard's after each task).
func (d *runDir) closeSegs() error {
	var first error
	for name, s := range d.segs {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
		delete(d.segs, name)
	}
	return first
}

// missingTasks lists the tasks without a marker.
func (d *runDir) missingTasks() []int {
	var missing []int
	for i, m := range d.markers {
		if m == nil {
			missing = append(missing, i)
		}
	}
	return missing
}

// eachLine calls fn with each line of the span (without its "\n").
func (d *runDir) eachLine(sp *span, fn func([]byte) error) error {
	if s, ok := d.segs[sp.Seg]; ok {
		if err := s.bw.Flush(); err != nil {
			return err
		}
	}
	seg, err := os.Open(d.segPath(sp.Seg))
	if err != nil {
		return err
	}
	defer seg.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(seg, sp.Start, sp.End-sp.Start), 1<<20)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return fmt.Errorf("segment %s: the span [%d, %d) ends inside a line", sp.Seg, sp.Start, sp.End)
			}
			if ferr := fn(line[:len(line)-1]); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// closeAll closes the open segments, giving up what was not committed.
func (d *runDir) closeAll() {
	for name, sg := range d.segs {
		_ = sg.close() // giving up: what was not committed is discarded anyway
		delete(d.segs, name)
	}
}

// done records the marker of a task committed by this process, and how
// far it covers its segments.
func (d *runDir) done(m *marker) {
	d.markers[m.Task] = m
	for _, sp := range []*span{m.Output, m.Rejects, m.Outcomes} {
		if sp != nil && sp.Format == format.JSONL && sp.Seg != "" {
			d.committed[sp.Seg] = max(d.committed[sp.Seg], sp.End)
		}
	}
}

// readMarkers reads the markers of the tasks done, and how far they cover
// each segment; it returns how many are done. Markers are read, not
// trusted: verifyMarkers checks them before they are reused.
func (d *runDir) readMarkers(tasks []task.Task) (done int, err error) {
	d.markers = make([]*marker, len(tasks))
	d.segs = map[string]*segFile{}
	for _, t := range tasks {
		m, err := d.marker(t.Index)
		if err != nil {
			return done, err
		}
		d.markers[t.Index] = m
		if m != nil {
			done++
		}
	}
	d.cover()
	return done, nil
}

// cover sets how far the markers cover each segment: a later task
// appends after that, cutting off what is past it.
func (d *runDir) cover() {
	d.committed = map[string]int64{}
	for _, m := range d.markers {
		if m == nil {
			continue
		}
		for _, sp := range []*span{m.Output, m.Rejects, m.Outcomes} {
			if sp != nil {
				d.committed[sp.Seg] = max(d.committed[sp.Seg], sp.End)
			}
		}
	}
}
