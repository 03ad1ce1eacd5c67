package imagetok

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A Rule counts the tokens a model spends on an image: [Flat], [OpenAI],
// the Qwen2-VL family's ([Qwen.Rule]), or one a caller defines. Rules are
// values: comparable, safe for concurrent use, and the nil Rule is "not
// chosen" (callers default it). A new model family's rule is a type with
// these three methods, a [Loader] in [Loaders] when it is read from a
// model's preprocessor_config.json, and, when its chat templates write an
// image placeholder its processor expands, a [Placeholder] it returns as a
// [Processor] (docs/architecture.md, "A new image rule").
type Rule interface {
	// Tokens is what the rule counts for im. exact is false when im's
	// size was unknown (or refused by the model's processor) and Unknown
	// was counted instead; a rule whose count does not depend on the size
	// is always exact.
	Tokens(im Image) (n int, exact bool)
	// Unknown is what the rule counts for an image whose size could not
	// be read from its header (a link, a file id, a missing or
	// undecodable file) or that the model's processor refuses. By
	// default it is the most the rule can count for one image, so that a
	// record is never reported as fitting because an image could not be
	// read ([WithUnknown] changes it).
	Unknown() int
	// String names the rule as the metrics and the run directory record
	// it ("flat:85", "openai", "qwen(…)"): two rules that count alike
	// have the same name.
	String() string
}

// A Processor is a Rule that is a model family's own image processor: its
// chat templates write [Processor.Placeholder] for each image, and the
// processor expands it to the image's tokens. Package trainview counts a
// templated record with it exactly; under a rule that is not the
// template's family's processor, it counts each placeholder as the rule's
// tokens.
type Processor interface {
	Rule
	Placeholder() Placeholder
}

// A Placeholder is how a model family's chat templates write an image into
// the text and its processor expands it: the template writes Start Token
// End for each image part it renders (and a LLaMA-Factory "<image>"
// marker is replaced by the same before rendering, as LLaMA-Factory's
// multimodal plugins do); the processor replaces the n-th Token by the
// n-th image's tokens less Wrap (the tokens of Start and End), so that
// Start, the expansion and End together are the rule's count of the
// image.
type Placeholder struct {
	Family     string // the model family, for messages: "Qwen2-VL"
	Token      string // the token the processor expands: "<|image_pad|>"
	Start, End string // written around Token: "<|vision_start|>", "<|vision_end|>"
	Wrap       int    // tokens of Start and End together: 2
}

// Marker is what a LLaMA-Factory "<image>" marker becomes before the
// template renders the text: Start Token End.
func (p Placeholder) Marker() string { return p.Start + p.Token + p.End }

// QwenPlaceholder is the Qwen2-VL family's placeholder (Qwen2-VL,
// Qwen2.5-VL, Qwen3-VL templates and transformers' Qwen2VLProcessor and
// its kin): <|vision_start|><|image_pad|><|vision_end|>, the pad expanded
// to grid_t·grid_h·grid_w / merge_size² copies of itself.
func QwenPlaceholder() Placeholder {
	return Placeholder{Family: "Qwen2-VL", Token: "<|image_pad|>", Start: "<|vision_start|>", End: "<|vision_end|>", Wrap: 2}
}

// Placeholders are the placeholders package trainview recognises in a
// chat template's source, in the order it looks for them.
func Placeholders() []Placeholder { return []Placeholder{QwenPlaceholder()} }

// flatRule counts every image as n tokens.
type flatRule struct{ n int }

// Flat is the rule that counts every image as n tokens, whatever its size
// (the old behaviour: n = 85, OpenAI's low-detail cost). An image of
// unknown size counts n too, and is exact.
func Flat(n int) Rule { return flatRule{n} }

func (r flatRule) Tokens(Image) (int, bool) { return r.n, true }
func (r flatRule) Unknown() int             { return r.n }
func (r flatRule) String() string           { return "flat:" + strconv.Itoa(r.n) }

// openAIRule is OpenAI's tile rule.
type openAIRule struct{}

// OpenAI is the rule of OpenAI's vision models on the tiktoken encodings
// (GPT-4o, GPT-4.1, o-series): see [OpenAITokens]. An image whose detail
// is "low" costs 85 whatever its size; one of unknown size at high or auto
// detail counts as [OpenAIMaxHigh], the most any image can cost there.
func OpenAI() Rule { return openAIRule{} }

