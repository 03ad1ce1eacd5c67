// Package jsonl reads and writes JSON Lines files: one record per line.
//
// [Reader] returns each non-blank line with its 1-based line number. Lines
// may be of any length (no bufio.Scanner 64 KiB limit); gzip input is
// detected by its magic bytes and decompressed transparently; a trailing
// "\r" is dropped. [Writer] writes to a temporary file beside the target and
// renames it into place only in [Writer.Close], so a target path never
// holds a half-written file. Neither type is safe for concurrent use,
// except [Reader.BytesRead], which another goroutine may call.
package jsonl
