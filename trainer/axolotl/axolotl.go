// Package axolotl holds what axolotl's chat_template prompt strategy does
// to a row's messages before and after it renders them
// (src/axolotl/prompt_strategies/chat_template.py at commit 067b021c; the
// line numbers below are that file's):
//
//   - the role mapping (ChatTemplatePrompter.__init__, lines 69–79, and
//     transform_message, lines 934–937): the dataset's roles config
//     ({target: [sources]}) replaces the default mapping (human and user →
//     user, gpt and assistant → assistant, system, tool); a role the
//     mapping does not name is passed to the template as it is;
//   - drop_system_message (get_conversation_thread, line 917): a first
//     system message is dropped;
//   - a content given as a list of parts (get_conversation_thread, lines
//     898–904, _convert_content_parts, lines 785–870): their texts joined
//     into a string, and their train / weight flags, when any part has
//     one, made the message's training_detail (a reasoning_content's
//     parts, lines 906–913, its reasoning_training_detail);
//   - which messages are trained (_tokenize_single_prompt, lines 502–510):
//     the message's message_field_training flag when set, else whether
//     its message_field_training_detail or reasoning_training_detail is
//     non-empty (when either is given), else train_on_inputs
//     or its (mapped) role in roles_to_train (whose names are mapped too,
//     ChatTemplateStrategy.__init__, lines 298–303);
//   - its named templates (src/axolotl/utils/chat_templates/templates/,
//     get_chat_template in base.py): a subset held in templates/, with
//     their source named in the README beside them.
//
// Contract: pure (the templates are embedded); no I/O. It reads messages
// as JSON (package jsonx) and imports no other package of this module.
package axolotl

import (
	"embed"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Rules are an axolotl chat_template dataset's settings that decide the
// messages given to the template and which of their tokens are trained.
type Rules struct {
	// Roles maps a row's role to the role the template is given (the
	// dataset's roles config, or the default mapping); a role it does not
	// hold is passed as it is.
	Roles map[string]string
	// RolesToTrain are the trained roles, mapped (default [assistant]).
	RolesToTrain  []string
	TrainOnInputs bool
	// FieldTraining and FieldTrainingDetail are the message keys of the
	// per-message training flag and character ranges ("" for none).
	FieldTraining, FieldTrainingDetail string
	// TrainOnEOS and TrainOnEOT: turn, all, last or none.
	TrainOnEOS, TrainOnEOT string
	DropSystemMessage      bool
	// SplitThinking is the dataset's split_thinking: an assistant
	// message's reasoning, written in its content between <think> and
	// </think> (or <reasoning>, <|begin_of_thought|>), is given to the
	// template as its reasoning_content (transform_message, lines
	// 939–982).
	SplitThinking bool
}

// DefaultRoles is axolotl's role mapping when the dataset gives none.
var DefaultRoles = map[string]string{"human": "user", "user": "user", "assistant": "assistant", "gpt": "assistant", "system": "system", "tool": "tool"}

// NewRules makes the rules of a dataset's settings: roles its roles
// config (nil: the default mapping), rolesToTrain mapped through it.
func NewRules(roles map[string][]string, rolesToTrain []string, trainOnInputs bool, fieldTraining, fieldDetail, eos, eot string, dropSystem bool) Rules {
	r := Rules{Roles: DefaultRoles, TrainOnInputs: trainOnInputs, FieldTraining: fieldTraining, FieldTrainingDetail: fieldDetail,
		TrainOnEOS: eos, TrainOnEOT: eot, DropSystemMessage: dropSystem}
	if len(roles) > 0 {
		r.Roles = map[string]string{}
		targets := make([]string, 0, len(roles))
		for t := range roles {
			targets = append(targets, t)
		}
		sort.Strings(targets) // a source named under two targets: the last in the config wins in Python; here the last by name
		for _, t := range targets {
			for _, s := range roles[t] {
				r.Roles[s] = t
			}
		}
	}
	for _, role := range rolesToTrain {
		r.RolesToTrain = append(r.RolesToTrain, r.MapRole(role))
	}
	return r
}

// MapRole is the role the template is given for a row's role.
func (r Rules) MapRole(role string) string {
	if t, ok := r.Roles[role]; ok {
		return t
	}
	return role
}

// Legacy says whether axolotl takes its "old simple legacy" path
// (lines 443–479): no role to train, no eos/eot option and no training
// field. Its config defaults (train_on_eos turn) make it unreachable from
// a config file; it is told apart so that it is never mistaken for the
// other path.
func (r Rules) Legacy() bool {
	return len(r.RolesToTrain) == 0 && r.TrainOnEOS == "" && r.TrainOnEOT == "" && r.FieldTraining == "" && r.FieldTrainingDetail == ""
}

// Message is one message as axolotl's strategy reads it.
type Message struct {
	Role string // mapped
	// Train says whether its tokens are trained (should_train).
	Train bool
	// Detail holds its training_detail ranges when it has any (the
	// content's characters [Begin, End], trained or not), nil otherwise.
	Detail []Range
	// Reasoning holds its reasoning_training_detail ranges when it has
	// any (its reasoning_content given as parts with train or weight
	// flags, get_conversation_thread, lines 906–913: the joined
	// reasoning's characters), nil otherwise.
	Reasoning []Range
	// HasReasoning says whether the message has a reasoning_content
	// (has_reasoning, line 527: present and not null).
	HasReasoning bool
}

// Range is a training_detail entry: the content's characters Begin to
// End (both included, as axolotl's offsets are) and whether they are
// trained.
type Range struct {
	Begin, End int
	Train      bool
}

// Messages maps a JSON list of messages as axolotl does before rendering
// (roles mapped, a first system message dropped under drop_system_message)
// and says which are trained. The list returned is the one to render; it
// is messages itself when nothing changes.
func (r Rules) Messages(messages []byte) ([]byte, []Message, error) {
	elems := jsonx.Elements(messages, jsonx.SkipSpace(messages, 0))
	var out []byte
	last := 0
	var ms []Message
	for i, e := range elems {
		obj := messages[e[0]:e[1]]
		if obj[0] != '{' {
			return nil, nil, fmt.Errorf("message %d is not an object", i)
		}
		members, _, err := jsonx.Members(messages, e[0])
		if err != nil {
			return nil, nil, err
		}
		m := Message{}
		// The splices of this message, in the order of its members.
		type splice struct {
			start, end int
			with       string
		}
		var sp []splice
		if rm, ok := jsonx.Find(members, "role"); ok {
			role, _ := jsonx.Unquote(messages[rm.Start:rm.End])
			m.Role = r.MapRole(role)
			if m.Role != role {
				sp = append(sp, splice{rm.Start, rm.End, m.Role})
			}
		}
		var partsDetail, reasonDetail []Range
		partsHave, reasonHave := false, false
		split := false // reasoning_content set by split_thinking
		cm, hasContent := jsonx.Find(members, "content")
		rc, hasReasoning := jsonx.Find(members, "reasoning_content")
		if hasContent && r.SplitThinking && m.Role == "assistant" && messages[cm.Start] == '"' {
			content, _ := jsonx.Unquote(messages[cm.Start:cm.End])
			if reasoning, rest, ok := splitThinking(content); ok {
				split = true
				// content, and reasoning_content replaced, or added after
				// the message's last member.
				sp = append(sp, splice{cm.Start, cm.End, rest})
				if hasReasoning {
					sp = append(sp, splice{rc.Start, rc.End, reasoning})
				} else {
					last := members[len(members)-1]
					sp = append(sp, splice{last.End, last.End, "\x00" + reasoning})
				}
			}
		}
		if hasContent && messages[cm.Start] == '[' {
			text, d, err := contentParts(messages[cm.Start:cm.End])
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: %w", i, err)
			}
			sp = append(sp, splice{cm.Start, cm.End, text})
			partsDetail, partsHave = d, d != nil
		}
		if hasReasoning && messages[rc.Start] == '[' && !split {
			// Joined as a content's parts are, their flags made the
			// message's reasoning_training_detail (lines 906–913).
			text, d, err := contentParts(messages[rc.Start:rc.End])
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: %w", i, err)
			}
			sp = append(sp, splice{rc.Start, rc.End, text})
			reasonDetail, reasonHave = d, d != nil
		}
		m.HasReasoning = hasReasoning && string(messages[rc.Start:rc.End]) != "null" || split
		sort.Slice(sp, func(a, b int) bool { return sp[a].start < sp[b].start })
		if i != 0 || !r.DropSystemMessage || m.Role != "system" {
			for _, x := range sp {
				if out == nil {
					out = []byte{}
				}
				out = append(out, messages[last:x.start]...)
				if w, ok := strings.CutPrefix(x.with, "\x00"); ok { // a member added
					out = append(out, `,"reasoning_content":`...)
					out = jsonx.AppendString(out, w)
				} else {
					out = jsonx.AppendString(out, x.with)
				}
				last = x.end
			}
		}
		if i == 0 && r.DropSystemMessage && m.Role == "system" {
			// turns[1:]: the list from the second message.
			if len(elems) == 1 {
				out, last = append(out[:0], '[', ']'), len(messages)
			} else {
				out, last = append(out[:0], '['), elems[1][0]
			}
			continue
		}
		m.Train, m.Detail, m.Reasoning = r.train(m.Role, messages, members, partsDetail, partsHave, reasonDetail, reasonHave)
		ms = append(ms, m)
	}
	if out == nil {
		return messages, ms, nil
	}
	return append(out, messages[last:]...), ms, nil
}

