package job

// Settings is the persisted part of a [Spec]: what decides what a run
// writes. A run directory's manifest keeps it (run.json "spec", beside
// the config), a resumed run or a shard must agree with it, and [Merge]
// finishes the run with it. A Spec field that is not here nor the config
// is process-local (the test TestSpecFieldsPersistedOrLocal lists them).
type Settings struct {
	Input string `json:"input"` // a file or a directory of them
	// NoRecursive keeps a directory input to its own files; by default its
	// subdirectories are walked too, and their relative paths kept in the
	// output directory.
	NoRecursive bool `json:"no_recursive,omitempty"`
	// FollowLinks makes the walk of a directory input read the links it
	// holds to files outside it too; by default they are left out, with a
	// note.
	FollowLinks bool `json:"follow_links,omitempty"`
	// Paths are where the run writes.
	Paths
	DryRun bool `json:"dry_run,omitempty"`
	// Sample, when set, processes a reproducible sample of each file.
	Sample *Sample `json:"sample,omitempty"`
	// PriceIn and PriceOut are USD per million prompt and completion
	// tokens, for the cost figure in the metrics.
	PriceIn  float64 `json:"price_in,omitempty"`
	PriceOut float64 `json:"price_out,omitempty"`
	// GroupBy names the top-level record field the metrics' per-source
	// breakdown groups by; "" groups by input file.
	GroupBy string `json:"group_by,omitempty"`
	// TaskSize is the target size of a task (package task); 0 means
	// task.DefaultSize. It decides how work is split, resumed and shared
	// out, never the output bytes.
	TaskSize int64 `json:"target_task_size"`
	// MaxRecordBytes is the longest JSON Lines record read (the CLI's
	// default is DefaultMaxRecordBytes): a longer one is rejected
	// (record_too_large) with its size, never read whole. 0 means no
	// limit.
	MaxRecordBytes int64 `json:"max_record_bytes,omitempty"`
}

// Paths are the paths a run writes, as given: "" means the default (see
// [Plan]; no outcomes file by default).
type Paths struct {
	Output   string `json:"output,omitempty"`
	Metrics  string `json:"metrics,omitempty"`
	Rejects  string `json:"rejects,omitempty"`
	Outcomes string `json:"outcomes,omitempty"`
	// Report, when set, is where the run's HTML report goes (package
	// report), with the worst cases.
	Report string `json:"report,omitempty"`
	// OutputFormatSet says the output format was chosen explicitly (flag
	// or config), so an --output name's extension does not choose it.
	OutputFormatSet bool `json:"output_format_set,omitempty"`
}
