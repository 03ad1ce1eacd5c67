// Package jsonl reads and writes the JSON text formats of records: JSON
// Lines (one record per line) and JSON arrays of records (a ".json" file
// holding one array, as LLaMA-Factory's datasets are).
//
// Reading. [Reader] returns each non-blank line with its 1-based line
// number. Lines may be of any length (no bufio.Scanner 64 KiB limit). LF,
// CRLF and a lone CR each end a line (Python's universal newlines), so a
// Windows or classic Mac OS file reads line by line, and line numbers are
// what an editor shows. [ArrayReader] streams the elements of one JSON
// array, each compacted to one line, with the line where it starts and its
// 1-based index, holding one record at a time whatever the size of the
// array; a malformed array (no comma between records, a trailing comma,
// data after it, a file cut inside it) is an error naming file, line and
// record. [NewJSON] chooses between the two by content: an array when the
// first byte that is not white space is '[', else JSON Lines. Every reader
// detects gzip, zstd, bzip2 and xz by their magic bytes (see
// [Compression]) and decompresses transparently, as a stream, reading
// concatenated members, frames or streams whole; it skips a
// UTF-8 byte order mark at the start of the file, and refuses UTF-16 (a
// UTF-16 byte order mark) with an error saying so. Bytes are handed on as
// the file holds them, ill-formed UTF-8 included: repairing text is the
// record path's (package pipeline), which counts it.
//
// Writing. [Writer] writes one record per line, each ended by "\n",
// whatever line ends the input had: a record written back unchanged keeps
// its bytes, not its line end, so an output file never mixes line ends.
// [ArrayWriter] writes a JSON array, one record per line. Both write to a
// temporary file beside the target and rename it into place only in
// Close, so a target path never holds a half-written file (an array
// output is always a complete, valid JSON array).
//
// No type is safe for concurrent use, except BytesRead, which another
// goroutine may call.
package jsonl
