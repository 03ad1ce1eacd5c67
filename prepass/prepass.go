package prepass

import (
	"fmt"
	"strings"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// Config sets the prepass's thresholds. Zero values take the defaults.
type Config struct {
	// Counter counts tokens (required): a change is made only when it
	// saves tokens, and savings are reported under it.
	Counter tokenize.Counter
	// DigestOver: a tool result of more tokens than this is digested
	// (step 2). Default 400.
	DigestOver int
	// ArgsOver: a tool call whose arguments have more tokens than this is
	// shrunk (step 3). Default 400.
	ArgsOver int
	// LeafKeep: a shrunk string leaf keeps this many characters. Default
	// 300.
	LeafKeep int
	// DropOldImages runs the image step first (compression.drop_old_images,
	// and part of compression.prepass): see the package doc.
	DropOldImages bool
	// ImagesOnly runs the image step alone (compression.drop_old_images
	// without compression.prepass).
	ImagesOnly bool
	// Finder finds the images and reads their sizes (its Dir is the
	// dataset file's directory, for relative image paths); nil is the zero
	// Finder.
	Finder *imagetok.Finder
}

func (c Config) withDefaults() Config {
	if c.DigestOver <= 0 {
		c.DigestOver = 400
	}
	if c.ArgsOver <= 0 {
		c.ArgsOver = 400
	}
	if c.LeafKeep <= 0 {
		c.LeafKeep = 300
	}
	return c
}

// Step is one of the prepass's steps, in the order they run.
type Step int

// The steps, in the order they run; NumSteps counts them.
const (
	Duplicates Step = iota // identical tool results → back-references
	Digests                // large tool results → one-line digests
	Arguments              // oversized tool-call arguments → shrunk JSON
	NumSteps
)

func (s Step) String() string {
	switch s {
	case Duplicates:
		return "duplicates"
	case Digests:
		return "digests"
	case Arguments:
		return "arguments"
	}
	return fmt.Sprintf("Step(%d)", int(s))
}

// Report says what the prepass did to one record.
type Report struct {
	Saved   [NumSteps]int // tokens saved by each step
	Changes [NumSteps]int // results or calls changed by each step
	// Fits is true when Fits said the record fits, before or after some
	// step (with Saved all zero and no image removed, it fitted before the
	// prepass).
	Fits bool
	// ImagesRemoved counts the images the image step replaced by text, and
	// ImageTokensSaved the tokens that saved (the turns' Text under
	// Counter plus their traj.Turn.Extra, before less after: an image the
	// count does not see saves nothing, and its text then costs a few).
	ImagesRemoved, ImageTokensSaved int
	// ImagesDropped are the entries of the record's images list
	// ([ImagesField]) whose "<image>" markers the image step removed, in
	// ascending order: the list is to be written without them
	// ([ImagesListWithout]). nil when no marker was removed.
	ImagesDropped []int
}

// Changed reports whether the prepass changed the record.
func (r Report) Changed() bool { return r.Total() != 0 || r.ImagesRemoved > 0 }

// Total is the tokens saved by the three text steps (Saved; the image
// step's are ImageTokensSaved).
func (r Report) Total() int {
	t := 0
	for _, s := range r.Saved {
		t += s
	}
	return t
}

// BackRef is the text that replaces an older copy of a tool result.
func BackRef(turn int) string {
	return fmt.Sprintf("[same output as turn %d]", turn)
}

// Apply runs the prepass on turns[lo:hi], the compressible middle of rec
// (turns is rec's current turn list; the turns outside [lo, hi) are read,
// for later copies of a result, never changed). fits(saved) reports
// whether the record fits once saved tokens are gone; it is asked first,
// and again after each change. Apply returns the turns (a new slice when
// something changed, turns itself otherwise; always the same length) and
// its report.
func Apply(rec *traj.Record, turns []traj.Turn, lo, hi int, fits func(saved int) bool, cfg Config) ([]traj.Turn, Report) {
	a := &applier{rec: rec, turns: turns, out: turns, fits: fits, cfg: cfg.withDefaults()}
	lo, hi = max(lo, 0), min(hi, len(turns))
	if fits(0) {
		a.rep.Fits = true
		return turns, a.rep
	}
	if lo >= hi {
		return turns, a.rep
	}
	// 0. Old images, when asked for: every change is made (the image is
	// old, whatever the count sees of it).
	if a.cfg.DropOldImages || a.cfg.ImagesOnly {
		dropped, done := dropImages(rec, a.out, lo, hi, a.cfg, a.dropped)
		a.rep.ImagesDropped = dropped
		if done || a.cfg.ImagesOnly {
			return a.out, a.rep
		}
	}
	a.images = imageTurns(rec, a.out)
	_ = a.duplicates(lo, hi) || a.digests(lo, hi) || a.arguments(lo, hi)
	return a.out, a.rep
}

// imageTurns are the turns of turns (rec's) that hold an image (a part of
// a content list, or an "<image>" marker when rec has an images list):
// the text steps leave them alone, so that no image, and no marker paired
// with the images list, is removed or changed by them. nil when none.
func imageTurns(rec *traj.Record, turns []traj.Turn) map[int]bool {
	_, list := ImagesField(rec)
	ims, _ := FindImages(&imagetok.Finder{NoSize: true}, turns, list)
	var out map[int]bool
	for _, im := range ims {
		if im.Turn >= 0 {
			if out == nil {
				out = map[int]bool{}
			}
			out[im.Turn] = true
		}
	}
	return out
}

// applier carries one Apply: the turns as given, the turns as changed so
// far (copied on the first change), the tokens saved and the report.
type applier struct {
	rec    *traj.Record
	turns  []traj.Turn
	out    []traj.Turn
	copied bool
	saved  int
	fits   func(saved int) bool
	cfg    Config
	rep    Report
	images map[int]bool // turns holding an image: no text step changes them
	// results is the model of out as the duplicates step read it; the
	// digests step reads it again only when that step changed a turn.
	results []*result
}

// set puts nt in place of turn i (copying the turns on the first change),
// adds d to the tokens saved and reports whether the record now fits.
func (a *applier) set(i int, nt traj.Turn, d int) bool {
	if !a.copied {
		a.out = append([]traj.Turn(nil), a.turns...)
		a.copied = true
	}
	a.out[i] = nt
	a.saved += d
	a.rep.Fits = a.fits(a.saved)
	return a.rep.Fits
}

// apply replaces turn i by nt when that saves tokens, counting n changes
// of step, and reports whether the record now fits.
func (a *applier) apply(step Step, i int, nt traj.Turn, n int) bool {
	d := a.cfg.Counter.Count(a.out[i].Text) - a.cfg.Counter.Count(nt.Text)
	if d <= 0 {
		return false
	}
	a.rep.Saved[step] += d
	a.rep.Changes[step] += n
	return a.set(i, nt, d)
}

// dropped puts turn i, its n old images replaced by text, in place: every
// such change is made, whatever the count sees of it.
func (a *applier) dropped(i int, nt traj.Turn, n int) bool {
	d := a.cfg.Counter.Count(a.out[i].Text) + a.out[i].Extra - a.cfg.Counter.Count(nt.Text) - nt.Extra
	a.rep.ImagesRemoved += n
	a.rep.ImageTokensSaved += d
	return a.set(i, nt, d)
}

// duplicates is step 1: the newest copy of each body stays whole, older
// copies in [lo, hi) become a back reference. It reports whether the
// record now fits.
func (a *applier) duplicates(lo, hi int) bool {
	results := model(a.rec, a.out)
	a.results = results
	newest := map[string]int{}
	for _, r := range results {
		if strings.TrimSpace(r.body) != "" {
			newest[r.body] = r.turn
		}
	}
	for _, r := range results {
		if r.turn < lo || r.turn >= hi || a.images[r.turn] {
			continue
		}
		n, ok := newest[r.body]
		if !ok || n == r.turn {
			continue
		}
		if a.apply(Duplicates, r.turn, replaceResult(a.rec, a.out[r.turn], r, BackRef(n)), 1) {
			return true
		}
	}
	return false
}

// digests is step 2: long results in [lo, hi) become one-line digests,
// oldest first (the results in turn order). It reports whether the record
// now fits.
func (a *applier) digests(lo, hi int) bool {
	results := a.results
	if a.rep.Changes[Duplicates] > 0 {
		results = model(a.rec, a.out)
	}
	for _, r := range results {
		if r.turn < lo || r.turn >= hi || a.images[r.turn] || strings.HasPrefix(r.body, "[same output as turn ") {
			continue
		}
		if tokenize.CountAtMost(a.cfg.Counter, r.body, a.cfg.DigestOver+1) <= a.cfg.DigestOver {
			continue
		}
		args := ""
		if r.call != nil {
			args = r.call.args
		}
		d := digest(r.name, args, r.body)
		if a.apply(Digests, r.turn, replaceResult(a.rec, a.out[r.turn], r, d), 1) {
			return true
		}
	}
	return false
}

// arguments is step 3: oversized tool-call arguments in [lo, hi) are
// shrunk, oldest turn first. It reports whether the record now fits.
func (a *applier) arguments(lo, hi int) bool {
	for i := lo; i < hi; i++ {
		t := a.out[i]
		if t.Role != traj.RoleAssistant && t.Name != "function_call" || a.images[i] {
			continue
		}
		if nt, shrunk := a.shrinkTurn(t, i); shrunk > 0 && a.apply(Arguments, i, nt, shrunk) {
			return true
		}
	}
	return false
}

// shrinkTurn returns turn t (index i) with its oversized calls' arguments
// shrunk, and how many it shrank.
func (a *applier) shrinkTurn(t traj.Turn, i int) (traj.Turn, int) {
	cs := calls(a.rec, t, i)
	shrunk := 0
	lastBlock := -1
	for k := len(cs) - 1; k >= 0; k-- { // from the last, so earlier spans stay valid
		c := cs[k]
		if c.block >= 0 && c.block == lastBlock {
			continue // a block holding a list of calls is shrunk once
		}
		if tokenize.CountAtMost(a.cfg.Counter, c.args, a.cfg.ArgsOver+1) <= a.cfg.ArgsOver {
			continue
		}
		lastBlock = c.block
		nt, ok := shrinkCall(a.rec, t, c, a.cfg.LeafKeep)
		if !ok {
			continue
		}
		t = nt
		shrunk++
	}
	return t, shrunk
}

// shrinkCall returns t with call c's arguments shrunk.
func shrinkCall(rec *traj.Record, t traj.Turn, c *call, keep int) (traj.Turn, bool) {
	if c.entry >= 0 {
		args := rec.CallArguments(t)
		if c.entry >= len(args) || args[c.entry] == nil {
			return t, false
		}
		raw := args[c.entry]
		small, changed, ok := shrinkJSON(c.args, keep)
		if !ok || !changed {
			return t, false
		}
		value := []byte(small)
		if raw[0] == '"' { // arguments as a JSON-encoded string, as read
			value = jsonx.AppendString(nil, small)
		}
		return rec.SetCallArguments(t, c.entry, value)
	}
	bs := t.CallBlocks()
	if c.block >= len(bs) {
		return t, false
	}
	b := bs[c.block]
	small, changed, ok := shrinkJSON(t.Text[b.Start:b.End], keep)
	if !ok || !changed {
		return t, false
	}
	return rec.SetContent(t, t.Text[:b.Start]+small+t.Text[b.End:]), true
}