func (openAIRule) Tokens(im Image) (int, bool) {
	if strings.EqualFold(im.Detail, "low") {
		return OpenAILow, true
	}
	if !im.Known() {
		return OpenAIMaxHigh, false
	}
	return OpenAITokens(im.Width, im.Height, im.Detail), true
}
func (openAIRule) Unknown() int   { return OpenAIMaxHigh }
func (openAIRule) String() string { return "openai" }

// unknownAs is a rule counting n for an image of unknown size.
type unknownAs struct {
	r Rule
	n int
}

// WithUnknown returns r counting n tokens for an image of unknown size
// instead of its default (see Rule's Unknown). Its name is r's: the
// metrics name the rule, not how unreadable images were counted. A
// [Processor]'s placeholder is kept.
func WithUnknown(r Rule, n int) Rule {
	if u, ok := r.(unknownAs); ok {
		r = u.r
	}
	if p, ok := r.(Processor); ok {
		return unknownProcessor{unknownAs{p, n}, p.Placeholder()}
	}
	return unknownAs{r, n}
}

func (u unknownAs) Tokens(im Image) (int, bool) {
	n, exact := u.r.Tokens(im)
	if !exact {
		return u.n, false
	}
	return n, true
}
func (u unknownAs) Unknown() int   { return u.n }
func (u unknownAs) String() string { return u.r.String() }

type unknownProcessor struct {
	unknownAs
	p Placeholder
}

func (u unknownProcessor) Placeholder() Placeholder { return u.p }

// MaxFlat is the largest N of "flat:N": far above any model's cost of
// one image, and small enough that a record's totals cannot overflow.
const MaxFlat = 1_000_000

// ParseRule parses a rule a user names: "flat:N" (0 ≤ N ≤ [MaxFlat]) or
// "openai". It is the one parser of the grammar: package config checks
// tokenizer.image_tokens with it and reports its error. A model's own rule is read
// from its preprocessor_config.json instead: [Loaders], [LoadAuto].
func ParseRule(s string) (Rule, error) {
	if s == "openai" {
		return OpenAI(), nil
	}
	if n, ok := strings.CutPrefix(s, "flat:"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 || v > MaxFlat {
			return nil, fmt.Errorf("image token rule %q: flat:N needs a whole number N from 0 to %d", s, MaxFlat)
		}
		return Flat(v), nil
	}
	return nil, fmt.Errorf("image token rule %q: want openai or flat:N", s)
}

// OpenAI's published constants: a low-detail image costs OpenAILow; a
// high-detail one OpenAILow plus OpenAITile per 512-pixel tile.
const (
	OpenAILow  = 85
	OpenAITile = 170
	// OpenAIMaxHigh is the most a high-detail image can cost: after the
	// two scalings no side exceeds 2048 and the short side is at most 768,
	// so at most 2 × 4 tiles: 85 + 8 × 170.
	OpenAIMaxHigh = OpenAILow + 8*OpenAITile
)

// OpenAITokens is the cost of a width×height image on OpenAI's vision
// models, as OpenAI documents it ("Calculating costs", vision guide):
// detail "low" costs 85. At "high" or "auto" (and ""), the image is
// scaled to fit within 2048×2048, then so that its shortest side is 768
// pixels, and costs 170 per 512-pixel tile plus 85. Published examples:
// 1024×1024 high → 765; 2048×4096 high → 1105.
//
// Both scalings only shrink: an image already within the bounds keeps its
// size (OpenAI's examples shrink only; a 512×512 image is one tile, 255).
// Scaled sides are truncated to whole pixels. "auto" is counted as high:
// OpenAI chooses per image and does not say how, and high is the larger.
func OpenAITokens(width, height int, detail string) int {
	if strings.EqualFold(detail, "low") {
		return OpenAILow
	}
	if width <= 0 || height <= 0 {
		return OpenAIMaxHigh
	}
	w, h := float64(width), float64(height)
	if w > 2048 || h > 2048 {
		s := 2048 / math.Max(w, h)
		w, h = math.Floor(w*s), math.Floor(h*s)
	}
	if short := math.Min(w, h); short > 768 {
		s := 768 / short
		w, h = math.Floor(w*s), math.Floor(h*s)
	}
	tiles := int(math.Ceil(w/512)) * int(math.Ceil(h/512))
	return OpenAILow + OpenAITile*max(tiles, 1)
}

