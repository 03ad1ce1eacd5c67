package trainview

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/tokenize"
)

// The Qwen2-VL family's image placeholder ([imagetok.QwenPlaceholder]):
// its chat templates (Qwen2-VL, Qwen2.5-VL, Qwen3-VL) write VisionStart
// ImagePad VisionEnd for each image part, and the processor (transformers'
// Qwen2VLProcessor and its Qwen2.5-VL and Qwen3-VL kin) replaces the n-th
// ImagePad of the text by the n-th image's grid_t·grid_h·grid_w /
// merge_size² copies of it. transformers' processors take the token from
// the tokenizer's image_token when it has one, else "<|image_pad|>"
// (processing_qwen2_vl.py); transformers.js' Qwen2VLProcessor always uses
// "<|image_pad|>".
const (
	ImagePad    = "<|image_pad|>"
	VisionStart = "<|vision_start|>"
	VisionEnd   = "<|vision_end|>"
)

// ErrImagePlaceholder is returned when a record with images is counted with
// a chat template that renders images with a placeholder this package does
// not know how to expand to the model's image tokens: counting the
// placeholder as written would undercount every image.
var ErrImagePlaceholder = errors.New("chat template image placeholder")

// Images expands the image placeholders a chat template renders to the
// tokens the model's processor puts there, so that a [Counter]'s count of
// a record with images is what transformers' processor + template give:
// len(processor(apply_chat_template(messages), images).input_ids).
//
// A Counter with Images counts a view as follows. The images are found in
// the view's messages in the order the template renders them (message by
// message; in a content list, each top-level part the template renders as
// an image: a part whose type is "image" or that has an "image" or
// "image_url" key, i.e. OpenAI image_url, input_image and
// computer_screenshot parts, Anthropic image blocks, {"type": "image",
// "image": …} parts, as the Qwen2-VL templates test them; in a string
// content, the LLaMA-Factory "<image>" markers when the view has an
// images list). Markers are first replaced by the Placeholder's
// [imagetok.Placeholder.Marker] (Qwen2-VL's: VisionStart ImagePad
// VisionEnd), as LLaMA-Factory's Qwen2VLPlugin does before its template
// runs (mm_plugin.py, process_messages: it writes vision_bos +
// image_token × seqlen + vision_eos for each marker). The view is rendered
// and counted, and for the n-th Placeholder.Token of the rendered text
// (n-th image) Pads−1 is added, Pads being Rule.Tokens(im) −
// Placeholder.Wrap (the image's tokens less the Start and End the template
// wrote; Rule.Unknown's for an image of unknown size or one the processor
// refuses). A Token with no image found for it (transformers raises
// there) counts as an image of unknown size; an image found with no Token
// rendered for it (the template dropped it) adds nothing.
//
// Images inside an Anthropic tool_result block are not rendered by the
// Qwen2-VL templates (they look at a message's top-level parts only), so
// they add nothing here.
type Images struct {
	// Rule counts one image, the Placeholder's Start and End included:
	// the model's own processor ([imagetok.Processor], e.g. a
	// [imagetok.Qwen.Rule] from its preprocessor_config.json), or the
	// rule a run chose. Wrap it with [imagetok.WithUnknown] to count
	// images of unknown size as n.
	Rule imagetok.Rule
	// Placeholder is how the template writes an image and the processor
	// expands it.
	Placeholder imagetok.Placeholder
	// Finder reads the images' sizes (its Dir resolves relative paths);
	// nil is the zero Finder.
	Finder *imagetok.Finder

	template string // the template's name, for messages
	refuse   bool   // the template renders images with a placeholder we cannot expand
}

// An Images holds no state of its own: it is safe for concurrent use when
// its Finder is (the zero Finder is). Images of one dataset directory
// share a Finder; a caller counting files of several directories uses a
// copy of the Images per directory, its Finder's Dir set.

