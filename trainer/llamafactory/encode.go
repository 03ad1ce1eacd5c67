package llamafactory

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// Options are the data arguments (hparams/data_args.py) and the dataset
// description (dataset_info.json) that change what is counted. The zero
// value of each field is LLaMA-Factory's default.
type Options struct {
	Template string // "template"; "" is an error (no chat-template parsing here)
	// ToolFormat is "tool_format": "" keeps the template's formatters.
	ToolFormat string
	// DefaultSystem is "default_system": nil keeps the template's.
	DefaultSystem *string
	// EnableThinking is "enable_thinking" (reasoning templates): nil is
	// its default, true.
	EnableThinking *bool
	// EnableThinkingNull is "enable_thinking: null" (None): the empty think
	// block goes into the prompt, as with false, but thoughts are kept.
	EnableThinkingNull bool
	// PreserveThinking is "preserve_thinking".
	PreserveThinking bool
	// MaskHistory is "mask_history": pairs are cut last-first and, with a
	// reasoning template, earlier thoughts are removed.
	MaskHistory bool
	// TrainOnPrompt is "train_on_prompt": it changes only which tokens are
	// trained (Cut.Trained), not the counts.
	TrainOnPrompt bool
	// Formatting is the dataset's "formatting": "sharegpt" or "openai";
	// "" picks by the record's dialect (a "messages" record is read with
	// the OpenAI converter, a "conversations" one with the ShareGPT one).
	Formatting string
	// Tags are the dataset's tags; nil is ShareGPTTags for the ShareGPT
	// converter and OpenAITags for the OpenAI one.
	Tags *Tags
	// ToolsKey is the row's tools column ("columns": {"tools": …}); ""
	// is "tools".
	ToolsKey string
	// Date is the llama3 tool prompt's "Today Date" (Python's
	// strftime("%d %b %Y") of the day it runs); "" is today's.
	Date string
}

// Tokens is the tokenizer: Counter counts a string as
// tokenizer.encode(s, add_special_tokens=False) does (its special tokens
// as one each), HasBOS says whether the tokenizer has a bos token (a
// {"bos_token"} slot is then one token, else nothing).
type Tokens struct {
	Counter tokenize.Counter
	HasBOS  bool
}

// Renderer encodes records as one LLaMA-Factory configuration does.
type Renderer struct {
	opts      Options
	tmpl      *Template
	thinking  bool
	thoughtRe *regexp.Regexp
}

// New returns the renderer of opts; an unknown template or tool format is
// an error naming it.
func New(opts Options) (*Renderer, error) {
	t, ok := Lookup(opts.Template)
	if !ok {
		return nil, fmt.Errorf("llamafactory: template %q is not implemented (have %s)", opts.Template, strings.Join(Names(), ", "))
	}
	if opts.ToolFormat != "" {
		known := false
		for _, f := range ToolFormats() {
			known = known || f == opts.ToolFormat
		}
		if !known {
			return nil, fmt.Errorf("llamafactory: tool_format %q is not implemented (have %s)", opts.ToolFormat, strings.Join(ToolFormats(), ", "))
		}
		t.withToolFormat(opts.ToolFormat)
	}
	if opts.DefaultSystem != nil {
		t.DefaultSystem = *opts.DefaultSystem
	}
	if opts.TrainOnPrompt && t.EfficientEOS {
		return nil, fmt.Errorf("llamafactory: template %s does not support train_on_prompt (efficient_eos)", t.Name)
	}
	if opts.TrainOnPrompt && opts.MaskHistory {
		return nil, fmt.Errorf("llamafactory: mask_history is incompatible with train_on_prompt")
	}
	switch opts.Formatting {
	case "", "sharegpt", "openai":
	default:
		return nil, fmt.Errorf("llamafactory: formatting %q is not sharegpt or openai", opts.Formatting)
	}
	if opts.Date == "" {
		opts.Date = time.Now().Format("02 Jan 2006")
	}
	r := &Renderer{opts: opts, tmpl: t, thinking: !opts.EnableThinkingNull && (opts.EnableThinking == nil || *opts.EnableThinking)}
	r.thoughtRe = delimited(t.thought)
	return r, nil
}

// Template returns the renderer's template (with the options applied).
func (r *Renderer) Template() *Template { return r.tmpl }

// Pair is one (prompt, response) pair of encode_multiturn: the token
// counts of its source and target, and the record's turns it covers
// (indices into the turns given, [First, End)).
type Pair struct {
	Source, Target int
	First, End     int
}

// Skip says why LLaMA-Factory does not train on a row.
type Skip struct {
	// Reason is ReasonRoleTag, ReasonMessageCount or ReasonEmpty for a
	// row the converter or supervised.py drops with a warning, or the
	// Python exception raised (KeyError, TypeError, RuntimeError…) when
	// Fatal.
	Reason string
	// Fatal is set when LLaMA-Factory raises on the row: the dataset's
	// pre-processing stops instead of skipping it.
	Fatal bool
	// Detail is the exception's message, or the turn index at fault.
	Detail string
}

func (s *Skip) String() string {
	if s.Detail == "" {
		return s.Reason
	}
	return s.Reason + ": " + s.Detail
}

// Row is an encoded record: its pairs, or why it is skipped.
type Row struct {
	Pairs        []Pair
	EfficientEOS bool // supervised.py counts one eos token after the pairs
	Skip         *Skip
}

// Total is the row's tokens before any cutoff: the pairs' sum, plus the
// final eos under efficient_eos.
func (row Row) Total() int {
	n := 0
	if row.EfficientEOS {
		n = 1
	}
	for _, p := range row.Pairs {
		n += p.Source + p.Target
	}
	return n
}

// Encode encodes rec with turns in place of its own and system as the
// system column ("" for none) as LLaMA-Factory's converter and template
// do, and counts each pair with tok.
func (r *Renderer) Encode(rec *traj.Record, turns []traj.Turn, system string, tok Tokens) Row {
	pairs, err := r.render(rec, turns, system)
	row := Row{EfficientEOS: r.tmpl.EfficientEOS}
	if err != nil {
		row.Skip = toSkip(err)
		return row
	}
	row.Pairs = make([]Pair, len(pairs))
	for i, p := range pairs {
		row.Pairs[i] = Pair{Source: tok.count(p.src), Target: tok.count(p.tgt), First: p.first, End: p.end}
	}
	return row
}

func (s *Skip) Error() string { return s.String() }

// Skip returns why LLaMA-Factory would not train on the record (as
// Encode's Row.Skip), or nil when it encodes it; nothing is counted.
func (r *Renderer) Skip(rec *traj.Record, turns []traj.Turn, system string) *Skip {
	_, err := r.render(rec, turns, system)
	return toSkip(err)
}

// toSkip turns render's error into a Skip (nil for none).
func toSkip(err error) *Skip {
	if err == nil {
		return nil
	}
	var s *Skip
	if errors.As(err, &s) {
		return s
	}
	var pe *pyError
	if errors.As(err, &pe) {
		return &Skip{Reason: pe.Type, Fatal: true, Detail: pe.Msg}
	}
	return &Skip{Reason: "unreadable", Fatal: true, Detail: err.Error()}
}

// count is the length of _convert_elements_to_ids(elements).
func (tk Tokens) count(es []element) int {
	n := 0
	for _, e := range es {
		switch e.kind {
		case eText:
			if e.s != "" {
				n += tk.Counter.Count(e.s)
			}
		case eBOS:
			if tk.HasBOS {
				n++
			}
		default:
			n++
		}
	}
	return n
}

// encodedPair is a pair's elements.
type encodedPair struct {
	src, tgt   []element
	first, end int
}

// render converts and encodes: the pairs' elements, or a *Skip or
// *pyError.
func (r *Renderer) render(rec *traj.Record, turns []traj.Turn, system string) ([]encodedPair, error) {
	msgs, err := rawMessages(turns)
	if err != nil {
		return nil, err
	}
	formatting := r.opts.Formatting
	if formatting == "" {
		formatting = "sharegpt"
		if rec.Dialect.Form() == traj.FormMessage {
			formatting = "openai"
		}
	}
	tags := ShareGPTTags
	if formatting == "openai" {
		tags = OpenAITags
	}
	if r.opts.Tags != nil {
		tags = *r.opts.Tags
	}
	toolsKey := r.opts.ToolsKey
	if toolsKey == "" {
		toolsKey = "tools"
	}
	tools := pyStr("")
	if raw, ok := rec.Field(toolsKey); ok {
		if tools, err = fromRaw(raw); err != nil {
			return nil, err
		}
	}
	var ex example
	if formatting == "openai" {
		ex, err = openai(msgs, tags, system, tools)
	} else {
		ex, err = sharegpt(msgs, tags, system, tools)
	}
	if err != nil {
		return nil, err
	}
	if ex.skip != "" {
		return nil, &Skip{Reason: ex.skip}
	}
	if len(ex.prompt)%2 != 1 || len(ex.response) != 1 {
		return nil, &Skip{Reason: ReasonEmpty}
	}
	all := append(append([]message(nil), ex.prompt...), ex.response...)
	all[0].first = 0 // the first pair's source holds the system turn too
	if r.tmpl.multimodal {
		if err := validateMessages(all); err != nil {
			return nil, err
		}
	}
	return r.encodeMultiturn(all, ex.system, ex.tools)
}

func contentStr(m message) (string, error) {
	if m.content.K != kStr {
		return "", raise("RuntimeError", "Expected a string, got %s", pyRepr(m.content))
	}
	return m.content.S, nil
}

// removeThought is Template.remove_thought.
func (r *Renderer) removeThought(s string) string {
	return strings.TrimLeft(r.thoughtRe.ReplaceAllLiteralString(s, ""), "\n")
}

