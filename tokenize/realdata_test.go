package tokenize

import (
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// realTurnTexts returns every turn text of the real data, in a
// deterministic order.
func realTurnTexts(t testing.TB, dir string) []string {
	t.Helper()
	texts, err := testenv.RealTurnTexts(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return texts
}
