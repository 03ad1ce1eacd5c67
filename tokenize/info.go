package tokenize

// Tokenizer kinds reported in [Info].
const (
	KindTiktoken     = "tiktoken"      // embedded o200k_base / cl100k_base
	KindTiktokenFile = "tiktoken-file" // a tiktoken-format BPE file (Kimi-K2's tiktoken.model)
	KindHFBPE        = "hf-bpe"        // a Hugging Face byte-level BPE tokenizer.json
	KindHFSPBPE      = "hf-sp-bpe"     // a Hugging Face SentencePiece-style BPE tokenizer.json (Gemma, Llama-2)
	KindChars4       = "chars4"        // ⌊code points / 4⌋ estimate
)

// Info says which tokenizer a counter is, for the metrics' run block: runs
// whose Info differ counted different tokens and must not be compared.
type Info struct {
	Name     string `json:"name"`            // encoding name or the file it was loaded from
	Kind     string `json:"kind"`            // one of the Kind constants
	Split    string `json:"split,omitempty"` // the pre-tokenizer used: hand-written splitter names, or regexp2
	SlowPath bool   `json:"slow_path,omitempty"`
	Hash     string `json:"sha256,omitempty"` // SHA-256 of the tokenizer file (hex; of a tiktoken-format file followed by its tokenizer_config.json); empty for embedded encodings
}

// Describe returns the Info of a counter returned by New (or wrapped by
// Memo); other counters get an Info with only Kind "unknown".
func Describe(c Counter) Info {
	switch c := c.(type) {
	case *MemoCounter:
		return Describe(c.c)
	case *Encoding:
		return c.Info()
	case *HFTokenizer:
		return c.Info()
	case *TiktokenFile:
		return c.Info()
	case chars4:
		return Info{Name: Chars4, Kind: KindChars4}
	}
	return Info{Kind: "unknown"}
}

// EncoderOf returns c's Encode (the token ids of a text, as Hugging Face
// tokenizers' encode(text, add_special_tokens=False) for a tokenizer.json),
// looking through a [MemoCounter]; nil for a counter that only counts
// (chars4).
func EncoderOf(c Counter) func(string) []int {
	switch c := c.(type) {
	case *MemoCounter:
		return EncoderOf(c.c)
	case interface{ Encode(string) []int }:
		return c.Encode
	}
	return nil
}
