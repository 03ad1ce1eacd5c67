package traj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"
)

// Dialect names the shape of a record.
type Dialect string

// The dialects. [DialectAuto] detects the dialect per record from its shape.
const (
	DialectAuto     Dialect = ""
	DialectShareGPT Dialect = "sharegpt" // {"conversations":[{"from","value"}]}
	DialectOpenAI   Dialect = "openai"   // {"messages":[{"role","content",…}]}
)

// ImageTokens is the flat token estimate for one image content part (the
// cost OpenAI bills for a low-detail image). Image parts are never dropped;
// they are counted with this estimate in [Turn.Extra].
const ImageTokens = 85

// Schema says how to read records: the dialect and, for datasets that
// rename them, the field names. The zero Schema detects the dialect and
// uses each dialect's standard names.
type Schema struct {
	Dialect    Dialect
	TurnsKey   string // "conversations" (sharegpt) or "messages" (openai)
	RoleKey    string // "from" or "role"
	ContentKey string // "value" or "content"
}

// Validate reports an unknown dialect.
func (s Schema) Validate() error {
	switch s.Dialect {
	case DialectAuto, DialectShareGPT, DialectOpenAI:
		return nil
	}
	return fmt.Errorf("unknown format %q (want sharegpt or openai)", s.Dialect)
}

