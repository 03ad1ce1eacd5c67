package trainview

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/internal/jinja2ref"
	"github.com/trajcompress/trajcompress/tokenize"
)

var maxLengthFull = flag.Bool("maxlength.full", false, "TestMaxLengthMatchesJinja2: every real record, not one in maxLengthStride")

// maxLengthStride: without -maxlength.full one real record in this many
// (with its tools-swapped twin) is checked, keeping the test near a
// minute for the whole corpus.
const maxLengthStride = 24

// corpusSpecial are the special tokens chattemplate's corpus test renders
// a .jinja with (TestCorpusMatchesJinja2).
var corpusSpecial = map[string]string{"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}

// TestMaxLengthMatchesJinja2 checks that validate --max-length lists, for
// every template of chattemplate's corpus, exactly the records a Python
// trainer would: the records as a trainer passes them (Mapper, with and
// without tools), counted by Counter (what validate calls), against the
// text Python jinja2 renders in transformers' environment, tokenized by
// the same tokenizer.json (tokenize's counts equal Hugging Face's on a
// given text: tokenize's own tests). A record is listed when its count is
// over the limit or the template raises; the limit is each template's
// median count, so both sides of it are populated. Counts must also be
// equal record by record.
func TestMaxLengthMatchesJinja2(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	dir := needModel(t, "tokenizer-qwen3")
	tok, err := tokenize.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	py := jinja2ref.Start(t)
	cases := realViews(t)
	if !*maxLengthFull {
		var some []refCase
		for i := 0; i+1 < len(cases); i += 2 * maxLengthStride {
			some = append(some, cases[i], cases[i+1])
		}
		cases = some
	}
	paths, _ := filepath.Glob(filepath.Join("..", "chattemplate", "testdata", "corpus", "*", "*"))
	templates, listedAll, equalLists, refusedNamed := 0, 0, 0, 0
	for _, p := range paths {
		var tmpl *chattemplate.Template
		switch {
		case strings.HasSuffix(p, ".json"):
			tmpl, err = chattemplate.Load(p)
		case strings.HasSuffix(p, ".jinja"):
			src, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			tmpl, err = chattemplate.Parse(p, string(src), corpusSpecial)
		default:
			continue
		}
		if err != nil {
			// validate refuses every record: the same list as jinja2's only
			// if jinja2 cannot compile it either; otherwise the refusal must
			// name the construct the engine lacks.
			src, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			w := py.Render(t, string(src), jinja2ref.ChatContext(cases[0].Messages, nil, corpusSpecial))
			switch {
			case w.Error != nil:
				t.Logf("%s: refused at load by both (%v; jinja2: %s)", p, err, *w.Error)
			case strings.Contains(err.Error(), "unsupported"):
				refusedNamed++
				t.Logf("%s: refused at load, naming the construct (%v): validate lists every record, jinja2 renders them", p, err)
			default:
				t.Errorf("%s: refused at load (%v), jinja2 compiles it", p, err)
			}
			continue
		}
		templates++
		tmpl.Now = func() time.Time { return jinja2ref.Now }
		c := Counter{Template: tmpl, Tokens: tok}
		type result struct {
			n      int
			raised bool
		}
		ours := make([]result, len(cases))
		ref := make([]result, len(cases))
		var counts []int
		for i, rc := range cases {
			n, err := c.Count(View{Messages: rc.Messages, Tools: rc.Tools})
			ours[i] = result{n, err != nil}
			w := py.Render(t, tmpl.Source(rc.Tools != nil), jinja2ref.ChatContext(rc.Messages, rc.Tools, tmpl.Special))
			if w.Error != nil {
				ref[i] = result{0, true}
				continue
			}
			ref[i] = result{tok.Count(*w.Text), false}
			counts = append(counts, ref[i].n)
		}
		limit := 0
		if len(counts) > 0 {
			sort.Ints(counts)
			limit = counts[len(counts)/2]
		}
		listed, mismatched := 0, 0
		for i, rc := range cases {
			o, r := ours[i], ref[i]
			listedOurs, listedRef := o.raised || o.n > limit, r.raised || r.n > limit
			if listedRef {
				listed++
			}
			switch {
			case listedOurs != listedRef:
				mismatched++
				t.Errorf("%s %s: --max-length %d lists it: ours %v (%d tokens, raised %v), jinja2 %v (%d tokens, raised %v)",
					p, rc.Name, limit, listedOurs, o.n, o.raised, listedRef, r.n, r.raised)
			case !o.raised && !r.raised && o.n != r.n:
				mismatched++
				t.Errorf("%s %s: %d tokens, jinja2's text %d", p, rc.Name, o.n, r.n)
			}
		}
		listedAll += listed
		if mismatched == 0 {
			equalLists++
		}
		t.Logf("%s: %d records, --max-length %d: %d listed by jinja2, %d mismatches", p, len(cases), limit, listed, mismatched)
	}
	t.Logf("%d templates, %d records each: the same list as jinja2 for %d; %d listings in all; %d refused at load naming an unsupported construct",
		templates, len(cases), equalLists, listedAll, refusedNamed)
}
