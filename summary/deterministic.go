package summary

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/traj/errline"
)

// Deterministic summarises a region offline by extraction: what the user
// asked, which tools were called with which key arguments (paths, commands,
// queries, URLs), and what came back, errors first; when the region held
// images (Request.Images), how many and their sizes, on the line after the
// head: "Images: 4 (1024x768 png ×3, size unknown ×1)", sizes in order of
// first sight (an earlier summary's line is folded into it). Every quoted piece is
// copied from the turns, so the summary is in their language; nothing is
// translated or invented. The same request always gives the same bytes, and
// the text never exceeds Request.TargetTokens under Request.Counter (under
// Counter when the request brings none); the prefix alone is always kept.
type Deterministic struct {
	Counter tokenize.Counter
}

// Summarize implements [Summarizer]. It never fails. It sets
// Result.Tokens when the request brings a Counter.
func (d Deterministic) Summarize(_ context.Context, req Request) (Result, error) {
	c := d.Counter
	if req.Counter != nil {
		c = req.Counter
	}
	text, n := build(c, req)
	res := Result{Text: text}
	if req.Counter != nil {
		res.Tokens = n
	}
	return res, nil
}

// withoutThink drops <think>…</think> blocks.
func withoutThink(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}

// keyArgs are argument names worth quoting, most telling first.
var keyArgs = []string{"command", "cmd", "path", "file_path", "filepath", "file", "filename", "query", "q",
	"url", "pattern", "search", "code", "directory", "dir", "name", "id", "city", "location"}

type call struct{ name, args string }

// piece is one line of the summary with its priority (lower first).
type piece struct {
	prio int
	seq  int
	text string
}

// build returns the summary and its count under counter (0 when unknown).
//
// What the summary keeps, most telling first when the budget runs out:
// the images held and the tools used (one line each), what the user
// asked, errors, each distinct call with its key arguments (a call
// repeated as it was made before says only so), results, what the
// assistant said. Then, if budget is left, the paths and commands of the
// calls whose lines did not fit (so a region's files and commands survive
// even when its calls are too many to quote one by one).
func build(counter tokenize.Counter, req Request) (string, int) {
	g := newGather()
	for i, t := range req.Turns {
		g.turn(req.Start+i, t)
	}
	end := req.Start + len(req.Turns)
	head := fmt.Sprintf("%s %d turns (%d–%d) condensed.", Prefix, len(req.Turns), req.Start, end-1)
	if g.ncalls > 0 || g.nerrors > 0 {
		head += fmt.Sprintf(" %d tool calls, %d errors.", g.ncalls, g.nerrors)
	}
	pieces := g.withToolsLine()
	if line := g.imagesLine(req.Images); line != "" {
		// First after the head, kept before any turn's line.
		pieces = append(pieces, piece{prio: 0, seq: -2, text: line})
	}
	if len(g.earlierNamed) > 0 {
		g.callArgs[-1] = g.earlierNamed // named before the calls of this region
	}
	return fit(counter, head, pieces, g.callArgs, req.TargetTokens)
}

// gather collects the pieces of a summary from the region's turns, in turn
// order (see build).
type gather struct {
	pieces       []piece
	ncalls       int
	nerrors      int
	seen         map[string]int   // result or error text → first turn
	seenCall     map[string]int   // call line → first turn
	toolNames    []string         // in order of first use
	toolCount    map[string]int   // calls per tool
	callArgs     map[int][]string // piece seq → the paths and commands it names
	earlierNamed []string         // from earlier summaries' "Also named:" lines
	imageSizes   []string         // image sizes ("1024x768 png", "size unknown"), in order of first sight
	imageCount   map[string]int   // images per size
}

func newGather() *gather {
	g := &gather{seen: map[string]int{}, seenCall: map[string]int{}, toolCount: map[string]int{}, callArgs: map[int][]string{},
		imageCount: map[string]int{}}
	g.add(0, "") // the tools line, filled in by withToolsLine
	return g
}

// add adds a piece. A quoted "<image>" marker is written "[image]": the
// summary takes the place of the region's markers, and a marker left in
// its text would pair with an entry of the record's images list
// (LLaMA-Factory) that is no longer there.
func (g *gather) add(prio int, text string) {
	if strings.Contains(text, imagetok.Marker) {
		text = strings.ReplaceAll(text, imagetok.Marker, "[image]")
	}
	g.pieces = append(g.pieces, piece{prio, len(g.pieces), text})
}

