package report

import (
	"fmt"
	"math"
	"strconv"
)

// The charts are inline SVG drawn here: vector (crisp in print and PDF),
// no script, colours from presentation attributes that the page's CSS
// overrides for dark mode (so they still show where a viewer blocks
// inline CSS), and every figure also in a table under the chart.

// chart is a drawn SVG chart; numbers are pre-formatted.
type chart struct {
	ID, Label  string // element id and aria-label
	Kind       string // "hist" or "bars"
	W, H       int
	Rects      []rect
	Texts      []text
	Lines      []line
	PlotBottom string
}

type rect struct {
	X, Y, W, H  string
	Class, Fill string
	Title       string
	DataSeries  string // data-series of a histogram bar
	DataLow     string
	DataCount   string
	DataOutcome string
}

type text struct {
	X, Y, Anchor, Class, Text string
}

type line struct {
	X1, Y1, X2, Y2 string
	Class, Stroke  string
	Dash           bool
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// series of a length chart.
type series struct {
	Name, Class, Fill string
}

// mark is a vertical line on a length chart (the target).
type mark struct {
	At    int64
	Label string
	Class string
}

const (
	hcW, hcH                         = 720, 290
	hcLeft, hcRight, hcTop, hcBottom = 58, 16, 30, 48
)

// histChart draws bins (one bar per series in each bin) on a log-scaled
// x axis with the marks as dashed vertical lines.
func histChart(id, label string, bins []displayBin, ser []series, marks []mark) *chart {
	c := &chart{ID: id, Kind: "hist", Label: label, W: hcW, H: hcH}
	pw, ph := float64(hcW-hcLeft-hcRight), float64(hcH-hcTop-hcBottom)
	x0, x1 := log2(bins[0].Low), log2(bins[len(bins)-1].High)
	X := func(v int64) float64 { return hcLeft + (log2(v)-x0)/(x1-x0)*pw }
	var ymax int64 = 1
	for _, b := range bins {
		for _, n := range b.Counts {
			ymax = max(ymax, n)
		}
	}
	step := niceStep(float64(ymax) / 4)
	top := math.Ceil(float64(ymax)/step) * step
	Y := func(n float64) float64 { return hcTop + ph - n/top*ph }
	bottom := f1(hcTop + ph)
	c.PlotBottom = bottom
	for v := 0.0; v <= top+step/2; v += step {
		y := f1(Y(v))
		c.Lines = append(c.Lines, line{X1: f1(hcLeft), X2: f1(hcLeft + pw), Y1: y, Y2: y, Class: "grid", Stroke: "#d0d4da"})
		c.Texts = append(c.Texts, text{X: f1(hcLeft - 6), Y: f1(Y(v) + 4), Anchor: "end", Class: "tick", Text: short(int64(v))})
	}
	for _, t := range xTicks(bins[0].Low, bins[len(bins)-1].High) {
		x := f1(X(t))
		c.Lines = append(c.Lines, line{X1: x, X2: x, Y1: bottom, Y2: f1(hcTop + ph + 5), Class: "axis", Stroke: "#6b7280"})
		c.Texts = append(c.Texts, text{X: x, Y: f1(hcTop + ph + 18), Anchor: "middle", Class: "tick", Text: short(t)})
	}
	c.Lines = append(c.Lines, line{X1: f1(hcLeft), X2: f1(hcLeft + pw), Y1: bottom, Y2: bottom, Class: "axis", Stroke: "#6b7280"})
	c.Texts = append(c.Texts,
		text{X: f1(hcLeft + pw/2), Y: f1(hcH - 8), Anchor: "middle", Class: "axis-title", Text: "tokens per record (log scale)"},
		text{X: "14", Y: f1(hcTop - 12), Anchor: "start", Class: "axis-title", Text: "records"})
	n := float64(len(ser))
	for _, b := range bins {
		left, right := X(b.Low), X(b.High)
		w := (right - left - 1) / n
		for s, cnt := range b.Counts {
			if cnt == 0 {
				continue
			}
			y := Y(float64(cnt))
			c.Rects = append(c.Rects, rect{
				X: f1(left + 0.5 + float64(s)*w), Y: f1(y), W: f1(max(w, 0.5)), H: f1(hcTop + ph - y),
				Class: ser[s].Class, Fill: ser[s].Fill,
				Title:      fmt.Sprintf("%s: %s records of %s tokens", ser[s].Name, comma(cnt), span(b.Low, b.High)),
				DataSeries: ser[s].Name, DataLow: strconv.FormatInt(b.Low, 10), DataCount: strconv.FormatInt(cnt, 10),
			})
		}
	}
	for i, m := range marks {
		if m.At <= 0 {
			continue
		}
		x := X(m.At)
		c.Lines = append(c.Lines, line{X1: f1(x), X2: f1(x), Y1: f1(hcTop - 4), Y2: bottom, Class: m.Class, Stroke: "#c0392b", Dash: true})
		anchor, dx := "start", 4.0
		if x > hcLeft+pw*0.7 {
			anchor, dx = "end", -4
		}
		c.Texts = append(c.Texts, text{X: f1(x + dx), Y: f1(hcTop - 8 - float64(i)*0), Anchor: anchor, Class: m.Class + "-label", Text: m.Label})
	}
	return c
}

// barRow is one bar of a bar chart: a count and its share of a total.
type barRow struct {
	Label, Key, Class, Fill string
	Indent                  bool
	Count                   int64
	N                       string // Count with thousands separators
	Share                   string // "73.0%"
}

const (
	bcW, bcRow, bcLabel, bcBar = 600, 26, 175, 300
)

// barChart draws rows as horizontal bars scaled to total.
func barChart(id, label string, rows []barRow, total int64) *chart {
	c := &chart{ID: id, Kind: "bars", Label: label, W: bcW, H: len(rows)*bcRow + 8}
	for i, r := range rows {
		y := float64(i*bcRow + 4)
		lx := 0.0
		if r.Indent {
			lx = 18
		}
		c.Texts = append(c.Texts, text{X: f1(lx), Y: f1(y + 17), Anchor: "start", Class: "bar-label", Text: r.Label})
		w := 0.0
		if total > 0 {
			w = float64(r.Count) / float64(total) * bcBar
		}
		c.Rects = append(c.Rects, rect{X: f1(bcLabel), Y: f1(y + 3), W: f1(bcBar), H: f1(bcRow - 8), Class: "track", Fill: "#eef0f3"})
		if r.Count > 0 {
			c.Rects = append(c.Rects, rect{X: f1(bcLabel), Y: f1(y + 3), W: f1(max(w, 1)), H: f1(bcRow - 8), Class: r.Class, Fill: r.Fill,
				Title: fmt.Sprintf("%s: %s records (%s)", r.Label, r.N, r.Share), DataOutcome: r.Key, DataCount: strconv.FormatInt(r.Count, 10)})
		}
		c.Texts = append(c.Texts, text{X: f1(bcLabel + bcBar + 8), Y: f1(y + 17), Anchor: "start", Class: "bar-value", Text: r.N + " · " + r.Share})
	}
	return c
}

// niceStep returns the smallest of 1, 2, 5 × 10^k at least v (1 at least).
func niceStep(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// xTicks returns the 1-2-5 values in [lo, hi], or only the powers of ten
// when there would be more than nine.
func xTicks(lo, hi int64) []int64 {
	var all, tens []int64
	for p := int64(1); p <= hi && p > 0; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if v := m * p; v >= max(lo, 1) && v <= hi {
				all = append(all, v)
				if m == 1 {
					tens = append(tens, v)
				}
			}
		}
	}
	if len(all) > 9 {
		return tens
	}
	return all
}

// short formats a count for an axis: 950, 1.5k, 20k, 1.2M.
func short(v int64) string {
	switch {
	case v >= 1_000_000:
		return trimZero(float64(v)/1e6) + "M"
	case v >= 1000:
		return trimZero(float64(v)/1e3) + "k"
	}
	return strconv.FormatInt(v, 10)
}

func trimZero(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
