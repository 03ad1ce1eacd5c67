package main

import (
	"os"
	"strings"
	"testing"
)

// TestGeneratedTableIsCurrent regenerates rules_gen.go from the pinned
// gitleaks.toml and compares: an edited config or table without
// `go generate ./redact` fails here.
func TestGeneratedTableIsCurrent(t *testing.T) {
	src, err := os.ReadFile("../../gitleaks/gitleaks.toml")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../../rules_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	global, rules, err := parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 200 || len(global.Regexes) == 0 {
		t.Fatalf("parsed %d rules, %d global allowlist regexes", len(rules), len(global.Regexes))
	}
	const commit = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
	if !strings.Contains(string(have), commit) {
		t.Fatal("rules_gen.go does not name the pinned commit")
	}
	want, err := generate(commit, global, rules)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(have) {
		t.Fatal("rules_gen.go is not what go generate makes from gitleaks.toml; run go generate ./redact")
	}
}

func TestParseRejectsUnknownKeys(t *testing.T) {
	for _, src := range []string{
		"[[rules]]\nid = \"x\"\nunknown = \"y\"\n",
		"[[rules]]\nid = \"x\"\nregex = {inline = 1}\n",
		"[something]\n",
	} {
		if _, _, err := parse(src); err == nil {
			t.Errorf("parse accepted %q", src)
		}
	}
}
