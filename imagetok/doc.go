// Package imagetok finds the images in trajectory records and counts the
// tokens a model spends on them, reading each image's size from its header
// only.
//
// # Finding
//
// A [Finder] finds images wherever datasets keep them ([Finder.Content] for
// one turn's content value, [Finder.Record] for a whole record): OpenAI
// Chat Completions image_url parts (a data: URL or a link, with its
// detail), OpenAI Responses input_image parts (image_url or file_id) and
// computer_screenshot outputs, Anthropic image blocks with a base64, url or
// file source (also inside a tool_result), {"type": "image", "image": …}
// parts, Hugging Face datasets Image values {"bytes", "path"} (bytes in
// base64, as format/parquet and format/arrow render binary in JSON), and
// LLaMA-Factory / ShareGPT4V "<image>" markers paired in order with the
// record's images list (paths relative to the dataset file's directory,
// [Finder.Dir]). [Finder.Paired] also gives the list's entries no marker
// claimed, in order, to {"type": "image"} parts that name no image
// (transformers' and TRL's layout): the one pairing that counting, image
// removal, summaries and template expansion share. Each [Image] says where it is (turn, part, byte span,
// marker offset, list index), its [Kind] and [Source], its detail, and its
// size when known.
//
// # Sizes
//
// Sizes come from the image header only, never a full decode and never a
// download ([Config]: PNG, JPEG, GIF, WebP; at most [MaxHeader] bytes). A
// base64 image is decoded from the start of its JSON string as far as the
// header needs, without copying or unquoting the rest: a 20 MB screenshot
// costs a few KB of decoding. A local file (a path, or a file: URL naming
// an absolute path on this machine) is opened, when it is a regular file,
// and its first bytes read. A link, a file id, a missing or undecodable
// file, a FIFO or device is of unknown size.
//
// # Rules
//
// A [Rule] counts an image: an interface, so that a model family is one
// more type. [Flat] (every image N tokens, the old behaviour), [OpenAI]
// ([OpenAITokens]: OpenAI's published tile rule) and the Qwen2-VL
// family's rule from a preprocessor_config.json ([ParseQwen],
// [Qwen.Rule]: transformers' [SmartResize], the image pad tokens of the
// resized grid, and the two vision start/end tokens of the chat
// template). [ParseRule] is the grammar users write ("openai",
// "flat:N"); [ParseAuto] and [LoadAuto] read a model's own rule from its
// preprocessor_config.json by trying each of [Loaders] in order. A rule
// that is a model family's own processor is a [Processor]: its
// [Placeholder] says how that family's chat templates write an image and
// its processor expands it (package trainview expands it). An image of
// unknown size counts as the rule's Unknown, by default the most one
// image can cost under the rule ([WithUnknown] changes it), and Tokens
// says it was not exact, so that callers can count such images.
//
// Contract: no goroutines, no package state, no network. The only I/O is
// in file.go: opening local image files named by records (for their
// headers, through [Finder.Open] when set), [LoadQwen] and [LoadAuto].
// Inputs are read, never modified.
package imagetok
