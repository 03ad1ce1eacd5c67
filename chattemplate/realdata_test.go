package chattemplate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// realTools is the tools list added to every real record for its second
// rendering (the records hold none).
const realTools = `[{"type":"function","function":{"name":"get_weather","description":"Get the weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"days":{"type":"integer","default":1}},"required":["city"]}}},{"type":"function","function":{"name":"run_shell","description":"Run a shell command.","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"timeout":{"type":"number"}},"required":["cmd"]}}}]`

// realCases reads the OpenAI-format records (a "messages" list of
// system/user/assistant/tool turns) of the real data as a loader passes them
// to a template: messages as they are, a null content as "". Each record
// comes twice: without tools, and with realTools.
func realCases(t testing.TB, files []string) []testCase {
	t.Helper()
	var out []testCase
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		for n := 1; sc.Scan(); n++ {
			var rec struct {
				Messages []map[string]json.RawMessage `json:"messages"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || len(rec.Messages) == 0 || !openAIRoles(rec.Messages) {
				continue
			}
			msgs, err := normalize(sc.Bytes())
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			name := fmt.Sprintf("%s:%d", filepath.Base(path), n)
			out = append(out, testCase{Name: name, Messages: msgs},
				testCase{Name: name + "+tools", Messages: msgs, Tools: json.RawMessage(realTools)})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return out
}

func openAIRoles(msgs []map[string]json.RawMessage) bool {
	for _, m := range msgs {
		var role string
		if json.Unmarshal(m["role"], &role) != nil {
			return false
		}
		switch role {
		case "system", "user", "assistant", "tool":
		default:
			return false
		}
		if c, ok := m["content"]; ok && len(c) > 0 && c[0] != '"' && !bytes.Equal(c, []byte("null")) {
			return false // content parts: not what a loader passes
		}
	}
	return true
}

// normalize returns the record's messages with each null content replaced by
// "", keeping every other byte (key order, numbers) as it is.
func normalize(record []byte) (json.RawMessage, error) {
	var rec struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(record, &rec); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range rec.Messages {
		if i > 0 {
			b.WriteByte(',')
		}
		m = bytes.Replace(m, []byte(`"content": null`), []byte(`"content": ""`), 1)
		m = bytes.Replace(m, []byte(`"content":null`), []byte(`"content":""`), 1)
		b.Write(m)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// TestRealDataMatchesJinja2 renders every OpenAI-format record of the real
// data (../shared/data/real), with and without a tools list, with each test
// template, and compares with Python jinja2 run on the same input. The real
// data is not in the repository, so no goldens: it skips when the data or
// Debian's python3-jinja2 is absent.
func TestRealDataMatchesJinja2(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	files, dir := testenv.RealJSONL()
	if len(files) == 0 {
		t.Skipf("no real data in %s", dir)
	}
	if why := referenceMissing(); why != "" {
		t.Skip(why)
	}
	cases := realCases(t, files)
	if len(cases) == 0 {
		t.Skipf("no OpenAI-format records in %s", dir)
	}
	in := filepath.Join(t.TempDir(), "cases.jsonl")
	var buf bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range testTemplates {
		t.Run(tt.name, func(t *testing.T) {
			out := runReference(t, tt.config, tt.jinja, in)
			var golden []goldenLine
			for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
				var g goldenLine
				if err := json.Unmarshal(l, &g); err != nil {
					t.Fatal(err)
				}
				golden = append(golden, g)
			}
			if len(golden) != len(cases) {
				t.Fatalf("%d reference lines for %d records", len(golden), len(cases))
			}
			tmpl := loadTestTemplate(t, tt.config, tt.jinja)
			equal, raised := 0, 0
			for i, c := range cases {
				g := golden[i]
				got, err := tmpl.Render(c.Messages, c.Tools)
				// RenderValid (what trainview renders with: shared strings,
				// tojson taking their JSON literals) gives the same text.
				if gotValid, errValid := tmpl.RenderValid(c.Messages, c.Tools); gotValid != got || (errValid == nil) != (err == nil) {
					t.Errorf("%s: RenderValid %v differs from Render %v at %s", c.Name, errValid, err, diffAt(got, gotValid))
				}
				switch {
				case g.Error != nil && err != nil && raisesItself(tmpl, *g.Error) && !strings.Contains(err.Error(), *g.Error):
					t.Errorf("%s: error %q, want the template's message %q", c.Name, err, *g.Error)
				case g.Error != nil && err != nil:
					equal++
					raised++
				case g.Error != nil:
					t.Errorf("%s: rendered, jinja2 raised %q", c.Name, *g.Error)
				case err != nil:
					t.Errorf("%s: %v", c.Name, err)
				case got != *g.Text:
					t.Errorf("%s: differs from jinja2 at %s", c.Name, diffAt(*g.Text, got))
				default:
					equal++
				}
			}
			t.Logf("%s: %d/%d records equal to jinja2 (%d raised in both)", tt.name, equal, len(cases), raised)
		})
	}
}
