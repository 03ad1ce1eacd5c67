package tokenize

import (
	"encoding/json"
	"fmt"
	"sort"
)

// The model section of a tokenizer.json: which kinds are counted, and the
// checks that refuse, naming the JSON field, what would not be counted
// exactly.

// hfModelKeys are the fields of a BPE model that tokenizers reads
// (models/bpe/serialization.rs); any other is refused rather than ignored,
// since a field we do not know could change the ids.
var hfModelKeys = map[string]bool{
	"type": true, "dropout": true, "unk_token": true, "continuing_subword_prefix": true,
	"end_of_word_suffix": true, "fuse_unk": true, "byte_fallback": true, "ignore_merges": true,
	"vocab": true, "merges": true,
}

// checkModel refuses a model that is not counted exactly: another type
// than BPE (named), dropout, subword prefixes or suffixes, unknown or
// malformed fields. rest is the file with vocab and merges cut out.
func (f *hfFile) checkModel(rest []byte) error {
	m := &f.Model
	switch m.Type {
	case "BPE":
	case "":
		if len(m.Merges) == 0 {
			return fmt.Errorf("tokenize: tokenizer.json: model.type: missing")
		}
	case "Unigram", "WordPiece", "WordLevel":
		return fmt.Errorf("tokenize: tokenizer.json: model.type: model type %s is not supported (only BPE, byte-level or SentencePiece-style, is counted exactly)", m.Type)
	default:
		return fmt.Errorf("tokenize: tokenizer.json: model.type: unknown model type %q", m.Type)
	}
	var probe struct {
		Model map[string]json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(rest, &probe); err != nil {
		return fmt.Errorf("tokenize: tokenizer.json: model: %w", err)
	}
	var unknown []string
	for k := range probe.Model {
		if !hfModelKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("tokenize: tokenizer.json: model.%s: unknown BPE model field", unknown[0])
	}
	switch {
	case len(m.Vocab) == 0 || string(m.Vocab) == "null":
		return fmt.Errorf("tokenize: tokenizer.json: model.vocab: missing")
	case len(m.Merges) == 0 || string(m.Merges) == "null":
		return fmt.Errorf("tokenize: tokenizer.json: model.merges: missing")
	case m.Dropout != nil && (*m.Dropout < 0 || *m.Dropout > 1):
		return fmt.Errorf("tokenize: tokenizer.json: model.dropout: %v is not between 0 and 1", *m.Dropout)
	case m.Dropout != nil && *m.Dropout != 0:
		// Dropout skips merges at random: no count is the count.
		return fmt.Errorf("tokenize: tokenizer.json: model.dropout: BPE dropout %v is not supported (only null or 0)", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return fmt.Errorf("tokenize: tokenizer.json: model.continuing_subword_prefix: %q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("tokenize: tokenizer.json: model.end_of_word_suffix: %q is not supported", *m.EndOfWordSuffix)
	}
	return nil
}

// buildModel builds the BPE model: over GPT-2's byte-level alphabet when
// the pre-tokenizer has a ByteLevel step, else over the text's own
// characters (SentencePiece-style: byte_fallback, unk_token, fuse_unk).
func (t *HFTokenizer) buildModel(m *hfModelJSON, byteLevel bool) error {
	if byteLevel {
		model, err := buildHFModel(m.Vocab, m.Merges, m.IgnoreMerges)
		if err != nil {
			return err
		}
		t.model = model
		return nil
	}
	sp, err := buildSPModel(m.Vocab, m.Merges, m.IgnoreMerges, m.ByteFallback, m.FuseUnk, m.UnkToken)
	if err != nil {
		return err
	}
	t.sp = sp
	t.model = &hfModel{sp: sp}
	t.info.Kind = KindHFSPBPE
	return nil
}

// piece counts (and with a.emit, appends the ids of) one pre-tokenized
// piece. One call, so that it inlines: a SentencePiece-style model is
// reached through t.model.sp.
func (t *HFTokenizer) piece(p string, a *hfAcc) {
	var n int
	a.out, n = t.model.pieceTokens(p, a.out, a.emit)
	a.n += n
}
