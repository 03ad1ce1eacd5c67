// Package jsonval is the JSON value model shared by the Parquet and Arrow
// row codecs in format/parquet and format/arrow.
//
// Decode turns one JSON value into a tree of nil, bool, [json.Number],
// string, []any and *[Object] (an object that keeps its key order). Numbers
// stay [json.Number] text, so integers above 2^53 are never rounded through
// float64. Well-formed input is parsed in place (one copy per string, the
// tree encoding/json's Decoder gives); [DecodeObjectBorrowed] shares the
// input's bytes instead, for a tree used only while the input is. Append writes such a tree back as compact JSON; AppendFloat is
// the float encoder both codecs use when they turn a row into a JSON object
// (strings go through jsonx.AppendStringKeep: control characters escaped,
// HTML characters not, ill-formed UTF-8 handed on as read for the record
// path to repair and count); AppendEmbedded writes the text of a
// JSON-typed column as the value it holds.
//
// Infer derives a column [Type] tree from sample JSON objects; the rules are
// documented on [Infer]. [WithHFImages] retypes the columns the datasets
// features declare Image as struct<bytes: binary, path: string>, also
// where the sample held only null or empty lists.
//
// Errors: Decode reports malformed JSON and duplicate object keys. Nothing
// here does I/O. All functions are safe for concurrent use; returned trees
// are owned by the caller (a [DecodeObjectBorrowed] tree shares its input).
package jsonval
