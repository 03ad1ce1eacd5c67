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

// templated is the count of turns (with system outside them and fields
// written with them: an images list the prepass or the summary changed) of
// j's record as the trainer sees it: Options.Template. When the template
// renders no images (its Images is nil), each image of turns counts the
// rule's tokens on top of the rendered text (Turn.Extra, and the images
// list entries no marker claims: j.listed), as without a template.
func (c *Compressor) templated(j *job, turns []traj.Turn, system string, fields []traj.Field) (int, error) {
	bp, _ := viewBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	v, err := c.mapper.ViewBuf(*bp, j.rec, turns, system)
	if err != nil {
		viewBufs.Put(bp)
		return 0, fmt.Errorf("%s: %w", c.opts.Template.Name(), err)
	}
	if key, list := prepass.ImagesField(j.rec); list != nil {
		for _, f := range fields {
			if f.Key == key {
				v.Images = f.Value
			}
		}
	}
	if j.stretches == nil {
		j.stretches = &trainview.Stretches{}
	}
	tc := c.templateCounter(j)
	ctx := j.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	n, err := tc.CountContext(ctx, v, j.stretches)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		j.stopped = err // the run is stopping: not the template's refusal
	}
	// Nothing of the view outlives the count (the rendered text and the
	// stretches are copies; a template's error message is cloned), so its
	// buffer is reused by the next record's.
	*bp = v.Messages[:0]
	viewBufs.Put(bp)
	if err != nil || countsImages(tc) || j.images == nil {
		return n, err
	}
	for _, t := range turns {
		n += t.Extra
	}
	return n + j.listed + c.imageDrift(j, turns, fields), nil
}

// templateCounter is Options.Template for j's record: when it expands
// images, its Images reads them with j's finder (relative paths name
// files beside the record's input file).
func (c *Compressor) templateCounter(j *job) trainview.RecordCounter {
	if j.tmpl != nil {
		return j.tmpl
	}
	j.tmpl = c.opts.Template
	if t, ok := j.tmpl.(*trainview.Counter); ok {
		if im := t.Images; im != nil && im.Finder == nil && j.pos.File != "" {
			tc, ic := *t, *im
			ic.Finder = c.finder(j)
			tc.Images = &ic
			j.tmpl = &tc
		}
	}
	return j.tmpl
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
