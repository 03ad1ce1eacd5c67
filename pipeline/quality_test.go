package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

// Fake secrets, shaped like the real thing (none is a credential).
const (
	awsKey   = "AKIAIOSFODNN7QXZ2ABC"
	ghToken  = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngXy12AbCdEf"
	dbPass   = "s3cr3t-P4ss"
	dbRemote = "postgres://admin:" + dbPass + "@db.internal:5432/app"
)

// recordingSummarizer keeps the texts of every region it was asked for.
type recordingSummarizer struct {
	mu    sync.Mutex
	texts []string
}

func (r *recordingSummarizer) Remote() bool { return true }

func (r *recordingSummarizer) Summarize(_ context.Context, req summary.Request) (summary.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range req.Turns {
		r.texts = append(r.texts, string(t.Raw))
	}
	return summary.Result{Text: "[CONTEXT SUMMARY]: s"}, nil
}

// secretRecord is an OpenAI record over target with a secret in a system
// prompt, a tool call's arguments (a JSON string inside a string), a tool
// result at the start of a line, and a top-level field.
func secretRecord() string {
	args, _ := json.Marshal(`{"command": "git remote add origin https://x:` + ghToken + `@github.com/acme/app.git"}`)
	msgs := []string{
		`{"role": "system", "content": "deploy with AWS_ACCESS_KEY_ID=` + awsKey + `"}`,
		`{"role": "user", "content": "` + words(100, "u") + `"}`,
		`{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": ` + string(args) + `}}]}`,
		`{"role": "tool", "tool_call_id": "c1", "content": "ok\n` + ghToken + `\n` + words(300, "r") + `"}`,
		`{"role": "assistant", "content": "` + words(300, "a") + ` then export GITHUB_TOKEN=` + ghToken + `"}`,
		`{"role": "user", "content": "` + words(300, "v") + `"}`,
		`{"role": "assistant", "content": "` + words(10, "b") + `"}`,
		`{"role": "user", "content": "` + words(10, "c") + `"}`,
		`{"role": "assistant", "content": "` + words(10, "d") + `"}`,
		`{"role": "user", "content": "` + words(10, "e") + `"}`,
	}
	return `{"id": "r1", "messages": [` + strings.Join(msgs, ", ") + `], "env": {"DATABASE_URL": "` + dbRemote + `"}}`
}

func TestRedactionEverywhere(t *testing.T) {
	rs := &recordingSummarizer{}
	c := newComp(t, func(o *Options) { o.Redactor = redact.Default(); o.Summarizing.Summarizer = rs })
	line := secretRecord()
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed {
		t.Fatalf("outcome %s %s", res.Obs.Outcome, res.Obs.Reason)
	}
	out := string(res.Out)
	for _, s := range []string{awsKey, ghToken, dbPass} {
		if strings.Contains(out, s) {
			t.Errorf("output holds secret %q:\n%s", s, out)
		}
		for _, sent := range rs.texts {
			if strings.Contains(sent, s) {
				t.Errorf("the summarizer was sent secret %q: %s", s, sent)
			}
		}
	}
	if len(rs.texts) == 0 || !strings.Contains(strings.Join(rs.texts, ""), "[REDACTED:github_pat]") {
		t.Errorf("the region sent to the summarizer lacks the marker: %q", rs.texts)
	}
	want := map[string]int{"aws_access_token": 1, "github_pat": 3, "url_password": 1}
	for k, n := range want {
		if res.Obs.Redactions[k] != n {
			t.Errorf("redactions %v, want %v", res.Obs.Redactions, want)
			break
		}
	}
	if !json.Valid(res.Out) {
		t.Fatalf("output is not JSON: %s", out)
	}
	// Every byte but the secrets is kept.
	back := line
	back = strings.ReplaceAll(back, awsKey, "[REDACTED:aws_access_token]")
	back = strings.ReplaceAll(back, ghToken, "[REDACTED:github_pat]")
	back = strings.ReplaceAll(back, dbPass, "[REDACTED:url_password]")
	c2 := newComp(t, func(o *Options) { o.Summarizing.Summarizer = &recordingSummarizer{} })
	res2, err := c2.Compress(context.Background(), []byte(back), pos)
	if err != nil {
		t.Fatal(err)
	}
	if string(res2.Out) != out {
		t.Errorf("redacted output differs from the output of the input with the markers put in by hand:\n%s\n%s", out, res2.Out)
	}

	// Off, nothing is touched.
	off := newComp(t, func(o *Options) { o.Summarizing.Summarizer = &recordingSummarizer{} })
	short := `{"messages": [{"role": "user", "content": "my key AKIAIOSFODNN7QXZ2ABC"}]}`
	res3, _ := off.Compress(context.Background(), []byte(short), pos)
	if string(res3.Out) != short || res3.Obs.Redactions != nil {
		t.Errorf("redaction off changed the record: %s %v", res3.Out, res3.Obs.Redactions)
	}
	// On, a record under target is written with its secrets redacted.
	res4, _ := c.Compress(context.Background(), []byte(short), pos)
	if res4.Obs.Outcome != outcome.SkippedUnderTarget || string(res4.Out) != strings.Replace(short, awsKey, "[REDACTED:aws_access_token]", 1) {
		t.Errorf("under target: %s %s", res4.Obs.Outcome, res4.Out)
	}
}

