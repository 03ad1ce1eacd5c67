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
	model     *hfModel // the BPE model (byte-level, or sp's)
	sp        *spModel // SentencePiece-style BPE, nil for byte-level
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
	if err := f.checkModel(rest); err != nil {
		return nil, err
	}
	initClasses()
	t := &HFTokenizer{info: Info{Kind: KindHFBPE}}
	byteLevel, err := t.parsePipeline(f.Normalizer, f.PreTok)
	if err != nil {
		return nil, err
	}
	if byteLevel > 1 {
		return nil, fmt.Errorf("tokenize: tokenizer.json: pre_tokenizer: more than one ByteLevel is not supported")
	}
	if err := t.buildModel(m, byteLevel == 1); err != nil {
		return nil, err
	}
	if err := t.addAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	return t, nil
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
	t.added.split(s, a, func(seg string, _ int, a *hfAcc) { t.normalized(seg, a) })
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
	t.addedNorm.split(s, a, func(seg string, at int, a *hfAcc) { t.pretok(seg, 0, origin && at == 0, a) })
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