// useTool counts n calls of the tool name, noting its first use.
func (g *gather) useTool(name string, n int) {
	if _, ok := g.toolCount[name]; !ok {
		g.toolNames = append(g.toolNames, name)
	}
	g.toolCount[name] += n
}

// useImages counts n images of the given size, noting its first sight.
func (g *gather) useImages(size string, n int) {
	if _, ok := g.imageCount[size]; !ok {
		g.imageSizes = append(g.imageSizes, size)
	}
	g.imageCount[size] += n
}

// imagesLine is the line saying how many images the region held and their
// sizes, "Images: 4 (1024x768 png ×3, size unknown ×1)" (sizes in order of
// first sight, an earlier summary's first); "" when it held none.
func (g *gather) imagesLine(ims []imagetok.Image) string {
	for _, im := range ims {
		size := "size unknown"
		if im.Known() && im.Format != "" {
			size = fmt.Sprintf("%dx%d %s", im.Width, im.Height, im.Format)
		}
		g.useImages(size, 1)
	}
	if len(g.imageSizes) == 0 {
		return ""
	}
	total := 0
	var b strings.Builder
	for k, size := range g.imageSizes {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", size, g.imageCount[size])
		total += g.imageCount[size]
	}
	return fmt.Sprintf("Images: %d (%s)", total, b.String())
}

// turn adds the pieces of turn t, at index idx of the record.
func (g *gather) turn(idx int, t traj.Turn) {
	switch {
	case IsSummary(t.Text):
		g.earlierSummary(t)
	case t.Role == traj.RoleUser:
		if s := clip(t.Text, 240); s != "" {
			g.add(1, fmt.Sprintf("[%d user] %s", idx, s))
		}
	case t.Role == traj.RoleTool:
		g.toolTurn(idx, t)
	case t.Role == traj.RoleAssistant || t.Name == "function_call":
		g.callTurn(idx, t)
	default:
		if s := clip(t.Text, 120); s != "" {
			g.add(6, fmt.Sprintf("[%d %s] %s", idx, t.Name, s))
		}
	}
}

// earlierSummary carries the lines of a summary we wrote before (our own
// output compressed again) into this one, never quoting it whole.
func (g *gather) earlierSummary(t traj.Turn) {
	for _, l := range fold(SummaryBody(t.Text)) {
		switch {
		case l.tools != nil:
			for _, tc := range l.tools {
				g.useTool(tc.name, tc.n)
			}
		case l.named != nil:
			g.earlierNamed = append(g.earlierNamed, l.named...)
		case l.images != nil:
			for _, s := range l.images {
				g.useImages(s.name, s.n)
			}
		default:
			g.add(l.prio, l.text)
		}
	}
}

// toolTurn adds a tool turn's results and errors. Agents re-read the same
// file and re-run the same command: a text seen before says so instead of
// quoting it again.
func (g *gather) toolTurn(idx int, t traj.Turn) {
	for _, r := range toolResults(t) {
		kind, prio, body := "result", 4, clip2(r.name, r.text, 100)
		if line, ok := r.errorLine(); ok {
			g.nerrors++
			kind, prio, body = "error", 2, clip(line, 200)
		}
		if first, ok := g.seen[body]; ok {
			g.add(prio+2, fmt.Sprintf("[%d %s] same as turn %d", idx, kind, first))
			continue
		}
		g.seen[body] = idx
		g.add(prio, fmt.Sprintf("[%d %s] %s", idx, kind, body))
	}
}

// callTurn adds an assistant turn's calls (a call made before says only
// so), or what the assistant said when it made none.
func (g *gather) callTurn(idx int, t traj.Turn) {
	calls := rawCalls(t)
	for _, rc := range calls {
		g.ncalls++
		c := call{"call", clip(rc.body, 100)}
		if rc.body == "" {
			c = call{rc.name, argsSummary(rc.args)}
			g.useTool(c.name, 1)
		}
		sig := c.name + "(" + c.args + ")"
		if first, ok := g.seenCall[sig]; ok {
			g.add(6, fmt.Sprintf("[%d call] same as turn %d", idx, first))
			continue
		}
		g.seenCall[sig] = idx
		g.add(3, fmt.Sprintf("[%d call] %s", idx, sig))
		g.callArgs[len(g.pieces)-1] = namedArgs(rc.args)
	}
	if len(calls) == 0 && t.Role == traj.RoleAssistant {
		if s := clip(withoutThink(t.Text), 160); s != "" {
			g.add(5, fmt.Sprintf("[%d assistant] %s", idx, s))
		}
	}
}