func TestRedactionOfRejectedLine(t *testing.T) {
	c := newComp(t, func(o *Options) { o.Redactor = redact.Default() })
	line := `{"messages": [{"role": "user", "content": "token ` + ghToken + `"}` // cut short
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reject == nil || strings.Contains(string(res.Reject.Raw), ghToken) || !strings.Contains(string(res.Reject.Raw), "[REDACTED:github_pat]") {
		t.Fatalf("reject %+v", res.Reject)
	}
	if res.Obs.Redactions["github_pat"] != 1 {
		t.Errorf("redactions %v", res.Obs.Redactions)
	}
}

// TestRedactLineMatchesDecoded: the scan of the encoded line finds every
// secret the decoded strings hold, whatever escapes surround it.
func TestRedactLineMatchesDecoded(t *testing.T) {
	r := redact.Default()
	texts := []string{
		"line one\n" + ghToken + "\nline three", // a secret at a line start: "\n" is not a word byte
		"tab\t" + awsKey,
		"quoted \"" + ghToken + "\"",
		"café " + dbRemote + " ünïcode",
		"中文" + awsKey + "中文",
		"A" + awsKey,
	}
	for _, text := range texts {
		for _, enc := range []func(string) string{goEncode, asciiEncode, slashEncode} {
			line := `{"messages": [{"role": "user", "content": ` + enc(text) + `}]}`
			out, counts := r.RedactLine([]byte(line))
			_, want := r.RedactString(text)
			if counts.Total() != want.Total() {
				t.Errorf("%q encoded as %s: %v, decoded text gives %v", text, line, counts, want)
			}
			if !json.Valid(out) {
				t.Errorf("not JSON: %s", out)
			}
		}
	}
}

func goEncode(s string) string { b, _ := json.Marshal(s); return string(b) }

// asciiEncode is Python's json.dumps default: non-ASCII as \u escapes.
func asciiEncode(s string) string {
	var b strings.Builder
	for _, r := range goEncode(s) {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16(r) {
			b.WriteString(`\u`)
			b.WriteString(strings.ToLower(strings.TrimPrefix(strings.ToUpper(hex4(u)), "0X")))
		}
	}
	return b.String()
}

func slashEncode(s string) string { return strings.ReplaceAll(goEncode(s), "/", `\/`) }

func utf16(r rune) []rune {
	if r < 0x10000 {
		return []rune{r}
	}
	r -= 0x10000
	return []rune{0xd800 + (r >> 10), 0xdc00 + (r & 0x3ff)}
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}

// prepassLine is a ShareGPT record over a 900-word target whose middle
// holds two identical tool results and a large one: the prepass alone can
// make it fit.
func prepassLine(big int) string {
	resp := func(body string) string {
		b, _ := json.Marshal(map[string]string{"name": "read_file", "content": body})
		return "<tool_response>\n" + string(b) + "\n</tool_response>"
	}
	call := func(path string) string {
		return goEncode("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"" + path + "\"}}\n</tool_call>")
	}
	turns := []string{
		`{"from": "system", "value": "` + words(10, "s") + `"}`,
		`{"from": "human", "value": "` + words(10, "h") + `"}`,
		`{"from": "gpt", "value": ` + call("/a.go") + `}`,
		`{"from": "tool", "value": ` + goEncode(resp(words(20, "x"))) + `}`,
		`{"from": "gpt", "value": ` + call("/big.go") + `}`,
		`{"from": "tool", "value": ` + goEncode(resp(words(big, "line\n"))) + `}`,
		`{"from": "gpt", "value": ` + call("/dup.go") + `}`,
		`{"from": "tool", "value": ` + goEncode(resp(words(200, "same"))) + `}`,
		`{"from": "gpt", "value": ` + call("/dup.go") + `}`,
		`{"from": "tool", "value": ` + goEncode(resp(words(200, "same"))) + `}`,
		`{"from": "gpt", "value": "` + words(10, "g") + `"}`,
		`{"from": "human", "value": "` + words(10, "k") + `"}`,
		`{"from": "gpt", "value": "` + words(10, "m") + `"}`,
	}
	return `{"conversations": [` + strings.Join(turns, ", ") + `]}`
}

