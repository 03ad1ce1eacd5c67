package metrics

import (
	"strconv"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/outcome"
)

// The record path fills in an Observation step by step with the methods
// below; each says which fields it sets.

// Reject records that the line is not a trajectory: Outcome [outcome.Invalid]
// with reason as RejectReason.
func (o *Observation) Reject(reason string) {
	o.Outcome, o.RejectReason = outcome.Invalid, reason
}

// Measure records the size of the record as read: tokens and turns before,
// and the same after until [Observation.Settle] says otherwise.
func (o *Observation) Measure(tokens, turns int) {
	o.TokensBefore, o.TokensAfter = tokens, tokens
	o.TurnsBefore, o.TurnsAfter = turns, turns
}

// Leave records an outcome that writes the record as it came in
// (skipped_under_target, uncompressible or summary_failed) and its reason
// ("" for none); no region was replaced.
func (o *Observation) Leave(oc outcome.Outcome, reason string) {
	o.Outcome, o.Reason, o.Region = oc, reason, nil
	o.Retention = Retention{} // no summary is written
}

// Settle records the final outcome of a compressed record and its size as
// written.
func (o *Observation) Settle(oc outcome.Outcome, tokens, turns int) {
	o.Outcome, o.TokensAfter, o.TurnsAfter = oc, tokens, turns
}

// AppendJSON appends the --outcomes line of o (without a newline) to dst and
// returns the extended slice. Keys, in order: source, line, record (only
// for a record of a JSON array: its index), outcome, reason
// (null when none; for invalid records the reject reason), tokens_before,
// tokens_after, turns_before, turns_after, region ([start, end) in input
// turn indices, or null), pairing_problems (of the record as written),
// pairing_problems_before (as read), utf8_repaired (ill-formed UTF-8
// sequences replaced) only when there were any, images (images found in
// the record as read) only when there were any, turn_list_read (the key
// of the list read, of a record with two identical turn lists) only then,
// chat_template_error (the chat template's message, for a record it
// refused: reason chat_template) only then, images_removed and
// image_tokens_saved (old images replaced by text) only when an image was
// removed, prepass, redactions and
// retention (see appendQuality). After counts are normalised as in
// [Summary.Observe]. Strings are escaped per RFC 8259, invalid UTF-8 becomes
// U+FFFD.
func (o Observation) AppendJSON(dst []byte) []byte {
	if o.Outcome != outcome.Invalid {
		o = o.normalized() //nolint:revive // modifies-value-receiver: o is this call's copy, normalised for the encoding only
	}
	dst = append(dst, `{"source":`...)
	dst = jsonx.AppendString(dst, o.Source)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, o.Line, 10)
	if o.Record > 0 {
		dst = append(dst, `,"record":`...)
		dst = strconv.AppendInt(dst, o.Record, 10)
	}
	dst = append(dst, `,"outcome":`...)
	dst = jsonx.AppendString(dst, string(o.Outcome))
	dst = append(dst, `,"reason":`...)
	switch reason := o.Reason; {
	case reason != "":
		dst = jsonx.AppendString(dst, reason)
	case o.RejectReason != "":
		dst = jsonx.AppendString(dst, o.RejectReason)
	default:
		dst = append(dst, "null"...)
	}
	for _, kv := range []struct {
		key string
		v   int
	}{{"tokens_before", o.TokensBefore}, {"tokens_after", o.TokensAfter}, {"turns_before", o.TurnsBefore}, {"turns_after", o.TurnsAfter}} {
		dst = append(dst, `,"`...)
		dst = append(dst, kv.key...)
		dst = append(dst, `":`...)
		dst = strconv.AppendInt(dst, int64(kv.v), 10)
	}
	dst = append(dst, `,"region":`...)
	if o.Region == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(o.Region[0]), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(o.Region[1]), 10)
		dst = append(dst, ']')
	}
	dst = append(dst, `,"pairing_problems":`...)
	dst = strconv.AppendInt(dst, int64(o.PairingProblems), 10)
	dst = append(dst, `,"pairing_problems_before":`...)
	dst = strconv.AppendInt(dst, int64(o.PairingProblemsBefore), 10)
	if o.UTF8Repaired > 0 {
		dst = append(dst, `,"utf8_repaired":`...)
		dst = strconv.AppendInt(dst, int64(o.UTF8Repaired), 10)
	}
	if o.Images > 0 {
		dst = append(dst, `,"images":`...)
		dst = strconv.AppendInt(dst, int64(o.Images), 10)
	}
	if o.TurnListRead != "" {
		dst = append(dst, `,"turn_list_read":`...)
		dst = jsonx.AppendString(dst, o.TurnListRead)
	}
	if o.TemplateError != "" {
		dst = append(dst, `,"chat_template_error":`...)
		dst = jsonx.AppendString(dst, o.TemplateError)
	}
	if o.ImagesRemoved != 0 {
		dst = append(dst, `,"images_removed":`...)
		dst = strconv.AppendInt(dst, int64(o.ImagesRemoved), 10)
		dst = append(dst, `,"image_tokens_saved":`...)
		dst = strconv.AppendInt(dst, int64(o.ImageTokensSaved), 10)
	}
	dst = o.appendTrainer(dst)
	dst = o.appendQuality(dst)
	return append(dst, '}')
}

// MarshalJSON implements [json.Marshaler] with the --outcomes line layout of
// [Observation.AppendJSON].
func (o Observation) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }
