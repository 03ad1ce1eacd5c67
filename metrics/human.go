package metrics

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/trajcompress/trajcompress/outcome"
)

// Human writes a short human-readable table of s to w (meant for stderr):
// the count per outcome (with the uncompressible reasons), records in, out
// and rejected, the images found (when there were any), and token totals
// with the overall ratio. Write errors are
// ignored: the table is informational.
func (s *Summary) Human(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	in := s.RecordsIn()
	pct := func(n int64) string {
		if in == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(in))
	}
	fmt.Fprintf(tw, "outcome\trecords\tshare\n")
	for _, o := range outcome.All() {
		n := s.Count(o)
		fmt.Fprintf(tw, "%s\t%d\t%s\n", o, n, pct(n))
		if o == outcome.Uncompressible {
			for _, r := range outcome.AllReasons() {
				if rn := s.ReasonCount(r); rn > 0 {
					fmt.Fprintf(tw, "  %s\t%d\t%s\n", r, rn, pct(rn))
				}
			}
		}
	}
	fmt.Fprintf(tw, "failed to fit\t%d\t%s\n", s.Count(outcome.CompressedOverLimit)+s.Count(outcome.Uncompressible),
		pct(s.Count(outcome.CompressedOverLimit)+s.Count(outcome.Uncompressible)))
	tw.Flush()
	c := &s.c
	fmt.Fprintf(w, "records: %d in, %d out, %d rejected\n", in, s.RecordsOut(), s.RecordsRejected())
	if c.utf8Repaired > 0 {
		fmt.Fprintf(w, "utf-8:   %d records had ill-formed UTF-8, written with U+FFFD in its place\n", c.utf8Repaired)
	}
	if c.twoTurnLists > 0 {
		fmt.Fprintf(w, "turns:   %d records held both \"conversations\" and \"messages\", with the same turns: one was read and the other written as it came (turn_list_read in the outcome lines)\n", c.twoTurnLists)
	}
	if c.images > 0 {
		fmt.Fprintf(w, "images:  %d found, counted in the tokens below", c.images)
		if c.imagesUnknownSize > 0 {
			fmt.Fprintf(w, " (%d of unknown size: a link or a missing file, counted as the most one image can cost)", c.imagesUnknownSize)
		}
		fmt.Fprintln(w)
	}
	if c.imagesRemoved > 0 {
		fmt.Fprintf(w, "images:  %d old images replaced by text, %d tokens saved\n", c.imagesRemoved, c.imageTokensSaved)
	}
	fmt.Fprintf(w, "tokens:  %d before, %d after, %d saved (ratio %s)\n",
		c.tokensBefore, c.tokensAfter, c.tokensBefore-c.tokensAfter,
		Round(float64(c.tokensAfter)/float64(max(c.tokensBefore, 1)), 4))
	s.q.human(w, c.imageTokensSaved)
}