// compressPrepass compresses prepassLine(600) with the prepass on and the
// options mod sets.
func compressPrepass(t *testing.T, mod func(*Options)) Result {
	t.Helper()
	c := newComp(t, func(o *Options) {
		o.Prepass = &prepass.Config{}
		mod(o)
	})
	res, err := c.Compress(context.Background(), []byte(prepassLine(600)), pos)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPrepassFitsAlone(t *testing.T) {
	line := prepassLine(600)
	rs := &recordingSummarizer{}
	res := compressPrepass(t, func(o *Options) { o.Summarizing.Summarizer = rs; o.PerRecordMetrics = true })
	o := res.Obs
	if o.Outcome != outcome.Compressed || o.Region != nil || !o.Prepass.Ran || !o.Prepass.Fit || len(rs.texts) != 0 {
		t.Fatalf("outcome %s region %v prepass %+v, %d summary calls", o.Outcome, o.Region, o.Prepass, len(rs.texts))
	}
	if o.TurnsAfter != o.TurnsBefore || o.TokensAfter > 900 || o.Prepass.Saved[0] == 0 || o.Prepass.Saved[1] == 0 {
		t.Errorf("turns %d→%d, tokens %d→%d, saved %v", o.TurnsBefore, o.TurnsAfter, o.TokensBefore, o.TokensAfter, o.Prepass.Saved)
	}
	rec, err := traj.Decode(res.Out, pos, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 13 || !strings.Contains(rec.Turns[7].Text, prepass.BackRef(9)) || !strings.HasSuffix(rec.Turns[0].Text, " NOTICE") {
		t.Errorf("turns after the prepass: %q / %q / %q", rec.Turns[0].Text, rec.Turns[5].Text, rec.Turns[7].Text)
	}
	for _, i := range []int{0, 1, 2, 3, 10, 11, 12} { // head and tail as read (the notice aside)
		if i > 0 && string(rec.Turns[i].Raw) != string(mustDecode(t, line).Turns[i].Raw) {
			t.Errorf("protected turn %d changed", i)
		}
	}
	// The observation is what the output holds.
	words := 0
	for _, tr := range rec.Turns {
		words += wordCounter{}.Count(tr.Text)
	}
	if words != o.TokensAfter {
		t.Errorf("tokens after %d, the output counts %d", o.TokensAfter, words)
	}
}

func TestPrepassThenSummary(t *testing.T) {
	line := prepassLine(600)
	rs := &recordingSummarizer{}
	// A target the prepass cannot reach: the region is planned on the
	// prepassed turns and summarised.
	res := compressPrepass(t, func(o *Options) { o.Summarizing.Summarizer = rs; o.Budget.Target, o.Budget.LastN = 150, 2 })
	o := res.Obs
	if !o.Prepass.Ran || o.Prepass.Fit || o.Region == nil || len(rs.texts) == 0 {
		t.Fatalf("outcome %s region %v prepass %+v", o.Outcome, o.Region, o.Prepass)
	}
	if !strings.Contains(strings.Join(rs.texts, ""), "[same output as turn 9]") {
		t.Errorf("the summarizer did not get the prepassed turns: %q", rs.texts)
	}
	// The region called read_file on paths the summary "s" does not name.
	if r := o.Retention; r.Tools != 1 || r.ToolsKept != 0 || r.Args == 0 || r.ArgsKept != 0 {
		t.Errorf("retention %+v", r)
	}
	// Without the prepass the same record needs a region too, of more
	// tokens.
	plain := newComp(t, func(o *Options) {
		o.Summarizing.Summarizer = &recordingSummarizer{}
		o.Budget.Target = 150
		o.Budget.LastN = 2
	})
	res2, _ := plain.Compress(context.Background(), []byte(line), pos)
	if res2.Obs.TokensBefore != o.TokensBefore {
		t.Errorf("tokens before differ: %d with the prepass, %d without", o.TokensBefore, res2.Obs.TokensBefore)
	}
}

func TestPrepassNoRegion(t *testing.T) {
	// Everything but the middle is protected and the middle's digests are
	// not enough; after them the region is too small to summarise. The
	// record is written as the prepass left it, still over target.
	line := prepassLine(600)
	res := compressPrepass(t, func(o *Options) { o.Budget.Target, o.Budget.SummaryTokens, o.Budget.LastN = 100, 50, 7 })
	o := res.Obs
	if o.Outcome != outcome.CompressedOverLimit || o.Region != nil || o.Prepass.Fit || o.Prepass.Saved[1] == 0 {
		t.Fatalf("outcome %s %s region %v prepass %+v", o.Outcome, o.Reason, o.Region, o.Prepass)
	}
	if o.TokensAfter >= o.TokensBefore || o.TurnsAfter != o.TurnsBefore || string(res.Out) == line {
		t.Errorf("tokens %d→%d turns %d→%d", o.TokensBefore, o.TokensAfter, o.TurnsBefore, o.TurnsAfter)
	}
}

func TestPrepassLeftUnchangedOnSummaryFailure(t *testing.T) {
	line := prepassLine(600)
	res := compressPrepass(t, func(o *Options) {
		o.Summarizing.Summarizer = &fixedSummarizer{err: errors.New("down")}
		o.Budget.Target, o.Budget.LastN = 150, 2
	})
	o := res.Obs
	if o.Outcome != outcome.SummaryFailed || string(res.Out) != line || o.Prepass.Saved != [3]int{} || !o.Prepass.Ran {
		t.Errorf("outcome %s, output changed %v, prepass %+v", o.Outcome, string(res.Out) != line, o.Prepass)
	}
}

func mustDecode(t *testing.T, line string) *traj.Record {
	t.Helper()
	rec, err := traj.Decode([]byte(line), pos, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRecompressOneSummary: compressing our own output again gives one
// updated summary, which carries the earlier one's lines, never a summary
// of a summary nor two summaries side by side.
func TestRecompressOneSummary(t *testing.T) {
	line := uniformLine("system human gpt tool gpt tool gpt tool gpt tool gpt tool gpt tool gpt tool gpt tool gpt human", 60)
	det := func(target int) *Compressor {
		return newComp(t, func(o *Options) {
			o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}}
			o.Budget.Target, o.Budget.SummaryTokens, o.Budget.LastN = target, 80, 3
		})
	}
	first, err := det(900).Compress(context.Background(), []byte(line), pos)
	if err != nil || first.Obs.Outcome != outcome.Compressed {
		t.Fatalf("first pass: %s %v", first.Obs.Outcome, err)
	}
	for _, target := range []int{700, 400} {
		second, err := det(target).Compress(context.Background(), first.Out, pos)
		if err != nil || !second.Obs.Outcome.WasCompressed() {
			t.Fatalf("target %d: %s %s %v", target, second.Obs.Outcome, second.Obs.Reason, err)
		}
		rec := mustDecode(t, string(second.Out))
		n := 0
		for _, tr := range rec.Turns {
			n += strings.Count(tr.Text, summary.Prefix)
		}
		if n != 1 {
			t.Fatalf("target %d: %d summaries in the output:\n%s", target, n, second.Out)
		}
		if !strings.Contains(string(second.Out), "[earlier ") {
			t.Errorf("target %d: the earlier summary's lines were not carried:\n%s", target, second.Out)
		}
		first = second
	}
}

// TestRecompressAbsorbs: when the region of the second pass ends before
// the earlier summary (the head is shorter now), the region is widened
// over it: still one summary.
func TestRecompressAbsorbs(t *testing.T) {
	first, err := newComp(t, func(o *Options) {
		o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}}
		o.Budget.Target, o.Budget.SummaryTokens, o.Budget.LastN = 800, 80, 3
	}).Compress(context.Background(), []byte(uniformLine("system human gpt tool gpt tool gpt tool gpt tool gpt tool gpt tool gpt human", 60)), pos)
	if err != nil || first.Obs.Outcome != outcome.Compressed || first.Obs.Region[0] != 4 {
		t.Fatalf("first pass: %s region %v %v", first.Obs.Outcome, first.Obs.Region, err)
	}
	second, err := newComp(t, func(o *Options) {
		o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}}
		o.Budget.Target, o.Budget.SummaryTokens, o.Budget.LastN = first.Obs.TokensAfter-30, 20, 3
		o.Budget.ProtectFirstAssistant, o.Budget.ProtectFirstTool = false, false
	}).Compress(context.Background(), first.Out, pos)
	if err != nil || !second.Obs.Outcome.WasCompressed() {
		t.Fatalf("second pass: %s %s %v", second.Obs.Outcome, second.Obs.Reason, err)
	}
	if r := second.Obs.Region; r[0] != 2 || r[1] <= 4 {
		t.Errorf("region %v: want [2, >4), over the summary at 4", r)
	}
	if n := strings.Count(string(second.Out), "[CONTEXT SUMMARY]"); n != 1 {
		t.Errorf("%d summaries:\n%s", n, second.Out)
	}
}

// uniformLine is shareGPTLine with every turn size words long.
func uniformLine(roles string, size int) string {
	sizes := make([]int, len(strings.Fields(roles)))
	for i := range sizes {
		sizes[i] = size
	}
	return shareGPTLine(roles, sizes...)
}
