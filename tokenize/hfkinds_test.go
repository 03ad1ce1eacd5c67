package tokenize

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// kindsVariant is one entry of testdata/hf/kinds_variants.json: a base
// model's tokenizer.json with, where given, its normalizer and
// pre_tokenizer replaced.
type kindsVariant struct {
	Base         string          `json:"base"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
}

func loadKindsVariants(t testing.TB) map[string]kindsVariant {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "hf", "kinds_variants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]kindsVariant
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// kindsTokenizerJSON writes the tokenizer.json of variant v and returns
// its path, the same edit as gen_golden_kinds.mjs.
func kindsTokenizerJSON(t testing.TB, v kindsVariant) string {
	t.Helper()
	raw, err := os.ReadFile(hfModelPath(t, v.Base))
	if err != nil {
		t.Fatal(err)
	}
	if v.Normalizer == nil && v.PreTokenizer == nil {
		return hfModelPath(t, v.Base)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if v.Normalizer != nil {
		doc["normalizer"] = v.Normalizer
	}
	if v.PreTokenizer != nil {
		doc["pre_tokenizer"] = v.PreTokenizer
	}
	b, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// kindsTokenizer returns the tokenizer of variant v: the shipped file
// loaded whole (LoadHF) when v edits nothing, else the base model's
// tokenizer, loaded once, with the variant's normalizer and pre_tokenizer
// read by the loader's own parsePipeline (loading 57 edited copies of a
// 9 MB file would take minutes under -race).
func kindsTokenizer(t testing.TB, v kindsVariant) *HFTokenizer {
	t.Helper()
	if v.Normalizer == nil && v.PreTokenizer == nil {
		tk, err := LoadHF(kindsTokenizerJSON(t, v))
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	base := hfTokenizer(t, v.Base)
	// The base's model and added tokens, a pipeline of the variant's own.
	tk := new(HFTokenizer)
	*tk = *base
	tk.nfc, tk.norms, tk.stages = false, nil, nil
	norm, pre := v.Normalizer, v.PreTokenizer
	if norm == nil {
		norm = kindsBaseJSON(t, v.Base, "normalizer")
	}
	if pre == nil {
		pre = kindsBaseJSON(t, v.Base, "pre_tokenizer")
	}
	if _, err := tk.parsePipeline(norm, pre); err != nil {
		t.Fatal(err)
	}
	return tk
}

var kindsBaseDocs = map[string]map[string]json.RawMessage{}

// kindsBaseJSON returns the raw value of key in the base model's
// tokenizer.json.
func kindsBaseJSON(t testing.TB, base, key string) json.RawMessage {
	t.Helper()
	doc, ok := kindsBaseDocs[base]
	if !ok {
		raw, err := os.ReadFile(hfModelPath(t, base))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		kindsBaseDocs[base] = doc
	}
	return doc[key]
}

type kindsCase struct {
	name string
	raw  string
	ids  map[string]json.RawMessage
	line int
}

func loadKindsGolden(t testing.TB) []kindsCase {
	t.Helper()
	path := filepath.Join("testdata", "hf", "golden_kinds.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []kindsCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		var row struct {
			Name string                     `json:"name"`
			Text string                     `json:"text"`
			IDs  map[string]json.RawMessage `json:"ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		raw, err := base64.StdEncoding.DecodeString(row.Text)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		cases = append(cases, kindsCase{name: row.Name, raw: string(raw), ids: row.IDs, line: line})
	}
	if len(cases) < 300 {
		t.Fatalf("%s: only %d cases", path, len(cases))
	}
	return cases
}

// idsDigest is how gen_golden_kinds.mjs writes an id list: the ids when
// there are at most 24, else "count:sha256-prefix".
func idsDigest(ids []int) string {
	if len(ids) <= 24 {
		b, _ := json.Marshal(ids)
		return string(b)
	}
	return fmt.Sprintf("%q", fmt.Sprintf("%d:%s", len(ids), idsSHA(ids)))
}

// wantDigest normalizes a golden entry to idsDigest's form.
func wantDigest(raw json.RawMessage) (string, int) {
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		if ids == nil {
			ids = []int{}
		}
		return idsDigest(ids), len(ids)
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	n, _ := strconv.Atoi(strings.SplitN(s, ":", 2)[0])
	return fmt.Sprintf("%q", s), n
}

