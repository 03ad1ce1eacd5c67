package pipeline

import (
	"errors"
	"fmt"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// repair applies Options.Trainer.Repair to r's record: the repaired record
// is encoded and read again, so that every later step sees it as input.
func (c *Compressor) repair(r *record) {
	if c.opts.Trainer.Repair == nil {
		return
	}
	turns, done := c.opts.Trainer.Repair(r.rec)
	if len(done) == 0 {
		return
	}
	raw := r.rec.AppendJSON(nil, turns)
	rec, err := traj.Decode(raw, r.in.pos, c.opts.Counting.Schema)
	if err != nil {
		return // not a record once repaired: kept as read
	}
	r.in.unrepaired, r.in.raw, r.rec = r.in.raw, raw, rec
	r.obs.Repairs = done
}

// decode reads the line as a trajectory; a line that is not one becomes a
// Reject (and an invalid observation). Ill-formed UTF-8 is repaired first
// (jsonx.RepairUTF8: U+FFFD per maximal subpart, counted in the
// observation), so that every output is valid UTF-8 whatever the input
// held and token counts are of the text as written; a rejected line keeps
// its bytes as read.
func (c *Compressor) decode(r *record) *Reject {
	read := r.in.raw
	r.in.raw, r.obs.UTF8Repaired = jsonx.RepairUTF8(r.in.raw)
	rec, err := traj.Decode(r.in.raw, r.in.pos, c.opts.Counting.Schema)
	if err != nil {
		var de *traj.DecodeError
		errors.As(err, &de)
		r.obs.Reject(de.Reason)
		detail := de.Detail
		if n := r.obs.UTF8Repaired; n > 0 {
			// The detail is of the repaired text: say so, or a byte 0xFF
			// reads as an error about 'ï' (U+FFFD's first byte).
			detail += fmt.Sprintf(" (in the line with its %d ill-formed UTF-8 sequence(s) read as U+FFFD; raw_base64 holds the bytes as read)", n)
		}
		return &Reject{Pos: r.in.pos, Reason: de.Reason, Detail: detail, Raw: read}
	}
	r.rec = rec
	r.obs.TurnListRead = ""
	if rec.OtherTurnsKey != "" {
		r.obs.TurnListRead = rec.TurnsKey()
	}
	return nil
}
