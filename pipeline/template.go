package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

// templateState is what the templated counts of one record share: its
// counter (Options.Counting.Template with the record's image finder), the
// counts of its renderings' stretches between special tokens (they share
// most of them), and the run's stop once a render stopped for it (the record
// is then not settled). Written by templated only.
type templateState struct {
	counter   trainview.RecordCounter
	stretches *trainview.Stretches
	stopped   error
}

// templated is the count of turns (with system outside them and fields
// written with them: an images list the prepass or the summary changed) of
// r's record as the trainer sees it: Options.Counting.Template. When the
// template renders no images (its Images is nil), each image of turns counts
// the rule's tokens on top of the rendered text (Turn.Extra, and the images
// list entries no marker claims: r.img.listed), as without a template.
func (c *Compressor) templated(r *record, turns []traj.Turn, system string, fields []traj.Field) (int, error) {
	bp, _ := viewBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	v, err := c.mapper.ViewBuf(*bp, r.rec, turns, system)
	if err != nil {
		viewBufs.Put(bp)
		return 0, fmt.Errorf("%s: %w", c.opts.Counting.Template.Name(), err)
	}
	if key, list := prepass.ImagesField(r.rec); list != nil {
		for _, f := range fields {
			if f.Key == key {
				v.Images = f.Value
			}
		}
	}
	if r.tmpl.stretches == nil {
		r.tmpl.stretches = &trainview.Stretches{}
	}
	tc := c.templateCounter(r)
	ctx := r.in.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	n, err := tc.CountContext(ctx, v, r.tmpl.stretches)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		r.tmpl.stopped = err // the run is stopping: not the template's refusal
	}
	// Nothing of the view outlives the count (the rendered text and the
	// stretches are copies; a template's error message is cloned), so its
	// buffer is reused by the next record's.
	*bp = v.Messages[:0]
	viewBufs.Put(bp)
	if err != nil || countsImages(tc) || r.img.images == nil {
		return n, err
	}
	for _, t := range turns {
		n += t.Extra
	}
	return n + r.img.listed + c.imageDrift(r, turns, fields), nil
}

// templateCounter is Options.Counting.Template for r's record: when it
// expands images, its Images reads them with r's finder (relative paths name
// files beside the record's input file).
func (c *Compressor) templateCounter(r *record) trainview.RecordCounter {
	if r.tmpl.counter != nil {
		return r.tmpl.counter
	}
	r.tmpl.counter = c.opts.Counting.Template
	if t, ok := r.tmpl.counter.(*trainview.Counter); ok {
		if im := t.Images; im != nil && im.Finder == nil && r.in.pos.File != "" {
			tc, ic := *t, *im
			ic.Finder = c.finder(r)
			tc.Images = &ic
			r.tmpl.counter = &tc
		}
	}
	return r.tmpl.counter
}

// countsImages says whether rc counts the images it renders itself (a
// *trainview.Counter with Images).
func countsImages(rc trainview.RecordCounter) bool {
	t, ok := rc.(*trainview.Counter)
	return ok && t.Images != nil
}

// viewBufs holds the buffers templated builds the views' messages in: a
// record's are about its size, so reusing them spares allocating and
// clearing that much memory per rendering. sync.Pool drops them at GCs.
var viewBufs sync.Pool
