package chattemplate

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ardanlabs/jinja"
	"github.com/trajcompress/trajcompress/internal/jinja2ref"
	"github.com/trajcompress/trajcompress/internal/testenv"
)

var corpusFull = flag.Bool("corpus.full", false, "TestCorpusMatchesJinja2: every real record, not one in corpusStride")

// corpusStride: without -corpus.full the corpus test renders one real
// record in corpusStride (each with and without tools), which keeps
// make test-templates within a couple of minutes for the whole corpus.
const corpusStride = 24

var corpusOnly = flag.String("corpus.only", "", "TestCorpusMatchesJinja2: only the templates whose family/name contains this (or one of these, comma-separated)")

// corpusTimeout bounds one render of jinja2: some templates are slow in
// Python on long records (TRL's idefics3 indexes every character of a
// string content as a dict, two exceptions a character, a few seconds a
// megabyte). A render jinja2 does not finish in time is counted as a
// reference timeout, listed by template and record, never as equal.
var corpusTimeout = flag.Duration("corpus.timeout", 20*time.Second, "TestCorpusMatchesJinja2: how long jinja2 may take over one render")

// corpusSpecial are the special tokens a corpus .jinja is rendered with
// (it has no tokenizer_config.json beside it); jinja2 gets the same.
var corpusSpecial = map[string]string{"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}

// corpusTemplate is one template of testdata/corpus, loaded.
type corpusTemplate struct {
	family, name, path string
	tmpl               *Template
	err                error // Load/Parse refused it
}

func loadCorpus(t *testing.T) []corpusTemplate {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusTemplate
	for _, p := range paths {
		if !strings.HasSuffix(p, ".jinja") && !strings.HasSuffix(p, ".json") {
			continue
		}
		c := corpusTemplate{family: filepath.Base(filepath.Dir(p)), name: strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), ".jinja"), ".tokenizer_config.json"), path: p}
		if strings.HasSuffix(p, ".json") {
			c.tmpl, c.err = Load(p)
		} else {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			c.tmpl, c.err = Parse(p, string(src), corpusSpecial)
		}
		if c.tmpl != nil {
			c.tmpl.Now = func() time.Time { return refNow }
		}
		out = append(out, c)
	}
	if len(out) < 60 {
		t.Fatalf("%d corpus templates, want at least 60", len(out))
	}
	return out
}

