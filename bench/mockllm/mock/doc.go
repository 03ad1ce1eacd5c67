// Package mock is an OpenAI-compatible chat.completions server for tests and
// benchmarks of the LLM summarizer: it answers POST …/chat/completions with
// the OpenAI response shape and injects the failures real endpoints produce.
//
// A [Server] is an [net/http.Handler]; tests mount it with
// net/http/httptest on 127.0.0.1 and the bench/mockllm command serves it on
// a real listener. Faults come from two places: a script ([Server.Push])
// consumed one per request in arrival order, and, when the script is empty,
// a random transient mix drawn with probability [Config.ErrorRate] from a
// seeded generator. A request whose prompt is larger than
// [Config.ContextLimit] tokens (chars/4) is answered with a 400
// "context too long" error in vLLM or llama.cpp wording, whatever the script
// says, because that is what a real server does.
//
// The replies are deterministic: the default content names the turn labels
// ("[Turn i - ROLE]") and parts found in the prompt, so a test can tell which
// region a summary covers. Nothing is logged; the server keeps counters
// ([Server.Requests]) and, when [Config.Record] is set, the decoded request
// bodies and Authorization headers ([Server.Received]).
//
// It also answers OpenAI Batch input files ([Server.RunBatch]), through
// the same answer logic, and the Files and Batches routes that upload one,
// run it and download the output and error files (batch.go).
//
// All methods are safe for concurrent use. A hanging fault blocks until the
// client goes away, [Config.HangMax] passes, or [Server.Close] is called, so
// closing an httptest server that wraps a Server never waits on a hang:
// call [Server.Close] first.
package mock
