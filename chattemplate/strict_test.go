package chattemplate

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

// TestEngineRaisesAsJinja2 checks the patches of third_party/jinja
// (PATCHES.md) against what Python jinja2 3.1.2 gives for the same
// expressions (testdata/strict.jsonl, from testdata/ref/strict.py): an
// attribute or item of an undefined value raises with jinja2's hint, + and
// "in" raise Python's TypeErrors, and a string's repr is Python's.
func TestEngineRaisesAsJinja2(t *testing.T) {
	f, err := os.Open("testdata/strict.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c struct {
			Src   string                     `json:"src"`
			Ctx   map[string]json.RawMessage `json:"ctx"`
			Text  *string                    `json:"text"`
			Error *string                    `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		tmpl, err := jinja.Compile(c.Src)
		if err != nil {
			t.Fatalf("%s: %v", c.Src, err)
		}
		data := map[string]jinja.Value{}
		for k, raw := range c.Ctx {
			if data[k], err = FromJSON(raw); err != nil {
				t.Fatal(err)
			}
		}
		got, err := tmpl.RenderValues(data)
		switch {
		case c.Error != nil && err == nil:
			t.Errorf("%s %s: rendered %q, jinja2 raised %q", c.Src, c.Ctx, got, *c.Error)
		case c.Error != nil && !strings.Contains(err.Error(), *c.Error):
			t.Errorf("%s %s: error %q, jinja2 %q", c.Src, c.Ctx, err, *c.Error)
		case c.Error == nil && err != nil:
			t.Errorf("%s %s: %v, jinja2 rendered %q", c.Src, c.Ctx, err, *c.Text)
		case c.Error == nil && got != *c.Text:
			t.Errorf("%s %s: %q, jinja2 %q", c.Src, c.Ctx, got, *c.Text)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}
