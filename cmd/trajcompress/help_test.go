package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestHelpGolden: the -h text of every subcommand, byte for byte, as
// testdata/help/CMD.txt holds it (go test -run TestHelpGolden -update
// rewrites them: review the diff). The flags come from config's option
// groups and each command's own; a flag lost, added or reworded shows
// here. The Beam main's parity test reads compress.txt for compress's
// flags.
func TestHelpGolden(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"compress", "fixtures", "check", "report", "merge", "validate"} {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{cmd, "-h"}, nil, io.Discard, &stderr); code != exitOK {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		path := filepath.Join("testdata", "help", cmd+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, stderr.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(stderr.Bytes(), want) {
			t.Errorf("%s -h differs from %s (run with -update and review the diff):\n%s", cmd, path, firstDiff(want, stderr.Bytes()))
		}
	}
}
