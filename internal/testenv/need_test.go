package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNeedRealData: in a module without the real data beside it, a test
// that needs the data skips, or fails when RequireRealDataEnv is 1.
func TestNeedRealData(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, env := range []string{"", "1"} {
		t.Setenv(RequireRealDataEnv, env)
		r := &Recorder{TB: t}
		if dir := NeedRealData(r); dir != "" {
			t.Fatalf("%s=%q: got %q for absent data", RequireRealDataEnv, env, dir)
		}
		if r.FatalCalled != (env == "1") || r.SkipCalled == (env == "1") {
			t.Errorf("%s=%q: failed %v, skipped %v", RequireRealDataEnv, env, r.FatalCalled, r.SkipCalled)
		}
	}
}
