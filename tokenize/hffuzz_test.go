package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// tinyHFJSON returns a small byte-level BPE tokenizer.json (the 256 byte
// tokens, a few merges, an added token) with the given normalizer and
// pre_tokenizer JSON values.
func tinyHFJSON(norm, pre string) []byte {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteLevelChar[b])] = b
	}
	merges := []string{"Ġ t", "h e", "Ġt he", "i n", "â ĸ", "âĸ ģ"}
	for k, m := range merges {
		vocab[strings.ReplaceAll(m, " ", "")] = 256 + k
	}
	v, _ := json.Marshal(vocab)
	ms, _ := json.Marshal(merges)
	return fmt.Appendf(nil, `{"added_tokens": [{"id": 300, "content": "<s>", "normalized": false, "special": true}],
		"normalizer": %s, "pre_tokenizer": %s,
		"model": {"type": "BPE", "dropout": null, "vocab": %s, "merges": %s}}`, norm, pre, v, ms)
}

// FuzzLoadHF feeds tokenizer.json bytes to the loader: it must refuse them
// with an error or return a tokenizer that encodes text without panicking,
// with Count equal to the number of ids. The seeds cover every normalizer
// and pre-tokenizer kind.
func FuzzLoadHF(f *testing.F) {
	bl := `{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}`
	seq := func(xs ...string) string {
		return `{"type": "Sequence", "pretokenizers": [` + strings.Join(append(xs, bl), ", ") + `]}`
	}
	norms := []string{`null`, `{"type": "NFC"}`, `{"type": "NFKD"}`, `{"type": "Lowercase"}`,
		`{"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}, {"type": "Strip", "strip_left": true, "strip_right": true}]}`,
		`{"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}`,
		`{"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": ""}`}
	pres := []string{bl, `{"type": "ByteLevel", "add_prefix_space": true}`,
		seq(`{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}`),
		seq(`{"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": false}`),
		seq(`{"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Removed", "invert": true}`),
		seq(`{"type": "Split", "pattern": {"Regex": "[a-z]*"}, "behavior": "Contiguous", "invert": false}`),
		seq(`{"type": "Whitespace"}`, `{"type": "Punctuation", "behavior": "MergedWithNext"}`, `{"type": "Digits", "individual_digits": true}`),
		seq(`{"type": "WhitespaceSplit"}`, `{"type": "CharDelimiterSplit", "delimiter": "-"}`, `{"type": "BertPreTokenizer"}`),
		`{"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Split", "pattern": {"String": "Ġ"}, "behavior": "MergedWithNext"}]}`}
	for k, p := range pres {
		f.Add(tinyHFJSON(norms[k%len(norms)], p), "  Hello <s>the ﬁn  -x 123, İ café\t\n▁ ")
	}
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		if len(data) > 1<<16 || len(text) > 1<<10 {
			t.Skip()
		}
		tk, err := parseHF(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("refusal of more than one line: %q", err)
			}
			return
		}
		ids := tk.Encode(text)
		if n := tk.Count(text); n != len(ids) {
			t.Errorf("Count %d, Encode %d ids", n, len(ids))
		}
	})
}

// FuzzHFPipeline fuzzes the normalizer and pre_tokenizer values of a
// small byte-level tokenizer.json (and the text): refused at load with a
// one-line error naming a JSON path, or counted without panicking.
func FuzzHFPipeline(f *testing.F) {
	f.Add(`{"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}`,
		`{"type": "Sequence", "pretokenizers": [{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}, {"type": "ByteLevel", "use_regex": false}]}`, " Hello  world ")
	f.Add(`{"type": "Replace", "pattern": {"Regex": "a|"}, "content": "b"}`,
		`{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "x*"}, "behavior": "MergedWithNext", "invert": true}, {"type": "ByteLevel", "add_prefix_space": true}]}`, "xxaxx yy")
	f.Add(`{"type": "Strip", "strip_left": true}`,
		`{"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Digits"}, {"type": "Punctuation", "behavior": "Removed"}]}`, " 12,3 x")
	f.Fuzz(func(t *testing.T, norm, pre, text string) {
		if len(norm)+len(pre) > 4096 || len(text) > 1<<10 {
			t.Skip()
		}
		tk, err := parseHF(tinyHFJSON(norm, pre))
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("refusal of more than one line: %q", msg)
			}
			return
		}
		ids := tk.Encode(text)
		if n := tk.Count(text); n != len(ids) {
			t.Errorf("Count %d, Encode %d ids", n, len(ids))
		}
	})
}
