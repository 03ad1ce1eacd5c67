package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/readfile"
)

// HFTokenizer counts tokens as Hugging Face tokenizers'
// encode(text, add_special_tokens=False) does with a byte-level BPE
// tokenizer.json. It is immutable once loaded and safe for concurrent use.
type HFTokenizer struct {
	info      Info
	added     *addedTrie // added tokens matched in the raw text
	addedNorm *addedTrie // added tokens matched in the normalized text
	nfc       bool       // the normalizer is NFC alone (nfc9, no buffer)
	norms     []normStep // the normalizers, in order (hfnorm.go)
	stages    []preStage
	model     *hfModel
}

// hfAcc accumulates the tokens of one text.
type hfAcc struct {
	out  []int
	n    int
	emit bool
	max  int // stop once n > max
	// origin: the next segment to normalize starts at offset 0 of the
	// text (cleared by the first segment and by every added token).
	origin bool
}

// LoadHF reads a Hugging Face tokenizer.json. Only byte-level BPE models
// can be counted exactly; any other kind (SentencePiece-style BPE, Unigram,
// WordPiece, WordLevel) or an unsupported normalizer or pre-tokenizer is
// an error naming it.
func LoadHF(path string) (*HFTokenizer, error) {
	data, err := readfile.Read(path, "tokenizer file", readfile.TokenizerLimit)
	if err != nil {
		return nil, fmt.Errorf("tokenize: %w", err)
	}
	sum := sha256.Sum256(data)
	t, err := parseHF(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	t.info.Name = path
	t.info.Hash = hex.EncodeToString(sum[:])
	return t, nil
}

type hfComponent struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	Pattern       struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior         string `json:"behavior"`
	Invert           bool   `json:"invert"`
	AddPrefixSpace   bool   `json:"add_prefix_space"`
	UseRegex         *bool  `json:"use_regex"`
	IndividualDigits bool   `json:"individual_digits"`
}

func parseHF(data []byte) (*HFTokenizer, error) {
	rest, rawVocab, rawMerges, err := splitModelJSON(data)
	if err != nil {
		return nil, err
	}
	var f hfFile
	if err := json.Unmarshal(rest, &f); err != nil {
		return nil, fmt.Errorf("tokenize: tokenizer.json: %w", err)
	}
	m := &f.Model
	m.Vocab, m.Merges = rawVocab, rawMerges
	if err := f.checkModel(); err != nil {
		return nil, err
	}
	if !hasPreTokenizer(f.PreTok, "ByteLevel") {
		// Before the normalizer: SentencePiece-style files (Prepend and
		// Replace normalizers, a Metaspace pre-tokenizer) are refused for
		// what they are, not for their first unsupported part.
		return nil, errSentencePieceBPE
	}
	initClasses()
	t := &HFTokenizer{info: Info{Kind: KindHFBPE}}
	byteLevel, err := t.parsePipeline(f.Normalizer, f.PreTok)
	if err != nil {
		return nil, err
	}
	if byteLevel != 1 {
		return nil, errSentencePieceBPE
	}
	if err := t.addAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	model, err := buildHFModel(m.Vocab, m.Merges, m.IgnoreMerges)
	if err != nil {
		return nil, err
	}
	t.model = model
	return t, nil
}

// checkModel refuses a model that is not a byte-level BPE counted
// exactly: another type, dropout, subword prefixes or suffixes.
func (f *hfFile) checkModel() error {
	m := &f.Model
	switch {
	case m.Type == "BPE" || m.Type == "" && len(m.Merges) > 0:
	case m.Type == "":
		return fmt.Errorf("tokenize: tokenizer.json: no model type")
	default:
		return fmt.Errorf("tokenize: tokenizer.json: model type %s is not supported: only byte-level BPE tokenizers are counted exactly (not SentencePiece/Unigram, WordPiece or WordLevel)", m.Type)
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return fmt.Errorf("tokenize: tokenizer.json: BPE dropout %v is not supported", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return fmt.Errorf("tokenize: tokenizer.json: BPE with a continuing_subword_prefix or end_of_word_suffix is not supported")
	}
	return nil
}

// addAdded adds the added tokens, refusing the options not supported.
func (t *HFTokenizer) addAdded(added []hfAddedToken) error {
	t.added, t.addedNorm = newAddedTrie(), newAddedTrie()
	for _, a := range added {
		if a.SingleWord || a.LStrip || a.RStrip {
			return fmt.Errorf("tokenize: tokenizer.json: added token %q uses single_word, lstrip or rstrip, which is not supported", a.Content)
		}
		if a.Normalized {
			t.addedNorm.add(a.Content, a.ID)
		} else {
			t.added.add(a.Content, a.ID)
		}
	}
	return nil
}

// Name returns the path the tokenizer was loaded from.
func (t *HFTokenizer) Name() string { return t.info.Name }

// Info describes the tokenizer for the metrics' run block.
func (t *HFTokenizer) Info() Info { return t.info }

// Count returns len(t.Encode(text)) without building the ids.
func (t *HFTokenizer) Count(text string) int { return countAtMost(t.run, text, maxInt) }

// CountAtMost is [HFTokenizer.Count] that stops once the count passes max
// (see the function [CountAtMost]).
func (t *HFTokenizer) CountAtMost(text string, max int) int { return countAtMost(t.run, text, max) }

// Encode returns the token ids of text, id for id what Hugging Face
// tokenizers' encode(text, add_special_tokens=False) returns: added and
// special tokens in the text are one token each; each maximal ill-formed
// UTF-8 subpart is first replaced by U+FFFD.
func (t *HFTokenizer) Encode(text string) []int { return encodeWith(t.run, text) }

const maxInt = int(^uint(0) >> 1)

// countAtMost runs a tokenizer's run function without collecting ids.
func countAtMost(run func(string, *hfAcc), text string, max int) int {
	a := hfAcc{max: max, origin: true}
	run(text, &a)
	return a.n
}

// encodeWith runs a tokenizer's run function collecting the ids.
func encodeWith(run func(string, *hfAcc), text string) []int {
	a := hfAcc{out: make([]int, 0, len(text)/3+1), emit: true, max: maxInt, origin: true}
	run(text, &a)
	return a.out
}

func (t *HFTokenizer) run(text string, a *hfAcc) {
	if !utf8.ValidString(text) {
		b := bufPool.Get().(*[]byte)
		*b = appendReplaced((*b)[:0], text)
		t.splitAdded(unsafe.String(unsafe.SliceData(*b), len(*b)), a)
		bufPool.Put(b)
		return
	}
	t.splitAdded(text, a)
}

// splitAdded counts the added tokens of the raw text and passes the text
// between them on.
func (t *HFTokenizer) splitAdded(s string, a *hfAcc) {
	if t.added.empty() {
		t.normalized(s, a)
		return
	}
	for i := 0; i < len(s) && a.n <= a.max; {
		start, end, id := t.added.find(s, i)
		if start < 0 {
			t.normalized(s[i:], a)
			return
		}
		if start > i {
			t.normalized(s[i:start], a)
		}
		a.token(id)
		i = end
	}
}

func (a *hfAcc) token(id int) {
	a.origin = false
	if a.emit {
		a.out = append(a.out, id)
	}
	a.n++
}

// normalized normalizes one segment, then counts the normalized added
// tokens in it and pre-tokenizes the text between them. a.origin says
// whether the segment starts at offset 0 of the text (Metaspace's
// prepend_scheme first); no later segment does.
func (t *HFTokenizer) normalized(s string, a *hfAcc) {
	origin := a.origin
	a.origin = false
	if s == "" {
		return
	}
	var bp *[]byte
	if t.nfc {
		s = nfc9(s)
	} else if len(t.norms) > 0 {
		bp = bufPool.Get().(*[]byte)
		s = t.normalize(s, bp)
		defer bufPool.Put(bp)
	}
	if t.addedNorm.empty() {
		t.pretok(s, 0, origin, a)
		return
	}
	for i := 0; i < len(s) && a.n <= a.max; {
		start, end, id := t.addedNorm.find(s, i)
		if start < 0 {
			t.pretok(s[i:], 0, origin && i == 0, a)
			return
		}
		if start > i {
			t.pretok(s[i:start], 0, origin && i == 0, a)
		}
		a.token(id)
		i = end
	}
}

// pretok splits s with stages k onwards and encodes the pieces; first
// says whether s starts at offset 0 of the text.
func (t *HFTokenizer) pretok(s string, k int, first bool, a *hfAcc) {
	if s == "" {
		return
	}
	if k == len(t.stages) {
		t.piece(s, a)
		return
	}
	st := &t.stages[k]
	switch {
	case st.kind != stageSplit:
		t.transform(st, s, k, first, a)
		return
	case !st.simple:
		t.splitGeneral(st, s, k, first, a)
		return
	}
	last := k+1 == len(t.stages)
	for i := 0; i < len(s) && a.n <= a.max; {
		j := st.next(s, i)
		if last {
			t.piece(s[i:j], a)
		} else {
			t.pretok(s[i:j], k+1, first && i == 0, a)
		}
		i = j
	}
}

// piece encodes one pre-tokenized piece with the model.
func (t *HFTokenizer) piece(p string, a *hfAcc) {
	var n int
	a.out, n = t.model.pieceTokens(p, a.out, a.emit)
	a.n += n
}

var errSentencePieceBPE = fmt.Errorf("tokenize: tokenizer.json: BPE without a ByteLevel pre-tokenizer (SentencePiece-style BPE, as in Llama-2, Mistral or Gemma) is not supported: only byte-level BPE is counted exactly")

// hasPreTokenizer reports whether the pre_tokenizer raw, or one of a
// Sequence's, is of type typ.
func hasPreTokenizer(raw json.RawMessage, typ string) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	var c hfComponent
	if json.Unmarshal(raw, &c) != nil {
		return false
	}
	if c.Type == typ {
		return true
	}
	for _, p := range c.PreTokenizers {
		if hasPreTokenizer(p, typ) {
			return true
		}
	}
	return false
}