// encodeMultiturn is Template.encode_multiturn (ReasoningTemplate's for a
// reasoning template).
func (r *Renderer) encodeMultiturn(msgs []message, system, tools value) ([]encodedPair, error) {
	t := r.tmpl
	discard := r.opts.MaskHistory && !r.opts.PreserveThinking
	if t.class == reasoningClass {
		msgs = append([]message(nil), msgs...)
		if !r.opts.EnableThinkingNull && r.opts.EnableThinking != nil && !*r.opts.EnableThinking {
			for i := 1; i < len(msgs); i += 2 {
				s, err := contentStr(msgs[i])
				if err != nil {
					return nil, raise("TypeError", "expected string or bytes-like object")
				}
				msgs[i].content = pyStr(r.removeThought(s))
			}
		}
		if discard {
			for i := 1; i < len(msgs)-2; i += 2 {
				s, err := contentStr(msgs[i])
				if err != nil {
					return nil, raise("TypeError", "expected string or bytes-like object")
				}
				msgs[i].content = pyStr(r.removeThought(s))
			}
		}
	}
	enc, err := r.encode(msgs, system, tools)
	if err != nil {
		return nil, err
	}
	if t.class == reasoningClass {
		var idx []int
		if discard {
			idx = []int{len(msgs) - 2}
		} else {
			for i := 0; i < len(msgs); i += 2 {
				idx = append(idx, i)
			}
		}
		open, close := strings.TrimSpace(t.thought[0]), strings.TrimSpace(t.thought[1])
		empty := text(t.thought[0] + t.thought[1])
		for _, i := range idx {
			c := msgs[i+1].content.S
			if !strings.Contains(c, open) && !strings.Contains(c, close) {
				if !r.thinking {
					enc[i] = append(enc[i], empty)
				} else {
					enc[i+1] = append([]element{empty}, enc[i+1]...)
				}
			}
		}
	}
	out := make([]encodedPair, 0, len(enc)/2)
	for i := 0; i+1 < len(enc); i += 2 {
		out = append(out, encodedPair{src: enc[i], tgt: enc[i+1], first: msgs[i].first, end: msgs[i+1].end})
	}
	return out, nil
}

// encode is Template._encode (Llama2Template._encode for its class): each
// message's elements.
func (r *Renderer) encode(msgs []message, system, tools value) ([][]element, error) {
	t := r.tmpl
	sys := pyStr(t.DefaultSystem)
	if system.truthy() {
		sys = system
	}
	out := make([][]element, 0, len(msgs))
	for i, m := range msgs {
		var es []element
		systemText := ""
		if i == 0 {
			es = append(es, t.prefix...)
			if sys.truthy() || tools.truthy() {
				toolText := ""
				if tools.truthy() {
					var err error
					if toolText, err = t.formatTools(tools, r.opts.Date); err != nil {
						return nil, err
					}
				}
				if sys.K != kStr {
					return nil, raise("TypeError", "can only concatenate str (not %q) to str", sys.typeName())
				}
				se := apply(t.system, "content", sys.S+toolText)
				if t.class == llama2Class {
					if se[0].kind != eText {
						return nil, raise("TypeError", "unsupported operand type(s) for +: 'set' and 'str'")
					}
					systemText = se[0].s
				} else {
					es = append(es, se...)
				}
			}
		}
		c, err := contentStr(m)
		if err != nil {
			// StringFormatter raises RuntimeError on a non-string; the
			// function formatter's re.search, and Llama2Template's
			// system_text + content, raise TypeError first
			if m.role == roleFunction || (m.role == roleUser && t.class == llama2Class) {
				return nil, raise("TypeError", "expected str, got %s", m.content.typeName())
			}
			return nil, err
		}
		switch m.role {
		case roleUser:
			if t.class == llama2Class {
				es = append(es, apply(t.user, "content", systemText+c)...)
			} else {
				es = append(es, apply(t.user, "content", c, "idx", strconv.Itoa(i/2))...)
			}
		case roleAssistant:
			es = append(es, apply(t.assistant, "content", c)...)
		case roleObservation:
			es = append(es, apply(t.observation, "content", c)...)
		case roleFunction:
			f, err := t.formatFunction(c, t.class != llama2Class)
			if err != nil {
				return nil, err
			}
			es = append(es, f...)
		default:
			return nil, raise("NotImplementedError", "Unexpected role: %s", m.role)
		}
		out = append(out, es)
	}
	return out, nil
}

// validateMessages is mm_plugin's _validate_messages for a row without
// media: a message that holds an <image>, <video> or <audio> placeholder
// makes the multimodal plugin raise.
func validateMessages(msgs []message) error {
	for _, kind := range []string{"image", "video", "audio"} {
		ph := "<" + kind + ">"
		n := 0
		for _, m := range msgs {
			switch m.content.K {
			case kStr:
				n += strings.Count(m.content.S, ph)
			case kList: // list.count: elements equal to the placeholder
				for _, x := range m.content.A {
					if tagIs(x, ph) {
						n++
					}
				}
			default:
				return raise("AttributeError", "'%s' object has no attribute 'count'", m.content.typeName())
			}
		}
		if n != 0 {
			return raise("ValueError", "The number of %ss does not match the number of %s tokens", kind, ph)
		}
	}
	return nil
}
