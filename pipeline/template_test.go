package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/trainview"
)

// framed renders each message with four words of framing, as chat
// templates frame turns.
const framed = `{% for m in messages %}[{{ m.role }} frame frame frame] {{ m.content }}
{% endfor %}`

func templated(t *testing.T, src string) *trainview.Counter {
	t.Helper()
	tmpl, err := chattemplate.Parse("test.jinja", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &trainview.Counter{Template: tmpl, Tokens: wordCounter{}}
}

// renderedCount is the templated count of an output record.
func renderedCount(t *testing.T, c *trainview.Counter, out []byte) int {
	t.Helper()
	v, err := trainview.Mapper{}.Record(out)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(v)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// summaryThrice prints the summary turn three times and every other turn
// once: a result that fits by the per-turn estimate comes out over target
// once rendered.
const summaryThrice = `{% for m in messages %}{% if m.content.startswith('[CONTEXT SUMMARY]') %}{{ m.content }} {{ m.content }} {{ m.content }}{% else %}{{ m.content }}{% endif %}
{% endfor %}`

// refitComp is a compressor counting by tc and summarizing by sum, with no
// notice, and the 12-turn record its refit tests compress (940 words, over
// the target of 900).
func refitComp(t *testing.T, tc *trainview.Counter, sum summary.Summarizer) (*Compressor, string) {
	t.Helper()
	c := newComp(t, func(o *Options) {
		o.Counting.Template = tc
		o.Summarizing.Summarizer = sum
		o.Placement.AddNotice = false
	})
	return c, shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 100, 100, 40, 20)
}

// A record at or under the target turn by turn but over it once templated
// is compressed, not skipped, and its rendered result fits; the counts of
// the outcome are the templated ones.
func TestTemplateSkipsOnlyWhenTemplatedFits(t *testing.T) {
	tc := templated(t, framed)
	c := newComp(t, func(o *Options) { o.Counting.Template = tc })
	// 12 turns, 880 words: 928 words once framed, over the target of 900.
	line := shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 100, 40, 40, 20)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed {
		t.Fatalf("outcome %s (%s), want compressed", res.Obs.Outcome, res.Obs.Reason)
	}
	if res.Obs.TokensBefore != renderedCount(t, tc, []byte(line)) || res.Obs.TokensBefore != 928 {
		t.Errorf("tokens_before %d, want the templated 928", res.Obs.TokensBefore)
	}
	if got := renderedCount(t, tc, res.Out); got != res.Obs.TokensAfter || got > 900 {
		t.Errorf("output renders to %d tokens, tokens_after %d, target 900", got, res.Obs.TokensAfter)
	}

	// Without the template the same record fits turn by turn.
	plain := newComp(t, nil)
	res, err = plain.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.SkippedUnderTarget {
		t.Fatalf("per-turn outcome %s, want skipped_under_target", res.Obs.Outcome)
	}
}

// When the rendered result is over target though the per-turn estimate
// fit (the template prints the summary turn three times), the record is
// planned again with a larger region until its rendered form fits.
func TestTemplateRefitsRenderedOverTarget(t *testing.T) {
	tc := templated(t, summaryThrice)
	sum := &fixedSummarizer{text: "[CONTEXT SUMMARY]: " + words(45, "s")}
	c, line := refitComp(t, tc, sum)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed {
		t.Fatalf("outcome %s (%s), want compressed", res.Obs.Outcome, res.Obs.Reason)
	}
	if got := renderedCount(t, tc, res.Out); got != res.Obs.TokensAfter || got > 900 {
		t.Errorf("output renders to %d tokens, tokens_after %d, target 900", got, res.Obs.TokensAfter)
	}
	if sum.calls.Load() < 2 {
		t.Errorf("summarizer called %d times: the first region's rendered result was over target, a larger one was due", sum.calls.Load())
	}
	if got := int64(res.Obs.SummaryCalls); got != sum.calls.Load() {
		t.Errorf("summary_calls %d, the summarizer was called %d times", got, sum.calls.Load())
	}
}

