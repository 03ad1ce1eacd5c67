package tokenize

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// writeKimiLike writes a small synthetic Kimi-style model directory: a
// tiktoken.model holding the first n ranks of cl100k_base (all 256 bytes
// and the earliest merges) and a tokenizer_config.json naming
// tokenization_kimi with two added tokens. It returns the directory and
// the ranks.
func writeKimiLike(t *testing.T, dir string, n int) map[string]int {
	t.Helper()
	f, err := assets.Assets.Open("cl100k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	ranks := map[string]int{}
	sc := bufio.NewScanner(f)
	for k := 0; k < n && sc.Scan(); k++ {
		line := sc.Text()
		b.WriteString(line + "\n")
		var tok string
		var r int
		parts := strings.Fields(line)
		raw, _ := base64.StdEncoding.DecodeString(parts[0])
		tok = string(raw)
		fmt.Sscan(parts[1], &r)
		ranks[tok] = r
	}
	if err := os.WriteFile(filepath.Join(dir, "tiktoken.model"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"auto_map": {"AutoTokenizer": ["tokenization_kimi.TikTokenTokenizer", null]},
 "tokenizer_class": "TikTokenTokenizer",
 "added_tokens_decoder": {"%d": {"content": "[BOS]", "special": true}, "%d": {"content": "<|im_end|>", "special": true}}}`, n, n+1)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return ranks
}

// TestTiktokenFileKimi checks the tiktoken-format path on a synthetic
// Kimi-style model: against tiktoken-go running the same ranks and Kimi's
// pattern (on regexp2), added tokens matched first, Han runs split off, the
// model found through a fake Hugging Face cache under the peer's default
// model id, and a config without a known pattern refused.
func TestTiktokenFileKimi(t *testing.T) {
	const n = 3000
	src := t.TempDir()
	ranks := writeKimiLike(t, src, n)
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	const commit = "4444444444444444444444444444444444444444"
	snap := fakeSnapshot(t, cache, "moonshotai/Kimi-K2-Thinking", "main", commit, "tiktoken.model", filepath.Join(src, "tiktoken.model"))
	cfg, _ := os.ReadFile(filepath.Join(src, "tokenizer_config.json"))
	if err := os.WriteFile(filepath.Join(snap, "tokenizer_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := New("moonshotai/Kimi-K2-Thinking")
	if err != nil {
		t.Fatal(err)
	}
	k := c.(*TiktokenFile)
	if info := Describe(c); info.Kind != KindTiktokenFile || info.Split != "kimi" || info.SlowPath || info.Hash == "" {
		t.Errorf("Describe = %+v", info)
	}

	bpe, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, kimiPattern())
	if err != nil {
		t.Fatal(err)
	}
	oracle := tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: "kimi-like", PatStr: kimiPattern(), MergeableRanks: ranks}, nil)
	rng := rand.New(rand.NewPCG(31, 32))
	for range 500 {
		s := randomText(rng, 1+rng.IntN(120)) + "中文字符 漢字" + randomText(rng, 20)
		if strings.ContainsRune(s, 'ſ') || inUnicode16(s) || psDiffers(s) {
			continue // where regexp2 (the oracle's engine) legitimately differs
		}
		if got, want := k.Encode(s), oracle.EncodeOrdinary(s); !slices.Equal(got, want) {
			t.Fatalf("%q: got %v, want %v", s, got, want)
		}
	}
	// Added tokens are one token each; Han runs are pieces of their own.
	got := k.Encode("[BOS]hello<|im_end|>")
	want := append(append([]int{n}, oracle.EncodeOrdinary("hello")...), n+1)
	if !slices.Equal(got, want) {
		t.Errorf("added tokens: got %v, want %v", got, want)
	}
	for _, han := range []string{"中文", "\U00020000\U0002A6DF", "\u3007\u3005"} {
		if got, want := k.Count("abc"+han+"def"), k.Count("abc")+k.Count(han)+k.Count("def"); got != want {
			t.Errorf("Han run %q not split off: %d tokens, want %d", han, got, want)
		}
	}
	// Llama-3-style chunking: a run of more than 25,000 non-space code
	// points is encoded in 25,000-code-point chunks.
	long := strings.Repeat("x", 25_001)
	if got, want := k.Count(long), k.Count(strings.Repeat("x", 25_000))+k.Count("x"); got != want {
		t.Errorf("long run: %d tokens, want %d (chunked at 25,000)", got, want)
	}

	// A tiktoken file whose config names no known pattern is refused.
	other := t.TempDir()
	writeKimiLike(t, other, 300)
	os.WriteFile(filepath.Join(other, "tokenizer_config.json"), []byte(`{"tokenizer_class": "Other"}`), 0o644)
	if _, err := New(filepath.Join(other, "tiktoken.model")); err == nil || !strings.Contains(err.Error(), "no known split pattern") {
		t.Errorf("unknown config: error %v", err)
	}
}

// kimiPattern is tokenization_kimi.py's pat_str (Kimi-K2), written for
// regexp2: its class intersections [...&&[^\p{Han}]] become .NET class
// subtractions with the Unicode 16.0 Han ranges spelled out. Counting uses
// the hand-written splitKimi; the tests check it against this pattern.
func kimiPattern() string {
	var han strings.Builder
	for k := 0; k < len(u16Han); k += 2 {
		han.WriteRune(rune(u16Han[k]))
		if u16Han[k+1] != u16Han[k] {
			han.WriteByte('-')
			han.WriteRune(rune(u16Han[k+1]))
		}
	}
	h := han.String()
	upper := `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}-[` + h + `]]`
	lower := `[\p{Ll}\p{Lm}\p{Lo}\p{M}-[` + h + `]]`
	return strings.Join([]string{
		`[` + h + `]+`,
		`[^\r\n\p{L}\p{N}]?` + upper + `*` + lower + `+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?` + upper + `+` + lower + `*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?[^\s\p{L}\p{N}]+[\r\n]*`,
		`\s*[\r\n]+`,
		`\s+(?!\S)`,
		`\s+`,
	}, "|")
}

// TestTiktokenFileConfigCounts: the config beside a tiktoken-format file
// (its special tokens) changes the counts, so it is part of the
// tokenizer's hash and identity: two snapshots sharing one tiktoken.model
// blob but not their configs are two tokenizers, in one process too.
func TestTiktokenFileConfigCounts(t *testing.T) {
	src := t.TempDir()
	writeKimiLike(t, src, 300)
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	snapA := fakeSnapshot(t, cache, "org/kimi-like", "main", a, "tiktoken.model", filepath.Join(src, "tiktoken.model"))
	snapB := fakeSnapshot(t, cache, "org/kimi-like", "other", b, "tiktoken.model", filepath.Join(src, "tiktoken.model"))
	cfg, _ := os.ReadFile(filepath.Join(src, "tokenizer_config.json"))
	os.WriteFile(filepath.Join(snapA, "tokenizer_config.json"), cfg, 0o644)
	cfgB := strings.Replace(string(cfg), `"<|im_end|>"`, `"<think>"`, 1)
	os.WriteFile(filepath.Join(snapB, "tokenizer_config.json"), []byte(cfgB), 0o644)
	ca, err := NewRevision("org/kimi-like", "main")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := NewRevision("org/kimi-like", "other")
	if err != nil {
		t.Fatal(err)
	}
	const text = "<think>hello"
	if ca.Count(text) == cb.Count(text) {
		t.Errorf("the two configs count %q alike (%d): one tokenizer shared by both", text, ca.Count(text))
	}
	if Describe(ca).Hash == Describe(cb).Hash {
		t.Error("the two configs give one hash")
	}
}
