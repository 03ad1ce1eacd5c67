package metrics

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// This file holds what a record's content went through besides the region
// summary: the prepass, secret redaction, and what the summary
// kept of the region it replaced. Each has a per-record part in
// [Observation], an --outcomes key, a mergeable part of [Summary] and a
// report section.

// PrepassSteps names the prepass's steps in the order they run (package
// prepass's Step values index them).
var PrepassSteps = [NumPrepassSteps]string{"duplicates", "digests", "arguments"}

// NumPrepassSteps is the number of prepass steps.
const NumPrepassSteps = 3

// Prepass is what the prepass did to one record.
type Prepass struct {
	// Ran is set when the prepass looked at the record: the prepass was on
	// and the record was over target with a compressible middle.
	Ran bool
	// Fit is set when the record fits by the prepass alone: no region was
	// summarised.
	Fit bool
	// Saved is the tokens each step saved, indexed like PrepassSteps.
	Saved [NumPrepassSteps]int
}

// total is the tokens all steps saved.
func (p Prepass) total() int {
	t := 0
	for _, n := range p.Saved {
		t += n
	}
	return t
}

// Retention is what a summary kept of the region it replaced: the distinct
// tool names called in the region and the distinct paths and commands named
// in those calls' arguments (Tools, Args), and how many of each the summary
// text names (ToolsKept, ArgsKept). All zero when no region was summarised.
type Retention struct {
	Tools, ToolsKept int
	Args, ArgsKept   int
}

// quality is the mergeable aggregate of the per-record figures above.
type quality struct {
	qcounters
	redactions map[string]int64 // per kind; nil until one is seen
}

// qcounters are quality's scalars; comparable.
type qcounters struct {
	prepassRan, prepassChanged, prepassFit int64
	prepassSaved                           [NumPrepassSteps]int64

	redactedRecords int64

	regions                      int64 // regions whose retention was measured
	tools, toolsKept, args, kept int64
}

func (q *quality) observe(o *Observation) {
	if o.Prepass.Ran {
		q.prepassRan++
		if o.Prepass.total() > 0 || o.ImagesRemoved > 0 {
			q.prepassChanged++
		}
		if o.Prepass.Fit {
			q.prepassFit++
		}
		for i, n := range o.Prepass.Saved {
			q.prepassSaved[i] += int64(n)
		}
	}
	if len(o.Redactions) > 0 {
		q.redactedRecords++
		if q.redactions == nil {
			q.redactions = map[string]int64{}
		}
		for k, n := range o.Redactions {
			q.redactions[k] += int64(n)
		}
	}
	if r := o.Retention; r.Tools > 0 || r.Args > 0 {
		q.regions++
		q.tools += int64(r.Tools)
		q.toolsKept += int64(r.ToolsKept)
		q.args += int64(r.Args)
		q.kept += int64(r.ArgsKept)
	}
}

func (q *quality) merge(o *quality) {
	q.prepassRan += o.prepassRan
	q.prepassChanged += o.prepassChanged
	q.prepassFit += o.prepassFit
	for i := range q.prepassSaved {
		q.prepassSaved[i] += o.prepassSaved[i]
	}
	q.redactedRecords += o.redactedRecords
	if len(o.redactions) > 0 && q.redactions == nil {
		q.redactions = map[string]int64{}
	}
	for k, n := range o.redactions {
		q.redactions[k] += n
	}
	q.regions += o.regions
	q.tools += o.tools
	q.toolsKept += o.toolsKept
	q.args += o.args
	q.kept += o.kept
}

func (q *quality) equal(o *quality) bool {
	return q.qcounters == o.qcounters && maps.Equal(q.redactions, o.redactions)
}

// PrepassSection is the report's "prepass" section, present when the run
// had compression.prepass on. RecordsConsidered counts the records the
// prepass looked at (over target, with a compressible middle);
// RecordsChanged those it changed (an image removed included; the image
// step's tokens are in the "images" section, not in TokensSaved); RecordsFitByPrepass those that fit by
// the prepass alone (no region summarised; their outcome is compressed).
type PrepassSection struct {
	RecordsConsidered   int64         `json:"records_considered"`
	RecordsChanged      int64         `json:"records_changed"`
	RecordsFitByPrepass int64         `json:"records_fit_by_prepass"`
	TokensSaved         PrepassTokens `json:"tokens_saved"`
}

// PrepassTokens is the tokens each prepass step saved, in the order the
// steps run (PrepassSteps), and their total.
type PrepassTokens struct {
	Duplicates int64 `json:"duplicates"`
	Digests    int64 `json:"digests"`
	Arguments  int64 `json:"arguments"`
	Total      int64 `json:"total"`
}

