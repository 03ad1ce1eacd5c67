package traj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Schema says how to read records: the dialect and, for datasets that
// rename them, the field names. The zero Schema detects the dialect and
// uses each dialect's standard names.
type Schema struct {
	Dialect    Dialect
	TurnsKey   string // "conversations" (sharegpt) or "messages" (openai)
	RoleKey    string // "from" or "role"
	ContentKey string // "value" or "content"
}

// Validate reports an unknown dialect ([ParseDialect]).
func (s Schema) Validate() error {
	_, err := ParseDialect(string(s.Dialect))
	return err
}

// Keys returns the turn-list, role and content keys records of dialect d
// are read with: the dialect's own ("conversations", "from", "value" or
// "messages", "role", "content"), or the ones s renames. It panics on a
// dialect that is not one of [Dialects].
func (s Schema) Keys(d Dialect) (turns, role, content string) {
	t := d.traits()
	turns, role, content = t.turns, t.role, t.content
	if s.TurnsKey != "" {
		turns = s.TurnsKey
	}
	if s.RoleKey != "" {
		role = s.RoleKey
	}
	if s.ContentKey != "" {
		content = s.ContentKey
	}
	return
}

// Pos is where a record came from: a file and the 1-based line (JSONL;
// for a JSON array, the line where the record starts) or row (Parquet,
// Arrow) in it.
type Pos struct {
	File string
	Line int64
	// Record is the record's 1-based index in the file when its line does
	// not name it alone (a JSON array may hold several records on one
	// line); 0 otherwise.
	Record int64
}

