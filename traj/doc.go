// Package traj is the record model shared by every stage of trajcompress.
//
// A [Record] is one trajectory: an ordered list of [Turn] values plus the
// bytes it was read from. Readers build records with [Decode]; writers emit
// them with [Record.AppendJSON], which splices only what changed into the
// original bytes, so every field and every turn the compressor did not touch
// comes out byte-for-byte as it came in, keys in their original order.
//
// Roles are normalised ([RoleSystem], [RoleUser], [RoleAssistant],
// [RoleTool]); a role the reader does not know keeps its verbatim name and is
// never a tool turn. Tool calls and results of every dialect (OpenAI
// tool_calls, Hermes <tool_call>/<tool_response> blocks, LLaMA-Factory
// function_call/observation turns) are read here and nowhere else:
// [Turn.Calls], [Turn.Results]. A record's [Dialect] is one of [Dialects];
// what other packages need to know of it are its capabilities
// ([Dialect.Form]: how a turn is written; [Dialect.Pairing]: how results
// name their calls), never its name, and a name that is not a dialect is
// an error where it is parsed ([ParseDialect], [Schema.Validate]), never
// read as another. The JSON underneath (validation, member
// spans, string decoding and encoding) is package internal/jsonx. The
// package does no file I/O and starts no goroutines.
package traj
