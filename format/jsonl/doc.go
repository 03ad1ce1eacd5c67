// Package jsonl reads and writes JSON Lines files: one record per line.
//
// Reading. [Reader] returns each non-blank line with its 1-based line
// number. Lines may be of any length (no bufio.Scanner 64 KiB limit). LF,
// CRLF and a lone CR each end a line (Python's universal newlines), so a
// Windows or classic Mac OS file reads line by line, and line numbers are
// what an editor shows. gzip input is detected by its magic bytes and
// decompressed transparently; a UTF-8 byte order mark at the start of the
// file is skipped, and UTF-16 (a UTF-16 byte order mark) is refused with
// an error saying so. Bytes are handed on as the file holds them,
// ill-formed UTF-8 included: repairing text is the record path's (package
// pipeline), which counts it.
//
// Writing. [Writer] writes one record per line, each ended by "\n",
// whatever line ends the input had: a record written back unchanged keeps
// its bytes, not its line end, so an output file never mixes line ends.
// It writes to a temporary file beside the target and renames it into
// place only in [Writer.Close], so a target path never holds a
// half-written file.
//
// No type is safe for concurrent use, except [Reader.BytesRead], which
// another goroutine may call.
package jsonl
