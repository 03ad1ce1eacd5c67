package tokenize

import (
	"encoding/json"
	"os"
	"strings"
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

// realGolden writes texts (a JSON list) to dump and skips t when dump is
// set, for a golden generator; else it reads the golden TSV at path, whose
// header line names its columns and whose rows hold one text each, in
// order, and returns the columns and the rows. A row count that is not
// the texts' fails t, naming how to regenerate (regen).
func realGolden(t *testing.T, texts []string, dump, path, regen string) (header, rows []string) {
	t.Helper()
	if dump != "" {
		b, err := json.Marshal(texts)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dump, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("wrote %d texts to %s", len(texts), dump)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines)-1 != len(texts) {
		t.Fatalf("%s has %d rows, the real data %d texts: regenerate it (%s)", path, len(lines)-1, len(texts), regen)
	}
	return strings.Split(lines[0], "\t"), lines[1:]
}
