package metrics

import (
	"strconv"

	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// AppendJSON appends the --outcomes line of o (without a newline) to dst and
// returns the extended slice. Keys, in order: source, line, outcome, reason
// (null when none; for invalid records the reject reason), tokens_before,
// tokens_after, turns_before, turns_after, region ([start, end) in input
// turn indices, or null), pairing_problems. After counts are normalised as in
// [Summary.Observe]. Strings are escaped per RFC 8259, invalid UTF-8 becomes
// U+FFFD.
func (o Observation) AppendJSON(dst []byte) []byte {
	if o.Outcome != snap.Invalid {
		o = o.normalized()
	}
	dst = append(dst, `{"source":`...)
	dst = traj.AppendString(dst, o.Source)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, o.Line, 10)
	dst = append(dst, `,"outcome":`...)
	dst = traj.AppendString(dst, string(o.Outcome))
	dst = append(dst, `,"reason":`...)
	switch reason := o.Reason; {
	case reason != "":
		dst = traj.AppendString(dst, reason)
	case o.RejectReason != "":
		dst = traj.AppendString(dst, o.RejectReason)
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
	return append(dst, '}')
}

// MarshalJSON implements [json.Marshaler] with the --outcomes line layout of
// [Observation.AppendJSON].
func (o Observation) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }
