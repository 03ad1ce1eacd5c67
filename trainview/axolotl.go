package trainview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
)

// Trained is which tokens of a row a trainer trains on: the row's length
// and its trained token positions, as spans [start, end) in order.
type Trained struct {
	Tokens int
	Spans  [][2]int
}

// Count is the number of trained tokens.
func (t Trained) Count() int { return t.Within(0, t.Tokens) }

// Within counts the trained tokens at positions [from, to).
func (t Trained) Within(from, to int) int {
	n := 0
	for _, s := range t.Spans {
		a, b := max(s[0], from), min(s[1], to)
		if b > a {
			n += b - a
		}
	}
	return n
}

// AxolotlLabeler finds the tokens axolotl trains on in a row, as its
// chat_template strategy sets the labels
// (src/axolotl/prompt_strategies/chat_template.py at commit 067b021c,
// ChatTemplateStrategy._tokenize_single_prompt, lines 481–646, and
// find_turn, lines 663–782): for each message it trains (or each message
// when train_on_eos or train_on_eot is all), the conversation up to it is
// rendered twice, once with its content replaced by "[[dummy_message]]"
// (and its other keys, tool calls among them, left out), and the tokens
// where the two renderings differ, counted from the start and from the
// end, are its span, applied at those positions to the whole row's
// tokens; the end-of-turn (eot_tokens) and eos token found within 3
// tokens after the span are trained under turn (for a trained message),
// all, or last (the last one found). A message whose span cannot be found
// (empty content: the renderings do not differ) trains nothing.
//
// A message with a training_detail trains the tokens of its trained
// character ranges, mapped as axolotl maps them
// (get_offsets_for_train_detail, lines 169–211): by the offsets of the
// content tokenized alone (tokenize.TokenOffsets), applied from the span's
// start (axolotl.TrainedOffsets). A message with a reasoning_content and
// a detail on either field has its content's span found with the
// reasoning kept in the dummy turn (content_only); the ranges of its
// reasoning_training_detail (reasoning_content given as flagged parts)
// are mapped so from the span of a second find_turn, the content kept and
// the reasoning replaced by "[[dummy_reasoning]]" (reasoning_only, lines
// 572–597), and its content is then trained only by its own
// training_detail, if any. Where the tokenizer cannot give the
// offsets (a SentencePiece-style BPE tokenizer such as Llama-2's or
// Gemma 3's, a tiktoken encoding, a normalizer that changes the text) the
// row's labels are an error wrapping ErrNoOffsets, not a guess.
type AxolotlLabeler struct {
	// Counter is the row's counter (its template, arguments parsed).
	Counter *Counter
	Rules   axolotl.Rules
	// Encode returns a text's token ids (tokenize.EncoderOf).
	Encode func(string) []int
	// EOS is the eos token's id (-1: none), EOT the ids of eot_tokens
	// (default: the eos token).
	EOS int
	EOT []int
	// Mistral is set for a tokenizer whose name_or_path holds "mistral":
	// find_turn finds no span for a first system message then.
	Mistral bool
}

// Trained finds the trained tokens of v.
func (l AxolotlLabeler) Trained(ctx context.Context, v View) (Trained, error) {
	msgs := v.Messages
	if l.Counter.ParseArguments {
		m, err := ParseArguments(msgs)
		if err != nil {
			return Trained{}, err
		}
		msgs = m
	}
	msgs, ms, err := l.Rules.Messages(msgs)
	if err != nil {
		return Trained{}, err
	}
	cache := map[string][]int{}
	ids, err := l.encode(ctx, msgs, v.Tools, cache)
	if err != nil {
		return Trained{}, err
	}
	labels := make([]bool, len(ids))
	elems := jsonx.Elements(msgs, jsonx.SkipSpace(msgs, 0))
	lastEOS, lastEOT := -1, -1
	r := l.Rules
	for i, m := range ms {
		if !m.Train && r.TrainOnEOS != "all" && r.TrainOnEOT != "all" {
			continue
		}
		// With a detail on either field and a reasoning_content, the
		// content's span is found with the reasoning kept in the dummy
		// turn (content_only, lines 526–540).
		mode := turnWhole
		if (m.Detail != nil || m.Reasoning != nil) && m.HasReasoning {
			mode = turnContentOnly
		}
		start, end, err := l.findTurn(ctx, msgs, elems, i, m.Role, v.Tools, cache, mode)
		if err != nil {
			return Trained{}, err
		}
		msg := msgs[elems[i][0]:elems[i][1]]
		if m.Train && start != -1 && end != -1 {
			switch {
			case m.Detail != nil:
				if err := l.detail(labels, start, msg, "content", m.Detail); err != nil {
					return Trained{}, err
				}
			case m.Reasoning == nil: // no per-part detail on either field: the whole span
				for k := start; k < end && k < len(labels); k++ {
					labels[k] = true
				}
			}
		}
		if m.Train && m.Reasoning != nil && m.HasReasoning {
			// The reasoning's ranges, from the span a second find_turn
			// gives, the content kept and the reasoning replaced by a
			// dummy (lines 572–597).
			rs, re, err := l.findTurn(ctx, msgs, elems, i, m.Role, v.Tools, cache, turnReasoningOnly)
			if err != nil {
				return Trained{}, err
			}
			if rs != -1 && re != -1 {
				if err := l.detail(labels, rs, msg, "reasoning_content", m.Reasoning); err != nil {
					return Trained{}, err
				}
			}
		}
		for _, sp := range []struct {
			ids  func(int) bool
			opt  string
			last *int
		}{
			{func(id int) bool { return containsInt(l.EOT, id) }, r.TrainOnEOT, &lastEOT},
			{func(id int) bool { return l.EOS >= 0 && id == l.EOS }, r.TrainOnEOS, &lastEOS},
		} {
			idx := findFrom(ids, end, sp.ids)
			if idx != -1 && abs(idx-end) <= 3 {
				*sp.last = idx
				if sp.opt == "all" || (sp.opt == "turn" && m.Train) {
					labels[idx] = true
				}
			}
		}
	}
	if r.TrainOnEOT == "last" && lastEOT != -1 {
		labels[lastEOT] = true
	}
	if r.TrainOnEOS == "last" && lastEOS != -1 {
		labels[lastEOS] = true
	}
	t := Trained{Tokens: len(ids)}
	for i := 0; i < len(labels); {
		if !labels[i] {
			i++
			continue
		}
		j := i
		for j < len(labels) && labels[j] {
			j++
		}
		t.Spans = append(t.Spans, [2]int{i, j})
		i = j
	}
	return t, nil
}

// findFrom is find_first_eos_token / find_first_eot_token: the first
// index from start whose id matches, or -1. Python's range(start, …) with
// start -1 (a message whose span was not found) looks at the last token
// first, and a match there is returned as -1, "not found".
func findFrom(ids []int, start int, match func(int) bool) int {
	if start == -1 {
		if len(ids) > 0 && match(ids[len(ids)-1]) {
			return -1
		}
		start = 0
	}
	for i := start; i < len(ids); i++ {
		if match(ids[i]) {
			return i
		}
	}
	return -1
}

// turnMode is what find_turn's dummy turn keeps of the message.
type turnMode int

const (
	// turnWhole: the role and "[[dummy_message]]" as content.
	turnWhole turnMode = iota
	// turnContentOnly: the same, and the message's reasoning_content
	// (content_only).
	turnContentOnly
	// turnReasoningOnly: the role, the message's content ("" when it has
	// none) and "[[dummy_reasoning]]" as reasoning_content
	// (reasoning_only).
	turnReasoningOnly
)

