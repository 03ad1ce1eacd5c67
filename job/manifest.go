package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/internal/readfile"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/tokenize"
)

// mismatch says how two manifests differ, "" when a run of one may go on
// as the other.
func (m manifest) mismatch(o manifest) string {
	var diffs []string
	if m.Version != o.Version || m.Tool != o.Tool {
		diffs = append(diffs, fmt.Sprintf("trajcompress %s (format %d), this is %s (format %d)", m.Tool, m.Version, o.Tool, o.Version))
	}
	if m.Build != o.Build {
		diffs = append(diffs, "another trajcompress build started it ("+buildName(m.Build)+"), this is "+buildName(o.Build))
	}
	if m.Config != o.Config {
		diffs = append(diffs, "the config differs ("+configDiff(m.Spec, o.Spec)+")")
	}
	if m.Listing != o.Listing {
		diffs = append(diffs, "the input files differ (names, sizes or modification times)")
	}
	if m.TaskSize != o.TaskSize || m.Tasks != o.Tasks {
		diffs = append(diffs, fmt.Sprintf("--target-task-size %d (%d tasks), now %d (%d tasks)", m.TaskSize, m.Tasks, o.TaskSize, o.Tasks))
	}
	if m.Spec.DryRun != o.Spec.DryRun {
		diffs = append(diffs, "one of the runs is a dry run")
	}
	if m.Spec.MaxRecordBytes != o.Spec.MaxRecordBytes {
		diffs = append(diffs, fmt.Sprintf("--max-record-bytes %d, now %d", m.Spec.MaxRecordBytes, o.Spec.MaxRecordBytes))
	}
	if m.Spec.GroupBy != o.Spec.GroupBy {
		diffs = append(diffs, fmt.Sprintf("--group-by %q, now %q", m.Spec.GroupBy, o.Spec.GroupBy))
	}
	// What the markers hold: a run that kept no outcomes, rejects or worst
	// cases cannot finish one that wants them.
	if (m.Spec.Outcomes != "") != (o.Spec.Outcomes != "") || (m.Spec.Report != "") != (o.Spec.Report != "") {
		diffs = append(diffs, "--outcomes or --report differ")
	}
	if !sameTokenizer(m.Tokenizer, o.Tokenizer) {
		diffs = append(diffs, fmt.Sprintf("the tokenizer differs (%s sha256 %s, now %s sha256 %s)", m.Tokenizer.Name, m.Tokenizer.Hash, o.Tokenizer.Name, o.Tokenizer.Hash))
	}
	if m.ChatTemplate != o.ChatTemplate {
		diffs = append(diffs, fmt.Sprintf("the chat template differs (sha256 %s, now %s)", orNone(m.ChatTemplate), orNone(o.ChatTemplate)))
	}
	if m.ImageTokens != o.ImageTokens {
		diffs = append(diffs, fmt.Sprintf("the image token rule differs (%s, now %s)", m.ImageTokens, o.ImageTokens))
	}
	return strings.Join(diffs, "; ")
}

// orNone is s, or "none" when empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// buildName is how a message names a build recorded in a run directory.
func buildName(b string) string {
	if b == "" {
		return "a build that did not record itself"
	}
	return b
}

// configDiff names the settings that change the output and differ between
// the runs of two manifests' specs, each with its old and new value
// ("compression.target_max_tokens 15250 → 9000"); the sample counts
// too. When the configs cannot be read (a manifest of another version),
// it says only that settings differ.
func configDiff(was, now specJSON) string {
	flat := func(s specJSON) (map[string]string, bool) {
		var c config.Config
		if err := json.Unmarshal(s.Config, &c); err != nil {
			return nil, false
		}
		b, _ := json.Marshal(jobcore.OutputSettings(c))
		var tree map[string]any
		if json.Unmarshal(b, &tree) != nil {
			return nil, false
		}
		out := map[string]string{}
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			if m, ok := v.(map[string]any); ok {
				for k, x := range m {
					walk(strings.TrimPrefix(prefix+"."+k, "."), x)
				}
				return
			}
			b, _ := json.Marshal(v)
			out[prefix] = string(b)
		}
		walk("", tree)
		if s.Sample != nil {
			out["--sample-percent"] = fmt.Sprint(s.Sample.Percent)
			out["--seed"] = fmt.Sprint(s.Sample.Seed)
		}
		return out, true
	}
	a, okA := flat(was)
	b, okB := flat(now)
	if !okA || !okB {
		return "settings that change the output"
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if a[k] != b[k] {
			va, vb := a[k], b[k]
			if va == "" {
				va = "unset"
			}
			if vb == "" {
				vb = "unset"
			}
			diffs = append(diffs, fmt.Sprintf("%s %s → %s", k, va, vb))
		}
	}
	if len(diffs) == 0 {
		return "settings that change the output"
	}
	return strings.Join(diffs, ", ")
}

// sameTokenizer reports whether two tokenizer descriptions count alike:
// the same kind, split and file contents (by hash), wherever the file was
// found (each machine of a sharded run has its own Hugging Face cache);
// the name decides only for the embedded encodings, which have no hash.
func sameTokenizer(a, b tokenize.Info) bool {
	if a.Kind != b.Kind || a.Split != b.Split || a.SlowPath != b.SlowPath || a.Hash != b.Hash {
		return false
	}
	return a.Hash != "" || a.Name == b.Name
}

// damagedManifest is a run.json that is not a manifest: cut short, not
// JSON, or with values no run writes.
type damagedManifest struct {
	path string
	err  error
}

func (e damagedManifest) Error() string {
	return fmt.Sprintf("damaged: %s: %v", e.path, e.err)
}

// readManifest reads and checks the manifest at path: an error wrapping
// fs.ErrNotExist when there is none, a damagedManifest when it is not one.
func readManifest(path string) (manifest, error) {
	var m manifest
	b, err := readfile.Read(path, "run manifest", readfile.SmallLimit) // a few kB: the config and a few names
	if errors.Is(err, readfile.ErrTooLarge) {
		return m, damagedManifest{path, err}
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, damagedManifest{path, err}
	}
	if err := m.validate(); err != nil {
		return m, damagedManifest{path, err}
	}
	return m, nil
}

// validate checks what a run writes in its manifest: the fingerprints,
// counts that are not negative, and prices that are finite numbers >= 0.
func (m manifest) validate() error {
	switch {
	case m.Config == "" || m.Listing == "":
		return errors.New("no config or input fingerprint")
	case m.Tasks < 0 || m.TaskSize < 0 || m.Spec.TaskSize < 0:
		return fmt.Errorf("a negative task count or size (%d tasks of %d bytes)", m.Tasks, m.TaskSize)
	}
	if _, err := m.templateClock(); err != nil {
		return err
	}
	for _, p := range []float64{m.Spec.PriceIn, m.Spec.PriceOut} {
		if !(p >= 0 && p <= math.MaxFloat64) {
			return fmt.Errorf("a price of %v", p)
		}
	}
	return nil
}