// withToolsLine returns the pieces with the tools line filled in (every
// tool, with its count), or without it when no tool was called.
func (g *gather) withToolsLine() []piece {
	if len(g.toolNames) == 0 {
		return g.pieces[1:]
	}
	var b strings.Builder
	b.WriteString("Tools:")
	for k, name := range g.toolNames {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s ×%d", name, g.toolCount[name])
	}
	g.pieces[0].text = b.String()
	return g.pieces
}

// fit keeps the most telling pieces that fit the budget, then prints them
// in turn order after head. Up to half the budget is kept back for the
// paths and commands of the calls whose lines do not fit (alsoNamed).
func fit(counter tokenize.Counter, head string, pieces []piece, callArgs map[int][]string, budget int) (string, int) {
	sort.SliceStable(pieces, func(i, j int) bool { return pieces[i].prio < pieces[j].prio })
	used := counter.Count(head) + min(namesCost(counter, callArgs, budget/2), budget/2)
	var kept, dropped []piece
	for _, p := range pieces {
		// Most pieces do not fit once the budget is nearly spent: counting
		// stops as soon as one is known not to (the decision is the same).
		c := tokenize.CountAtMost(counter, p.text, budget-used-1) + 1
		if used+c > budget {
			dropped = append(dropped, p)
			continue
		}
		used += c
		kept = append(kept, p)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].seq < kept[j].seq })
	used -= min(namesCost(counter, callArgs, budget/2), budget/2)
	if also := alsoNamed(counter, kept, dropped, callArgs, budget-used-1); also != "" {
		kept = append(kept, piece{text: also})
	}
	for {
		var b strings.Builder
		b.WriteString(head)
		for _, p := range kept {
			b.WriteByte('\n')
			b.WriteString(p.text)
		}
		text := b.String()
		if len(kept) == 0 {
			return clipTokens(counter, text, budget), 0
		}
		// Per-piece counts bound the total closely but not exactly: verify.
		if n := counter.Count(text); n <= budget {
			return text, n
		}
		kept = kept[:len(kept)-1]
	}
}

// namesCost is the tokens of a line naming every path and command of the
// calls, counted up to limit.
func namesCost(counter tokenize.Counter, callArgs map[int][]string, limit int) int {
	if len(callArgs) == 0 {
		return 0
	}
	seqs := make([]int, 0, len(callArgs))
	for k := range callArgs {
		seqs = append(seqs, k)
	}
	sort.Ints(seqs)
	var b strings.Builder
	b.WriteString("Also named:")
	done := map[string]bool{}
	for _, k := range seqs {
		for _, v := range callArgs[k] {
			if v != "" && !done[v] {
				done[v] = true
				b.WriteString(" " + v + ";")
			}
		}
	}
	if len(done) == 0 {
		return 0
	}
	return tokenize.CountAtMost(counter, b.String(), limit+1) + 1
}

// alsoNamed is the line naming the paths and commands of the dropped call
// pieces that no kept piece names, as many as fit in budget tokens, in
// turn order; "" when none does.
func alsoNamed(counter tokenize.Counter, kept, dropped []piece, callArgs map[int][]string, budget int) string {
	var keptText strings.Builder
	for _, p := range kept {
		keptText.WriteString(p.text)
		keptText.WriteByte('\n')
	}
	have := collapse(keptText.String())
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].seq < dropped[j].seq })
	if v := callArgs[-1]; v != nil { // an earlier summary's, first
		dropped = append([]piece{{seq: -1}}, dropped...)
	}
	const lead = "Also named:"
	line := lead
	done := map[string]bool{}
	for _, p := range dropped {
		for _, v := range callArgs[p.seq] {
			if v == "" || done[v] || strings.Contains(have, v) {
				continue
			}
			done[v] = true
			next := line + " " + v + ";"
			if tokenize.CountAtMost(counter, next, budget+1) > budget {
				continue
			}
			line = next
		}
	}
	if line == lead {
		return ""
	}
	return line
}

// foldedLine is one line of an earlier summary, as build carries it: a
// piece of the given priority, or the tools or names it lists.
type foldedLine struct {
	prio   int
	text   string
	tools  []toolUse
	named  []string
	images []toolUse // an "Images:" line: per size, its count
}

