package tokenize

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "regenerate testdata/golden.jsonl with node testdata/gen_golden.mjs (needs npm ci --prefix testdata)")

type goldenCase struct {
	Name   string `json:"name"`
	Text   string `json:"text"` // base64 of the raw bytes
	O200k  []int  `json:"o200k_base"`
	CL100k []int  `json:"cl100k_base"`
	line   int
	raw    string
}

func (g goldenCase) ids(name string) []int {
	if name == O200kBase {
		return g.O200k
	}
	return g.CL100k
}

func loadGolden(t testing.TB) []goldenCase {
	t.Helper()
	path := filepath.Join("testdata", "golden.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		var g goldenCase
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		raw, err := base64.StdEncoding.DecodeString(g.Text)
		if err != nil {
			t.Fatalf("%s:%d: text: %v", path, line, err)
		}
		g.raw, g.line = string(raw), line
		cases = append(cases, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases) < 50 {
		t.Fatalf("%s: only %d cases", path, len(cases))
	}
	return cases
}

func TestGolden(t *testing.T) {
	if *update {
		cmd := exec.Command("node", filepath.Join("testdata", "gen_golden.mjs"))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("regenerating golden file: %v", err)
		}
	}
	cases := loadGolden(t)
	for _, name := range []string{O200kBase, CL100kBase} {
		enc := mustEncoding(t, name)
		for _, g := range cases {
			t.Run(name+"/"+g.Name, func(t *testing.T) {
				want := g.ids(name)
				got := enc.Encode(g.raw)
				if !slices.Equal(got, want) {
					t.Errorf("golden.jsonl:%d %q: Encode differs at token %d\n got %v\nwant %v", g.line, g.raw, firstDiff(got, want), got, want)
				}
				if n := enc.Count(g.raw); n != len(want) {
					t.Errorf("golden.jsonl:%d: Count = %d, want %d", g.line, n, len(want))
				}
			})
		}
	}
}

func firstDiff(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
