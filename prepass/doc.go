// Package prepass makes a trajectory smaller without removing a turn, before
// any region of it is summarised (opt-in).
//
// [Apply] works only on the compressible middle turns[lo:hi] that the
// caller gives it (never the protected head or tail) and applies its
// steps in order, stopping as soon as the caller's Fits says the record
// fits:
//
//  0. Old images ([Config.DropOldImages]; alone with [Config.ImagesOnly],
//     compression.drop_old_images; part of compression.prepass): every
//     image of a middle turn older than the newest image-bearing turn of
//     the record becomes a short stable text, [RemovedImage]'s
//     "[image removed: 1920x1080 png]" ("[image removed]" when its size is
//     unknown), oldest turn first. The newest image-bearing turn (wherever
//     it is), the head and the tail are never touched. Images are found
//     by [imagetok.Finder] ([Config.Finder]; sizes from the image header
//     only): an OpenAI image_url / input_image part or an Anthropic image
//     block (also inside a tool_result) becomes the text part
//     {"type": "text", "text": "…"} in the same position; a LLaMA-Factory
//     / ShareGPT4V "<image>" marker becomes the text in the string, and
//     its entry leaves the record's images list ([Report.Fields]), so that
//     markers and list stay paired (markers whose number differs from the
//     list's are left alone). Images are never decoded, redacted or
//     re-encoded, and a removed image's bytes are not copied. This step
//     changes a turn whatever the count sees of its images (a counting
//     that does not see an image reports the few tokens its text costs);
//     it is idempotent: the text is not an image.
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
// Steps 1 to 3 make a change only when it saves tokens under
// [Config.Counter], and never change a turn that holds an image (an image
// part, or an "<image>" marker when the record has an images list, as
// found after step 0): only step 0 removes images, so the newest
// image-bearing turn is never touched and markers stay paired with the
// list. The
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
// The package is pure: no goroutines, deterministic output, no I/O but
// the image headers of local image files a record names, read through
// the caller's Finder (package imagetok's file reading).
package prepass