func (p Pos) String() string {
	if p.Record > 0 {
		return fmt.Sprintf("%s:%d (record %d)", p.File, p.Line, p.Record)
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// DecodeError says why a line is not a usable trajectory. Reason is a short
// stable code used in metrics and the rejects file.
type DecodeError struct {
	Pos    Pos
	Reason string // invalid_json, not_an_object, no_turns, turns_not_a_list, bad_turn, no_role, unknown_shape, two_turn_lists
	Detail string
}

func (e *DecodeError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Reason, e.Detail)
}

// Record is one trajectory and the bytes it was read from.
type Record struct {
	Pos     Pos
	Dialect Dialect
	Turns   []Turn

	// System is a system prompt kept outside the turn list, in a top-level
	// "system_prompt" (hermes-agent session exports) or "system"
	// (LLaMA-Factory) string field, when no turn has the system role. It is
	// part of what a trainer sees, so it counts toward the budget, and it is
	// always kept. SystemKey names the field ("" when there is none).
	System    string
	SystemKey string

	// OtherTurnsKey names a second turn list the record also holds
	// ("messages" beside "conversations"), with the same turns as the one
	// read: it is left as it is. "" when there is none. A record whose two
	// lists differ is not decoded (reason two_turn_lists).
	OtherTurnsKey string

	raw      []byte
	members  []jsonx.Member
	turnsIdx int // index in members of the turns array
	objEnd   int // index of the closing brace
	keySep   string
	valSep   string // between members and array elements
	turnsKey string
	roleKey  string
	contKey  string
}

// TurnsKey is the key of the turn list the record was read from: its
// dialect's ("conversations", "messages") or the one the schema renames.
func (r *Record) TurnsKey() string { return r.turnsKey }

// Raw returns the bytes the record was decoded from. The caller must not
// modify them.
func (r *Record) Raw() []byte { return r.raw }

// Field returns the raw JSON value of the record's top-level key (the
// last one when the key repeats), sharing the record's bytes, and false
// when there is no such key.
func (r *Record) Field(key string) ([]byte, bool) {
	m, ok := jsonx.Find(r.members, key)
	if !ok {
		return nil, false
	}
	return r.raw[m.Start:m.End], true
}

// Decode parses one JSON object as a trajectory. line is retained by the
// record, and its turns' Raw and Text share its memory (texts without
// escapes are not copied), so the caller must never modify or reuse it.
// Any error is a *[DecodeError]. s must be valid ([Schema.Validate]):
// Decode panics on a dialect that is not one of [Dialects], which is the
// caller's bug, never the record's.
func Decode(line []byte, pos Pos, s Schema) (*Record, error) {
	if s.Dialect != DialectAuto && !s.Dialect.known() {
		panic(fmt.Sprintf("traj.Decode: dialect %q is not one of traj.Dialects (Schema.Validate refuses it)", string(s.Dialect)))
	}
	fail := func(reason, format string, a ...any) error {
		return &DecodeError{Pos: pos, Reason: reason, Detail: fmt.Sprintf(format, a...)}
	}
	// Validation also lists the turns of the arrays that may hold them.
	var cand [2]string
	list := cand[:0]
	for _, d := range dialects {
		if s.Dialect == DialectAuto || s.Dialect == d {
			k, _, _ := s.Keys(d)
			list = append(list, k)
		}
	}
	ms, end, ok := jsonx.ValidMembers(line, list)
	if !ok {
		if jsonx.Valid(line) {
			return nil, fail("not_an_object", "a JSON %s", kindOf(line))
		}
		var v any
		err := json.Unmarshal(line, &v)
		return nil, fail("invalid_json", "%v", err)
	}
	r := &Record{Pos: pos, raw: line, members: ms, objEnd: end, turnsIdx: -1}
	r.Dialect = s.Dialect
	if r.Dialect == DialectAuto {
		r.Dialect = detect(line, ms, s)
		if r.Dialect == DialectAuto {
			return nil, fail("unknown_shape", "neither %q nor %q with a list of turns", "conversations", "messages")
		}
	}
	turnsKey, roleKey, contKey := s.Keys(r.Dialect)
	r.turnsKey, r.roleKey, r.contKey = turnsKey, roleKey, contKey
	for i, m := range ms {
		if jsonx.KeyIs(m.Key, turnsKey) {
			r.turnsIdx = i
		}
	}
	if r.turnsIdx < 0 {
		return nil, fail("no_turns", "no %q field", turnsKey)
	}
	tv := ms[r.turnsIdx]
	if line[tv.Start] != '[' {
		return nil, fail("turns_not_a_list", "%q is a %s", turnsKey, kindOf(line[tv.Start:tv.End]))
	}
	r.keySep, r.valSep = ": ", ", "
	if len(ms) > 0 {
		r.keySep = string(line[ms[0].KeyStart+len(ms[0].Key) : ms[0].Start])
	}
	if len(ms) > 1 {
		r.valSep = string(line[ms[0].End:ms[1].KeyStart])
	}
	// The turns and their members were listed while validating.
	hasSystem := false
	r.Turns = make([]Turn, 0, len(tv.Elems))
	for i, el := range tv.Elems {
		if _, ok := jsonx.Find(el.Members, roleKey); el.Object && !ok {
			return nil, fail("no_role", "%s[%d] has no %q: every turn needs a role", turnsKey, i, roleKey)
		}
		t, err := r.decodeTurn(line, el)
		if err != nil {
			return nil, fail("bad_turn", "%s[%d]: %v", turnsKey, i, err)
		}
		if i == 1 {
			r.valSep = string(line[tv.Elems[0].End:el.Start])
		}
		hasSystem = hasSystem || t.Role == RoleSystem
		r.Turns = append(r.Turns, t)
	}
	for i := range ms {
		ms[i].Elems = nil // the record keeps its members, not its turns' lists
	}
	if s.Dialect == DialectAuto {
		if err := r.checkOtherTurns(s); err != nil {
			return nil, err
		}
	}
	if !hasSystem {
		for _, k := range []string{"system_prompt", "system"} {
			if m, ok := jsonx.Find(ms, k); ok && line[m.Start] == '"' {
				r.System, _ = jsonx.Unquote(line[m.Start:m.End])
				r.SystemKey = k
				break
			}
		}
	}
	return r, nil
}

// checkOtherTurns looks, in a record whose dialect was detected, for the
// other dialect's turn list ("messages" beside "conversations"). A trainer
// reads one or the other, so both must hold the same turns (roles, after
// mapping each dialect's role names, and texts): then the record is read
// by the list detected and the other is named in OtherTurnsKey; else it is a two_turn_lists DecodeError
// naming both keys and the first turn that differs. A list that is not a
// valid trajectory in its dialect differs too.
func (r *Record) checkOtherTurns(s Schema) error {
	for _, other := range dialects {
		if other == r.Dialect {
			continue
		}
		if err := r.checkOtherTurnsOf(s, other); err != nil || r.OtherTurnsKey != "" {
			return err
		}
	}
	return nil
}

// checkOtherTurnsOf is checkOtherTurns for the turn list of dialect other.
func (r *Record) checkOtherTurnsOf(s Schema, other Dialect) error {
	key, _, _ := s.Keys(other)
	used, _, _ := s.Keys(r.Dialect)
	m, ok := jsonx.Find(r.members, key)
	if key == used || !ok || r.raw[m.Start] != '[' {
		return nil
	}
	s.Dialect = other
	o, err := Decode(r.raw, r.Pos, s)
	why := ""
	switch {
	case err != nil:
		var de *DecodeError
		if errors.As(err, &de) {
			why = de.Reason + ": " + de.Detail
		} else {
			why = err.Error()
		}
	case len(o.Turns) != len(r.Turns):
		why = fmt.Sprintf("%d turns against %d", len(r.Turns), len(o.Turns))
	default:
		for i := range r.Turns {
			if d := sameTurn(r.Turns[i], o.Turns[i]); d != "" {
				why = fmt.Sprintf("turn %d: %s", i, d)
				break
			}
		}
	}
	if why != "" {
		return &DecodeError{Pos: r.Pos, Reason: "two_turn_lists",
			Detail: fmt.Sprintf("both %q and %q hold a turn list, and they differ (%s): a trainer may read either; keep one", used, key, why)}
	}
	r.OtherTurnsKey = key
	return nil
}

// sameTurn says how a and b, one turn read from each of a record's two
// turn lists, differ ("" when they do not): by normalised role or by text
// (an OpenAI message's text includes its tool calls' names and arguments).
func sameTurn(a, b Turn) string {
	switch {
	case a.Role != b.Role:
		return fmt.Sprintf("role %q against %q", a.Name, b.Name)
	case a.Text != b.Text:
		return "the texts differ"
	}
	return ""
}

func kindOf(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "empty value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// detect picks the dialect by shape: a "conversations" (or renamed) list of
// from/value objects is ShareGPT; a "messages" list of role/content objects
// is OpenAI.
func detect(line []byte, ms []jsonx.Member, s Schema) Dialect {
	for _, d := range dialects {
		turnsKey, roleKey, _ := s.Keys(d)
		m, ok := jsonx.Find(ms, turnsKey)
		if !ok || line[m.Start] != '[' {
			continue
		}
		if len(m.Elems) == 0 {
			return d
		}
		if first := m.Elems[0]; first.Object {
			if _, ok := jsonx.Find(first.Members, roleKey); ok {
				return d
			}
		}
	}
	// A list of objects under one dialect's turns key alone is that
	// dialect, even when its first turn lacks a role: Decode then reports
	// the role-less turn as such, not the record as of unknown shape.
	found := DialectAuto
	for _, d := range dialects {
		turnsKey, _, _ := s.Keys(d)
		if m, ok := jsonx.Find(ms, turnsKey); ok && line[m.Start] == '[' && m.Elems[0].Object {
			if found != DialectAuto {
				return DialectAuto
			}
			found = d
		}
	}
	return found
}

// decodeTurn decodes the turn el of line (its members' offsets are into
// line).
func (r *Record) decodeTurn(line []byte, el jsonx.Elem) (Turn, error) {
	if !el.Object {
		return Turn{}, fmt.Errorf("turn is a %s, not an object", kindOf(line[el.Start:el.End]))
	}
	ms := el.Members
	b := line[:el.End] // offsets stay valid; the turn is b[el.Start:]
	t := Turn{Raw: b[el.Start:el.End:el.End]}
	if m, ok := jsonx.Find(ms, r.roleKey); ok {
		if b[m.Start] != '"' {
			return Turn{}, fmt.Errorf("%q is a %s, not a string", r.roleKey, kindOf(b[m.Start:m.End]))
		}
		t.Name, _ = jsonx.Unquote(b[m.Start:m.End])
	}
	tr := r.Dialect.traits()
	if role, ok := tr.roles[t.Name]; ok {
		t.Role = role
	} else {
		t.Role = Role(t.Name)
	}
	var text joiner
	if m, ok := jsonx.Find(ms, r.contKey); ok {
		t.content = [2]int{m.Start - el.Start, m.End - el.Start}
		v := b[m.Start:m.End]
		switch v[0] {
		case '"':
			t.contentKind = 's'
			s, _ := jsonx.Unquote(v)
			text.add(s)
		case 'n':
			t.contentKind = 'n'
		case '[':
			if tr.form != FormMessage {
				return Turn{}, fmt.Errorf("%q is a list, not a string", r.contKey)
			}
			t.contentKind = 'l'
			if err := partsText(v, &text); err != nil {
				return Turn{}, err
			}
		default:
			return Turn{}, fmt.Errorf("%q is a %s, not a string", r.contKey, kindOf(v))
		}
	}
	if tr.form == FormMessage {
		openAIExtras(b, ms, &t, &text)
	}
	t.Text = text.String()
	return t, nil
}

// partsText collects the text of a list of content parts. Text parts carry
// "text" (OpenAI) or "value" (some LLaMA-Factory exports); image parts
// ([isImagePart]) have no text (their tokens are the caller's to count: [Turn.Extra]).
func partsText(v []byte, text *joiner) error {
	for i, el := range jsonx.Elements(v, 0) {
		pm, _, err := jsonx.Members(v[:el[1]], el[0])
		if err != nil {
			return fmt.Errorf("content part %d is a %s, not an object", i, kindOf(v[el[0]:el[1]]))
		}
		typ := ""
		if m, ok := jsonx.Find(pm, "type"); ok && v[m.Start] == '"' {
			typ, _ = jsonx.Unquote(v[m.Start:m.End])
		}
		if isImagePart(typ) {
			continue
		}
		for _, k := range []string{"text", "value"} {
			if m, ok := jsonx.Find(pm, k); ok && v[m.Start] == '"' {
				s, _ := jsonx.Unquote(v[m.Start:m.End])
				text.add(s)
				break
			}
		}
	}
	return nil
}

// isImagePart reports whether a content part of type typ is an image, as
// package imagetok's Finder reads them (OpenAI's image_url, input_image and
// computer_screenshot, Anthropic's and transformers' image); any other part
// (an "image_caption" with text) is read for its text.
func isImagePart(typ string) bool {
	switch typ {
	case "image_url", "input_image", "computer_screenshot", "image":
		return true
	}
	return false
}

// openAIExtras reads what else an OpenAI message carries that costs tokens
// or pairs tools: reasoning, tool calls with their ids and arguments, and
// the id a tool message answers.
func openAIExtras(b []byte, ms []jsonx.Member, t *Turn, text *joiner) {
	add := func(s string) {
		if s != "" {
			text.add(s)
		}
	}
	for _, k := range []string{"reasoning_content", "reasoning"} {
		if m, ok := jsonx.Find(ms, k); ok && b[m.Start] == '"' {
			s, _ := jsonx.Unquote(b[m.Start:m.End])
			add(s)
		}
	}
	if m, ok := jsonx.Find(ms, "tool_call_id"); ok && b[m.Start] == '"' {
		t.AnswersID, _ = jsonx.Unquote(b[m.Start:m.End])
	}
	for k, el := range toolCallSpans(b, ms) {
		c, ok := parseToolCall(b, el)
		if !ok {
			continue
		}
		if c.hasID {
			t.CallIDs = append(t.CallIDs, c.ID)
		}
		call := Call{ID: c.ID, Name: c.Name, RawArgs: c.Arguments, Entry: k, Block: -1}
		add(c.Name)
		if c.Arguments != nil {
			if c.Arguments[0] == '"' {
				s, ok := jsonx.Unquote(c.Arguments)
				add(s)
				if ok {
					call.Args = s
				} else {
					call.Args = argsText(c.Arguments)
				}
			} else {
				add(string(c.Arguments))
				call.Args = argsText(c.Arguments)
			}
		}
		t.calls = append(t.calls, call)
	}
}

// toolCall is one entry of an OpenAI message's "tool_calls" list, as read:
// {"id": …, "function": {"name": …, "arguments": …}}.
type toolCall struct {
	ID   string // "" when absent or not a string
	Name string // "" when absent or not a string
	// Arguments is the raw JSON value of "arguments" (OpenAI sends a string
	// holding JSON, some datasets an object); nil when absent. It shares
	// the turn's memory.
	Arguments []byte

	hasID bool // the entry has a string "id"
}

// toolCallSpans returns the spans of the entries of the "tool_calls" list
// among the message members ms (offsets into b); nil when there is none.
func toolCallSpans(b []byte, ms []jsonx.Member) [][2]int {
	m, ok := jsonx.Find(ms, "tool_calls")
	if !ok || b[m.Start] != '[' {
		return nil
	}
	return jsonx.Elements(b, m.Start)
}

// parseToolCall reads the tool call at span el of b; ok is false when the
// entry is not an object.
func parseToolCall(b []byte, el [2]int) (c toolCall, ok bool) {
	cm, _, err := jsonx.Members(b[:el[1]], el[0])
	if err != nil {
		return c, false
	}
	if idm, ok := jsonx.Find(cm, "id"); ok && b[idm.Start] == '"' {
		c.ID, _ = jsonx.Unquote(b[idm.Start:idm.End])
		c.hasID = true
	}
	fm, ok := jsonx.Find(cm, "function")
	if !ok || b[fm.Start] != '{' {
		return c, true
	}
	fms, _, _ := jsonx.Members(b[:fm.End], fm.Start)
	if nm, ok := jsonx.Find(fms, "name"); ok && b[nm.Start] == '"' {
		c.Name, _ = jsonx.Unquote(b[nm.Start:nm.End])
	}
	if am, ok := jsonx.Find(fms, "arguments"); ok {
		c.Arguments = b[am.Start:am.End:am.End]
	}
	return c, true
}

// joiner joins a turn's texts with "\n" after the first non-empty one. A
// turn's text is nearly always one piece; that piece is kept as it is
// (often sharing the line's memory, see unquote) and only two or more are
// copied into a new buffer.
type joiner struct {
	s   string // the text while it is a single piece
	buf []byte // the text once a second piece was added
}

func (j *joiner) add(s string) {
	if j.buf == nil {
		if j.s == "" {
			j.s = s
			return
		}
		j.buf = append(make([]byte, 0, len(j.s)+1+len(s)), j.s...)
	}
	j.buf = append(j.buf, '\n')
	j.buf = append(j.buf, s...)
}

func (j *joiner) String() string {
	if j.buf != nil {
		return unsafe.String(unsafe.SliceData(j.buf), len(j.buf))
	}
	return j.s
}
