package tokenize

import (
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// realDataDir returns ../shared/data/real, or "" when absent.
func realDataDir(t testing.TB) string { return testenv.RealDataDir() }

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