// TestHFGoldenKinds checks Encode and Count against Hugging Face
// tokenizers for every variant of kinds_variants.json: Claude's and
// GPT-4o's tokenizer.json, and Llama-3's vocabulary behind each
// normalizer and pre-tokenizer kind (testdata/hf/golden_kinds.jsonl).
func TestHFGoldenKinds(t *testing.T) {
	variants := loadKindsVariants(t)
	cases := raceSample(loadKindsGolden(t))
	keys := make([]string, 0, len(variants))
	for k := range variants {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			tk := kindsTokenizer(t, variants[key])
			ok, total := 0, 0
			for _, g := range cases {
				raw, present := g.ids[key]
				if !present {
					t.Fatalf("golden_kinds.jsonl:%d: no ids for %s", g.line, key)
				}
				// No skip for regexp2 (the slow path): the variants' own
				// Regex patterns use no Unicode class.
				total++
				want, n := wantDigest(raw)
				got := tk.Encode(g.raw)
				if idsDigest(got) == want && tk.Count(g.raw) == n {
					ok++
					continue
				}
				if total-ok <= 5 {
					t.Errorf("golden_kinds.jsonl:%d %s %.120q: got %d ids %v, want %s", g.line, g.name, g.raw, len(got), head(got), want)
				}
			}
			if ok != total {
				t.Errorf("%s: %d/%d exact", key, ok, total)
			}
			t.Logf("%s: %d/%d exact (split %s)", key, ok, total, tk.Info().Split)
		})
	}
}

