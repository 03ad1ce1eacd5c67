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
	cfg = cfg.withDefaults()
	var rep Report
	lo, hi = max(lo, 0), min(hi, len(turns))
	if fits(0) {
		rep.Fits = true
		return turns, rep
	}
	if lo >= hi {
		return turns, rep
	}
	out := turns
	copied := false
	saved := 0
	// apply replaces turn i by nt when that saves tokens, counting n
	// changes, and reports whether the record now fits.
	apply := func(step Step, i int, nt traj.Turn, n int) bool {
		d := cfg.Counter.Count(out[i].Text) - cfg.Counter.Count(nt.Text)
		if d <= 0 {
			return false
		}
		if !copied {
			out = append([]traj.Turn(nil), turns...)
			copied = true
		}
		out[i] = nt
		saved += d
		rep.Saved[step] += d
		rep.Changes[step] += n
		rep.Fits = fits(saved)
		return rep.Fits
	}

	// 0. Old images, when asked for: every change is made (the image is
	// old, whatever the count sees of it).
	if cfg.DropOldImages || cfg.ImagesOnly {
		dropped, done := dropImages(rec, out, lo, hi, cfg, func(i int, nt traj.Turn, n int) bool {
			d := cfg.Counter.Count(out[i].Text) + out[i].Extra - cfg.Counter.Count(nt.Text) - nt.Extra
			if !copied {
				out = append([]traj.Turn(nil), turns...)
				copied = true
			}
			out[i] = nt
			saved += d
			rep.ImagesRemoved += n
			rep.ImageTokensSaved += d
			rep.Fits = fits(saved)
			return rep.Fits
		})
		rep.ImagesDropped = dropped
		if done || cfg.ImagesOnly {
			return out, rep
		}
	}

	// 1. Duplicates: the newest copy of each body stays whole.
	results := model(rec, out)
	newest := map[string]int{}
	for _, r := range results {
		if strings.TrimSpace(r.body) != "" {
			newest[r.body] = r.turn
		}
	}
	for _, r := range results {
		if r.turn < lo || r.turn >= hi {
			continue
		}
		n, ok := newest[r.body]
		if !ok || n == r.turn {
			continue
		}
		if apply(Duplicates, r.turn, replaceResult(rec, out[r.turn], r, BackRef(n)), 1) {
			return out, rep
		}
	}

	// 2. Digests, oldest first (the results in turn order).
	results = model(rec, out)
	for _, r := range results {
		if r.turn < lo || r.turn >= hi || strings.HasPrefix(r.body, "[same output as turn ") {
			continue
		}
		if tokenize.CountAtMost(cfg.Counter, r.body, cfg.DigestOver+1) <= cfg.DigestOver {
			continue
		}
		args := ""
		if r.call != nil {
			args = r.call.args
		}
		d := digest(r.name, args, r.body)
		if apply(Digests, r.turn, replaceResult(rec, out[r.turn], r, d), 1) {
			return out, rep
		}
	}

	// 3. Oversized arguments, oldest first.
	for i := lo; i < hi; i++ {
		t := out[i]
		if t.Role != traj.RoleAssistant && t.Name != "function_call" {
			continue
		}
		cs := calls(rec, t, i)
		shrunk := 0
		lastBlock := -1
		for k := len(cs) - 1; k >= 0; k-- { // from the last, so earlier spans stay valid
			c := cs[k]
			if c.block >= 0 && c.block == lastBlock {
				continue // a block holding a list of calls is shrunk once
			}
			if tokenize.CountAtMost(cfg.Counter, c.args, cfg.ArgsOver+1) <= cfg.ArgsOver {
				continue
			}
			lastBlock = c.block
			nt, ok := shrinkCall(rec, t, c, cfg.LeafKeep)
			if !ok {
				continue
			}
			t = nt
			shrunk++
		}
		if shrunk > 0 && apply(Arguments, i, t, shrunk) {
			return out, rep
		}
	}
	return out, rep
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
