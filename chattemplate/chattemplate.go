package chattemplate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// Template is a model's chat template ready to render. A tokenizer_config.json
// may hold several named templates; Render picks one per call as transformers
// does. A Template is safe for concurrent use once loaded.
type Template struct {
	// Path is the file the template came from, for messages.
	Path string
	// Special holds the special tokens the template sees as variables
	// (bos_token, eos_token, …), as transformers passes its special tokens map.
	Special map[string]string
	// Now is the clock strftime_now reads; nil means time.Now.
	Now func() time.Time
	// Hash is the SHA-256 (hex) of the file Load read; "" for Parse and
	// ParseConfig.
	Hash string
	// Budget bounds each render (see [Budget]); its zero fields are sized
	// from the record.
	Budget Budget

	single   *jinja.Template
	named    map[string]*jinja.Template
	sources  map[string]string
	fallback string
}

// specialTokenKeys are the attributes transformers puts in the template's
// context when the tokenizer has them (SPECIAL_TOKENS_ATTRIBUTES, without
// additional_special_tokens which no template of ours reads).
var specialTokenKeys = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}

// Load reads a chat template: a .jinja file (its special tokens taken from a
// tokenizer_config.json in the same directory, if there is one), or a
// tokenizer_config.json whose chat_template is a string or a list of
// {name, template} objects.
func Load(path string) (*Template, error) { return LoadFor(path, "") }

// LoadFor is Load for the template of a tokenizer in directory dir: a .jinja
// without a tokenizer_config.json beside it takes its special tokens from
// dir's tokenizer_config.json ("" or a directory without one: none).
func LoadFor(path, dir string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if strings.HasSuffix(path, ".json") {
		t, err := ParseConfig(path, data)
		if t != nil {
			t.Hash = hash
		}
		return t, err
	}
	special := map[string]string{}
	cfgPath := filepath.Join(filepath.Dir(path), "tokenizer_config.json")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil && dir != "" {
		cfgPath = filepath.Join(dir, "tokenizer_config.json")
		cfg, err = os.ReadFile(cfgPath)
	}
	if err == nil {
		if special, err = specialTokens(cfgPath, cfg); err != nil {
			return nil, err
		}
	}
	t, err := Parse(path, string(data), special)
	if t != nil {
		t.Hash = hash
	}
	return t, err
}

// Parse compiles one template source; name is used in messages.
func Parse(name, source string, special map[string]string) (*Template, error) {
	t, err := jinja.Compile(renameToJSON(source))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Template{Path: name, Special: special, single: t, sources: map[string]string{"": source}}, nil
}

// ParseConfig reads the chat template and special tokens of a
// tokenizer_config.json's contents; name is used in messages.
func ParseConfig(name string, data []byte) (*Template, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	special, err := specialTokens(name, data)
	if err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(cfg.ChatTemplate)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, fmt.Errorf("%s: no chat_template", name)
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: chat_template: %w", name, err)
		}
		return Parse(name, s, special)
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%s: chat_template is neither a string nor a list of {name, template}: %w", name, err)
	}
	t := &Template{Path: name, Special: special, named: map[string]*jinja.Template{}, sources: map[string]string{}}
	for _, e := range list {
		c, err := jinja.Compile(renameToJSON(e.Template))
		if err != nil {
			return nil, fmt.Errorf("%s: chat_template %q: %w", name, e.Name, err)
		}
		t.named[e.Name] = c
		t.sources[e.Name] = e.Template
	}
	if _, ok := t.named["default"]; !ok {
		names := make([]string, 0, len(list))
		for _, e := range list {
			names = append(names, e.Name)
		}
		t.fallback = strings.Join(names, ", ")
	}
	return t, nil
}

// SpecialTokens reads the special tokens (bos_token, eos_token, …) of
// directory dir's tokenizer_config.json, which a template given as text
// sees as variables; a directory without one has none.
func SpecialTokens(dir string) (map[string]string, error) {
	p := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(p)
	if err != nil {
		if os.IsNotExist(err) || dir == "" {
			return map[string]string{}, nil
		}
		return nil, err
	}
	return specialTokens(p, data)
}

func specialTokens(name string, data []byte) (map[string]string, error) {
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := map[string]string{}
	for _, k := range specialTokenKeys {
		raw, ok := cfg[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			// An AddedToken object: {"content": "...", ...}.
			var tok struct {
				Content string `json:"content"`
			}
			if json.Unmarshal(raw, &tok) != nil {
				continue
			}
			s = tok.Content
		}
		if s != "" {
			out[k] = s
		}
	}
	return out, nil
}

// Source returns the template text Render uses for a record with or without
// tools.
func (t *Template) Source(hasTools bool) string {
	if t.single != nil {
		return t.sources[""]
	}
	if hasTools {
		if s, ok := t.sources["tool_use"]; ok {
			return s
		}
	}
	return t.sources["default"]
}

// ErrTemplate wraps the message of a template that refused its input
// (raise_exception) or failed while rendering.
var ErrTemplate = errors.New("chat template")

