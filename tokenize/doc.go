// Package tokenize counts tokens exactly as OpenAI's tiktoken does, offline.
//
// [New] returns a [Counter] by name:
//
//   - "o200k_base" and "cl100k_base": an [*Encoding] whose ids are, id for
//     id, those of tiktoken's encode_ordinary (npm tiktoken 1.0.22, checked
//     against testdata/golden.jsonl). Special-token strings such as
//     "<|endoftext|>" are ordinary text. Input that is not valid UTF-8 is
//     first decoded the way JavaScript's TextDecoder and Python's
//     errors="replace" do: each maximal ill-formed subpart becomes one
//     U+FFFD (see [ReplaceInvalid]).
//   - "chars4": ⌊code points / 4⌋ (same U+FFFD rule), the peer tool's
//     fallback estimate.
//
// Any other name is an error that lists the valid names ([Names]).
//
// # Data and loading
//
// The rank files are embedded (github.com/pkoukk/tiktoken-go-loader/assets);
// nothing is ever read from the network or the file system. An encoding is
// parsed on the first New for its name (about 10-15 MB resident for
// o200k_base) and kept for the life of the process; the other encoding is
// not loaded unless asked for. A corrupt embedded file makes New return an
// error naming the file and line.
//
// # Exactness
//
// The split patterns are hand-written scanners that reproduce fancy-regex's
// leftmost-first backtracking semantics (including \s+(?!\S), \s*[\r\n]+,
// and case-insensitive contractions under Unicode simple case folding, so
// 'ſ matches 's). Character classes follow Unicode 16.0, as the reference's
// regex-syntax 0.8.5 does (Go's own tables are 15.0): unicode16_tables.go
// is generated from the Unicode Character Database by go generate. Byte-pair merging follows tiktoken's
// _byte_pair_merge: lowest rank first, leftmost on ties.
//
// # Cost
//
// Counting takes time linear in the input, times a log factor for a single
// long piece: pieces longer than 96 bytes are merged with a heap instead of
// the reference's quadratic scan, so no input is pathological,
// and [Encoding.Count] does not allocate on valid UTF-8 (long pieces and
// invalid input use pooled buffers). [Encoding.Encode] allocates its result.
//
// # Concurrency
//
// Every Counter returned by New, [Encoding] and [MemoCounter] is safe for
// concurrent use by multiple goroutines. [Memo] wraps a Counter with a
// bounded memo of whole texts for texts that repeat across records.
package tokenize