// findTurn is find_turn for message i (lines 663–782): the span of its
// tokens (or, turnReasoningOnly, of its reasoning's), or -1, -1.
func (l AxolotlLabeler) findTurn(ctx context.Context, msgs []byte, elems [][2]int, i int, role string, tools []byte, cache map[string][]int, mode turnMode) (int, int, error) {
	if i == 0 && role == "system" && l.Mistral {
		return -1, -1, nil
	}
	prefix := []byte{'['}
	if i > 0 {
		prefix = append(prefix, msgs[elems[0][0]:elems[i-1][1]]...)
		prefix = append(prefix, ',')
	}
	msg := msgs[elems[i][0]:elems[i][1]]
	dummy := append([]byte(nil), prefix...)
	dummy = append(dummy, `{"role":`...)
	if _, ok := jsonx.Lookup(msg, "role"); ok {
		dummy = jsonx.AppendString(dummy, role)
	} else {
		dummy = append(dummy, "null"...)
	}
	reasoning, hasReasoning := jsonx.Lookup(msg, "reasoning_content")
	switch mode {
	case turnReasoningOnly:
		dummy = append(dummy, `,"content":`...)
		if c, ok := jsonx.Lookup(msg, "content"); ok && string(c) != "null" {
			dummy = append(dummy, c...)
		} else {
			dummy = append(dummy, `""`...)
		}
		if hasReasoning {
			dummy = append(dummy, `,"reasoning_content":"[[dummy_reasoning]]"`...)
		}
	default:
		dummy = append(dummy, `,"content":"[[dummy_message]]"`...)
		if mode == turnContentOnly && hasReasoning {
			dummy = append(dummy, `,"reasoning_content":`...)
			dummy = append(dummy, reasoning...)
		}
	}
	dummy = append(dummy, "}]"...)
	full := append(prefix, msg...)
	full = append(full, ']')
	d, err := l.encode(ctx, dummy, tools, cache)
	if err != nil {
		return 0, 0, err
	}
	f, err := l.encode(ctx, full, tools, cache)
	if err != nil {
		return 0, 0, err
	}
	if len(f) == 0 || len(d) == 0 {
		return -1, -1, nil
	}
	n := min(len(d), len(f))
	start := -1
	for k := 0; k < n; k++ {
		if d[k] != f[k] {
			start = k
			break
		}
	}
	if start == -1 {
		return -1, -1, nil
	}
	end := -1
	for k := 0; k < n; k++ {
		if d[len(d)-1-k] != f[len(f)-1-k] {
			end = len(f) - k
			break
		}
	}
	if end == -1 || end <= start {
		return -1, -1, nil
	}
	return start, end, nil
}

// detail marks, from start, the tokens of the trained ranges of a
// message's content (key "content") or reasoning ("reasoning_content"),
// see AxolotlLabeler. A value that is not a string is axolotl's
// ValueError.
func (l AxolotlLabeler) detail(labels []bool, start int, msg []byte, key string, ranges []axolotl.Range) error {
	raw, _ := jsonx.Lookup(msg, key)
	text, ok := jsonx.Unquote(raw)
	if !ok {
		return fmt.Errorf("axolotl: a training detail is not supported when %s is not a string (axolotl raises)", key)
	}
	_, starts, ok := tokenize.TokenOffsets(l.Counter.Tokens, text)
	if !ok {
		info := tokenize.Describe(l.Counter.Tokens)
		return fmt.Errorf("%w: the %s's ranges need the token offsets of its %s, which tokenizer %s (%s) cannot give here (only a byte-level BPE tokenizer.json whose normalizer leaves the text as it is)",
			ErrNoOffsets, detailName(key), key, info.Name, info.Kind)
	}
	if len(starts) == 0 {
		// An empty text: axolotl's token_offsets[-1] raises IndexError.
		return fmt.Errorf("axolotl: a %s on an empty %s (axolotl raises IndexError)", detailName(key), key)
	}
	for i, tr := range axolotl.TrainedOffsets(utf8.RuneCountInString(text), tokenize.CodePointStarts(text, starts), ranges) {
		if tr && start+i < len(labels) {
			labels[start+i] = true
		}
	}
	return nil
}

// ErrNoOffsets is the labeller's error for a training detail on a text
// whose token offsets the tokenizer cannot give (tokenize.TokenOffsets):
// a SentencePiece-style BPE tokenizer (Llama-2, Gemma 3), a tiktoken
// encoding, a normalizer that changes the text.
var ErrNoOffsets = errors.New("axolotl: no token offsets")