type toolUse struct {
	name string
	n    int
}

var (
	headLine  = regexp.MustCompile(`^\d+ turns \(\d+–\d+\) condensed\.`)
	turnLine  = regexp.MustCompile(`^\[(?:\d+|earlier) ([^\]\s]+)\] (.*)$`)
	toolsLine = regexp.MustCompile(`^Tools:((?: [^ ,]+ ×\d+,?)+)$`)
	imgsLine  = regexp.MustCompile(`^Images: \d+ \(([^()]+ ×\d+(?:, [^()]+ ×\d+)*)\)$`)
)

// fold reads the body of an earlier summary (ours: [Deterministic]'s
// lines, or an LLM's handoff note) into the lines build carries over: its
// head line is dropped (the new one replaces it), "Tools:" and "Also
// named:" lines are merged into the new ones, "[12 call] …" lines become
// "[earlier call] …" pieces of their kind's priority (turn numbers of the
// record before it was compressed mean nothing now; "same as turn" lines
// are dropped), and any other line (an LLM's handoff sections) is kept as
// a piece as telling as what the user asked.
func fold(body string) []foldedLine {
	prios := map[string]int{"user": 1, "error": 2, "call": 3, "result": 4, "assistant": 5}
	var out []foldedLine
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || headLine.MatchString(l):
		case toolsLine.MatchString(l):
			var tools []toolUse
			for _, part := range strings.Split(strings.TrimPrefix(l, "Tools:"), ",") {
				name, count, ok := strings.Cut(strings.TrimSpace(part), " ×")
				if n, err := strconv.Atoi(count); ok && err == nil {
					tools = append(tools, toolUse{name, n})
				}
			}
			out = append(out, foldedLine{tools: tools})
		case imgsLine.MatchString(l):
			var sizes []toolUse
			for _, part := range strings.Split(imgsLine.FindStringSubmatch(l)[1], ", ") {
				size, count, _ := strings.Cut(part, " ×")
				if n, err := strconv.Atoi(count); err == nil {
					sizes = append(sizes, toolUse{size, n})
				}
			}
			out = append(out, foldedLine{images: sizes})
		case strings.HasPrefix(l, "Also named:"):
			var named []string
			for _, v := range strings.Split(strings.TrimPrefix(l, "Also named:"), ";") {
				if v = strings.TrimSpace(v); v != "" {
					named = append(named, v)
				}
			}
			out = append(out, foldedLine{named: named})
		default:
			m := turnLine.FindStringSubmatch(l)
			if m == nil {
				out = append(out, foldedLine{prio: 1, text: clip(l, 240)})
				continue
			}
			if strings.HasPrefix(m[2], "same as turn ") {
				continue
			}
			prio, ok := prios[m[1]]
			if !ok {
				prio = 6
			}
			out = append(out, foldedLine{prio: prio, text: "[earlier " + m[1] + "] " + m[2]})
		}
	}
	return out
}