// RedactionSection is the report's "redaction" section, present when
// redaction was on: records with at least one secret replaced, and the
// replacements per kind (the marker's kind). It never holds a value.
type RedactionSection struct {
	RecordsRedacted int64            `json:"records_redacted"`
	Redactions      int64            `json:"redactions"`
	ByKind          map[string]int64 `json:"by_kind"`
}

// RetentionSection is the report's "retention" section: over the regions
// summarised in the run that called a tool (Regions), how many of the distinct tool names called in each
// region, and of the distinct paths and commands named in their arguments,
// the summary named (summed over regions). Rate is kept/named, rounded to
// 4 places, null when nothing was named. `trajcompress check` can bound
// the rates.
type RetentionSection struct {
	Regions       int64         `json:"regions"`
	ToolNames     RetentionRate `json:"tool_names"`
	PathsCommands RetentionRate `json:"paths_commands"`
}

// RetentionRate is one retention figure.
type RetentionRate struct {
	Named int64  `json:"named"`
	Kept  int64  `json:"kept"`
	Rate  *Float `json:"rate"`
}

func rate(kept, named int64) RetentionRate {
	r := RetentionRate{Named: named, Kept: kept}
	if named > 0 {
		f := Round(float64(kept)/float64(named), 4)
		r.Rate = &f
	}
	return r
}

func (q *quality) prepassSection() *PrepassSection {
	sv := q.prepassSaved
	return &PrepassSection{RecordsConsidered: q.prepassRan, RecordsChanged: q.prepassChanged, RecordsFitByPrepass: q.prepassFit,
		TokensSaved: PrepassTokens{Duplicates: sv[0], Digests: sv[1], Arguments: sv[2], Total: sv[0] + sv[1] + sv[2]}}
}

func (q *quality) redactionSection() *RedactionSection {
	s := &RedactionSection{RecordsRedacted: q.redactedRecords, ByKind: map[string]int64{}}
	for k, n := range q.redactions {
		s.ByKind[k] = n
		s.Redactions += n
	}
	return s
}

func (q *quality) retentionSection() RetentionSection {
	return RetentionSection{Regions: q.regions, ToolNames: rate(q.toolsKept, q.tools), PathsCommands: rate(q.kept, q.args)}
}

// appendQuality appends the --outcomes keys of this file: "prepass" (null
// unless the prepass looked at the record: {"fit", "saved": {step: tokens}}),
// "redactions" ({kind: count}, empty when none) and "retention" (null
// unless a region was summarised: {"tool_names": [kept, named],
// "paths_commands": [kept, named]}).
func (o *Observation) appendQuality(dst []byte) []byte {
	dst = append(dst, `,"prepass":`...)
	if !o.Prepass.Ran {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"fit":`...)
		dst = strconv.AppendBool(dst, o.Prepass.Fit)
		dst = append(dst, `,"saved":{`...)
		for i, name := range PrepassSteps {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, name)
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, int64(o.Prepass.Saved[i]), 10)
		}
		dst = append(dst, "}}"...)
	}
	dst = append(dst, `,"redactions":{`...)
	for i, k := range slices.Sorted(maps.Keys(o.Redactions)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, k)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(o.Redactions[k]), 10)
	}
	dst = append(dst, '}')
	dst = append(dst, `,"retention":`...)
	if r := o.Retention; r.Tools == 0 && r.Args == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"tool_names":[`...)
		dst = strconv.AppendInt(dst, int64(r.ToolsKept), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(r.Tools), 10)
		dst = append(dst, `],"paths_commands":[`...)
		dst = strconv.AppendInt(dst, int64(r.ArgsKept), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(r.Args), 10)
		dst = append(dst, "]}"...)
	}
	return dst
}

// human writes the lines of [Summary.Human] about the prepass and
// redaction, when they did something. imageTokens are the tokens the
// prepass's image step saved (old images replaced by text), part of the
// prepass's total.
func (q *quality) human(w io.Writer, imageTokens int64) {
	if q.prepassRan > 0 {
		var saved int64
		for _, n := range q.prepassSaved {
			saved += n
		}
		fmt.Fprintf(w, "prepass: %d of %d records over target fit by the prepass alone; %d tokens saved", q.prepassFit, q.prepassRan, saved+imageTokens)
		if imageTokens != 0 {
			fmt.Fprintf(w, " (%d by old images, %d by the text steps)", imageTokens, saved)
		}
		fmt.Fprintln(w)
	}
	if q.redactedRecords > 0 {
		var n int64
		for _, c := range q.redactions {
			n += c
		}
		fmt.Fprintf(w, "redacted: %d secrets in %d records\n", n, q.redactedRecords)
	}
}
