package trainview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
)

// RecordCounter counts a record's view as one trainer does before it
// compares the row with its length limit: [Counter] (transformers'
// apply_chat_template, which axolotl and TRL call), or a trainer's own
// renderer (LLaMA-Factory's templates).
type RecordCounter interface {
	// CountCached counts v, looking the stretches of its rendered text up
	// in cache (nil: none); an error is the renderer's refusal of v.
	CountCached(v View, cache *Stretches) (int, error)
	// CountContext is CountCached stopped when ctx is done: it then
	// returns ctx's error, not a refusal of v.
	CountContext(ctx context.Context, v View, cache *Stretches) (int, error)
	// SetClock sets the time the rendering reads (a chat template's
	// strftime_now, LLaMA-Factory's llama3 tool prompt date): a run's
	// records render with the time recorded when the run began, whatever
	// day a task runs.
	SetClock(now func() time.Time)
	// Name is what counts, for messages: a template's path, or a trainer
	// and its template.
	Name() string
	// Hash identifies the rendering (the template's, the trainer's
	// settings), so that a run resumed with another one is refused.
	Hash() string
}

// SetClock sets the template's strftime_now clock.
func (c *Counter) SetClock(now func() time.Time) { c.Template.Now = now }

// Name is the template's path.
func (c *Counter) Name() string { return c.Template.Path }

// Hash is the template's SHA-256 (as written in the run's manifest), and
// "+args" when tool-call arguments are parsed first, and a hash of
// axolotl's role mapping when it is not the default.
func (c *Counter) Hash() string {
	h := c.Template.Hash
	if c.ParseArguments {
		h += "+args"
	}
	if r := c.Axolotl; r != nil && (r.DropSystemMessage || r.SplitThinking || !maps.Equal(r.Roles, axolotl.DefaultRoles)) {
		b, _ := json.Marshal(struct {
			R map[string]string
			D bool
			S bool `json:",omitempty"` // split_thinking (absent when off: the hashes before it stay)
		}{r.Roles, r.DropSystemMessage, r.SplitThinking})
		sum := sha256.Sum256(b)
		h += "+axolotl:" + hex.EncodeToString(sum[:8])
	}
	return h
}

// ReadsAsAxolotl says whether rc counts rows as axolotl reads them (a
// [Counter] with axolotl's rules): its views are then built with
// [Mapper.Axolotl].
func ReadsAsAxolotl(rc RecordCounter) bool {
	c, ok := rc.(*Counter)
	return ok && c != nil && c.Axolotl != nil
}

// ErrArguments is a tool call's arguments string that is not JSON, which a
// trainer parsing them (axolotl) refuses.
var ErrArguments = errors.New("tool call arguments are not JSON")

// errNotJSON is a string parseFunctionStrings finds not to hold JSON.
var errNotJSON = errors.New("not JSON")

// parseFunctionStrings appends to out b from last up to each
// function.<key> member of the objects of the list at b[list] that is a
// string holding JSON, then the JSON it holds in its place; it returns out
// and the offset in b where the rest begins. A string that does not hold
// JSON is an error wrapping errNotJSON, with the string (the splices
// before it are kept; callers discard out then).
func parseFunctionStrings(b []byte, list int, key string, out []byte, last int) ([]byte, int, error) {
	for _, c := range jsonx.Elements(b, list) {
		if b[c[0]] != '{' {
			continue
		}
		cms, _, err := jsonx.Members(b, c[0])
		if err != nil {
			return out, last, err
		}
		f, ok := jsonx.Find(cms, "function")
		if !ok || b[f.Start] != '{' {
			continue
		}
		fms, _, err := jsonx.Members(b, f.Start)
		if err != nil {
			return out, last, err
		}
		a, ok := jsonx.Find(fms, key)
		if !ok || b[a.Start] != '"' {
			continue
		}
		s, _ := jsonx.Unquote(b[a.Start:a.End])
		if !jsonx.Valid([]byte(s)) {
			return out, last, fmt.Errorf("%w: %.80q", errNotJSON, s)
		}
		out = append(out, b[last:a.Start]...)
		out = append(out, s...)
		last = a.End
	}
	return out, last, nil
}

// ParseArguments returns messages with every tool call's arguments given as
// a JSON string replaced by the value it holds, as axolotl does before
// templating (src/axolotl/prompt_strategies/chat_template.py,
// transform_message: json.loads of tool_calls[].function.arguments when a
// str, at commit 067b021c): a template then prints them as an object
// (Qwen3's tojson) instead of a quoted string. Members keep their order
// (json.loads keeps it). An arguments string that is not JSON is an error
// (axolotl raises). messages is a valid JSON list; it is returned as it is
// when nothing changes.
func ParseArguments(messages []byte) ([]byte, error) {
	var out []byte
	last := 0
	for _, m := range jsonx.Elements(messages, jsonx.SkipSpace(messages, 0)) {
		if messages[m[0]] != '{' {
			continue
		}
		ms, _, err := jsonx.Members(messages, m[0])
		if err != nil {
			return nil, err
		}
		tc, ok := jsonx.Find(ms, "tool_calls")
		if !ok || messages[tc.Start] != '[' {
			continue
		}
		if out, last, err = parseFunctionStrings(messages, tc.Start, "arguments", out, last); err != nil {
			if errors.Is(err, errNotJSON) {
				return nil, fmt.Errorf("%w: %s", ErrArguments, strings.TrimPrefix(err.Error(), errNotJSON.Error()+": "))
			}
			return nil, err
		}
	}
	if out == nil {
		return messages, nil
	}
	return append(out, messages[last:]...), nil
}
