// Package parquet reads and writes Parquet files as streams of JSON objects,
// so the pipeline handles Parquet rows exactly like JSONL lines. It uses
// github.com/parquet-go/parquet-go for both directions.
//
// # Reading
//
// [Open] reads only the footer; [Reader.Next] streams rows one row group at
// a time (a small batch of decoded rows plus the open pages of the current
// row group), so files larger than RAM work. Snappy, zstd, gzip, lz4 and
// brotli pages decode. Each row becomes one JSON object whose keys are the
// top-level columns in file order:
//
//   - LIST groups (3-level `list`/`element` as pyarrow writes, `item`,
//     and legacy 2-level layouts) and bare repeated fields → arrays;
//     an empty list → [], a null list → null.
//   - groups → objects with every field in schema order; a null field is
//     written as null (Parquet cannot tell a null from an absent key).
//   - MAP groups → objects (non-string keys are written as their JSON text).
//   - booleans; signed and unsigned ints (any width, incl. date/time/
//     timestamp/decimal as their raw integer) → JSON integers, exact;
//     float/double → the shortest exact decimal, integral values with ".0";
//     NaN/±Inf → the strings "NaN", "Infinity", "-Infinity".
//   - STRING/ENUM byte arrays → strings, their bytes as stored (ill-formed
//     UTF-8 is handed on, not repaired: the record path repairs and counts
//     it); JSON-annotated → the embedded JSON
//     value; other byte arrays and fixed-length byte arrays → base64
//     (standard encoding) strings; INT96 → its decimal string (read only).
//
// # Writing
//
// [Create] writes rows with a [Schema] taken from a [Reader] (the same
// layout, logical types and key/value metadata, e.g. "huggingface") or from
// [InferSchema] (rules in [InferSchema] and jsonval.Infer: union of keys in
// first-seen order, int64/double/bool/string, lists in the 3-level layout,
// mixed kinds as JSON-annotated strings; [InferSchemaFeatures] also types
// the columns the datasets features declare Image as struct<bytes: binary,
// path: string>, even where the sample holds only null or empty lists). Binary columns (a datasets Image's bytes) are written
// without min/max statistics or page bounds, which would copy each value,
// a whole image, into the page header and the footer. Known limitation of
// parquet-go v0.32.0 (it has no option to leave one column's page index
// out or to give a page header the null count without min/max): such a
// column's column index has, for every page with a value, min "" and max
// "" (boundary order UNORDERED; its null_pages and null_counts are right),
// and its data page headers carry statistics with null_count 0 and no
// min/max whatever the page's nulls (num_nulls of the v2 header and the
// column chunk's null_count are right). A reader that prunes pages by the
// column index (DataFusion, parquet-mr, Trino) with a predicate on the
// bytes (img.bytes = x, img.bytes > "") could skip pages that match; one
// that trusts page header null counts could do so for IS NULL. Predicates
// on other columns are unaffected. [WriterOptions.Extra] makes sure
// of one more column (compression_metrics): appended, typed from a sample
// value, when the schema lacks it — the "huggingface" features then get a
// matching entry and pyarrow's "ARROW:schema" entry is dropped because it
// would no longer match — and taking its value as JSON or as JSON text
// either way. Write is the exact inverse of reading:
// values are checked against the column types, a key that is not a column
// or a value of the wrong kind is an error naming the key path, and nothing
// is silently dropped. Absent keys and null are both written as null (a
// null struct: a removed datasets Image is null, not a struct of nulls).
// One coercion is made, for content columns: a JSON string where the
// schema has a list whose elements are structs with a string field
// "text" (else "value") is written as a one-element list, the part
// {"type": "text", "text": s} ("type" only when the struct has a string
// field "type"; its other fields null). That is datasets' layout for
// messages with image parts, list<struct<type, text, image>>, and the
// string is what a summary turn, a notice on a string system prompt or a
// prepass digest is written as, whatever the record's content shape; a
// string in any other list is still an error. The row then reads back
// with that list, not the string (JSONL output is not affected).
// A row Write does not take is a [*RowError] (per row, not sticky).
// Write does not keep the row's bytes or any part of them once it returns
// (its strings share the row's bytes while it runs).
//
// Output goes to path+".tmp-*" in the same directory; [Writer.Close] writes
// the footer, fsyncs and renames it into place, [Writer.Abort] removes it,
// so a failed write never leaves a half-written file at path.
//
// # Errors and concurrency
//
// Errors name the file, and the row group and 0-based row when known
// (corrupt pages, levels that do not match the schema, row counts that do
// not match the footer). Read errors and write I/O errors are sticky;
// per-row validation errors from [Writer.Write] are not. Readers and
// writers are not safe for concurrent use; a [Schema] is immutable and may
// be shared. Bytes returned by [Reader.Next] are valid until the next call.
package parquet