// Qwen is the image processing of the Qwen2-VL family (Qwen2-VL,
// Qwen2.5-VL, Qwen3-VL: transformers' Qwen2VLImageProcessor), read from a
// model's preprocessor_config.json by [ParseQwen].
type Qwen struct {
	PatchSize         int // patch_size: 14 (Qwen2/2.5-VL), 16 (Qwen3-VL)
	MergeSize         int // merge_size: 2
	TemporalPatchSize int // temporal_patch_size: 2 (one image is one temporal patch)
	MinPixels         int // size.shortest_edge, or min_pixels
	MaxPixels         int // size.longest_edge, or max_pixels
	// Wrap is the number of tokens the chat template writes around each
	// image's pads: 2 for the Qwen2-VL, Qwen2.5-VL and Qwen3-VL templates,
	// which write <|vision_start|><|image_pad|><|vision_end|> per image
	// (two special tokens, one id each) and the processor expands the
	// single <|image_pad|>.
	Wrap int
}

// ErrNotQwen is returned by [ParseQwen] for a preprocessor_config.json of
// another image processor. It is an [ErrUnknownProcessor]: [ParseAuto]
// tries the next loader.
var ErrNotQwen error = notProcessor("imagetok: not a Qwen2-VL image processor config")

// qwenImageProcessors are the image_processor_type names of the Qwen2-VL
// family in transformers: Qwen2-VL, Qwen2.5-VL, Qwen2.5-Omni and Qwen3-VL
// all save one of them.
var qwenImageProcessors = []string{"Qwen2VLImageProcessor", "Qwen2VLImageProcessorFast"}

// qwenProcessors are the processor_class names whose image processor is
// Qwen2VLImageProcessor, for a config that names no image_processor_type.
var qwenProcessors = []string{"Qwen2VLProcessor", "Qwen2_5_VLProcessor", "Qwen2_5OmniProcessor", "Qwen3VLProcessor"}

