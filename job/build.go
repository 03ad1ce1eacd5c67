package job

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// Build names the trajcompress build this process is: the main module's
// path and version and its VCS revision, when the build recorded them
// (a release, or a build from a clean checkout with -buildvcs); for any
// other build (a dev build: -buildvcs=false, or a checkout with
// uncommitted changes) the SHA-256 of the executable. A run directory
// records it (run.json "build"): tasks done by two builds, which may
// compress alike or not, are never put together — a resume, a shard
// joining the run or a merge by another build is refused.
var Build = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	return buildOf(bi, executableHash)
})

// buildOf names the build bi describes, hashing the executable (exe) when
// its version and revision do not name it.
func buildOf(bi *debug.BuildInfo, exe func() string) string {
	if bi == nil {
		return exe()
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	name := bi.Main.Path
	if name == "" {
		name = bi.Path
	}
	release := bi.Main.Version != "" && bi.Main.Version != "(devel)"
	switch {
	case rev != "" && modified != "true":
		return fmt.Sprintf("%s %s vcs %s", name, bi.Main.Version, rev)
	case rev != "": // the revision and changes not committed: only the bytes tell
		return fmt.Sprintf("%s %s vcs %s+modified %s", name, bi.Main.Version, rev, exe())
	case release:
		return name + " " + bi.Main.Version
	}
	return exe()
}

// executableHash is "executable sha256:<hex>" of this process's
// executable.
func executableHash() string {
	path, err := os.Executable()
	if err != nil {
		return fmt.Sprintf("executable unknown (%v)", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("executable %s unreadable (%v)", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Sprintf("executable %s unreadable (%v)", path, err)
	}
	return "executable sha256:" + hex.EncodeToString(h.Sum(nil))
}
