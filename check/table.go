package check

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes a readable report: any setup differences, then one line
// per row with the metric, baseline, run, change, limit and status, then a
// verdict line. Write errors are ignored, as with [fmt.Fprintf]; callers that
// care should write to a buffer.
func (r Result) WriteTable(w io.Writer) {
	for _, d := range r.SetupDiffers {
		fmt.Fprintf(w, "setup differs: %s\n", d)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tBASELINE\tRUN\tCHANGE\tLIMIT\tSTATUS")
	for _, row := range r.Rows {
		change := row.Change
		if change == "" {
			change = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Rule.Path, row.Baseline, row.Run, change, row.Limit, row.Status)
	}
	tw.Flush()
	fmt.Fprintln(w, r.Verdict())
}

// Verdict is the last line of [Result.WriteTable]: "FAIL: n of m checks
// regressed" or "ok: m checks within bounds".
func (r Result) Verdict() string {
	failed := 0
	for _, row := range r.Rows {
		if row.Status.Failed() {
			failed++
		}
	}
	if r.Regressed {
		return fmt.Sprintf("FAIL: %d of %d checks regressed", failed, len(r.Rows))
	}
	return fmt.Sprintf("ok: %d checks within bounds", len(r.Rows))
}