// When the rendered result is over target and no larger region can be
// summarised (the protected tail alone is over target), the record is
// settled after one try: the same region is not summarised and rendered
// again (it would give the same result).
func TestTemplateNoRefitWithoutALargerRegion(t *testing.T) {
	tc := templated(t, framed)
	sum := &fixedSummarizer{text: "[CONTEXT SUMMARY]: " + words(45, "s")}
	c := newComp(t, func(o *Options) {
		o.Counting.Template = tc
		o.Summarizing.Summarizer = sum
		o.Placement.AddNotice = false
	})
	line := shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 300, 300, 300, 300)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.CompressedOverLimit || res.Obs.Region == nil {
		t.Fatalf("outcome %s (%s) region %v, want compressed_over_limit with a region", res.Obs.Outcome, res.Obs.Reason, res.Obs.Region)
	}
	if got := renderedCount(t, tc, res.Out); got != res.Obs.TokensAfter || got <= 900 {
		t.Errorf("output renders to %d tokens, tokens_after %d: want over the target 900", got, res.Obs.TokensAfter)
	}
	if n := sum.calls.Load(); n != 1 || res.Obs.SummaryCalls != 1 {
		t.Errorf("summarizer called %d times (summary_calls %d), want 1: no larger region could be tried", n, res.Obs.SummaryCalls)
	}
}

// The template's framing is spread over the turns whole, the remainder of
// its division by the number of turns too: the per-turn estimates the
// planner uses sum to the templated count, so a region is credited with
// its share and the planner asks for no more of the middle than it needs.
func TestTemplateFramingSpreadWhole(t *testing.T) {
	tc := templated(t, "once at the start\n"+framed) // 4 words per turn and 4 more: not a multiple of 12 turns
	c := newComp(t, func(o *Options) { o.Counting.Template = tc })
	line := shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 100, 100, 40, 20)
	r := record{in: input{raw: []byte(line), pos: pos}}
	if rej := c.decode(&r); rej != nil {
		t.Fatal(rej)
	}
	if fits, err := c.measure(&r); fits || err != nil {
		t.Fatalf("measure: fits %v, template error %v: want neither", fits, err)
	}
	sum := r.m.ext + r.m.adj
	for _, n := range r.m.tok {
		sum += n
	}
	if want := renderedCount(t, tc, []byte(line)); sum != want || r.m.adj != 0 {
		t.Errorf("per-turn estimates sum to %d (adj %d), the record renders to %d: want the sum equal and adj 0", sum, r.m.adj, want)
	}
}

// A record the template refuses is uncompressible (reason chat_template),
// written unchanged, with the template's message.
func TestTemplateRefusal(t *testing.T) {
	tc := templated(t, `{% if messages[0].role != 'system' %}{{ raise_exception('the first message must be the system prompt') }}{% endif %}`+framed)
	c := newComp(t, func(o *Options) { o.Counting.Template = tc })
	line := shareGPTLine("human gpt human gpt human gpt", 400, 400, 400, 400, 400, 400)
	compressRefused(t, c, line, "the first message must be the system prompt")
}

// compressRefused compresses line with c and checks that the template
// refused it: uncompressible (chat_template), written unchanged, msg in
// its outcome line.
func compressRefused(t *testing.T, c *Compressor, line, msg string) Result {
	t.Helper()
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Uncompressible || res.Obs.Reason != string(outcome.ChatTemplate) {
		t.Fatalf("outcome %s (%s), want uncompressible (chat_template)", res.Obs.Outcome, res.Obs.Reason)
	}
	if string(res.Out) != line {
		t.Errorf("not written unchanged:\n%s", res.Out)
	}
	if !strings.Contains(res.Obs.TemplateError, msg) || !strings.Contains(string(res.Obs.AppendJSON(nil)), `"chat_template_error":`) {
		t.Errorf("template error %q not reported, want %q", res.Obs.TemplateError, msg)
	}
	return res
}

// Without a template a record's tool schemas count as the tokens of their
// JSON, once per record: a record that fits by its turns but not with its
// tools is not skipped.
func TestToolsCountWithoutTemplate(t *testing.T) {
	c := newComp(t, nil)
	line := shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 100, 40, 40, 20)
	line = strings.TrimSuffix(line, "}") + `, "tools": "[{\"name\": \"f\", \"description\": \"` + words(60, "d") + `\"}]"}`
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	// 880 words of turns, and the tools JSON string holds 63 words.
	if res.Obs.TokensBefore != 880+63 || res.Obs.Outcome != outcome.Compressed {
		t.Fatalf("tokens_before %d, outcome %s; want 943, compressed", res.Obs.TokensBefore, res.Obs.Outcome)
	}
	if res.Obs.TokensAfter > 900 {
		t.Errorf("tokens_after %d over the target", res.Obs.TokensAfter)
	}
}

