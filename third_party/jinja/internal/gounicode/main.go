// Command gounicode prints, as JSON, Go's unicode package's simple case
// mappings, digits and Lowercase and Uppercase properties for every code point, and which code points Go's
// tables assign: the input gen_pyunicode.py compares with Python's.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"unicode"
)

func main() {
	const n = unicode.MaxRune + 1
	var out struct {
		Upper, Lower, Title  []rune
		Digit                []rune
		Lowercase, Uppercase []rune
		Assigned             []int
	}
	out.Assigned = make([]int, n/8)
	for r := rune(0); r < n; r++ {
		out.Upper = append(out.Upper, unicode.ToUpper(r))
		out.Lower = append(out.Lower, unicode.ToLower(r))
		out.Title = append(out.Title, unicode.ToTitle(r))
		if unicode.IsLower(r) || unicode.Is(unicode.Other_Lowercase, r) {
			out.Lowercase = append(out.Lowercase, r)
		}
		if unicode.IsUpper(r) || unicode.Is(unicode.Other_Uppercase, r) {
			out.Uppercase = append(out.Uppercase, r)
		}
		if unicode.IsDigit(r) {
			out.Digit = append(out.Digit, r)
		}
		for _, t := range unicode.Categories {
			if unicode.Is(t, r) {
				out.Assigned[r/8] |= 1 << (r % 8)
				break
			}
		}
	}
	err := json.NewEncoder(os.Stdout).Encode(map[string]any{"upper": out.Upper, "lower": out.Lower, "title": out.Title, "digit": out.Digit, "lowercase": out.Lowercase, "uppercase": out.Uppercase, "assigned": out.Assigned})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
