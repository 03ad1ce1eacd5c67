package llamafactory

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/traj"
)

var update = flag.Bool("update", false, "regenerate testdata/ref.tsv and testdata/cutoff.tsv by running LLaMA-Factory's code (testdata/ref/setup.sh, python3)")

// refConfig is one LLaMA-Factory configuration the reference is run with.
type refConfig struct {
	Template       string  `json:"template"`
	ToolFormat     string  `json:"tool_format,omitempty"`
	EnableThinking *bool   `json:"enable_thinking,omitempty"`
	MaskHistory    bool    `json:"mask_history,omitempty"`
	DefaultSystem  *string `json:"default_system,omitempty"`
}

func (c refConfig) options(formatting string, tags *Tags) Options {
	if tags == nil && formatting == "openai" {
		tags = &OpenAITags
	}
	return Options{Template: c.Template, ToolFormat: c.ToolFormat, EnableThinking: c.EnableThinking,
		MaskHistory: c.MaskHistory, DefaultSystem: c.DefaultSystem, Formatting: formatting, Tags: tags,
		ToolsKey: testToolsKey, Date: "15 Jan 2025"}
}

func (c refConfig) String() string {
	s := c.Template
	if c.ToolFormat != "" {
		s += " tool_format=" + c.ToolFormat
	}
	if c.EnableThinking != nil {
		s += fmt.Sprintf(" enable_thinking=%v", *c.EnableThinking)
	}
	if c.MaskHistory {
		s += " mask_history"
	}
	if c.DefaultSystem != nil {
		s += " default_system"
	}
	return s
}

var (
	no         = false
	brief      = "Be brief."
	refConfigs = func() []refConfig {
		var cs []refConfig
		for _, n := range Names() {
			cs = append(cs, refConfig{Template: n})
		}
		return append(cs,
			refConfig{Template: "qwen3", EnableThinking: &no},
			refConfig{Template: "qwen3", MaskHistory: true},
			refConfig{Template: "qwen", ToolFormat: "default"},
			refConfig{Template: "qwen3_nothink", ToolFormat: "mistral"},
			refConfig{Template: "deepseek3", ToolFormat: "qwen"},
			refConfig{Template: "chatml", ToolFormat: "glm4"},
			refConfig{Template: "gemma3", ToolFormat: "llama3"},
			refConfig{Template: "qwen", DefaultSystem: &brief},
		)
	}()
)

// testToolsKey is the column the test puts each case's tools in.
const testToolsKey = "lf_test_tools"

// extraTools are given to the records that hold none (as a JSON string,
// the form LLaMA-Factory's ShareGPT datasets hold).
const extraTools = `[{"type":"function","function":{"name":"get_weather","description":"Get the weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]},"days":{"type":"integer","default":1}},"required":["city"]}}},{"name":"run_shell","description":"Run a shell command.","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"timeout":{"type":"number"},"env":{"type":"array","items":{"type":"string"}}},"required":["cmd"]}}]`

// refCase is one row as the reference reads it.
type refCase struct {
	Name       string          `json:"name"`
	Row        json.RawMessage `json:"row"`
	Formatting string          `json:"formatting"`
	Messages   string          `json:"messages"`
	System     *string         `json:"system"`
	Tags       map[string]any  `json:"tags"`
	Tools      string          `json:"tools"`
	Configs    []refConfig     `json:"configs"`

	rec  *traj.Record
	tags *Tags
}

// hermesTags read "tool" turns as observations (what a ShareGPT dataset
// of Hermes runs needs in its dataset_info.json "tags").
var hermesTags = Tags{Role: "from", Content: "value", User: "human", Assistant: "gpt",
	Observation: "tool", Function: "function_call", System: "system"}

func tagsMap(g Tags) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"role_tag": g.Role, "content_tag": g.Content, "user_tag": g.User,
		"assistant_tag": g.Assistant, "observation_tag": g.Observation, "function_tag": g.Function, "system_tag": g.System} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// withTools returns line with the member testToolsKey set to v.
func withTools(line []byte, v string) []byte {
	i := bytes.LastIndexByte(line, '}')
	out := append([]byte(nil), line[:i]...)
	out = append(out, `,"`+testToolsKey+`":`...)
	out = append(out, v...)
	return append(out, '}')
}

// realCases are the real data's records, each three ways: with its own
// tools, with its tools swapped (extraTools when it holds none, "" when
// it holds some), and, for ShareGPT records, with "tool" as the
// observation tag.
func realCases(t *testing.T) []refCase {
	files, dir := testenv.RealJSONL()
	if len(files) == 0 {
		t.Skipf("no real data in %s", dir)
	}
	return fileCases(t, files)
}

// synthCases are the rows of testdata/synthetic.jsonl (LLaMA-Factory's
// own ShareGPT tool rows, OpenAI rows, and rows it skips or raises on),
// made by hand for the paths the real data does not take.
func synthCases(t *testing.T) []refCase {
	return fileCases(t, []string{filepath.Join("testdata", "synthetic.jsonl")})
}

