package tokenize_test

import (
	"fmt"
	"strings"

	"github.com/trajcompress/trajcompress/tokenize"
)

func ExampleNew() {
	c, err := tokenize.New("o200k_base")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Count("Hello, world! <|endoftext|>"))
	_, err = tokenize.New("./gpt-2.json")
	fmt.Println(err)
	// Output:
	// 11
	// tokenize: unknown tokenizer "./gpt-2.json": not an encoding (chars4, cl100k_base, o200k_base), nor an existing file or directory (no ./gpt-2.json from the working directory), nor a Hugging Face model id
}

func ExampleEncoding_Encode() {
	c, _ := tokenize.New("cl100k_base")
	fmt.Println(c.(*tokenize.Encoding).Encode("hello world"))
	// Output:
	// [15339 1917]
}

func ExampleMemo() {
	enc, _ := tokenize.New("o200k_base")
	m := tokenize.Memo(enc, 1024)
	// A system prompt repeated across records (memoised: >= MemoMinBytes):
	// counted the first two times, stored the second, answered after.
	prompt := strings.Repeat("You are a helpful assistant. ", 20)
	for range 4 {
		m.Count(prompt)
	}
	m.Count("ok") // short texts are counted directly and not tracked
	hits, misses := m.Stats()
	fmt.Println(hits, misses)
	// Output:
	// 2 2
}