// Render renders messages (a JSON array of message objects) and tools (a JSON
// array of tool schemas, or empty/null for none) as transformers'
// apply_chat_template(messages, tools=tools, tokenize=False,
// add_generation_prompt=False) does. JSON object keys keep their order and
// numbers their integer or float kind, as Python's json module would give
// them to the template.
func (t *Template) Render(messages, tools json.RawMessage) (string, error) {
	return t.render(context.Background(), messages, tools, false)
}

// RenderContext is Render stopped when ctx is done: it then returns ctx's
// error, not an ErrTemplate.
func (t *Template) RenderContext(ctx context.Context, messages, tools json.RawMessage) (string, error) {
	return t.render(ctx, messages, tools, false)
}

// RenderValid is Render for messages and tools known to be valid JSON (as
// json.Valid says; package trainview builds them so): they are not
// validated again, which is a tenth of a render's time on long records,
// and their strings are not copied: they must not change during the call
// (nothing of them is kept after it).
func (t *Template) RenderValid(messages, tools json.RawMessage) (string, error) {
	return t.render(context.Background(), messages, tools, true)
}

// RenderValidContext is RenderValid stopped when ctx is done, as
// RenderContext.
func (t *Template) RenderValidContext(ctx context.Context, messages, tools json.RawMessage) (string, error) {
	return t.render(ctx, messages, tools, true)
}

// render renders as Render; with shared, as RenderValid.
func (t *Template) render(ctx context.Context, messages, tools json.RawMessage, shared bool) (string, error) {
	var forms *rawForms
	decode := FromJSON
	if shared {
		forms = getForms(len(messages) + len(tools))
		defer forms.release()
		decode = func(data []byte) (jinja.Value, error) { return fromValidJSONShared(data, forms) }
	}
	msgs, err := decode(messages)
	if err != nil {
		return "", fmt.Errorf("messages: %w", err)
	}
	tl := jinja.None()
	hasTools := false
	if len(bytes.TrimSpace(tools)) > 0 {
		if tl, err = decode(tools); err != nil {
			return "", fmt.Errorf("tools: %w", err)
		}
		hasTools = !tl.IsNone()
	}
	tmpl := t.single
	if tmpl == nil {
		var ok bool
		if hasTools {
			tmpl, ok = t.named["tool_use"]
		}
		if !ok {
			if tmpl, ok = t.named["default"]; !ok {
				return "", fmt.Errorf("%s: several chat templates and none named default (%s)", t.Path, t.fallback)
			}
		}
	}
	data := make(map[string]jinja.Value, len(t.Special)+8)
	for k, v := range t.Special {
		data[k] = jinja.NewString(v)
	}
	data["messages"] = msgs
	data["tools"] = tl
	data["documents"] = jinja.None()
	data["add_generation_prompt"] = jinja.NewBool(false)
	data["strftime_now"] = jinja.NewCallable("strftime_now", t.strftimeNow)
	data["raise_exception"] = jinja.NewCallable("raise_exception", raiseException)
	toJSON := jinja.NewCallable("tojson", toJSONWith(forms))
	data[hfToJSON] = toJSON
	// map('tojson') names the filter by a string, which the renaming of
	// the tags does not reach.
	data[jinja.FilterOverride("tojson")] = toJSON
	// The output is about the size of the JSON it renders (less its
	// quoting, plus the framing): room for that spares the builder's
	// doubling copies.
	in := len(messages) + len(tools)
	lim := t.Budget.limits(ctx, in)
	if budgetUsed != nil {
		var u jinja.Usage
		lim.Used = &u
		defer func() { budgetUsed(in, u) }()
	}
	return renderValues(t.Path, tmpl, data, in+512, lim)
}

// renderValues renders tmpl with data, with room for size bytes of output.
// A panic of the engine (a bug of third_party/jinja on some input) becomes
// an ErrTemplate naming the template, as any other failure of it: the
// record is reported as one the template cannot render, and the run goes
// on.
func renderValues(path string, tmpl *jinja.Template, data map[string]jinja.Value, size int, lim jinja.Limits) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: %s: template engine failure: %v", ErrTemplate, path, r)
		}
	}()
	out, err = tmpl.RenderLimits(data, size, lim)
	if err != nil {
		if lim.Ctx != nil && lim.Ctx.Err() != nil && errors.Is(err, lim.Ctx.Err()) {
			return "", err // the run is stopping: not the record's fault
		}
		return "", fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	return out, nil
}

func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("raise_exception called without a message")
	}
	// A copy: the message may be a string of the input (RenderValid shares
	// its memory), and the error outlives the call.
	return jinja.Undefined(), errors.New(strings.Clone(str(args[0])))
}

// str is Python's str() of a value as a template prints it.
func str(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}

func (t *Template) strftimeNow(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 1 || !args[0].IsString() {
		return jinja.Undefined(), errors.New("strftime_now takes one format string")
	}
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	s, err := strftime(now, args[0].AsString())
	if err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(s), nil
}

// strftime formats like Python's datetime.strftime in the C locale, for the
// directives chat templates use.
func strftime(t time.Time, f string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'B':
			b.WriteString(t.Month().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			fmt.Fprintf(&b, "%02d", h)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("strftime_now: unsupported directive %%%c", f[i])
		}
	}
	return b.String(), nil
}
