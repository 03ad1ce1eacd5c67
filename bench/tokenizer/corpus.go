package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// CorpusBytes is the corpus size the benchmark aims for.
const CorpusBytes = 20 << 20

// Corpus returns about CorpusBytes of mixed agent text: the turn texts of
// the shared real data when present (source "real"), otherwise a
// deterministic synthetic corpus (source "synthetic").
func Corpus() (texts []string, source string, err error) {
	if dir := testenv.RealDataDir(); dir != "" {
		texts, err := testenv.RealTurnTexts(dir, CorpusBytes)
		if err != nil {
			return nil, "", err
		}
		if len(texts) > 0 {
			return texts, "real", nil
		}
	}
	return Synthetic(CorpusBytes), "synthetic", nil
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