// NewImages returns the Images of chat template t for a counter counting
// with tokens, and rule the model's image processing (nil when the model
// has none). It returns nil and no error when t does not mention images at
// all (a text model's template: nothing to expand).
//
// The placeholder is the first whose token t's source writes: rule's own
// when rule is an [imagetok.Processor], then [imagetok.Placeholders] (the
// Qwen2-VL family's ImagePad). It is an error when t writes one and rule
// is nil, or tokens does not count its token as one token. A template that
// mentions images without any of them (another family's placeholder:
// <|image|>, <start_of_image>, [IMG], <image>, …) gives an Images that
// counts records without images as the template renders them and refuses
// records with images with [ErrImagePlaceholder], naming the template.
//
// token, when not "", is the image token the processor expands in place
// of the placeholder's own ([ImageToken] reads it from the
// tokenizer_config.json as transformers does).
func NewImages(t *chattemplate.Template, tokens tokenize.Counter, rule imagetok.Rule, token string) (*Images, error) {
	src := t.Source(false) + t.Source(true)
	if p, ok := placeholderIn(src, rule, token); ok {
		if rule == nil {
			return nil, fmt.Errorf("chat template %s writes %s for each image: expanding it needs the model's preprocessor_config.json (%s family)", t.Path, p.Token, p.Family)
		}
		if n := tokens.Count(p.Token); n != 1 {
			return nil, fmt.Errorf("chat template %s writes %s for each image, but the tokenizer counts it as %d tokens, not one: not the model's tokenizer", t.Path, p.Token, n)
		}
		return &Images{Rule: rule, Placeholder: p, template: t.Path}, nil
	}
	if strings.Contains(strings.ToLower(src), "image") {
		return &Images{Rule: rule, template: t.Path, refuse: true}, nil
	}
	return nil, nil
}

// placeholderIn is the first placeholder whose token (token when not "")
// src writes: rule's when it is an [imagetok.Processor], then the known
// ones.
func placeholderIn(src string, rule imagetok.Rule, token string) (imagetok.Placeholder, bool) {
	cands := imagetok.Placeholders()
	if p, ok := rule.(imagetok.Processor); ok {
		cands = append([]imagetok.Placeholder{p.Placeholder()}, cands...)
	}
	for _, p := range cands {
		if token != "" {
			p.Token = token
		}
		if strings.Contains(src, p.Token) {
			return p, true
		}
	}
	return imagetok.Placeholder{}, false
}

// ImagesOf returns the Images of chat template t for a run that counts
// images by rule (the run's --image-tokens), or nil when t does not
// mention images at all. As [NewImages], with one difference: under a
// rule that is not a model's own processor (flat:N, openai), each image t
// writes as a known placeholder counts the rule's tokens in all, the
// placeholder's Start and End included, so that a chosen rule means the
// same with a template as without; and a tokens that does not count the
// placeholder's token as one token (not the model's tokenizer: o200k_base
// with a Qwen2-VL template) gives nil: the placeholder is text to it, and
// the caller counts the images as for a template that renders none. Under
// a processor's rule that is an error, as for NewImages.
//
// A caller whose template does not mention images (nil here) counts the
// images the template does not render by rule itself (package pipeline
// adds each image's rule tokens to the templated count).
func ImagesOf(t *chattemplate.Template, tokens tokenize.Counter, rule imagetok.Rule, token string) (*Images, error) {
	if _, proc := rule.(imagetok.Processor); !proc && rule != nil {
		if p, ok := placeholderIn(t.Source(false)+t.Source(true), rule, token); ok && tokens.Count(p.Token) != 1 {
			// Not the model's tokenizer (o200k_base with a Qwen2-VL
			// template): its placeholder is text to it, so the images
			// are counted as the template not rendering them.
			return nil, nil
		}
	}
	return NewImages(t, tokens, rule, token)
}

// ImageToken is the image token of a tokenizer_config.json as
// transformers' processors take it: the tokenizer's image_token (an
// "image_token" member, or one in "extra_special_tokens", which
// transformers makes attributes of the tokenizer) when it has one, else ""
// (the placeholder's own: ImagePad for the Qwen2-VL family).
func ImageToken(tokenizerConfig []byte) string {
	for _, path := range [][]string{{"image_token"}, {"extra_special_tokens", "image_token"}} {
		v := tokenizerConfig
		ok := true
		for _, k := range path {
			if v, ok = jsonx.Lookup(v, k); !ok {
				break
			}
		}
		if ok && len(v) > 0 && v[0] == '"' {
			if s, _ := jsonx.Unquote(v); s != "" {
				return s
			}
		}
	}
	return ""
}

// imageCount is what Images found in one view: the pads of each image, in
// the order of the template's placeholders.
type imageCount struct {
	pads    []int
	unknown int // pads for a placeholder with no image found
}

