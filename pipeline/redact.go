package pipeline

// redact replaces the secrets of the line with typed markers
// (Options.Redactor, [redact.Redactor.RedactLine]) before it is decoded,
// so that every later step sees only the markers: the counts, the
// prepass, every text sent to a summarizer, the record written, and a line
// that goes to the rejects file. The counts per kind go to the
// observation.
func (c *Compressor) redact(r *record) {
	if c.opts.Redactor == nil {
		return
	}
	if out, counts := c.opts.Redactor.RedactLine(r.in.raw); len(counts) > 0 {
		r.in.raw = out
		r.obs.Redactions = counts
	}
}
