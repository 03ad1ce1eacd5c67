package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/readfile"
)

// TiktokenFile counts tokens with a tiktoken-format BPE file
// ("base64-token rank" per line, e.g. Kimi-K2's tiktoken.model), the split
// pattern of a known model named by the tokenizer_config.json next to it,
// and that config's added tokens. It is immutable once loaded and safe for
// concurrent use.
type TiktokenFile struct {
	info    Info
	v       *vocab
	split   func(s string, i int) int
	special *addedTrie
	chunked bool // Llama-3-style 400k-character and 25k-run chunking
}

// tiktokenConfig is the part of a tokenizer_config.json that names the
// model's tokenizer class and its added tokens.
type tiktokenConfig struct {
	AutoMap struct {
		AutoTokenizer []any `json:"AutoTokenizer"`
	} `json:"auto_map"`
	TokenizerClass string `json:"tokenizer_class"`
	AddedTokens    map[string]struct {
		Content string `json:"content"`
	} `json:"added_tokens_decoder"`
}

// LoadTiktokenFile reads a tiktoken-format BPE file. The split pattern is
// chosen from the tokenizer_config.json in the same directory, which must
// name a known model: Kimi (auto_map tokenization_kimi.TikTokenTokenizer,
// as Kimi-K2 ships it). Its added_tokens_decoder entries are matched in
// the text first and count one each, as transformers does. The pattern is
// split by the hand-written splitKimi (Unicode 16.0 classes, as tiktoken's
// regex engine).
func LoadTiktokenFile(path string) (*TiktokenFile, error) {
	cfgPath := filepath.Join(filepath.Dir(path), "tokenizer_config.json")
	raw, err := readfile.Read(cfgPath, "tokenizer config", readfile.SmallLimit)
	if err != nil {
		return nil, fmt.Errorf("tokenize: %s: the split pattern of a tiktoken-format file comes from the model's tokenizer_config.json: %w", path, err)
	}
	var cfg tiktokenConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("tokenize: %s: %w", cfgPath, err)
	}
	model := ""
	for _, a := range cfg.AutoMap.AutoTokenizer {
		if s, ok := a.(string); ok && strings.HasPrefix(s, "tokenization_kimi.") {
			model = "kimi"
		}
	}
	if model == "" {
		return nil, fmt.Errorf("tokenize: %s: tokenizer %q (auto_map %v) has no known split pattern; known: Kimi (tokenization_kimi.TikTokenTokenizer)", cfgPath, cfg.TokenizerClass, cfg.AutoMap.AutoTokenizer)
	}
	data, err := readfile.Read(path, "tokenizer file", readfile.TokenizerLimit)
	if err != nil {
		return nil, fmt.Errorf("tokenize: %w", err)
	}
	// The config sets the split pattern and the special tokens, so it is
	// part of what the counts depend on: hashed with the file.
	h := sha256.New()
	h.Write(data)
	h.Write(raw)
	sum := h.Sum(nil)
	v, err := parseVocab(path, strings.NewReader(string(data)), len(data))
	if err != nil {
		return nil, err
	}
	initClasses()
	initPS()
	t := &TiktokenFile{
		info:    Info{Name: path, Kind: KindTiktokenFile, Split: model, Hash: hex.EncodeToString(sum)},
		v:       v,
		split:   splitKimi,
		special: newAddedTrie(),
		chunked: true,
	}
	for id, a := range cfg.AddedTokens {
		var n int
		if _, err := fmt.Sscan(id, &n); err != nil {
			return nil, fmt.Errorf("tokenize: %s: added token id %q", cfgPath, id)
		}
		t.special.add(a.Content, n)
	}
	return t, nil
}

// Name returns the path the file was loaded from.
func (t *TiktokenFile) Name() string { return t.info.Name }

// Info describes the tokenizer for the metrics' run block.
func (t *TiktokenFile) Info() Info { return t.info }

// Count returns len(t.Encode(text)).
func (t *TiktokenFile) Count(text string) int { return countAtMost(t.run, text, maxInt) }

// CountAtMost is [TiktokenFile.Count] that stops once the count passes max.
func (t *TiktokenFile) CountAtMost(text string, max int) int { return countAtMost(t.run, text, max) }

// Encode returns the token ids of text: added tokens first, then the
// model's split pattern and byte-pair merges over the rest (each maximal
// ill-formed UTF-8 subpart is first replaced by U+FFFD).
func (t *TiktokenFile) Encode(text string) []int { return encodeWith(t.run, text) }

func (t *TiktokenFile) run(text string, a *hfAcc) {
	if !utf8.ValidString(text) {
		b := appendReplaced(nil, text)
		text = unsafe.String(unsafe.SliceData(b), len(b))
	}
	for i := 0; i < len(text) && a.n <= a.max; {
		start, end, id := t.special.find(text, i)
		if start < 0 {
			t.chunks(text[i:], a)
			return
		}
		t.chunks(text[i:start], a)
		a.token(id)
		i = end
	}
}

// Chunking of tokenization_kimi.py (from Llama-3's tokenizer): the text is
// cut every 400,000 code points, and each part wherever a run of
// whitespace or of non-whitespace (Python's str.isspace) exceeds 25,000
// code points; each chunk is then encoded on its own.
const (
	chunkMaxChars = 400_000
	chunkMaxRun   = 25_000
)

func pyIsSpace(r rune) bool {
	if r >= 0x1c && r <= 0x1f {
		return true
	}
	if r < utf8.RuneSelf {
		return asciiClass[r]&cWS != 0
	}
	return classOf(r)&cWS != 0
}

func (t *TiktokenFile) chunks(s string, a *hfAcc) {
	if len(s) == 0 {
		return
	}
	if !t.chunked || len(s) <= chunkMaxRun {
		t.encodeChunk(s, a)
		return
	}
	chars, start := 0, 0
	runLen, runSpace := 0, false
	for i, r := range s {
		if chars%chunkMaxChars == 0 {
			// A new 400k part starts its own run.
			if i > start {
				t.encodeChunk(s[start:i], a)
				start = i
			}
			runLen, runSpace = 0, pyIsSpace(r)
		}
		chars++
		sp := pyIsSpace(r)
		if sp != runSpace {
			runLen, runSpace = 1, sp
		} else {
			runLen++
			if runLen > chunkMaxRun {
				t.encodeChunk(s[start:i], a)
				start, runLen = i, 1
			}
		}
	}
	t.encodeChunk(s[start:], a)
}

func (t *TiktokenFile) encodeChunk(s string, a *hfAcc) {
	if len(s) == 0 || a.n > a.max {
		return
	}
	for i := 0; i < len(s) && a.n <= a.max; {
		j := t.split(s, i)
		var n int
		a.out, n = t.v.pieceTokens(s[i:j], a.out, a.emit)
		a.n += n
		i = j
	}
}
