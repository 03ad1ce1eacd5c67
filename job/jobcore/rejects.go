package jobcore

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/pipeline"
)

// RejectLine is one line of the rejects file: where the line came from
// (and, in a JSON array, the record's index), why it was rejected, and the
// line itself ("raw" when it is valid UTF-8, "raw_base64" otherwise, so
// nothing is lost).
func RejectLine(r *pipeline.Reject) []byte {
	type line struct {
		File      string `json:"file"`
		Line      int64  `json:"line"`
		Record    int64  `json:"record,omitempty"`
		Reason    string `json:"reason"`
		Detail    string `json:"detail,omitempty"`
		Raw       string `json:"raw,omitempty"`
		RawBase64 string `json:"raw_base64,omitempty"`
	}
	l := line{File: r.Pos.File, Line: r.Pos.Line, Record: r.Pos.Record, Reason: r.Reason, Detail: r.Detail}
	if utf8.Valid(r.Raw) {
		l.Raw = string(r.Raw)
	} else {
		l.RawBase64 = base64.StdEncoding.EncodeToString(r.Raw)
	}
	b, _ := json.Marshal(l) // strings only: cannot fail
	return b
}
