// Package jsonx holds the JSON helpers trajcompress reads and writes with:
// a validator ([Valid], as strict as encoding/json.Valid and faster), a
// scanner that lists an object's members and an array's elements as byte
// spans ([ValidMembers], [Members], [Elements], [Find]), so that untouched
// fields can be written back byte for byte, string decoding and encoding
// ([Unquote], [AppendString], [AppendStringKeep]), the repair of
// ill-formed UTF-8 ([RepairUTF8]), small lookups on raw objects
// ([Lookup], [Fields], [NumbersFitFloat64]), and the strings that hold an
// image's bytes inline ([DataURL], [IsImageDataURL], [ImageMember],
// [InlineImages]; [MapTexts] rewrites every other string), which redact
// must leave alone and imagetok reads: DataURL, IsImageDataURL and
// ImageMember read a string's shape, InlineImages and MapTexts keep only
// the strings whose payload is also an image or audio file's strict
// base64 (see there), so that text wrapped to look like an image is not
// exempt from redaction.
//
// It knows nothing about trajectories (package traj builds records on it).
//
// Contract: pure; no I/O, no goroutines, no package state; it imports only
// the standard library. Inputs are read, never modified; spans, keys and
// raw values returned point into the input, and strings [Unquote] returns
// may share its memory (see there). The scanner functions other than [Valid] and [ValidMembers]
// expect JSON that has been validated and never report syntax errors.
package jsonx
