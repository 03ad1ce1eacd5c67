package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CorpusBytes is the corpus size the benchmark aims for.
const CorpusBytes = 20 << 20

// RealDataDir returns ../shared/data/real relative to the module root found
// by walking up from the working directory, or "" when absent.
func RealDataDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	real := filepath.Join(dir, "..", "shared", "data", "real")
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}

// Corpus returns about CorpusBytes of mixed agent text: the turn texts of
// the shared real data when present (source "real"), otherwise a
// deterministic synthetic corpus (source "synthetic").
func Corpus() (texts []string, source string, err error) {
	if dir := RealDataDir(); dir != "" {
		texts, err := RealTurnTexts(dir, CorpusBytes)
		if err != nil {
			return nil, "", err
		}
		if len(texts) > 0 {
			return texts, "real", nil
		}
	}
	return Synthetic(CorpusBytes), "synthetic", nil
}

// turnKeys are the JSON keys whose string values are turn texts in the
// shared data formats (messages[].content, conversations[].value, the
// hermes top-level system_prompt, tool-call arguments).
var turnKeys = map[string]bool{"content": true, "value": true, "system_prompt": true, "arguments": true}

// RealTurnTexts returns the turn texts of dir/*/*.jsonl in sorted file
// order, stopping once limit bytes are collected.
func RealTurnTexts(dir string, limit int) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var texts []string
	total := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<28)
		for line := 1; sc.Scan() && total < limit; line++ {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", file, line, err)
			}
			n := len(texts)
			texts = collect(texts, v, "")
			for _, t := range texts[n:] {
				total += len(t)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return texts, nil
}

func collect(dst []string, v any, key string) []string {
	switch v := v.(type) {
	case string:
		if turnKeys[key] && v != "" {
			dst = append(dst, v)
		}
	case []any:
		for _, x := range v {
			dst = collect(dst, x, key)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst = collect(dst, v[k], k)
		}
	}
	return dst
}

// Synthetic returns a deterministic corpus of about n bytes mixing prose,
// code, JSON tool calls, terminal output and CJK, in turn-sized texts.
func Synthetic(n int) []string {
	rng := rand.New(rand.NewPCG(2, 0))
	words := strings.Fields("the a of to and in is it you that he was for on are with as I his they be at one have this from " +
		"function return error value config request response tokenizer compress trajectory agent model budget Parse JSONDecoder " +
		"doesn't we'll I'm HTTPServer snake_case getUserByID")
	cjk := []string{"我需要", "生成", "一张发票", "日本語", "テキスト", "한국어", "。", "，"}
	var texts []string
	total := 0
	for total < n {
		var b strings.Builder
		size := 200 + rng.IntN(6000)
		switch rng.IntN(5) {
		case 0: // prose
			for b.Len() < size {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteString([]string{" ", " ", " ", ", ", ". ", "\n\n"}[rng.IntN(6)])
			}
		case 1: // code
			for i := 0; b.Len() < size; i++ {
				fmt.Fprintf(&b, "%sif err := %s(ctx, %d); err != nil {\n\t\treturn fmt.Errorf(\"%s: %%w\", err)\n\t}\n",
					strings.Repeat("\t", 1+i%3), words[rng.IntN(len(words))], rng.IntN(1000), words[rng.IntN(len(words))])
			}
		case 2: // JSON tool call
			for b.Len() < size {
				fmt.Fprintf(&b, "{\"name\": %q, \"arguments\": {\"path\": \"/src/%s/%s.go\", \"line\": %d, \"flag\": true}}\n",
					words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(5000))
			}
		case 3: // terminal output
			for b.Len() < size {
				fmt.Fprintf(&b, "-rw-r--r--  1 root root %6d Nov %2d 09:%02d %s.txt\n", rng.IntN(100000), 1+rng.IntN(30), rng.IntN(60), words[rng.IntN(len(words))])
			}
		default: // CJK with Latin
			for b.Len() < size {
				b.WriteString(cjk[rng.IntN(len(cjk))])
				if rng.IntN(4) == 0 {
					b.WriteString(" " + words[rng.IntN(len(words))] + " ")
				}
			}
		}
		texts = append(texts, b.String())
		total += b.Len()
	}
	return texts
}
