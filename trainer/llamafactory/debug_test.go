package llamafactory

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDebugCase prints, for LF_DEBUG_CASE and config index
// LF_DEBUG_CONFIG, the first element where Go and ref.py differ.
func TestDebugCase(t *testing.T) {
	name := os.Getenv("LF_DEBUG_CASE")
	if name == "" {
		t.Skip("set LF_DEBUG_CASE")
	}
	var c refCase
	for _, x := range realCases(t) {
		if x.Name == name {
			c = x
		}
	}
	ci := 0
	if s := os.Getenv("LF_DEBUG_CONFIG"); s != "" {
		json.Unmarshal([]byte(s), &ci)
	}
	c.Configs = c.Configs[ci : ci+1]
	in := filepath.Join(t.TempDir(), "c.jsonl")
	b, _ := json.Marshal(c)
	os.WriteFile(in, append(b, '\n'), 0o644)
	cmd := exec.Command("python3", "testdata/ref/ref.py", "testdata/ref/lf", in)
	cmd.Env = append(os.Environ(), "REF_FULL=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result struct {
			Pairs json.RawMessage `json:"pairs"`
		} `json:"result"`
	}
	json.Unmarshal(out, &r)
	var want [][2][][]string
	json.Unmarshal(r.Result.Pairs, &want)
	pairs, err := renderCase(t, c, c.Configs[0])
	if err != nil {
		t.Fatal(err)
	}
	var got [][2][][]string
	json.Unmarshal([]byte(dumps(pairsValue(pairs), 0)), &got)
	for i := range want {
		for j := 0; j < 2; j++ {
			w, _ := json.Marshal(want[i][j])
			g, _ := json.Marshal(got[i][j])
			if !bytes.Equal(w, g) {
				k := 0
				for k < len(w) && k < len(g) && w[k] == g[k] {
					k++
				}
				lo := max(k-200, 0)
				t.Logf("pair %d part %d at %d:\nwant %s\n got %s", i, j, k, w[lo:min(k+300, len(w))], g[lo:min(k+300, len(g))])
				return
			}
		}
	}
}