// One template shared by the workers of Run: the output is the same for
// any number of workers (run under -race, make test's RACE_PKGS), and
// every record reported as fitting renders at or under the target.
func TestTemplateRunIdenticalAcrossWorkers(t *testing.T) {
	tc := templated(t, framed)
	in := mixed(120)
	var first string
	for _, w := range []int{1, 4} {
		comp := newComp(t, func(o *Options) {
			o.Counting.Template = tc
			o.Summarizing.Summarizer = summary.Deterministic{Counter: wordCounter{}}
		})
		var b buf
		var results []Result
		if _, err := Run(context.Background(), "f", &lines{data: in}, &b, comp, Config{Workers: w, OnResult: func(r Result) error {
			results = append(results, r)
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if oc := r.Obs.Outcome; oc == outcome.SkippedUnderTarget || oc == outcome.Compressed {
				if n := renderedCount(t, tc, r.Out); n > 900 || n != r.Obs.TokensAfter {
					t.Fatalf("line %d %s: renders to %d, tokens_after %d", r.Obs.Line, oc, n, r.Obs.TokensAfter)
				}
			}
		}
		if first == "" {
			first = b.String()
		} else if b.String() != first {
			t.Fatalf("workers %d: output differs from workers 1", w)
		}
	}
}

// A record the template accepts as read but refuses once compressed (here:
// it will not render a summary turn) is uncompressible (reason
// chat_template), written unchanged with its counts as read, and carries
// the template's message: never written compressed over the limit, never
// dropped. The same through Run: one result per record, the refusal
// counted in the summary by outcome and reason.
func TestTemplateRefusesCompressed(t *testing.T) {
	const msg = "a summary turn is not a message this template renders"
	tc := templated(t, `{% for m in messages %}{% if m.content.startswith('[CONTEXT SUMMARY]') %}{{ raise_exception('`+msg+`') }}{% endif %}{% endfor %}`+framed)
	c := newComp(t, func(o *Options) { o.Counting.Template = tc })
	line := shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 100, 40, 40, 20)
	res := compressRefused(t, c, line, "once compressed: chat template: "+msg)
	if res.Obs.TokensBefore != 928 || res.Obs.TokensAfter != res.Obs.TokensBefore || res.Obs.TurnsAfter != res.Obs.TurnsBefore || res.Obs.Region != nil {
		t.Errorf("tokens %d→%d, turns %d→%d, region %v: want the record as read", res.Obs.TokensBefore, res.Obs.TokensAfter, res.Obs.TurnsBefore, res.Obs.TurnsAfter, res.Obs.Region)
	}

	// In a run, beside a record the template refuses as read and one it
	// renders: three records out, in order, each counted.
	refusedAsRead := shareGPTLine("human gpt", 10, 10)
	tc2 := templated(t, `{% if messages[0].role != 'system' %}{{ raise_exception('the first message must be the system prompt') }}{% endif %}{% for m in messages %}{% if m.content.startswith('[CONTEXT SUMMARY]') %}{{ raise_exception('`+msg+`') }}{% endif %}{% endfor %}`+framed)
	fits := shareGPTLine("system human gpt", 10, 10, 10)
	comp := newComp(t, func(o *Options) { o.Counting.Template = tc2 })
	var b buf
	var results []Result
	in := []string{line, refusedAsRead, fits}
	sum, err := Run(context.Background(), "f", &lines{data: in}, &b, comp, Config{Workers: 2, OnResult: func(r Result) error {
		results = append(results, r)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != strings.Join(in, "\n")+"\n" {
		t.Errorf("output differs from the input (every record is written unchanged):\n%s", b.String())
	}
	if len(results) != 3 {
		t.Fatalf("%d results, want 3", len(results))
	}
	for i, want := range []string{msg, "the first message must be the system prompt", ""} {
		r := results[i]
		if want == "" {
			if r.Obs.Outcome != outcome.SkippedUnderTarget || r.Obs.TemplateError != "" {
				t.Errorf("record %d: %s %q, want skipped_under_target", i, r.Obs.Outcome, r.Obs.TemplateError)
			}
			continue
		}
		if r.Obs.Outcome != outcome.Uncompressible || r.Obs.Reason != string(outcome.ChatTemplate) || !strings.Contains(r.Obs.TemplateError, want) {
			t.Errorf("record %d: %s (%s) %q, want uncompressible (chat_template) %q", i, r.Obs.Outcome, r.Obs.Reason, r.Obs.TemplateError, want)
		}
	}
	if got := sum.ReasonCount(outcome.ChatTemplate); got != 2 || sum.Count(outcome.Uncompressible) != 2 || sum.RecordsOut() != 3 {
		t.Errorf("summary: %d refused by the template, %d uncompressible, %d records out; want 2, 2, 3", got, sum.Count(outcome.Uncompressible), sum.RecordsOut())
	}
}

// vlFramed renders images as the Qwen2-VL family's templates do: an image
// part as <|vision_start|><|image_pad|><|vision_end|> (markers are
// replaced so by trainview.Images before the template runs).
const vlFramed = `{% for m in messages %}[{{ m.role }}] {% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'image' or 'image_url' in p %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ p.text }}{% endif %}{% endfor %}{% endif %}
{% endfor %}`

// TestTemplateImagesAfterDrop: with a template that expands images, the
// record the image step rewrote is counted with its rewritten images list:
// the newest marker left pairs with its own entry (the fourth image, 1 602
// tokens), not with the second of the list as read (402), so the outcome's
// count is the rendered output's.
func TestTemplateImagesAfterDrop(t *testing.T) {
	in, rec := markerRecordOf(t, [][2]int{{280, 280}, {560, 560}, {840, 840}, {1120, 1120}}) // 100, 400, 900, 1 600 pads
	dir, line := filepath.Dir(in), []byte(rec)
	q, err := imagetok.ParseQwen([]byte(`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 14, "merge_size": 2, "min_pixels": 3136, "max_pixels": 12845056}`))
	if err != nil {
		t.Fatal(err)
	}
	tc := templated(t, vlFramed)
	if tc.Images, err = trainview.ImagesOf(tc.Template, tc.Tokens, q.Rule(), ""); err != nil || tc.Images == nil {
		t.Fatalf("ImagesOf: %v, %v", tc.Images, err)
	}
	ref := *tc
	refImages := *tc.Images
	refImages.Finder = &imagetok.Finder{Dir: dir}
	ref.Images = &refImages
	before := renderedCount(t, &ref, line)

	p := pos
	p.File = in
	c := newComp(t, func(o *Options) {
		o.Counting.Template = tc
		o.Counting.ImageRule = q.Rule()
		o.Prepass = &prepass.Config{DropOldImages: true, ImagesOnly: true}
		o.Budget.Target, o.Budget.LastN = before-1000, 2 // the step saves 402 + 902 less the texts left
	})
	res, err := c.Compress(context.Background(), line, p)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Obs
	if o.Outcome != outcome.Compressed || o.Region != nil || o.ImagesRemoved != 2 || !o.Prepass.Fit {
		t.Fatalf("outcome %s region %v removed %d prepass %+v", o.Outcome, o.Region, o.ImagesRemoved, o.Prepass)
	}
	if !bytes.Contains(res.Out, []byte(`"images":["s0.png","s3.png"]`)) {
		t.Fatalf("images list not rewritten:\n%s", res.Out)
	}
	if got := renderedCount(t, &ref, res.Out); o.TokensBefore != before || o.TokensAfter != got {
		t.Errorf("tokens %d → %d; the input renders to %d, the output to %d", o.TokensBefore, o.TokensAfter, before, got)
	}
	if d := before - o.TokensAfter; d < 402+902-20 || d > 402+902 {
		t.Errorf("the step saved %d tokens, want the two images' 1 304 less their texts", d)
	}
}

// A record's tool schemas are rendered once, whatever its turns: the
// planner keeps their cost as the record's own, not as framing of every
// turn (which would make each turn look dearer than it is, the region too
// small, and every try come out over target until the refits ran out).
func TestTemplateToolsAreNotFraming(t *testing.T) {
	tc := templated(t, `{% for t in tools %}{{ t | tojson }}
{% endfor %}`+framed)
	sum := &fixedSummarizer{text: "[CONTEXT SUMMARY]: s"}
	c := newComp(t, func(o *Options) {
		o.Counting.Template = tc
		o.Summarizing.Summarizer = sum
		o.Budget.Target = 3000
	})
	var tools []string
	for i := range 40 {
		tools = append(tools, fmt.Sprintf(`{"name": "tool%d", "description": %q}`, i, words(50, "d")))
	}
	roles := "system human" + strings.Repeat(" gpt human", 15)
	sizes := []int{40, 40}
	for range 30 {
		sizes = append(sizes, 60)
	}
	line := shareGPTLine(roles, sizes...)
	line = strings.TrimSuffix(line, "}") + `, "tools": [` + strings.Join(tools, ", ") + `]}`
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed {
		t.Fatalf("outcome %s (%s), tokens %d → %d, region %v, %d summaries: want compressed", res.Obs.Outcome, res.Obs.Reason,
			res.Obs.TokensBefore, res.Obs.TokensAfter, res.Obs.Region, sum.calls.Load())
	}
	if got := renderedCount(t, tc, res.Out); got != res.Obs.TokensAfter || got > 3000 {
		t.Errorf("output renders to %d tokens, tokens_after %d, target 3000", got, res.Obs.TokensAfter)
	}
}

// When a larger region's result is refused by the template but an earlier,
// smaller one rendered (over target), the earlier result is written:
// compressed_over_limit, not the record unchanged.
func TestTemplateRefusedRefitKeepsEarlierResult(t *testing.T) {
	// The summary turn printed three times (the first try comes out over
	// target), and fewer than 12 messages refused: the first try replaces
	// one turn (12 messages), the second two (11).
	tc := templated(t, `{% if messages | length < 12 %}{{ raise_exception('too few messages') }}{% endif %}`+summaryThrice)
	sum := &fixedSummarizer{text: "[CONTEXT SUMMARY]: " + words(45, "s")}
	c, line := refitComp(t, tc, sum)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if sum.calls.Load() < 2 {
		t.Fatalf("%d summaries: the test wants a second, larger try", sum.calls.Load())
	}
	t.Logf("%d summaries, turns %d → %d, region %v, tokens %d → %d", sum.calls.Load(), res.Obs.TurnsBefore, res.Obs.TurnsAfter, res.Obs.Region, res.Obs.TokensBefore, res.Obs.TokensAfter)
	if res.Obs.Outcome != outcome.CompressedOverLimit || res.Obs.TemplateError != "" || string(res.Out) == line {
		t.Fatalf("outcome %s (%s) %q, written unchanged %v: want the earlier result, compressed_over_limit", res.Obs.Outcome, res.Obs.Reason, res.Obs.TemplateError, string(res.Out) == line)
	}
	if got := renderedCount(t, tc, res.Out); got != res.Obs.TokensAfter {
		t.Errorf("output renders to %d tokens, tokens_after %d", got, res.Obs.TokensAfter)
	}
}

// failsAfter summarises as fixedSummarizer does for its first n calls and
// fails every later one (one API call, one error); regions are the regions
// it was asked for, in order.
type failsAfter struct {
	fixedSummarizer
	n       int64
	regions [][2]int
}

func (f *failsAfter) Summarize(ctx context.Context, req summary.Request) (summary.Result, error) {
	f.regions = append(f.regions, [2]int{req.Start, req.Start + len(req.Turns)})
	if f.calls.Load() >= f.n {
		f.calls.Add(1)
		return summary.Result{APICalls: 1, APIErrors: 1, PromptTokens: 7}, errors.New("summarizer down")
	}
	res, err := f.fixedSummarizer.Summarize(ctx, req)
	res.PromptTokens, res.CompletionTokens = 11, 5
	return res, err
}

// When the larger region's summary fails after a rendered result over
// target, the earlier result is written as that try made it (its region,
// its outcome, its count), never the record unchanged as summary_failed;
// the summarizer's figures are those of every try.
func TestTemplateRefitSummaryFailureKeepsEarlierResult(t *testing.T) {
	tc := templated(t, summaryThrice)
	sum := &failsAfter{fixedSummarizer: fixedSummarizer{text: "[CONTEXT SUMMARY]: " + words(45, "s")}, n: 1}
	c, line := refitComp(t, tc, sum)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if n := sum.calls.Load(); n != 2 || sum.regions[1][1]-sum.regions[1][0] <= sum.regions[0][1]-sum.regions[0][0] {
		t.Fatalf("%d summaries of regions %v: the test wants the first over target once rendered and a second, larger one failing", n, sum.regions)
	}
	o := res.Obs
	if o.Outcome != outcome.CompressedOverLimit || o.Reason != "" || string(res.Out) == line || o.Region == nil || *o.Region != sum.regions[0] {
		t.Fatalf("outcome %s (%q), region %v, written unchanged %v: want the first try's result (region %v), compressed_over_limit",
			o.Outcome, o.Reason, o.Region, string(res.Out) == line, sum.regions[0])
	}
	if got := renderedCount(t, tc, res.Out); got != o.TokensAfter || got <= 900 {
		t.Errorf("output renders to %d tokens, tokens_after %d: want the first try's count, over the target 900", got, o.TokensAfter)
	}
	if o.SummaryCalls != 2 || o.SummaryErrors != 1 || o.PromptTokens != 18 || o.CompletionTokens != 5 || o.CacheHit {
		t.Errorf("summary figures calls %d errors %d prompt %d completion %d cache %v: want those of both tries (2, 1, 18, 5, false)",
			o.SummaryCalls, o.SummaryErrors, o.PromptTokens, o.CompletionTokens, o.CacheHit)
	}
	if o.Retention.Tools != 0 || o.Fallback {
		t.Errorf("retention %+v, fallback %v: want the first try's", o.Retention, o.Fallback)
	}
}

// When the prepass makes a record fit turn by turn but its rendered form
// is still over target (the template prints a back-reference sixty
// times), the prepass's result alone is not written: a region of the
// prepassed turns is summarised after all (prepass.fit false; the
// back-reference outside the region stays), and the outcome's count is the
// rendered output's.
func TestTemplatePrepassFitsOnlyPerTurn(t *testing.T) {
	tc := templated(t, `{% for m in messages %}{% if '[same output' in m.content %}{% for i in range(60) %}{{ m.content }} {% endfor %}{% else %}{{ m.content }}{% endif %}
{% endfor %}`)
	rs := &recordingSummarizer{}
	c := newComp(t, func(o *Options) {
		o.Counting.Template = tc
		o.Summarizing.Summarizer = rs
		o.Prepass = &prepass.Config{}
	})
	res, err := c.Compress(context.Background(), []byte(prepassLine(600)), pos)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Obs
	t.Logf("outcome %s, region %v, tokens %d → %d, prepass %+v, %d summaries", o.Outcome, o.Region, o.TokensBefore, o.TokensAfter, o.Prepass, len(rs.texts))
	if !o.Prepass.Ran || o.Prepass.Fit || o.Region == nil || len(rs.texts) == 0 || o.Outcome.Unchanged() {
		t.Fatalf("outcome %s region %v prepass %+v, %d summaries: want a region summarised after the prepass", o.Outcome, o.Region, o.Prepass, len(rs.texts))
	}
	if !bytes.Contains(res.Out, []byte(prepass.BackRef(9))) {
		t.Errorf("the output lost the prepass's back-reference: %s", res.Out)
	}
	if got := renderedCount(t, tc, res.Out); got != o.TokensAfter {
		t.Errorf("output renders to %d tokens, tokens_after %d", got, o.TokensAfter)
	}
}

// A trainer's rule may ask for a record's view more than once (axolotl's
// labelling, then its roles): the view is built once per record, as read
// and as written.
func TestTrainerViewBuiltOnce(t *testing.T) {
	tc := templated(t, framed)
	var calls, distinct int
	c := newComp(t, func(o *Options) {
		o.Counting.Template = tc
		o.Trainer.Fate = func(n int, view func() (trainview.View, error)) metrics.TrainerFate {
			a, err := view()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := view()
			calls++
			if &a.Messages[0] != &b.Messages[0] {
				distinct++
			}
			return metrics.TrainerFate{}
		}
	})
	line := shareGPTLine("system human gpt human gpt human gpt human gpt human gpt human", 40, 40, 100, 100, 100, 100, 100, 100, 100, 40, 40, 20)
	res, err := c.Compress(context.Background(), []byte(line), pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Obs.Outcome != outcome.Compressed || calls != 2 {
		t.Fatalf("outcome %s, the rule called %d times: want compressed, called as read and as written", res.Obs.Outcome, calls)
	}
	if distinct != 0 {
		t.Errorf("the view was built again %d times by a second call", distinct)
	}
}