// train is should_train for one message (lines 502–510), and its
// training_detail ranges: the content parts' (partsHave: parts with a
// train or weight flag, get_conversation_thread, lines 898–904, which
// replace the message's own training_detail), else its
// message_field_training_detail's; and its reasoning_training_detail
// ranges (reasonHave: reasoning_content parts with a flag). A message
// with either detail (not None) is trained when one of them is non-empty.
// The ranges apply whenever the message is trained, whatever decided it
// (lines 544–597).
func (r Rules) train(role string, b []byte, members []jsonx.Member, partsDetail []Range, partsHave bool, reasonDetail []Range, reasonHave bool) (bool, []Range, []Range) {
	var d []Range
	haveDetail, detailTrue := false, false
	if partsHave {
		d, haveDetail, detailTrue = partsDetail, true, len(partsDetail) > 0
	} else if r.FieldTrainingDetail != "" {
		if v, ok := jsonx.Find(members, r.FieldTrainingDetail); ok && string(b[v.Start:v.End]) != "null" {
			d, haveDetail, detailTrue = detail(b[v.Start:v.End]), true, truthy(b[v.Start:v.End])
		}
	}
	if len(d) == 0 {
		d = nil // `if train_detail:`: an empty list trains the whole span
	}
	rd := reasonDetail
	if len(rd) == 0 {
		rd = nil
	}
	if r.FieldTraining != "" {
		if v, ok := jsonx.Find(members, r.FieldTraining); ok && string(b[v.Start:v.End]) != "null" {
			return truthy(b[v.Start:v.End]), d, rd
		}
	}
	if haveDetail || reasonHave {
		return detailTrue || rd != nil, d, rd
	}
	return r.TrainOnInputs || slices.Contains(r.RolesToTrain, role), nil, nil
}

// splitThinking is split_thinking's split of an assistant content
// (transform_message, lines 939–982): the first of the thinking pairs
// whose two tags are both in content gives the reasoning (between the
// first of each, stripped) and the rest (after the closing tag, left
// stripped, or what <|begin_of_solution|> … <|end_of_solution|> holds in
// it, stripped). ok is false when no pair is in content.
func splitThinking(content string) (reasoning, rest string, ok bool) {
	for _, p := range [][2]string{{"<think>", "</think>"}, {"<reasoning>", "</reasoning>"}, {"<|begin_of_thought|>", "<|end_of_thought|>"}} {
		if !strings.Contains(content, p[0]) || !strings.Contains(content, p[1]) {
			continue
		}
		ts, te := strings.Index(content, p[0]), strings.Index(content, p[1])
		reasoning = pySlice(content, ts+len(p[0]), te)
		rest = strings.TrimLeftFunc(content[te+len(p[1]):], pySpace)
		if strings.Contains(rest, "<|begin_of_solution|>") && strings.Contains(rest, "<|end_of_solution|>") {
			cs, ce := strings.Index(rest, "<|begin_of_solution|>"), strings.Index(rest, "<|end_of_solution|>")
			rest = strings.TrimFunc(pySlice(rest, cs+len("<|begin_of_solution|>"), ce), pySpace)
		}
		return strings.TrimFunc(reasoning, pySpace), rest, true
	}
	return "", "", false
}

// pySlice is Python's s[a:b] for 0 <= a, b <= len(s): "" when b < a.
func pySlice(s string, a, b int) string {
	if b < a {
		return ""
	}
	return s[a:b]
}

