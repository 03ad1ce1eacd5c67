// Package arrow reads and writes Arrow IPC files as streams of JSON
// objects, so the pipeline handles Hugging Face `datasets` Arrow files like
// JSONL lines. It uses github.com/apache/arrow/go/v17.
//
// # Reading
//
// [Open] accepts the IPC stream format (what `datasets` save_to_disk writes
// to data-00000-of-00001.arrow) and the IPC file format (Feather v2,
// recognised by its "ARROW1" magic), like the datasets arrow loader.
// [Reader.Next] streams one record batch at a time. Each row becomes a JSON
// object whose keys are the top-level fields in schema order:
//
//   - list, large_list, fixed_size_list (any element name: `item`,
//     `element`) → arrays; struct → objects with every field in order
//     (a null field is written as null: Arrow cannot tell null from an
//     absent key); map → objects (non-string keys as their JSON text).
//   - ints and uints of every width, and date/time/timestamp/duration as
//     their raw integer → exact JSON integers; float16/32/64 → the shortest
//     exact decimal, integral values with ".0"; NaN/±Inf → "NaN",
//     "Infinity", "-Infinity".
//   - utf8, large_utf8, utf8_view → strings, their bytes as stored
//     (ill-formed UTF-8 is handed on, not repaired: the record path
//     repairs and counts it), except fields tagged with the
//     canonical arrow.json extension (datasets' Json() feature), whose text
//     is embedded as the JSON value; binary, large_binary, binary_view,
//     fixed_size_binary → base64 (standard encoding) strings;
//     dictionary-encoded values are decoded; decimals and other rare types
//     → their Arrow text form (read only).
//
// # Writing
//
// [Create] writes with a [Schema] from a [Reader] (same fields, types and
// schema metadata, including the "huggingface" features JSON) or from
// [InferSchema] (int64, float64, bool, utf8, list<item>, struct, and
// arrow.json-tagged utf8 for mixed kinds; all nullable; [InferSchemaFeatures]
// also types the columns the datasets features declare Image as
// struct<bytes: binary, path: string>, even where the sample holds only
// null or empty lists). The default output
// is the IPC stream format, uncompressed, 1000-row batches, as `datasets`
// writes; WriterOptions.Format "file" writes the IPC file format (for an
// input that was one). [WriterOptions.Extra] makes sure of one more column
// (compression_metrics): appended, typed from a sample value, and added to
// the "huggingface" features when the schema lacks it, and taking its
// value as JSON or as JSON text either way. Write validates the whole row
// against the schema before appending it: a key that is not a column, a
// value of the wrong kind, or a null in a non-nullable field is an error
// naming the key path, and nothing is silently dropped. Absent keys and
// null are both written as null (a null struct: a removed datasets Image is
// null, not a struct of nulls). One coercion is made, for content
// columns: a JSON string where the schema has a list whose elements are
// structs with a string field "text" (else "value") is written as a
// one-element list, the part {"type": "text", "text": s} ("type" only when
// the struct has a string field "type"; its other fields null). That is
// datasets' layout for messages with image parts, list<struct<type, text,
// image>>, and the string is what a summary turn, a notice on a string
// system prompt or a prepass digest is written as, whatever the record's
// content shape; a string in any other list is still an error. A row
// Write does not take is a [*RowError] (per row, not sticky). Write does
// not keep the row's bytes or any part of them once it returns.
//
// Output goes to path+".tmp-*" in the same directory; [Writer.Close]
// flushes, syncs and renames it into place and [Writer.Abort] removes it,
// so a failed write never leaves a half-written file at path.
//
// # Errors and concurrency
//
// Errors name the file, and the record batch and 0-based row when known
// (truncated or corrupt streams, bad schemas). Because arrow-go allocates
// whatever sizes a file claims, [Open] first walks every message's framing
// and flatbuffer metadata (bodies are skipped with a seek) and rejects
// vector, buffer and body sizes that cannot fit in the file, and compressed
// buffers claiming more than max(64 MiB, 4096× their size); a flipped bit
// therefore gives an error instead of an out-of-memory crash. Panics from
// decoding a corrupt batch are turned into errors too. Read errors and write I/O
// errors are sticky; per-row validation errors from [Writer.Write] are
// not. Readers and writers are not safe for concurrent use; a [Schema] is
// immutable and may be shared. Bytes returned by [Reader.Next] are valid
// until the next call.
package arrow
