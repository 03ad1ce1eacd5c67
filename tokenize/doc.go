// Package tokenize counts tokens exactly as the reference tokenizers do,
// offline: OpenAI's tiktoken encodings, Hugging Face byte-level BPE
// tokenizer.json files, and tiktoken-format BPE files of known models.
//
// [New] returns a [Counter] by name ([NewRevision] also takes a Hugging
// Face revision):
//
//   - "o200k_base" and "cl100k_base": an [*Encoding] whose ids are, id for
//     id, those of tiktoken's encode_ordinary (npm tiktoken 1.0.22, checked
//     against testdata/golden.jsonl). Special-token strings such as
//     "<|endoftext|>" are ordinary text.
//   - "chars4": ⌊code points / 4⌋ (same U+FFFD rule), the peer tool's
//     fallback estimate.
//   - a path to a tokenizer.json, or a directory (model snapshot) holding
//     one: an [*HFTokenizer] whose ids are those of Hugging Face tokenizers'
//     encode(text, add_special_tokens=False) (npm tokenizers 0.23.2,
//     checked against testdata/hf/golden.jsonl for Qwen3, Llama-3,
//     DeepSeek-V3 and GPT-OSS; testdata/hf/golden_sp.jsonl and
//     golden_sp_real.tsv for Gemma 3, Llama-2, Gemini and Mistral-Nemo).
//     Added and special tokens in the text are one token each, with their
//     lstrip, rstrip, single_word and normalized options. The model is BPE,
//     byte-level (a ByteLevel pre-tokenizer) or SentencePiece-style (the
//     vocabulary in the text's own characters: byte_fallback's <0xNN>
//     tokens, unk_token with fuse_unk, ignore_merges); Unigram, WordPiece
//     and WordLevel models, BPE dropout, subword prefixes and suffixes, and
//     model fields tokenizers does not read are refused with an error
//     naming the JSON path of the field (model.type, model.merges[3]).
//     The normalizers (NFC, NFD, NFKC, NFKD, Lowercase, Strip,
//     StripAccents, Replace, Prepend, Sequence) and pre-tokenizers (Split
//     with every behavior and invert, ByteLevel, Metaspace, Digits,
//     Punctuation, Whitespace, WhitespaceSplit, CharDelimiterSplit,
//     BertPreTokenizer, Sequence) run as in tokenizers (hfnorm.go,
//     hfpretok.go; checked against testdata/hf/golden_kinds.jsonl); any
//     other kind, or a malformed one, is refused at load with an error
//     naming it and its JSON path.
//   - a path to a tiktoken.model (or a directory holding one) with a
//     tokenizer_config.json beside it naming a known model (Kimi-K2's
//     tokenization_kimi): a [*TiktokenFile].
//   - a Hugging Face model id ("Qwen/Qwen3-8B"), looked up in the local
//     Hugging Face cache exactly as huggingface_hub lays it out
//     ([HubCacheDir]; refs/<revision> names snapshots/<commit>/). Nothing
//     is ever downloaded; a model not in the cache is an error saying
//     where it was looked for and how to get it.
//
// Input that is not valid UTF-8 is first decoded the way JavaScript's
// TextDecoder and Python's errors="replace" do: each maximal ill-formed
// subpart becomes one U+FFFD (see [ReplaceInvalid]). Any other name is an
// error that lists the valid encodings ([Names]). [Describe] says which
// tokenizer, split path and file (SHA-256) a counter uses, for the
// metrics' run block.
//
// # Data and loading
//
// The tiktoken rank files are embedded
// (github.com/pkoukk/tiktoken-go-loader/assets). An encoding is parsed on
// the first New for its name (about 10-15 MB resident for o200k_base) and
// kept for the life of the process; the other encoding is not loaded
// unless asked for. A corrupt embedded file makes New return an error
// naming the file and line. Tokenizer files are read on the first New that
// names them (by any name: path, directory or model id) and kept for the
// life of the process; a 10 MB tokenizer.json loads in about 0.2 s.
//
// # Exactness
//
// The split patterns of the known models are hand-written scanners that
// reproduce the reference regex engines' leftmost-first backtracking
// semantics (including \s+(?!\S), \s*[\r\n]+, and case-insensitive
// contractions under Unicode simple case folding, so 'ſ matches 's):
// cl100k_base (also Llama-3), o200k_base (also GPT-OSS), Qwen2/3's
// single-digit variant, DeepSeek-V3's three Splits, and Kimi-K2's
// (o200k's with Han runs split off). Any other Split pattern runs on
// github.com/dlclark/regexp2, reported as the slow path by [Describe];
// regexp2 classifies characters with Go's Unicode 15.0 tables and folds
// case .NET's way, so it may differ from the reference on code points
// added in 15.1/16.0 and on 'ſ. Character classes of
// the hand-written scanners follow Unicode 16.0, as the reference engines
// do (Go's own tables are 15.0): unicode16_tables.go is generated from the
// Unicode Character Database by go generate. Hugging Face's NFC
// normalizer uses Unicode 9.0 data, under which later combining marks are
// starters; nfc.go reproduces that on top of golang.org/x/text.
// Byte-pair merging follows tiktoken's _byte_pair_merge (lowest rank of
// the merged bytes first, leftmost on ties) for tiktoken ranks, and
// Hugging Face's BPE (lowest merge rank of the pair first, leftmost on
// ties; ignore_merges looks the whole piece up first) for tokenizer.json.
//
// # SentencePiece-style BPE
//
// A SentencePiece-style tokenizer.json (Gemma, Llama-2, Mistral's older
// files) hands the model whole texts (its normalizer turns spaces into ▁
// and its pre-tokenizer splits little or nothing). The reference merges
// such a piece in one run; this package cuts it into chunks merged on
// their own, which gives the same ids: a cut falls between two symbols
// such that no token of the vocabulary is spelled with the last
// character of the first followed by the first character of the second
// (a byte-fallback symbol is spelled <0xNN>; no cut touches an unk, which
// fuses). No merge can then join across the cut, and each side's merges
// are the ones the whole piece makes there. Cuts are looked for before
// every ▁ and, in chunks over 64 bytes, between any two characters; the
// chunks then go through the same caches and merging as byte-level
// pieces. FuzzSPModelOracle checks this against a plain transcription of
// the reference's merge_word on random vocabularies.
//
// Nothing cuts a run of one symbol (every ▁▁ is in a token: 1 MiB of
// spaces is one chunk of a million ▁). Long chunks that are mostly such
// runs are merged as segments, one per run (hfsprun.go): a merge inside
// or across runs is one step on them, and a cascade of merges that
// starts again from the same state (the pairing of ▁▁ ▁▁ …, Gemma 3's
// growing of ▁×31 one ▁ at a time) is repeated at once as far as it
// provably repeats, which keeps the reference's order exactly
// (TestSPRunsMatchPlain, TestSPGoldenRuns, FuzzSPRunMerge).
//
// # Cost
//
// Counting takes time linear in the input, even for a single long piece:
// pieces of 1 KiB and more are merged by the backtracking encoder of
// GitHub's bpe crate (backtrack.go), generalised to tokenizer.json merge
// ranks and exact for every vocabulary (where its fast compatibility test
// does not apply to a token, it merges that pair as the reference does).
// Its tables (about 10 MB for a 200k-token vocabulary) are built on the
// first such piece, once per process, in 0.05-0.3 s. Pieces of 97 bytes to
// 1 KiB, and every long piece of a tiktoken file in which two tokens
// share a rank, are merged through per-rank FIFO buckets
// (mergequeue.go) instead of the reference's quadratic scan. So no input
// is pathological, and [Encoding.Count] does not allocate on valid UTF-8
// (long pieces and invalid input use pooled buffers). Encode allocates
// its result. A tokenizer.json counter keeps the counts of the pieces of
// up to 64 bytes that merge into several tokens in a table shared by all
// goroutines (16K slots, 1.1 MiB; atomics only, no lock, no allocation; a
// hit compares the whole piece, so counts are exact): merging is most of
// a count's time and such pieces repeat, within a text and across texts
// (a chat template's rendering of a record, then its turns one by one).
// A tokenizer.json counter is a [Segmenter] (a text counts as its
// stretches between added tokens; when nothing normalizes and the
// pre-tokenizer only splits, normalized added tokens such as DeepSeek-V3's
// turn markers end stretches too) and, for byte-level BPE with no
// normalizer but NFC and one split of the cl100k, o200k, Qwen2 or GPT-2
// pattern, or DeepSeek-V3's three splits, a [PartCounter]: counting a
// stretch also counts a part of it
// as Count counts that part on its own (a turn's text inside a chat
// template's framing), where the split of the stretch shows that they
// agree; so the rendering of a record gives its turns' counts too.
//
// # Concurrency
//
// Every Counter returned by New, [Encoding], [HFTokenizer], [TiktokenFile]
// and [MemoCounter] is safe for concurrent use by multiple goroutines.
// [Memo] wraps a Counter with a bounded memo of whole texts for texts that
// repeat across records.
package tokenize