// rawSource returns the source of path as Python is given it: the .jinja
// file, or the config's template chosen for a record with or without tools.
func rawSource(t *testing.T, c corpusTemplate, hasTools bool) (string, map[string]string) {
	if c.tmpl != nil {
		return c.tmpl.Source(hasTools), c.tmpl.Special
	}
	if strings.HasSuffix(c.path, ".jinja") {
		src, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		return string(src), corpusSpecial
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", c.path, err)
	}
	special, err := specialTokens(c.path, data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.ChatTemplate, special
}

// alternatingCases are strictly alternating conversations (a system turn,
// then user/assistant pairs, string contents only), which templates that
// check the roles' order accept: taken from the real records' turns.
func alternatingCases(real []testCase, n int) []testCase {
	var out []testCase
	for _, c := range real {
		if len(out) == n {
			break
		}
		if strings.HasSuffix(c.Name, "+tools") {
			continue
		}
		var msgs []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		if json.Unmarshal(c.Messages, &msgs) != nil {
			continue
		}
		var sys, user, asst string
		for _, m := range msgs {
			switch {
			case m.Role == "system" && sys == "":
				sys = m.Content
			case m.Role == "user" && user == "" && m.Content != "":
				user = m.Content
			case m.Role == "assistant" && user != "" && m.Content != "":
				asst = m.Content
			}
		}
		if user == "" || asst == "" {
			continue
		}
		type turn struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		turns := []turn{{"user", user}, {"assistant", asst}, {"user", "Thanks. And again?"}, {"assistant", asst}}
		if sys != "" {
			turns = append([]turn{{"system", sys}}, turns...)
		}
		b, _ := json.Marshal(turns)
		out = append(out, testCase{Name: c.Name + "/alternating", Messages: b})
	}
	return out
}

// corpusTally is one row of the corpus table.
type corpusTally struct {
	renders, equal, bothRaised, oursOnly, pyOnly, differ, timeouts int
	withTools, withoutTools                                        int
	py                                                             time.Duration // jinja2's time over the renders
}

func (a *corpusTally) add(b corpusTally) {
	a.renders += b.renders
	a.equal += b.equal
	a.bothRaised += b.bothRaised
	a.oursOnly += b.oursOnly
	a.pyOnly += b.pyOnly
	a.differ += b.differ
	a.timeouts += b.timeouts
	a.py += b.py
	a.withTools += b.withTools
	a.withoutTools += b.withoutTools
}

// errUnsupported marks a refusal of the engine that names a construct it
// does not implement (rather than a difference from jinja2).
func isUnsupported(err error) bool {
	return err != nil && strings.Contains(err.Error(), "unsupported")
}

// TestCorpusMatchesJinja2 renders every template of testdata/corpus (real
// chat templates, README.md names each source) on the hand-made cases, on
// every OpenAI-format record of ../shared/data/real with and without a tools
// list, and on strictly alternating conversations made from them, and
// compares each text byte for byte with Python jinja2 set up as
// transformers' apply_chat_template (testdata/ref/server.py). A text that
// differs, or a render where only one side raises, fails, except a refusal
// of ours that names a construct the engine does not support or says the
// render went over its budget (counted as ours only and listed by
// template and record: jinja2 has no budget).
func TestCorpusMatchesJinja2(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	py := jinja2ref.Start(t)
	t.Logf("reference: %s", py.Version)
	corpus := loadCorpus(t)
	cases := readJSONL[testCase](t, filepath.Join("testdata", "cases.jsonl"))
	if files, dir := testenv.RealJSONL(); len(files) > 0 {
		real := realCases(t, files)
		if !*corpusFull {
			var some []testCase
			for i := 0; i+1 < len(real); i += 2 * corpusStride {
				some = append(some, real[i], real[i+1]) // without and with tools
			}
			real = some
		}
		cases = append(cases, real...)
		cases = append(cases, alternatingCases(real, 12)...)
	} else {
		t.Logf("real data absent (%s): the hand-made cases only", dir)
	}
	families := map[string]*corpusTally{}
	unsupported := map[string]int{}
	timedOut := map[string][]string{}   // family/name: the records jinja2 did not finish
	overBudget := map[string][]string{} // family/name: the records ours refused over the render budget
	var selected []corpusTemplate
	for _, c := range corpus {
		for _, only := range strings.Split(*corpusOnly, ",") {
			if strings.Contains(c.family+"/"+c.name, only) {
				selected = append(selected, c)
				break
			}
		}
	}
	if *corpusFull {
		selected = cheapestFirst(t, py, selected, cases)
	}
	for _, c := range selected {
		var tally corpusTally
		failures := 0
		for _, tc := range cases {
			if _, ok := knownDivergence["*/"+tc.Name]; ok {
				continue
			}
			hasTools := len(tc.Tools) > 0 && string(tc.Tools) != "null"
			src, special := rawSource(t, c, hasTools)
			var tools json.RawMessage
			if hasTools {
				tools = tc.Tools
				tally.withTools++
			} else {
				tally.withoutTools++
			}
			ctx := jinja2ref.ChatContext(tc.Messages, tools, special)
			start := time.Now()
			want := py.RenderTimeout(t, src, ctx, *corpusTimeout)
			tally.py += time.Since(start)
			var got string
			err := c.err
			if c.tmpl != nil {
				got, err = c.tmpl.Render(tc.Messages, tc.Tools)
			}
			tally.renders++
			var msg string
			switch {
			case want.TimedOut():
				tally.timeouts++
				timedOut[c.family+"/"+c.name] = append(timedOut[c.family+"/"+c.name], tc.Name)
			case want.Error != nil && err != nil:
				tally.bothRaised++
			case want.Error == nil && err != nil && isUnsupported(err):
				tally.oursOnly++
				unsupported[firstLine(err.Error())]++
			case want.Error == nil && errors.Is(err, jinja.ErrBudget):
				tally.oursOnly++
				overBudget[c.family+"/"+c.name] = append(overBudget[c.family+"/"+c.name], tc.Name+" ("+budgetReason(err)+")")
			case want.Error == nil && err != nil:
				tally.oursOnly++
				msg = fmt.Sprintf("raised %v; jinja2 rendered", err)
			case want.Error != nil:
				tally.pyOnly++
				msg = fmt.Sprintf("rendered; jinja2 raised %s: %s", want.Type, *want.Error)
			case got != *want.Text:
				tally.differ++
				msg = "differs from jinja2 at " + diffAt(*want.Text, got)
			default:
				tally.equal++
			}
			if msg != "" {
				if failures < 3 {
					t.Errorf("%s/%s %s: %s", c.family, c.name, tc.Name, msg)
				}
				failures++
			}
		}
		if failures > 3 {
			t.Errorf("%s/%s: %d more", c.family, c.name, failures-3)
		}
		t.Logf("%-12s %-28s renders %4d (tools %d, none %d): equal %4d, raised in both %4d, ours only %3d, jinja2 only %3d, differ %3d, reference timeouts %3d (jinja2 %s)",
			c.family, c.name, tally.renders, tally.withTools, tally.withoutTools, tally.equal, tally.bothRaised, tally.oursOnly, tally.pyOnly, tally.differ, tally.timeouts, tally.py.Round(time.Second))
		if families[c.family] == nil {
			families[c.family] = &corpusTally{}
		}
		families[c.family].add(tally)
	}
	t.Log(corpusTable(selected, families, unsupported, timedOut, overBudget))
}

// corpusTable is the summary of the corpus run: one row per family, the
// refusals of ours that name a construct, the records ours refused over
// the render budget and those jinja2 did not finish in time, by template.
func corpusTable(selected []corpusTemplate, families map[string]*corpusTally, unsupported map[string]int, timedOut, overBudget map[string][]string) string {
	names := make([]string, 0, len(families))
	for f := range families {
		names = append(names, f)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| family | templates | renders (tools / none) | equal | raised in both | ours only | jinja2 only | differ | reference timeouts |\n|---|---|---|---|---|---|---|---|---|\n")
	var all corpusTally
	count := map[string]int{}
	for _, c := range selected {
		count[c.family]++
	}
	for _, f := range names {
		r := families[f]
		all.add(*r)
		fmt.Fprintf(&b, "| %s | %d | %d (%d / %d) | %d | %d | %d | %d | %d | %d |\n", f, count[f], r.renders, r.withTools, r.withoutTools, r.equal, r.bothRaised, r.oursOnly, r.pyOnly, r.differ, r.timeouts)
	}
	fmt.Fprintf(&b, "| all | %d | %d (%d / %d) | %d | %d | %d | %d | %d | %d |\n", len(selected), all.renders, all.withTools, all.withoutTools, all.equal, all.bothRaised, all.oursOnly, all.pyOnly, all.differ, all.timeouts)
	for construct, n := range unsupported {
		fmt.Fprintf(&b, "refused by ours only, construct named: %d × %s\n", n, construct)
	}
	for _, list := range []struct {
		what    string
		records map[string][]string
	}{{"refused by ours only, over the render budget", overBudget}, {fmt.Sprintf("reference timed out (jinja2 over %s)", *corpusTimeout), timedOut}} {
		tmpls := make([]string, 0, len(list.records))
		for k := range list.records {
			tmpls = append(tmpls, k)
		}
		sort.Strings(tmpls)
		for _, k := range tmpls {
			fmt.Fprintf(&b, "%s: %s: %d records: %s\n", list.what, k, len(list.records[k]), strings.Join(list.records[k], " "))
		}
	}
	return b.String()
}

// budgetReason is what a budget refusal says ("template output over N
// bytes"), without the template's name before it.
func budgetReason(err error) string {
	m := firstLine(err.Error())
	if i := strings.LastIndex(m, ": "); i >= 0 {
		return m[i+2:]
	}
	return m
}

// cheapestFirst orders the templates by jinja2's time on the longest
// case (one render each, within the timeout), cheapest first: a full run
// stopped early has then finished as many templates as it could, and the
// templates slow in Python come last.
func cheapestFirst(t *testing.T, py *jinja2ref.Ref, corpus []corpusTemplate, cases []testCase) []corpusTemplate {
	longest := cases[0]
	for _, tc := range cases {
		if len(tc.Messages)+len(tc.Tools) > len(longest.Messages)+len(longest.Tools) {
			longest = tc
		}
	}
	hasTools := len(longest.Tools) > 0 && string(longest.Tools) != "null"
	cost := make(map[string]time.Duration, len(corpus))
	for _, c := range corpus {
		src, special := rawSource(t, c, hasTools)
		var tools json.RawMessage
		if hasTools {
			tools = longest.Tools
		}
		start := time.Now()
		py.RenderTimeout(t, src, jinja2ref.ChatContext(longest.Messages, tools, special), *corpusTimeout)
		cost[c.path] = time.Since(start)
	}
	out := append([]corpusTemplate(nil), corpus...)
	sort.SliceStable(out, func(i, j int) bool { return cost[out[i].path] < cost[out[j].path] })
	var order []string
	for _, c := range out {
		order = append(order, fmt.Sprintf("%s/%s %s", c.family, c.name, cost[c.path].Round(time.Millisecond)))
	}
	t.Logf("order (jinja2 on %s, %d bytes): %s", longest.Name, len(longest.Messages)+len(longest.Tools), strings.Join(order, ", "))
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
