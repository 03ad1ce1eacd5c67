package trainview

import (
	"context"
	"strings"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
)

// Counter counts a view as a trainer's tokenizer does:
// len(apply_chat_template(messages, tools=tools, tokenize=True,
// add_generation_prompt=False)), the rendered text tokenized with
// add_special_tokens=False and the special tokens in it as one token each
// (tokenize's tokenizer.json counters do both).
type Counter struct {
	Template *chattemplate.Template
	Tokens   tokenize.Counter
	// Images, when not nil, expands the template's image placeholders to
	// the model's image tokens (see [Images]); nil counts them as the
	// template writes them.
	Images *Images
	// ParseArguments, when set, parses each tool call's arguments string
	// into the value it holds before rendering, as axolotl does
	// ([ParseArguments]).
	ParseArguments bool
	// Axolotl, when set, maps the messages as axolotl does before
	// rendering (its roles mapping, drop_system_message:
	// axolotl.Rules.Messages).
	Axolotl *axolotl.Rules
}

// Count renders v and counts the text's tokens; an error is the
// template's (its raise_exception message, wrapped in
// chattemplate.ErrTemplate) or a view it could not read.
func (c Counter) Count(v View) (int, error) { return c.CountCached(v, nil) }

// Stretches caches the counts of the stretches of rendered text between
// special tokens (tokenize.Segmenter): the renderings of one record before
// and after compression share most of them. The counts of a first
// rendering are kept in a list, made a map only when the record is
// rendered again, so that a record rendered once (most: they fit) pays no
// map inserts. The zero value is empty and ready; not safe for concurrent
// use.
//
// Given the record's turn texts first (FindParts), the first rendering's
// count also counts each text a stretch holds whole on its own, from the
// stretch's pieces where the tokenizer can (tokenize.PartCounter): the
// planner needs the turns' counts of a record over target, and counting
// them again would tokenize most of the record twice.
type Stretches struct {
	m    map[string]int
	list []stretchCount // the first rendering's, until a second one

	parts []string // FindParts' texts
	partN []int    // their counts from the first rendering; -1: none
	next  int      // the first text not yet found
}

// FindParts asks the next count, when it is the record's first (nothing
// cached), to count each of texts on its own where a stretch of the
// rendering holds it whole; Part gives the counts. Texts too short to be
// worth it (under minPart bytes) are not looked for.
func (s *Stretches) FindParts(texts []string) { s.parts, s.partN, s.next = texts, nil, 0 }

// Part returns the count of FindParts' text i on its own (as the
// Counter's Tokens.Count would), when the first rendering gave it.
func (s *Stretches) Part(i int) (int, bool) {
	if s == nil || i >= len(s.partN) || s.partN[i] < 0 {
		return 0, false
	}
	return s.partN[i], true
}

// minPart is the shortest text FindParts looks for; maxFrame the most
// framing a stretch may hold around it; maxAhead how many texts past the
// last one found a stretch is matched against (a template may leave a
// turn's text out, or change it).
const (
	minPart  = 32
	maxFrame = 256
	maxAhead = 4
)

// locate returns the index of the text of parts that stretch p holds
// whole (looking from the text after the last one found) and where, or
// -1.
func (s *Stretches) locate(p string) (int, int) {
	for i := s.next; i < len(s.parts) && i < s.next+maxAhead; i++ {
		x := s.parts[i]
		if len(x) < minPart || len(x) > len(p) || len(p)-len(x) > maxFrame {
			continue
		}
		a := len(p) - len(x)
		if p[a:] != x {
			if a = strings.Index(p, x); a < 0 {
				continue
			}
		}
		s.next = i + 1
		return i, a
	}
	return -1, 0
}

type stretchCount struct {
	s string
	n int
}

// lookup returns the count of stretch p if it is cached.
func (s *Stretches) lookup(p string) (int, bool) {
	if s.m == nil {
		if len(s.list) == 0 {
			return 0, false
		}
		s.m = make(map[string]int, len(s.list))
		for _, e := range s.list {
			s.m[e.s] = e.n
		}
		s.list = nil
	}
	n, ok := s.m[p]
	return n, ok
}

func (s *Stretches) add(p string, n int) {
	if s.m != nil {
		s.m[p] = n
	} else {
		s.list = append(s.list, stretchCount{p, n})
	}
}

// Len is the number of stretches held.
func (s *Stretches) Len() int { return len(s.m) + len(s.list) }

// CountCached is Count looking the stretches of the rendered text up in
// cache first, and adding the ones it counts (nil: no cache). The count is
// the same: a tokenizer that splits at its added tokens counts a text as
// the sum of its stretches plus one per added token.
//
// Views are built valid (from records read as valid JSON), so they are
// rendered without validating them again (chattemplate's RenderValid).
func (c Counter) CountCached(v View, cache *Stretches) (int, error) {
	return c.CountContext(context.Background(), v, cache)
}

// CountContext is CountCached with the render stopped when ctx is done
// (chattemplate's RenderValidContext): it then returns ctx's error, not a
// template's.
func (c Counter) CountContext(ctx context.Context, v View, cache *Stretches) (int, error) {
	if c.ParseArguments {
		m, err := ParseArguments(v.Messages)
		if err != nil {
			return 0, err
		}
		v.Messages = m
	}
	if c.Axolotl != nil {
		m, _, err := c.Axolotl.Messages(v.Messages)
		if err != nil {
			return 0, err
		}
		v.Messages = m
	}
	var ic *imageCount
	if c.Images != nil {
		var err error
		if v, ic, err = c.Images.prepare(v); err != nil {
			return 0, err
		}
	}
	text, err := c.Template.RenderValidContext(ctx, v.Messages, v.Tools)
	if err != nil {
		if c.Axolotl != nil && ctx.Err() == nil {
			err = axolotlRenderError(err, v.Messages)
		}
		return 0, err
	}
	n := c.countText(text, cache)
	if ic != nil {
		n += c.Images.extra(ic, text)
	}
	return n, nil
}

// countText counts the rendered text's tokens, looking its stretches up in
// cache (nil: no cache).
func (c Counter) countText(text string, cache *Stretches) int {
	s, ok := c.Tokens.(tokenize.Segmenter)
	if !ok || cache == nil {
		return c.Tokens.Count(text)
	}
	n := 0
	first := cache.Len() == 0 // nothing to look up: only record
	var pc tokenize.PartCounter
	if first && cache.parts != nil && cache.partN == nil {
		if pc, _ = s.(tokenize.PartCounter); pc != nil && !pc.CountsParts() {
			pc = nil
		}
		if pc != nil {
			cache.partN = make([]int, len(cache.parts))
			for i := range cache.partN {
				cache.partN[i] = -1
			}
		}
	}
	added, ok := s.Segments(text, func(p string) {
		if !first {
			if k, hit := cache.lookup(p); hit {
				n += k
				return
			}
		}
		k := -1
		if pc != nil {
			if i, a := cache.locate(p); i >= 0 {
				var part int
				var whole bool
				if k, part, whole = pc.CountStretchPart(p, a, a+len(cache.parts[i])); whole {
					cache.partN[i] = part
				}
			}
		}
		if k < 0 {
			k = s.CountStretch(p)
		}
		cache.add(p, k)
		n += k
	})
	if !ok {
		return c.Tokens.Count(text)
	}
	return n + added
}
