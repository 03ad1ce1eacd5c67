// Package llm is the LLM summarizer: a [summary.Summarizer] that asks any
// OpenAI-compatible chat.completions endpoint (OpenAI, OpenRouter, vLLM,
// SGLang, llama.cpp) for the summary of a region.
//
// # Requests
//
// [Client.Summarize] sends POST {BaseURL}/chat/completions with
// "Authorization: Bearer <key>" and one user message built by
// [RegionPrompt] ([PromptVersion]): a summary in the same language as the
// turns, shaped as a handoff note (goal, constraints, completed actions with
// their tools and paths, current state, open questions, relevant files,
// remaining work), stated to be reference material only, of about
// TargetTokens and never more than 1.5 × that; turns labelled
// "[Turn i - ROLE]", values over [ElideOver] characters cut to head + marker
// + tail by [Elide]; a turn holding an earlier summary (a record compressed
// before) is shown by its body, and the model is told to fold it into one
// updated summary. max_tokens and max_completion_tokens are both
// 2 × TargetTokens. The reply is passed through [Normalize]: it starts
// with [summary.Prefix] exactly once and ends with a line holding
// [summary.EndMarker]; reasoning written into the content up to the last
// "</think>", and an unclosed "<think>" block after it, are dropped
// (Normalize is idempotent). The final summary must then pass [Validate]:
// non-empty, at most 1.5 × TargetTokens and fewer tokens than the region's
// turns (counted with the request's Counter, else [Config.Counter]).
//
// # Failures
//
// A request is retried, up to [Config.MaxRetries] attempts in all, on 408,
// 429, 5xx, connection errors, no complete reply within [Config.Timeout]
// ("timed out after N s (summarization.request_timeout)"), a truncated or
// invalid body, a 2xx body over the cap (4 MiB, or 32 bytes per token of
// max_tokens when more; no more than that is read), finish_reason "length"
// and an empty reply (reasoning models that spend the budget). Between
// attempts it waits min(RetryDelay·2^k, MaxRetryDelay) plus up to 50%
// jitter, and never less than the server's Retry-After (seconds or HTTP
// date; over a day, in either form, it is ignored). A 400 saying the
// prompt exceeds the context window (vLLM, llama.cpp, OpenAI wording) is not
// retried: the region is halved until each chunk is accepted, the chunks
// are summarised, and one more request merges them ([summary.Result.Chunks]).
// A summary [Validate] rejects is one failed attempt (cause
// [CauseInvalid]): the request is sent once more with the rejected reply
// and the violation stated; a second rejection is a non-fatal error (the
// record stays unchanged), and a rejected reply is never cached.
// 401/403, 402, quota or billing 429s, 404 and a redirect the client does
// not follow (see Secrets) return an error wrapping
// [summary.ErrFatal] and an [*APIError]; after one, the client sends nothing
// more. When the attempts run out, Summarize returns a non-fatal error
// wrapping the last [*APIError]: the caller keeps the record unchanged. No
// placeholder summary is ever produced. When ctx is done, Summarize returns
// ctx's error at once, also during a backoff or a rate-limit wait, unless
// a complete answer had already arrived: that one was billed, so it is
// returned and cached when it passes Validate. The error is ctx's cause
// ([context.Cause]); a deadline without one says "timed out after N s".
//
// # Limits, cache, usage
//
// The caller bounds in-flight HTTP requests with [summary.Request.Network]
// (the pipeline owns that bound; any number of goroutines may call
// Summarize): a request holds one unit while it is outstanding, not during
// its backoff or rate waits. Optional [Config.RPM] and [Config.TPM] limits
// (golang.org/x/time/rate token buckets) throttle before sending (TPM charges the local
// prompt count plus max_tokens). Every summary, including chunk and merge
// summaries, is stored on disk under [Config.CacheDir] keyed by the sha256
// of the model, [PromptVersion], the prompt messages, temperature, max_tokens, seed and
// extra body (not the base URL, not the key), one JSON file per key in a
// two-hex-digit fan-out, written to a temporary file and renamed. A cached
// region costs zero requests. Token usage comes from the response's usage
// object, or from [Config.Counter] when a server sends none.
// [EstimateRequest] and [Client.Estimate] give a request's cost without
// sending anything, for dry runs.
//
// # OpenAI Batch
//
// [Exporter] stands in for the client in a run that writes no records: it
// writes each summary request the run would send (regions already cached
// left out, repeats once) as a line of an OpenAI Batch input file
// ({"custom_id", "method", "url", "body"}, the body exactly as a live
// request's). The custom_id, "tc1-<target>-<region tokens>-<cache key>",
// carries what checking the answer needs, so [Client.ImportBatch] reads a
// Batch output or error file, in any order, through the checks of a live
// answer ([Normalize], [Validate]) into the cache under the key a run
// looks up; a run then sends no request for those regions. Rejected
// answers are never cached; failed requests, foreign ids and broken lines
// are counted. [NewOffline] makes a client that needs no API key, for an
// import.
//
// # Secrets
//
// The API key is read once, in [New] (or [NewOffline], which only redacts
// it), from the environment variable named by [Config.APIKeyEnv]. It goes only into the Authorization header: errors,
// cache files and [Stats] never contain it, and server messages that echo it
// are redacted. A redirect is followed only when it stays on the origin
// (scheme, host, port) of base_url and keeps the method (307, 308 to
// another path); any other (to another port or host, or a 301-303 that
// would turn the POST into a GET) is a fatal error naming the target, and
// nothing is sent there.
//
// With [Config.Redactor] set (redaction.enabled, the default), every
// summary an endpoint returns, live or imported from a Batch file, is
// redacted before it is validated, cached or returned, and a cache entry
// is redacted again when read back (it may predate this): a reply that
// echoes a secret puts it in neither the output nor the cache. The
// client's own API key, whatever its format, is redacted from all of them
// in any case, as written, in lower case and in upper case
// ("[REDACTED:llm_api_key]"; a key under 8 bytes, a local server's dummy
// such as "EMPTY", is not), before Config.Redactor runs; [Client.Redactor]
// is Config.Redactor plus the key, for the caller to redact its records
// with.
//
// # Concurrency
//
// A [Client] is safe for concurrent use. [Client.Stats] returns a copy.
// Summarize does not keep req or its turns after it returns.
package llm