// detailName is the detail's name for the text under key.
func detailName(key string) string {
	if key == "reasoning_content" {
		return "reasoning_training_detail"
	}
	return "training_detail"
}

// encode renders messages with tools and returns the text's token ids.
func (l AxolotlLabeler) encode(ctx context.Context, messages, tools []byte, cache map[string][]int) ([]int, error) {
	text, err := l.Counter.Template.RenderValidContext(ctx, messages, tools)
	if err != nil {
		if ctx.Err() == nil {
			err = axolotlRenderError(err, messages)
		}
		return nil, fmt.Errorf("axolotl: %w", err)
	}
	return l.ids(text, cache), nil
}

// ids returns text's token ids, stretch by stretch between the
// tokenizer's added tokens when it can split the text so
// (tokenize.Segmenter: the ids of a text are then its stretches' ids and
// its added tokens', in order), looking each stretch up in cache first:
// the renderings of one conversation's prefixes share most stretches.
func (l AxolotlLabeler) ids(text string, cache map[string][]int) []int {
	sg, ok := l.Counter.Tokens.(tokenize.Segmenter)
	if !ok || cache == nil {
		return l.Encode(text)
	}
	out := make([]int, 0, len(text)/3+1)
	add := func(s string) {
		ids, hit := cache[s]
		if !hit {
			ids = l.Encode(s)
			cache[strings.Clone(s)] = ids
		}
		out = append(out, ids...)
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	pos := 0
	_, ok = sg.Segments(text, func(p string) {
		// p is a substring of text (Segments passes text's own bytes).
		off := int(uintptr(unsafe.Pointer(unsafe.StringData(p))) - base)
		if off > pos {
			add(text[pos:off]) // the added tokens before it
		}
		add(p)
		pos = off + len(p)
	})
	if !ok {
		return l.Encode(text)
	}
	if pos < len(text) {
		add(text[pos:])
	}
	return out
}

// parseToolParameters returns the tool list tools with each tool's
// function.parameters given as a JSON string replaced by the value it
// holds, as axolotl's _get_tools does
// (src/axolotl/prompt_strategies/chat_template.py at commit 067b021c,
// lines 1020–1051: json.loads; a string that is not JSON raises, an error
// here). tools is returned as it is when nothing changes.
func parseToolParameters(tools []byte) (json.RawMessage, error) {
	out, last, err := parseFunctionStrings(tools, jsonx.SkipSpace(tools, 0), "parameters", nil, 0)
	if err != nil {
		if errors.Is(err, errNotJSON) {
			return nil, fmt.Errorf("tool parameters are %w (axolotl raises)", err)
		}
		return nil, err
	}
	if out == nil {
		return tools, nil
	}
	return append(out, tools[last:]...), nil
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// axolotlRenderError is the template's error on messages as axolotl gives
// them, with its likely cause named when the error is about a content and
// some message has none:
// axolotl leaves a null content out (transform_message takes a property
// only when it is not None), and a template that reads every message's
// content (Qwen3's) then raises, in axolotl as here, and nothing around
// its tokenize_prompt catches the error: the data set's preprocessing
// stops.
func axolotlRenderError(err error, messages []byte) error {
	if !strings.Contains(err.Error(), "content") {
		return err // not about a content: some other refusal
	}
	n, first, role := 0, -1, ""
	for i, e := range jsonx.Elements(messages, jsonx.SkipSpace(messages, 0)) {
		m := messages[e[0]:e[1]]
		if f, ok := jsonx.Fields(m, "content", "role"); ok && f[0] == nil {
			if n++; first < 0 {
				first = i
				role, _ = jsonx.Unquote(f[1])
			}
		}
	}
	if n == 0 {
		return err
	}
	return fmt.Errorf("%w (axolotl gives the template no content for %d message(s), the first message %d (%s): a null content is left out; axolotl's preprocessing stops on such a row)", err, n, first, role)
}