// TestHFCodePoints checks the character-level normalizers and
// pre-tokenizers on every Unicode scalar value, alone, against what
// Hugging Face tokenizers does to it (testdata/hf/golden_codepoints.json,
// gen_codepoints.mjs): the Unicode data behind each (x/text, Go's tables,
// the generated tables) must agree with the reference's version. Under
// -race it checks every code point the reference changes or classes below
// U+3000, and every 16th of the rest.
func TestHFCodePoints(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "hf", "golden_codepoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Maps map[string]map[string]string `json:"maps"`
		Sets map[string][][2]rune         `json:"sets"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	initClasses()
	for _, name := range []string{"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents"} {
		want := map[rune]string{}
		for k, v := range g.Maps[name] {
			c, err := strconv.ParseUint(k, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			want[rune(c)] = v
		}
		if len(want) < 1000 {
			t.Fatalf("%s: only %d code points changed in the reference", name, len(want))
		}
		tk := &HFTokenizer{}
		if err := tk.parseNormalizers(json.RawMessage(`{"type": "`+name+`"}`), "normalizer"); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for r := rune(0); r < 0x110000; r++ {
			if r >= 0xd800 && r <= 0xdfff {
				continue
			}
			w, ok := want[r]
			if raceEnabled && !ok && r%16 != 0 {
				// Under -race (10x slower): every code point the
				// reference changes, and every 16th of the others.
				continue
			}
			s := string(r)
			if !ok {
				w = s
			}
			var buf []byte
			if got := tk.normalize(s, &buf); got != w {
				if bad++; bad <= 10 {
					t.Errorf("%s(U+%04X) = %+q, want %+q", name, r, got, w)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d code points differ", name, bad)
		}
	}
	in := func(set string, r rune) bool {
		for _, p := range g.Sets[set] {
			if r >= p[0] && r <= p[1] {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		set  string
		ours func(r rune) bool
	}{
		{"punctuation", isPunc},
		{"whitespace_split", unicode.IsSpace},
		{"word", isWordRune},
		{"space", func(r rune) bool { k, _ := wordKind(string(r), 0); return k == 0 }},
	} {
		if len(g.Sets[c.set]) == 0 {
			t.Fatalf("no set %s", c.set)
		}
		bad := 0
		for r := rune(0); r < 0x110000; r++ {
			if r >= 0xd800 && r <= 0xdfff || raceEnabled && r%16 != 0 && r > 0x3000 {
				continue
			}
			if w := in(c.set, r); c.ours(r) != w {
				if bad++; bad <= 10 {
					t.Errorf("%s: U+%04X is %v, want %v", c.set, r, !w, w)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d code points differ", c.set, bad)
		}
	}
}

// realKinds are the kinds_variants.json keys checked on the real data:
// the two shipped files, and one variant per normalizer and pre-tokenizer
// family.
var realKinds = []string{"claude", "gpt4o", "n_nfkc_lower_strip", "n_nfd_strip_accents", "n_llama2", "n_replace_regex",
	"p_metaspace_first", "p_gemma", "p_split_re_mergedwithnext_inv", "p_split_str_contiguous", "p_whitespace",
	"p_bert", "p_bytelevel_prefix", "p_bytelevel_then_digits", "p_punctuation_contiguous"}

// shortRealKinds are the realKinds checked under -short and -race: a
// shipped file, one normalizer and one pre-tokenizer variant. Node spends
// about a second of CPU loading each tokenizer, most of the test's cost;
// every kind keeps its golden texts (TestHFGoldenKinds) in every mode.
var shortRealKinds = []string{"claude", "n_llama2", "p_gemma"}

// TestHFRealKinds checks the ids of the turn texts of the real data
// (../shared/data/real) against npm tokenizers, run here through
// testdata/hf/encode_kinds.mjs, for realKinds (shortRealKinds under -race
// or -short): a deterministic sample of
// about 500 KB (100 KB under -race or -short; texts cut to 8 KB), or,
// with TRAJCOMPRESS_HF_REAL=all, every text whole and every kind (31 MB; minutes per
// tokenizer for the reference, so run it with -timeout 0;
// TRAJCOMPRESS_HF_REAL_KINDS=claude,gpt4o narrows the keys). It skips,
// saying why, when the real data or Node is missing.
func TestHFRealKinds(t *testing.T) {
	dir := testenv.RealDataDir()
	if dir == "" {
		t.Skip("shared real data absent")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: the reference side of this test needs Node >= 18")
	}
	variants := loadKindsVariants(t)
	all := os.Getenv("TRAJCOMPRESS_HF_REAL") == "all"
	realKinds := realKinds
	if (raceEnabled || testing.Short()) && !all {
		realKinds = shortRealKinds
	}
	if only := os.Getenv("TRAJCOMPRESS_HF_REAL_KINDS"); only != "" {
		realKinds = strings.Split(only, ",")
	}
	tks := make([]*HFTokenizer, len(realKinds))
	for k, key := range realKinds {
		tks[k] = kindsTokenizer(t, variants[key])
	}
	texts := realTurnTexts(t, dir)
	if !all {
		budget := 500_000
		if raceEnabled || testing.Short() {
			budget = 100_000
		}
		texts = sampleTexts(texts, budget, 8<<10)
	}
	var in bytes.Buffer
	for _, s := range texts {
		b, _ := json.Marshal(ReplaceInvalid(s))
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command("node", append([]string{filepath.Join("testdata", "hf", "encode_kinds.mjs")}, realKinds...)...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("encode_kinds.mjs: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("encode_kinds.mjs: %d lines for %d texts", len(lines), len(texts))
	}
	ok := make([]int, len(realKinds))
	for i, s := range texts {
		want := strings.Fields(lines[i])
		for k, tk := range tks {
			ids := tk.Encode(s)
			got := fmt.Sprintf("%d:%s", len(ids), idsSHA(ids))
			if got == want[k] && tk.Count(s) == len(ids) {
				ok[k]++
			} else if len(texts)-ok[k] < 1000 {
				t.Errorf("%s: real text %d %.100q: got %s, want %s", realKinds[k], i, s, got, want[k])
			}
		}
	}
	for k, key := range realKinds {
		t.Logf("%s: %d/%d real turn texts exact", key, ok[k], len(texts))
	}
}

// idsSHA is the first 16 hex digits of the SHA-256 of the ids joined by
// commas.
func idsSHA(ids []int) string {
	s := make([]string, len(ids))
	for k, id := range ids {
		s[k] = strconv.Itoa(id)
	}
	sum := sha256.Sum256([]byte(strings.Join(s, ",")))
	return hex.EncodeToString(sum[:])[:16]
}

// sampleTexts returns a deterministic sample of about budget bytes of
// texts, each cut to at most maxLen bytes at a code point boundary.
func sampleTexts(texts []string, budget, maxLen int) []string {
	rng := rand.New(rand.NewPCG(29, 29))
	var out []string
	for budget > 0 && len(texts) > 0 {
		s := texts[rng.IntN(len(texts))]
		if len(s) > maxLen {
			cut := maxLen
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut]
		}
		budget -= len(s)
		out = append(out, s)
	}
	return out
}