// ParseQwen reads a preprocessor_config.json the way transformers'
// Qwen2VLImageProcessor does (at commit 9feaf6f): the class defaults
// (patch_size 14, merge_size 2, temporal_patch_size 2, size
// {shortest_edge: 56*56, longest_edge: 28*28*1280}), then "size", then
// "min_pixels" / "max_pixels", which override size's edges when present
// (Qwen2-VL and Qwen2.5-VL ship both, with the same values; Qwen3-VL ships
// size only). A config whose image_processor_type names another processor
// is refused with [ErrNotQwen], and so is one that names none unless its
// processor_class is a Qwen2-VL family processor's (a Whisper feature
// extractor's config, an older CLIP one with only feature_extractor_type).
func ParseQwen(b []byte) (Qwen, error) {
	var c struct {
		Type      string          `json:"image_processor_type"`
		Processor string          `json:"processor_class"`
		Feature   string          `json:"feature_extractor_type"`
		Patch     *int            `json:"patch_size"`
		Merge     *int            `json:"merge_size"`
		Temporal  *int            `json:"temporal_patch_size"`
		Min       *int            `json:"min_pixels"`
		Max       *int            `json:"max_pixels"`
		Size      json.RawMessage `json:"size"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Qwen{}, err
	}
	switch {
	case c.Type != "" && !slices.Contains(qwenImageProcessors, c.Type):
		return Qwen{}, fmt.Errorf("%w: image_processor_type is %s", ErrNotQwen, c.Type)
	case c.Type == "" && !slices.Contains(qwenProcessors, c.Processor):
		what := "no image_processor_type"
		if c.Feature != "" {
			what += " (feature_extractor_type " + c.Feature + ")"
		} else if c.Processor != "" {
			what += " (processor_class " + c.Processor + ")"
		}
		return Qwen{}, fmt.Errorf("%w: %s", ErrNotQwen, what)
	}
	q := Qwen{PatchSize: 14, MergeSize: 2, TemporalPatchSize: 2, MinPixels: 56 * 56, MaxPixels: 28 * 28 * 1280, Wrap: 2}
	if len(c.Size) > 0 && string(c.Size) != "null" {
		var s struct {
			Shortest *int `json:"shortest_edge"`
			Longest  *int `json:"longest_edge"`
		}
		if err := json.Unmarshal(c.Size, &s); err != nil {
			return Qwen{}, fmt.Errorf("size: %w", err)
		}
		// transformers fills the edges from min_pixels / max_pixels when
		// those are given (older saved configs have size {"min_pixels",
		// "max_pixels"} beside them) and refuses a size still lacking one.
		if s.Shortest == nil && c.Min == nil || s.Longest == nil && c.Max == nil {
			return Qwen{}, errors.New("size must contain shortest_edge and longest_edge")
		}
		if s.Shortest != nil {
			q.MinPixels = *s.Shortest
		}
		if s.Longest != nil {
			q.MaxPixels = *s.Longest
		}
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&q.PatchSize, c.Patch)
	set(&q.MergeSize, c.Merge)
	set(&q.TemporalPatchSize, c.Temporal)
	set(&q.MinPixels, c.Min)
	set(&q.MaxPixels, c.Max)
	if err := q.check(); err != nil {
		return Qwen{}, err
	}
	return q, nil
}

// The bounds [ParseQwen] puts on a preprocessor_config.json's numbers, far
// outside every real model's (patch 14 or 16, merge 2, temporal 2,
// max_pixels up to 16,777,216) and small enough that no product or sum of
// image tokens can overflow: with them, an image costs at most
// [MaxImageTokens], and a record holds fewer images than it has bytes.
const (
	MaxPatchSize   = 1 << 10 // patch_size, in pixels
	MaxMergeSize   = 1 << 6  // merge_size and temporal_patch_size
	MaxImagePixels = 1 << 36 // min_pixels and max_pixels (a 262,144² image)
	MaxImageTokens = 1 << 24 // max_pixels / (patch_size·merge_size)², per image
)

// check range-checks q's fields, naming the first one out of range.
func (q Qwen) check() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"patch_size", q.PatchSize, MaxPatchSize},
		{"merge_size", q.MergeSize, MaxMergeSize},
		{"temporal_patch_size", q.TemporalPatchSize, MaxMergeSize},
		{"min_pixels (size.shortest_edge)", q.MinPixels, MaxImagePixels},
		{"max_pixels (size.longest_edge)", q.MaxPixels, MaxImagePixels},
	} {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("%s is %d: want a whole number from 1 to %d", f.name, f.v, f.max)
		}
	}
	if q.MaxPixels < q.MinPixels {
		return fmt.Errorf("max_pixels (size.longest_edge) %d is below min_pixels (size.shortest_edge) %d", q.MaxPixels, q.MinPixels)
	}
	if f := q.Factor(); q.MaxPixels/(f*f) > MaxImageTokens {
		return fmt.Errorf("max_pixels %d over (patch_size %d × merge_size %d)² is %d tokens for one image, over the limit of %d",
			q.MaxPixels, q.PatchSize, q.MergeSize, q.MaxPixels/(f*f), MaxImageTokens)
	}
	return nil
}

// qwenRule counts images as the Qwen2-VL family's processor does.
type qwenRule struct{ q Qwen }

// Rule is the counting rule of q: an image costs [Qwen.Tokens] (its pads
// and the wrap); one of unknown size, or one the processor refuses (an
// aspect ratio over 200), [Qwen.MaxTokens]. It is a [Processor] with the
// Qwen2-VL family's [QwenPlaceholder] (its Wrap q.Wrap).
func (q Qwen) Rule() Rule { return qwenRule{q} }

func (r qwenRule) Tokens(im Image) (int, bool) {
	if !im.Known() {
		return r.Unknown(), false
	}
	n, err := r.q.Tokens(im.Width, im.Height)
	if err != nil {
		return r.Unknown(), false
	}
	return n, true
}
func (r qwenRule) Unknown() int { return r.q.MaxTokens() }

// String is "qwen(patch=14,merge=2,min_pixels=3136,max_pixels=12845056)".
func (r qwenRule) String() string {
	q := r.q
	return fmt.Sprintf("qwen(patch=%d,merge=%d,min_pixels=%d,max_pixels=%d)", q.PatchSize, q.MergeSize, q.MinPixels, q.MaxPixels)
}

func (r qwenRule) Placeholder() Placeholder {
	p := QwenPlaceholder()
	p.Wrap = r.q.Wrap
	return p
}

// Factor is patch_size × merge_size, the multiple both resized sides are.
func (q Qwen) Factor() int { return q.PatchSize * q.MergeSize }

// Grid is the patch grid of a width×height image: the image is resized by
// [SmartResize] and cut in PatchSize squares.
func (q Qwen) Grid(width, height int) (gridW, gridH int, err error) {
	h, w, err := SmartResize(height, width, q.Factor(), q.MinPixels, q.MaxPixels)
	if err != nil {
		return 0, 0, err
	}
	return w / q.PatchSize, h / q.PatchSize, nil
}

// Pads is the number of <|image_pad|> tokens the processor expands one
// width×height image to: grid_t·grid_h·grid_w / merge_size², grid_t = 1
// for a single image (its one frame is repeated to temporal_patch_size).
func (q Qwen) Pads(width, height int) (int, error) {
	gw, gh, err := q.Grid(width, height)
	if err != nil {
		return 0, err
	}
	return gw * gh / (q.MergeSize * q.MergeSize), nil
}

// Tokens is the templated cost of one width×height image: [Qwen.Pads]
// plus [Qwen.Wrap].
func (q Qwen) Tokens(width, height int) (int, error) {
	p, err := q.Pads(width, height)
	return p + q.Wrap, err
}

// MaxTokens is the most one image can cost: max_pixels / factor² pads
// plus the wrap, as smart_resize keeps the resized area within max_pixels,
// for every real config. Two of its roundings can go past that bound when
// a config's numbers are far from any model's, and MaxTokens covers them
// too: an image scaled down whose short side floors to one factor
// (at most √(200·T) pads for an aspect ratio of 200, T = max_pixels /
// factor²), and one scaled up to min_pixels whose sides are ceiled (at
// most Tmin + 15·√Tmin + 1 pads, Tmin = min_pixels / factor²: the product
// of two sides each ceiled up by less than one factor). For Qwen2-VL's
// config (T 16,384, Tmin 4) these are 1,811 and 35: max_pixels / factor²
// it is.
func (q Qwen) MaxTokens() int {
	f := q.Factor()
	t := q.MaxPixels / (f * f)
	tmin := q.MinPixels / (f * f)
	pads := max(t, int(math.Ceil(math.Sqrt(200*float64(t)))), tmin+int(math.Ceil(15*math.Sqrt(float64(tmin))))+1)
	return pads + q.Wrap
}

// SmartResize is transformers' smart_resize (qwen2_vl/
// image_processing_qwen2_vl.py at commit 9feaf6f, Apache-2.0), reproduced
// operation for operation in float64 as Python computes it: both sides
// rounded to a multiple of factor (Python's round, half to even); if the
// area exceeds maxPixels, both scaled by beta = sqrt(h·w/maxPixels) and
// floored to a multiple of factor (at least factor); if it is below
// minPixels, scaled by beta = sqrt(minPixels/(h·w)) and ceiled. An aspect
// ratio over 200 is an error, as in transformers.
func SmartResize(height, width, factor, minPixels, maxPixels int) (h, w int, err error) {
	if height <= 0 || width <= 0 || factor <= 0 {
		return 0, 0, fmt.Errorf("smart_resize: height %d, width %d, factor %d must be positive", height, width, factor)
	}
	fh, fw, ff := float64(height), float64(width), float64(factor)
	if r := float64(max(height, width)) / float64(min(height, width)); r > 200 {
		return 0, 0, fmt.Errorf("smart_resize: absolute aspect ratio must be smaller than 200, got %g", r)
	}
	h = int(math.RoundToEven(fh/ff)) * factor
	w = int(math.RoundToEven(fw/ff)) * factor
	if h*w > maxPixels {
		beta := math.Sqrt(fh * fw / float64(maxPixels))
		h = max(factor, int(math.Floor(fh/beta/ff))*factor)
		w = max(factor, int(math.Floor(fw/beta/ff))*factor)
	} else if h*w < minPixels {
		beta := math.Sqrt(float64(minPixels) / (fh * fw))
		h = int(math.Ceil(fh*beta/ff)) * factor
		w = int(math.Ceil(fw*beta/ff)) * factor
	}
	return h, w, nil
}