// prepare finds v's images and returns the view to render (its markers
// replaced) and their pads; nil pads when v has no images.
func (im *Images) prepare(v View) (View, *imageCount, error) {
	if !mayHoldImages(v) {
		return v, nil, nil
	}
	f := im.Finder
	if f == nil {
		f = &imagetok.Finder{}
	}
	// Each message's content member, read once: its value is what the
	// images are looked for in, its span where a marker's string goes.
	msgs := jsonx.Elements(v.Messages, jsonx.SkipSpace(v.Messages, 0))
	contents := make([][]byte, len(msgs))
	spans := make([]jsonx.Member, len(msgs))
	for i, el := range msgs {
		ms, _, err := jsonx.Members(v.Messages[:el[1]], el[0])
		if err != nil {
			continue // not an object: no content
		}
		if m, ok := jsonx.Find(ms, "content"); ok {
			contents[i], spans[i] = v.Messages[m.Start:m.End], m
		}
	}
	// Markers and {"type": "image"} placeholders paired with the list's
	// entries in order, as the processor pairs them; a marker or
	// placeholder without an entry is of unknown size.
	found, _ := f.Paired(contents, v.Images)
	var order []imagetok.Image
	markers := make([]bool, len(msgs))
	for t, c := range contents {
		order = im.appendParts(order, c, t, found)
		for _, x := range found {
			if x.Turn == t && x.Kind == imagetok.KindMarker {
				order = append(order, x)
				markers[t] = true
			}
		}
	}
	if len(order) == 0 {
		return v, nil, nil
	}
	if im.refuse {
		return v, nil, fmt.Errorf("%w: %s renders images with a placeholder trajcompress cannot expand to the model's image tokens (it expands %s); this record has %d image(s), which would each count as the placeholder's few tokens",
			ErrImagePlaceholder, im.template, knownPlaceholders(), len(order))
	}
	wrap := im.Placeholder.Wrap
	ic := &imageCount{pads: make([]int, len(order)), unknown: max(im.Rule.Unknown()-wrap, 1)}
	for i, x := range order {
		n, _ := im.Rule.Tokens(x)
		ic.pads[i] = max(n-wrap, 1)
	}
	if !slices.Contains(markers, true) {
		return v, ic, nil
	}
	out := make([]byte, 0, len(v.Messages)+64)
	last := 0
	for t, m := range spans {
		if !markers[t] {
			continue
		}
		s, _ := jsonx.Unquote(v.Messages[m.Start:m.End])
		out = append(out, v.Messages[last:m.Start]...)
		out = jsonx.AppendStringKeep(out, strings.ReplaceAll(s, imagetok.Marker, im.Placeholder.Marker()))
		last = m.End
	}
	v.Messages = append(out, v.Messages[last:]...)
	return v, ic, nil
}

// mayHoldImages reports whether v may hold an image: not when Mapper saw
// no content list and the record has no images list (most records: no
// scan at all), nor when the messages do not contain "image" (an image
// part's type or key, a marker).
func mayHoldImages(v View) bool {
	if v.noParts && v.Images == nil {
		return false
	}
	return bytes.Contains(v.Messages, []byte("image"))
}

// appendParts appends, for each top-level part of content (a content
// list) that the Qwen2-VL template renders as an image, the image found
// there (or one of unknown size).
func (im *Images) appendParts(order []imagetok.Image, c []byte, turn int, found []imagetok.Image) []imagetok.Image {
	i := jsonx.SkipSpace(c, 0)
	if i >= len(c) || c[i] != '[' {
		return order
	}
	for p, el := range jsonx.Elements(c, i) {
		if !rendersImage(c[el[0]:el[1]]) {
			continue
		}
		x := imagetok.Image{Turn: turn, Part: p, Span: el, Marker: -1, Index: -1}
		for _, y := range found {
			if y.Turn == turn && y.Part == p && y.Span == el {
				x = y
				break
			}
		}
		order = append(order, x)
	}
	return order
}

// rendersImage reports whether the Qwen2-VL family's templates render the
// part object as an image: content['type'] == 'image' or 'image' in
// content or 'image_url' in content.
func rendersImage(part []byte) bool {
	ms, _, err := jsonx.Members(part, 0)
	if err != nil {
		return false
	}
	if _, ok := jsonx.Find(ms, "image"); ok {
		return true
	}
	if _, ok := jsonx.Find(ms, "image_url"); ok {
		return true
	}
	m, ok := jsonx.Find(ms, "type")
	if !ok || part[m.Start] != '"' {
		return false
	}
	s, _ := jsonx.Unquote(part[m.Start:m.End])
	return s == "image"
}

// extra is what the images add to the count of the rendered text: for the
// n-th placeholder, the n-th image's pads less the placeholder itself.
func (im *Images) extra(ic *imageCount, text string) int {
	n := 0
	for k := range strings.Count(text, im.Placeholder.Token) {
		p := ic.unknown
		if k < len(ic.pads) {
			p = ic.pads[k]
		}
		n += p - 1
	}
	return n
}

// knownPlaceholders names the placeholders Images expands, for the
// refusal: "the Qwen2-VL family's <|image_pad|>".
func knownPlaceholders() string {
	var names []string
	for _, p := range imagetok.Placeholders() {
		names = append(names, "the "+p.Family+" family's "+p.Token)
	}
	return strings.Join(names, ", ")
}