// clipTokens shortens text (keeping the prefix) until it fits budget.
func clipTokens(c tokenize.Counter, text string, budget int) string {
	for c.Count(text) > budget && len(text) > len(Prefix) {
		cut := max(len(Prefix), len(text)*9/10)
		for cut > len(Prefix) && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return text
}

// rawCall is one tool call of an assistant turn as the summary quotes
// it: its name and arguments' JSON text ([traj.Call]), or the body of a
// <tool_call> block that holds no call (body set).
type rawCall struct {
	name, args string
	body       string
}

// rawCalls lists the calls of an assistant turn as [traj.Turn.Calls]
// reads them, with, in their place, the body of each call block that
// holds none (quoted as it is).
func rawCalls(t traj.Turn) []rawCall {
	cs := t.Calls()
	var out []rawCall
	if len(cs) > 0 && cs[0].Block < 0 { // OpenAI tool_calls entries
		out = make([]rawCall, len(cs))
		for i, c := range cs {
			out[i] = rawCall{name: c.Name, args: c.Args}
		}
		return out
	}
	j := 0
	for k, b := range t.CallBlocks() {
		n := j
		for ; j < len(cs) && cs[j].Block == k; j++ {
			out = append(out, rawCall{name: cs[j].Name, args: cs[j].Args})
		}
		if j == n {
			out = append(out, rawCall{body: t.Text[b.Start:b.End]})
		}
	}
	return out
}

// argsSummary renders the telling arguments of a call, args (their JSON
// text, a string's already decoded: [traj.Call].Args), as k=v pairs.
func argsSummary(args string) string {
	raw := json.RawMessage(unsafe.Slice(unsafe.StringData(args), len(args))) // read only
	// The usual case, without decoding every argument (some are whole
	// files): an object with one of keyArgs. Values read as decoding the
	// object into a map would give them (the last of repeated keys; a
	// string as clip reads it, with any invalid UTF-8 byte as U+FFFD).
	// A number beyond float64 makes the map decoding fail (and the
	// arguments are then quoted whole), so such objects take that path.
	if vals, ok := jsonx.Fields(raw, keyArgs...); ok && jsonx.NumbersFitFloat64(raw) {
		var parts []string
		for i, k := range keyArgs {
			if v := vals[i]; v != nil {
				parts = append(parts, k+"="+clip(rawScalar(v), 100))
			}
			if len(parts) == 2 {
				break
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, ", ")
		}
	}
	return argsByMap(raw)
}

// argsByMap is argsSummary's general path: decode the arguments into a
// map (the fast path above must say exactly what this says).
func argsByMap(raw json.RawMessage) string {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return clip(string(raw), 80)
	}
	var parts []string
	for _, k := range keyArgs {
		if v, ok := args[k]; ok {
			parts = append(parts, k+"="+clip(scalar(v), 100))
		}
		if len(parts) == 2 {
			break
		}
	}
	if len(parts) == 0 {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(parts) == 2 {
				break
			}
			parts = append(parts, k+"="+clip(scalar(args[k]), 60))
		}
	}
	return strings.Join(parts, ", ")
}

// rawScalar is scalar of the value raw JSON v decodes to.
func rawScalar(v []byte) string {
	if v[0] == '"' {
		if s, ok := jsonx.Unquote(v); ok {
			return s
		}
	}
	var x any
	_ = json.Unmarshal(v, &x) // a value that is not JSON leaves x nil, which scalar renders as it always has
	return scalar(x)
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// result is one tool result as the summary quotes it: "name: text" when
// the response names its tool, else text. The two parts are kept apart so
// that a long output is never copied just to put its tool's name in front.
type result struct{ name, text string }

// String returns the whole result; used for short results only.
func (r result) String() string {
	if r.name == "" {
		return r.text
	}
	return r.name + ": " + r.text
}

// toolResults lists a tool turn's results as [traj.Turn.Results] reads
// them: a Hermes response by its name and content, anything else as it
// is.
func toolResults(t traj.Turn) []result {
	rs := t.Results()
	out := make([]result, len(rs))
	for i, r := range rs {
		out[i] = result{name: r.Name, text: r.Content}
	}
	return out
}

// errorLine is [errline.Find] of r.String(), copying at most the
// windows.
func (r result) errorLine() (string, bool) {
	if r.name == "" || len(r.text) <= 2*errline.Window {
		return errline.Find(r.String())
	}
	prefix := r.name + ": "
	head := prefix + r.text[:max(0, errline.Window-len(prefix))]
	if l, ok := errline.First(head[:errline.Window]); ok {
		return l, true
	}
	return errline.First(r.text[len(r.text)-errline.Window:])
}

// clip collapses white space and keeps at most n runes, marking the cut.
// It reads only as much of s as it keeps.
func clip(s string, n int) string {
	c := clipper{n: n}
	c.add(s)
	return c.b.String()
}

// clip2 is clip of name + ": " + text (just text when name is empty),
// without joining them first.
func clip2(name, text string, n int) string {
	c := clipper{n: n}
	if name != "" {
		c.add(name)
		c.add(": ")
	}
	c.add(text)
	return c.b.String()
}

// clipper is clip's state, so that clip can read a text in pieces.
type clipper struct {
	b            strings.Builder
	n, runes     int
	space, ended bool
}

func (c *clipper) add(s string) {
	for _, r := range s {
		if c.ended {
			return
		}
		if unicode.IsSpace(r) {
			c.space = c.b.Len() > 0
			continue
		}
		if c.runes == c.n {
			c.b.WriteString("…")
			c.ended = true
			return
		}
		if c.space {
			c.b.WriteByte(' ')
			c.runes++
			c.space = false
			if c.runes == c.n {
				c.b.WriteString("…")
				c.ended = true
				return
			}
		}
		c.b.WriteRune(r)
		c.runes++
	}
}