// fileCases are the cases of the records of files.
func fileCases(t *testing.T, files []string) []refCase {
	var out []refCase
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
			rec, err := traj.Decode(line, traj.Pos{}, traj.Schema{})
			if err != nil {
				continue // not a trajectory
			}
			name := fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(path)), filepath.Base(path), n+1)
			own, _ := rec.Field("tools")
			if own == nil {
				own = []byte(`""`)
			}
			swapped := []byte(`""`)
			if bytes.Equal(own, []byte(`""`)) || bytes.Equal(own, []byte("null")) {
				q, _ := json.Marshal(extraTools)
				swapped = q
				if rec.Dialect == traj.DialectOpenAI {
					swapped = []byte(extraTools)
				}
			}
			variants := []struct {
				suffix string
				tools  []byte
				tags   *Tags
			}{{"", own, nil}, {"#swapped", swapped, nil}}
			if rec.Dialect != traj.DialectOpenAI {
				variants = append(variants, struct {
					suffix string
					tools  []byte
					tags   *Tags
				}{"#tooltag", own, &hermesTags})
			}
			for _, v := range variants {
				row := withTools(line, string(v.tools))
				r, err := traj.Decode(row, traj.Pos{}, traj.Schema{})
				if err != nil {
					t.Fatal(err)
				}
				c := refCase{Name: name + v.suffix, Row: row, Formatting: "sharegpt", Messages: "conversations",
					Tools: testToolsKey, Configs: refConfigs, rec: r, tags: v.tags}
				if r.Dialect == traj.DialectOpenAI {
					c.Formatting, c.Messages = "openai", "messages"
					c.Tags = tagsMap(OpenAITags)
				}
				if v.tags != nil {
					c.Tags = tagsMap(*v.tags)
				}
				if r.SystemKey != "" {
					k := r.SystemKey
					c.System = &k
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// result renders c with config cfg: "pairs:N:sha" (the sha of the pairs'
// elements as ref.py writes them), "skip:reason" or "fatal:exception".
func result(t *testing.T, c refCase, cfg refConfig) string {
	pairs, err := renderCase(t, c, cfg)
	if err != nil {
		if s, ok := err.(*Skip); ok {
			return "skip:" + s.Reason
		}
		if pe, ok := err.(*pyError); ok {
			return "fatal:" + pe.Type
		}
		return "fatal:" + err.Error()
	}
	return fmt.Sprintf("pairs:%d:%s", len(pairs), pairsSHA(pairs))
}

// renderCase renders c's record as ref.py's converter reads the row.
func renderCase(t *testing.T, c refCase, cfg refConfig) ([]encodedPair, error) {
	t.Helper()
	r, err := New(cfg.options(c.Formatting, c.tags))
	if err != nil {
		t.Fatal(err)
	}
	system := ""
	if c.System != nil {
		system = c.rec.System
	}
	return r.render(c.rec, c.rec.Turns, system)
}

// pairsValue is the pairs as ref.py's tokenizer stand-in returns them.
func pairsValue(pairs []encodedPair) value {
	list := func(es []element) value {
		v := value{K: kList, A: []value{}}
		for _, e := range es {
			switch e.kind {
			case eText:
				if e.s != "" {
					v.A = append(v.A, value{K: kList, A: []value{pyStr("s"), pyStr(e.s)}})
				}
			case eToken:
				v.A = append(v.A, value{K: kList, A: []value{pyStr("t"), pyStr(e.s)}})
			case eBOS:
				v.A = append(v.A, value{K: kList, A: []value{pyStr("bos")}})
			case eEOS:
				v.A = append(v.A, value{K: kList, A: []value{pyStr("eos")}})
			}
		}
		return v
	}
	out := value{K: kList, A: []value{}}
	for _, p := range pairs {
		out.A = append(out.A, value{K: kList, A: []value{list(p.src), list(p.tgt)}})
	}
	return out
}

func pairsSHA(pairs []encodedPair) string {
	h := sha256.Sum256([]byte(dumps(pairsValue(pairs), 0)))
	return hex.EncodeToString(h[:])[:12]
}

const goldenPath = "testdata/ref.tsv"

// TestRealDataMatchesLLaMAFactory compares, for every real record three
// ways and every configuration, the elements of each pair (or the skip)
// with what LLaMA-Factory's own code gave (testdata/ref.tsv, written by
// -update from testdata/ref/ref.py).
func TestRealDataMatchesLLaMAFactory(t *testing.T) {
	cases := synthCases(t)
	if files, dir := testenv.RealJSONL(); len(files) > 0 && testing.Short() && !*update {
		t.Log("-short: comparing the synthetic rows only")
	} else if len(files) > 0 {
		cases = append(cases, fileCases(t, files)...)
	} else if *update {
		t.Fatalf("-update needs the real data (%s)", dir)
	} else {
		t.Logf("no real data in %s: comparing the synthetic rows only", dir)
	}
	if *update {
		regenerate(t, cases)
	}
	want := readGolden(t)
	type tally struct{ compared, equal int }
	per := map[string]*tally{}
	diffs := 0
	for _, c := range cases {
		for i, cfg := range c.Configs {
			key := c.Name + "\t" + cfg.String()
			w, ok := want[key]
			if !ok {
				t.Errorf("%s: not in %s (run with -update)", key, goldenPath)
				continue
			}
			got := result(t, c, cfg)
			k := cfg.String()
			if per[k] == nil {
				per[k] = &tally{}
			}
			per[k].compared++
			if got == w {
				per[k].equal++
			} else if diffs++; diffs <= 20 {
				t.Errorf("%s (config %d): got %s, LLaMA-Factory %s", key, i, got, w)
			}
		}
	}
	names := make([]string, 0, len(per))
	for k := range per {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("%-36s records compared %5d, equal %5d", k, per[k].compared, per[k].equal)
	}
	if diffs > 0 {
		t.Errorf("%d results differ from LLaMA-Factory's", diffs)
	}
}

// The golden file has a header line "#configs" and the configurations'
// names separated by tabs, then one line per case: its name and, per
// configuration, its result (compact: see shortResult).
func readGolden(t *testing.T) map[string]string {
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	defer f.Close()
	m := map[string]string{}
	var configs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if parts[0] == "#configs" {
			configs = parts[1:]
			continue
		}
		if len(parts)-1 != len(configs) {
			t.Fatalf("%s: line %q does not have %d results", goldenPath, parts[0], len(configs))
		}
		for i, r := range parts[1:] {
			m[parts[0]+"\t"+configs[i]] = longResult(r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

var shortReasons = strings.NewReplacer("pairs:", "p", "skip:invalid_role_tag", "s:role", "skip:invalid_message_count", "s:count", "skip:invalid_example", "s:empty", "fatal:", "f:")
var longReasons = strings.NewReplacer("s:role", "skip:invalid_role_tag", "s:count", "skip:invalid_message_count", "s:empty", "skip:invalid_example", "f:", "fatal:")

// shortResult abbreviates a result for the golden file.
func shortResult(r string) string { return shortReasons.Replace(r) }

func longResult(r string) string {
	if strings.HasPrefix(r, "p") {
		return "pairs:" + r[1:]
	}
	return longReasons.Replace(r)
}

// regenerate runs ref.py on the cases and writes the golden file.
func regenerate(t *testing.T, cases []refCase) {
	setup := exec.Command("sh", "testdata/ref/setup.sh")
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("-update needs LLaMA-Factory's source: %s", out)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("-update needs python3")
	}
	in := writeCases(t, cases, nil)
	cmd := exec.Command("python3", "testdata/ref/ref.py", "testdata/ref/lf", in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ref.py: %v", err)
	}
	results := map[string][]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r struct {
			Name   string `json:"name"`
			Config int    `json:"config"`
			Result struct {
				N     int    `json:"n"`
				SHA   string `json:"sha"`
				Skip  string `json:"skip"`
				Fatal string `json:"fatal"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		res := fmt.Sprintf("pairs:%d:%s", r.Result.N, r.Result.SHA)
		switch {
		case r.Result.Skip != "":
			res = "skip:" + r.Result.Skip
		case r.Result.Fatal != "":
			res = "fatal:" + r.Result.Fatal
		}
		if results[r.Name] == nil {
			results[r.Name] = make([]string, len(refConfigs))
		}
		results[r.Name][r.Config] = shortResult(res)
	}
	var g bytes.Buffer
	g.WriteString("#configs")
	for _, c := range refConfigs {
		g.WriteString("\t" + c.String())
	}
	g.WriteByte('\n')
	for _, c := range cases {
		fmt.Fprintf(&g, "%s\t%s\n", c.Name, strings.Join(results[c.Name], "\t"))
	}
	if err := os.WriteFile(goldenPath, g.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCases writes cases as ref.py reads them (each with configs, when
// not nil, in place of its own) and returns the file's path.
func writeCases(t *testing.T, cases []refCase, configs any) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "cases.jsonl")
	var buf bytes.Buffer
	for _, c := range cases {
		// the row's bytes pass as they are (through a map its keys would
		// be sorted)
		var cfgs any = c.Configs
		if configs != nil {
			cfgs = configs
		}
		// the outer Configs wins over the embedded one
		b, err := json.Marshal(struct {
			refCase
			Configs any `json:"configs"`
		}{c, cfgs})
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// readTable reads a golden table: per line a case name and its tab-
// separated results.
func readTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	defer f.Close()
	m := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		m[parts[0]] = parts[1:]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