// pySpace is Python's str.isspace for one character.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// contentParts is _convert_content_parts (lines 785–870) of a content
// list: the texts of its object parts ("text", else "content", else
// "value", the first that is a non-empty string) joined, and, when some
// part has a train or weight flag, a training_detail range per non-empty
// part (its code points; train is the part's train flag, else its weight
// not 0, else true). A part's text that is neither a string nor empty
// makes axolotl's join raise.
func contentParts(v []byte) (string, []Range, error) {
	var sb strings.Builder
	var d []Range
	explicit := false
	off := 0
	for _, e := range jsonx.Elements(v, 0) {
		part := v[e[0]:e[1]]
		if part[0] != '{' {
			continue
		}
		ms, _, err := jsonx.Members(part, 0)
		if err != nil {
			return "", nil, err
		}
		text := ""
		for _, k := range []string{"text", "content", "value"} {
			f, ok := jsonx.Find(ms, k)
			if !ok || !truthy(part[f.Start:f.End]) {
				continue
			}
			s, ok := jsonx.Unquote(part[f.Start:f.End])
			if !ok {
				return "", nil, fmt.Errorf("content part %s is not a string: TypeError in axolotl's join", k)
			}
			text = s
			break
		}
		sb.WriteString(text)
		train := true
		t, tok := jsonx.Find(ms, "train")
		w, wok := jsonx.Find(ms, "weight")
		tok = tok && string(part[t.Start:t.End]) != "null"
		wok = wok && string(part[w.Start:w.End]) != "null"
		switch {
		case tok:
			explicit, train = true, truthy(part[t.Start:t.End])
		case wok:
			explicit = true
			f, err := strconv.ParseFloat(string(part[w.Start:w.End]), 64)
			train = err != nil || f != 0 // part_weight not in (0, 0.0); false == 0 too
			if string(part[w.Start:w.End]) == "false" {
				train = false
			}
		}
		if n := utf8.RuneCountInString(text); n > 0 {
			d = append(d, Range{Begin: off, End: off + n - 1, Train: train})
			off += n
		}
	}
	if !explicit {
		d = nil
	} else if d == nil {
		d = []Range{}
	}
	return sb.String(), d, nil
}

// truthy is Python's bool() of a JSON value.
func truthy(v []byte) bool {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "" || s == "false" || s == "null" || s == `""`:
		return false
	case s[0] == '[':
		return len(jsonx.Elements(v, jsonx.SkipSpace(v, 0))) > 0
	case s[0] == '{':
		return strings.TrimSpace(s[1:len(s)-1]) != ""
	case s[0] == '-' || (s[0] >= '0' && s[0] <= '9'):
		f, err := strconv.ParseFloat(s, 64)
		return err != nil || f != 0
	}
	return true
}

// detail reads a training_detail list: [{"begin_offset", "end_offset",
// "train"}, …].
func detail(v []byte) []Range {
	var out []Range
	if v[0] != '[' {
		return nil
	}
	for _, e := range jsonx.Elements(v, 0) {
		vals, ok := jsonx.Fields(v[e[0]:e[1]], "begin_offset", "end_offset", "train")
		if !ok {
			continue
		}
		var d Range
		if _, err := fmt.Sscan(string(vals[0]), &d.Begin); err != nil {
			continue
		}
		if _, err := fmt.Sscan(string(vals[1]), &d.End); err != nil {
			continue
		}
		d.Train = truthy(vals[2])
		out = append(out, d)
	}
	return out
}

// TrainedOffsets is get_offsets_for_train_detail (lines 169–211, with
// adjust_train_details, lines 213–270) for a content of n code points
// whose tokens begin at the code points starts (Hugging Face's offset
// mapping: tokenize.TokenOffsets and tokenize.CodePointStarts): which of
// its tokens are trained by ranges. A token's span runs from its start to
// the next token's start less one (the last to the content's end); each
// range is widened to the tokens it touches, and a token is trained when
// it lies within a widened range whose train flag is set.
func TrainedOffsets(n int, starts []int, ranges []Range) []bool {
	type span struct{ s, e int }
	offs := make([]span, len(starts))
	for i, c := range starts {
		offs[i].s = c
	}
	for i := 0; i < len(offs)-1; i++ {
		offs[i].e = offs[i+1].s - 1
	}
	offs[len(offs)-1].e = n - 1
	type adj struct {
		b, e  int
		train bool
	}
	var adjusted []adj
	for _, d := range ranges {
		bt := len(offs)
		for i, o := range offs {
			if o.s >= d.Begin {
				bt = i
				break
			}
		}
		if bt > 0 && offs[bt-1].e > d.Begin {
			bt--
		}
		et := -1
		for i := len(offs) - 1; i >= 0; i-- {
			if offs[i].e <= d.End {
				et = i
				break
			}
		}
		if et < len(offs)-1 && offs[et+1].s < d.End {
			et++
		}
		if bt <= et {
			adjusted = append(adjusted, adj{offs[bt].s, offs[et].e, d.Train})
		}
	}
	out := make([]bool, len(offs))
	for i, o := range offs {
		for _, d := range adjusted {
			if o.s >= d.b && o.e <= d.e && d.train {
				out[i] = true
			}
		}
	}
	return out
}

//go:embed templates/*.jinja
var templates embed.FS

// Template returns the text of axolotl's named chat template name
// (chat_template: chatml, llama3, qwen_25, …), or false when it is not
// one held here.
func Template(name string) (string, bool) {
	b, err := templates.ReadFile("templates/" + name + ".jinja")
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Templates lists the named templates held.
func Templates() []string {
	ents, _ := templates.ReadDir("templates")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".jinja"))
	}
	return out
}
