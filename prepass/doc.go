// Package prepass makes a trajectory smaller without removing a turn, before
// any region of it is summarised (issue 16, item 1; opt-in).
//
// [Apply] works only on the compressible middle turns[lo:hi] that the
// caller gives it (never the protected head or tail) and applies three
// steps in order, stopping as soon as the caller's Fits says the record
// fits:
//
//  1. Duplicates: a tool result whose body is identical to a later one in
//     the record (the middle or the tail) becomes a back-reference,
//     "[same output as turn N]", N being the newest copy, which is kept in
//     full.
//  2. Digests: a tool result of more than [Config.DigestOver] tokens
//     becomes a one-line digest, oldest first, by tool kind: terminal
//     (command, exit code, line count, error lines), file read (path, line
//     range, size), search (pattern, path, match count), web fetch (URL,
//     size), anything else (tool name, size, first line).
//  3. Arguments: the arguments of a tool call of more than
//     [Config.ArgsOver] tokens are shrunk: only JSON string leaves longer
//     than [Config.LeafKeep] characters are cut (head, marker, tail); keys,
//     numbers, booleans, ids and paths (by key name or by shape) are kept,
//     a leaf that holds JSON itself (arguments or a result passed on as a
//     string) is shrunk inside and still holds JSON of the same structure,
//     the output is valid compact JSON with non-ASCII characters
//     unescaped. Arguments that are not JSON are left as they are.
//
// A change is made only when it saves tokens under [Config.Counter]. The
// turn list keeps its length and every turn keeps its role, its tool-call
// ids and the id it answers (traj's SetContent/SetCallArguments replace one
// value and keep every other byte), so no call/result pair can break. Tool
// results are read in both dialects: an OpenAI tool message (paired by
// tool_call_id), and a ShareGPT/Hermes tool turn holding one or more
// <tool_response> blocks (paired by their tool_call_id, else by name and
// order with the <tool_call> blocks of the assistant turn before; a
// response's "content" is what is replaced, its other keys are kept; a
// JSON response without one becomes a JSON object of its name and
// tool_call_id and the new content, so that it stays JSON). Calls and
// results are read as package traj reads them (traj.Turn.Calls and
// Turn.Results); a terminal digest's errors are the lines package
// traj/errline finds, as the deterministic summary quotes them.
//
// The package is pure: no I/O, no goroutines, deterministic output.
package prepass
