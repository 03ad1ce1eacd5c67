package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeSpan is a `…` span of Markdown; mdLink the target of a [text](link).
var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// TestArchitecturePathsExist: every file or directory of the repository
// docs/architecture.md names exists, so that its map and its extension
// recipes cannot name a file that was renamed or split. A path is a code
// span holding a "/" whose first element is a top-level directory of the
// repository (`traj/dialect.go`, `format/internal/roundtrip/`), without
// placeholders (`imagetok/<family>.go`) or Go patterns (`cmd/...`); and
// every relative link, resolved from docs/.
func TestArchitecturePathsExist(t *testing.T) {
	r := root(t)
	doc := filepath.Join(r, "docs", "architecture.md")
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range codeSpan.FindAllStringSubmatch(string(b), -1) {
		p := m[1]
		if !strings.Contains(p, "/") || strings.ContainsAny(p, " <>*") || strings.Contains(p, "...") {
			continue
		}
		first, _, _ := strings.Cut(p, "/")
		if first == "" || strings.HasPrefix(first, ".") {
			continue // an absolute path (/dev/stdout), a hidden one
		}
		if fi, err := os.Stat(filepath.Join(r, first)); err != nil || !fi.IsDir() {
			continue // not a path of the repository (tasks/NNNNNN.json in the run directory)
		}
		checked++
		if _, err := os.Stat(filepath.Join(r, filepath.FromSlash(p))); err != nil {
			t.Errorf("docs/architecture.md names `%s`, which does not exist", p)
		}
	}
	for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
		link, _, _ := strings.Cut(m[1], "#")
		if link == "" || strings.Contains(link, "://") {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join(r, "docs", filepath.FromSlash(link))); err != nil {
			t.Errorf("docs/architecture.md links to %s, which does not exist", m[1])
		}
	}
	t.Logf("%d paths checked", checked)
	if checked < 50 {
		t.Errorf("checked %d paths: the patterns no longer find the page's paths", checked)
	}
}