func (s Schema) keys(d Dialect) (turns, role, content string) {
	turns, role, content = "conversations", "from", "value"
	if d == DialectOpenAI {
		turns, role, content = "messages", "role", "content"
	}
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

// Pos is where a record came from: a file and the 1-based line (JSONL) or
// row (Parquet, Arrow) in it.
type Pos struct {
	File string
	Line int64
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// DecodeError says why a line is not a usable trajectory. Reason is a short
// stable code used in metrics and the rejects file.
type DecodeError struct {
	Pos    Pos
	Reason string // invalid_json, not_an_object, no_turns, turns_not_a_list, bad_turn, unknown_shape
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

	raw      []byte
	members  []member
	turnsIdx int // index in members of the turns array
	objEnd   int // index of the closing brace
	keySep   string
	valSep   string // between members and array elements
	roleKey  string
	contKey  string
}

// Raw returns the bytes the record was decoded from. The caller must not
// modify them.
func (r *Record) Raw() []byte { return r.raw }

// Decode parses one JSON object as a trajectory. line is retained by the
// record, and its turns' Raw and Text share its memory (texts without
// escapes are not copied), so the caller must never modify or reuse it.
// Any error is a *[DecodeError].
func Decode(line []byte, pos Pos, s Schema) (*Record, error) {
	fail := func(reason, format string, a ...any) error {
		return &DecodeError{Pos: pos, Reason: reason, Detail: fmt.Sprintf(format, a...)}
	}
	// Validation also lists the turns of the arrays that may hold them.
	var cand [2]string
	list := cand[:0]
	for _, d := range []Dialect{DialectShareGPT, DialectOpenAI} {
		if s.Dialect == DialectAuto || s.Dialect == d {
			k, _, _ := s.keys(d)
			list = append(list, k)
		}
	}
	ms, end, ok := validMembers(line, list)
	if !ok {
		if valid(line) {
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
	turnsKey, roleKey, contKey := s.keys(r.Dialect)
	r.roleKey, r.contKey = roleKey, contKey
	for i, m := range ms {
		if keyIs(m.key, turnsKey) {
			r.turnsIdx = i
		}
	}
	if r.turnsIdx < 0 {
		return nil, fail("no_turns", "no %q field", turnsKey)
	}
	tv := ms[r.turnsIdx]
	if line[tv.start] != '[' {
		return nil, fail("turns_not_a_list", "%q is a %s", turnsKey, kindOf(line[tv.start:tv.end]))
	}
	r.keySep, r.valSep = ": ", ", "
	if len(ms) > 0 {
		r.keySep = string(line[ms[0].keyStart+len(ms[0].key) : ms[0].start])
	}
	if len(ms) > 1 {
		r.valSep = string(line[ms[0].end:ms[1].keyStart])
	}
	// The turns and their members were listed while validating.
	hasSystem := false
	r.Turns = make([]Turn, 0, len(tv.elems))
	for i, el := range tv.elems {
		t, err := r.decodeTurn(line, el)
		if err != nil {
			return nil, fail("bad_turn", "%s[%d]: %v", turnsKey, i, err)
		}
		if i == 1 {
			r.valSep = string(line[tv.elems[0].end:el.start])
		}
		hasSystem = hasSystem || t.Role == RoleSystem
		r.Turns = append(r.Turns, t)
	}
	for i := range ms {
		ms[i].elems = nil // the record keeps its members, not its turns' lists
	}
	if !hasSystem {
		for _, k := range []string{"system_prompt", "system"} {
			if m, ok := find(ms, k); ok && line[m.start] == '"' {
				r.System, _ = unquote(line[m.start:m.end])
				r.SystemKey = k
				break
			}
		}
	}
	return r, nil
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
func detect(line []byte, ms []member, s Schema) Dialect {
	for _, d := range []Dialect{DialectShareGPT, DialectOpenAI} {
		turnsKey, roleKey, _ := s.keys(d)
		m, ok := find(ms, turnsKey)
		if !ok || line[m.start] != '[' {
			continue
		}
		if len(m.elems) == 0 {
			return d
		}
		if first := m.elems[0]; first.object {
			if _, ok := find(first.members, roleKey); ok {
				return d
			}
		}
	}
	return DialectAuto
}

var shareGPTRoles = map[string]Role{
	"system": RoleSystem, "human": RoleUser, "user": RoleUser,
	"gpt": RoleAssistant, "assistant": RoleAssistant, "function_call": RoleAssistant,
	"tool": RoleTool, "observation": RoleTool,
}

var openAIRoles = map[string]Role{
	"system": RoleSystem, "developer": RoleSystem, "user": RoleUser,
	"assistant": RoleAssistant, "tool": RoleTool, "function": RoleTool,
}

// decodeTurn decodes the turn el of line (its members' offsets are into
// line).
func (r *Record) decodeTurn(line []byte, el elem) (Turn, error) {
	if !el.object {
		return Turn{}, fmt.Errorf("turn is a %s, not an object", kindOf(line[el.start:el.end]))
	}
	ms := el.members
	b := line[:el.end] // offsets stay valid; the turn is b[el.start:]
	t := Turn{Raw: b[el.start:el.end:el.end]}
	if m, ok := find(ms, r.roleKey); ok {
		if b[m.start] != '"' {
			return Turn{}, fmt.Errorf("%q is a %s, not a string", r.roleKey, kindOf(b[m.start:m.end]))
		}
		t.Name, _ = unquote(b[m.start:m.end])
	}
	roles := shareGPTRoles
	if r.Dialect == DialectOpenAI {
		roles = openAIRoles
	}
	if role, ok := roles[t.Name]; ok {
		t.Role = role
	} else {
		t.Role = Role(t.Name)
	}
	var text joiner
	if m, ok := find(ms, r.contKey); ok {
		t.content = [2]int{m.start - el.start, m.end - el.start}
		v := b[m.start:m.end]
		switch v[0] {
		case '"':
			t.contentKind = 's'
			s, _ := unquote(v)
			text.add(s)
		case 'n':
			t.contentKind = 'n'
		case '[':
			if r.Dialect != DialectOpenAI {
				return Turn{}, fmt.Errorf("%q is a list, not a string", r.contKey)
			}
			t.contentKind = 'l'
			if err := partsText(v, &text, &t.Extra); err != nil {
				return Turn{}, err
			}
		default:
			return Turn{}, fmt.Errorf("%q is a %s, not a string", r.contKey, kindOf(v))
		}
	}
	if r.Dialect == DialectOpenAI {
		openAIExtras(b, ms, &t, &text)
	}
	t.Text = text.String()
	return t, nil
}

// partsText collects the text of a list of content parts. Text parts carry
// "text" (OpenAI) or "value" (some LLaMA-Factory exports); image parts are
// counted as [ImageTokens] each.
func partsText(v []byte, text *joiner, extra *int) error {
	for i, el := range elements(v, 0) {
		pm, _, err := members(v[:el[1]], el[0])
		if err != nil {
			return fmt.Errorf("content part %d is a %s, not an object", i, kindOf(v[el[0]:el[1]]))
		}
		typ := ""
		if m, ok := find(pm, "type"); ok && v[m.start] == '"' {
			typ, _ = unquote(v[m.start:m.end])
		}
		if strings.Contains(typ, "image") {
			*extra += ImageTokens
			continue
		}
		for _, k := range []string{"text", "value"} {
			if m, ok := find(pm, k); ok && v[m.start] == '"' {
				s, _ := unquote(v[m.start:m.end])
				text.add(s)
				break
			}
		}
	}
	return nil
}

// openAIExtras reads what else an OpenAI message carries that costs tokens
// or pairs tools: reasoning, tool calls with their ids and arguments, and
// the id a tool message answers.
func openAIExtras(b []byte, ms []member, t *Turn, text *joiner) {
	add := func(s string) {
		if s != "" {
			text.add(s)
		}
	}
	for _, k := range []string{"reasoning_content", "reasoning"} {
		if m, ok := find(ms, k); ok && b[m.start] == '"' {
			s, _ := unquote(b[m.start:m.end])
			add(s)
		}
	}
	if m, ok := find(ms, "tool_call_id"); ok && b[m.start] == '"' {
		t.AnswersID, _ = unquote(b[m.start:m.end])
	}
	m, ok := find(ms, "tool_calls")
	if !ok || b[m.start] != '[' {
		return
	}
	for _, el := range elements(b, m.start) {
		cm, _, err := members(b[:el[1]], el[0])
		if err != nil {
			continue
		}
		if idm, ok := find(cm, "id"); ok && b[idm.start] == '"' {
			id, _ := unquote(b[idm.start:idm.end])
			t.CallIDs = append(t.CallIDs, id)
		}
		fm, ok := find(cm, "function")
		if !ok || b[fm.start] != '{' {
			continue
		}
		fms, _, _ := members(b[:fm.end], fm.start)
		if nm, ok := find(fms, "name"); ok && b[nm.start] == '"' {
			s, _ := unquote(b[nm.start:nm.end])
			add(s)
		}
		if am, ok := find(fms, "arguments"); ok {
			if b[am.start] == '"' {
				s, _ := unquote(b[am.start:am.end])
				add(s)
			} else {
				add(string(b[am.start:am.end]))
			}
		}
	}
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
