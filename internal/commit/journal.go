package commit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// Recover finishes a commit that a killed run left under anchor, if any,
// taking the lock for the time it needs (waiting for a live run). It
// reports whether there was one.
func Recover(anchor string) (bool, error) {
	anchor = atomicfile.Resolve(anchor)
	if _, err := os.Stat(JournalPath(anchor)); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	t, err := Begin(anchor, Options{Wait: true}) // Begin recovers
	if err != nil {
		return false, err
	}
	t.release()
	return true, nil
}

// The journal is one line per entry, "F|D <staged>\t<target>", one per
// directory to remove, "R <path>", then "end <sha256 of the lines
// before>". A journal without a valid end line was never renamed into
// place (it is written under a temporary name).
func (t *Tx) writeJournal() error {
	var b bytes.Buffer
	for _, e := range t.entries {
		k := "F"
		if e.dir {
			k = "D"
		}
		fmt.Fprintf(&b, "%s %s\t%s\n", k, e.staged, e.target)
	}
	for _, d := range t.remove {
		fmt.Fprintf(&b, "R %s\n", d)
	}
	sum := sha256.Sum256(b.Bytes())
	fmt.Fprintf(&b, "end %x\n", sum)
	tmp := JournalPath(t.anchor) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = t.step("write journal")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = t.step("sync journal")
	}
	if err == nil {
		err = os.Rename(tmp, JournalPath(t.anchor))
	}
	if err == nil {
		err = t.step("rename journal")
	}
	if err == nil {
		err = syncDir(filepath.Dir(t.anchor))
	}
	if err == nil {
		err = t.step("sync journal dir")
	}
	if err != nil {
		os.Remove(JournalPath(t.anchor))
		return fmt.Errorf("commit journal for %s: %w", t.anchor, err)
	}
	return nil
}

func readJournal(path string) ([]entry, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	i := bytes.LastIndex(b[:max(len(b)-1, 0)], []byte("\n")) + 1
	body, last := b[:i], strings.TrimSpace(string(b[i:]))
	sum := sha256.Sum256(body)
	if last != "end "+hex.EncodeToString(sum[:]) {
		return nil, nil, fmt.Errorf("commit journal %s is damaged", path)
	}
	var es []entry
	var remove []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, rest, _ := strings.Cut(sc.Text(), " ")
		if k == "R" && rest != "" {
			remove = append(remove, rest)
			continue
		}
		staged, target, ok := strings.Cut(rest, "\t")
		if !ok || (k != "F" && k != "D") {
			return nil, nil, fmt.Errorf("commit journal %s: bad line %q", path, sc.Text())
		}
		es = append(es, entry{staged: staged, target: target, dir: k == "D"})
	}
	return es, remove, sc.Err()
}

// recoverLocked rolls a journal forward. Each entry is in one of three
// states: staged file present and target old (rename the old aside, then
// the staged one in), staged file present and target already set aside,
// or staged file gone (applied). The set-aside old files go last.
func recoverLocked(anchor string) error {
	jp := JournalPath(anchor)
	os.Remove(jp + ".tmp") // a journal never renamed: nothing was applied
	es, remove, err := readJournal(jp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var olds []string
	for _, e := range es {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(e.staged), "."+atomicfile.ShortName(filepath.Base(e.target))+tag), ".tmp")
		old := hidden(e.target, tag+id+".old")
		olds = append(olds, old)
		if _, err := os.Lstat(e.staged); err != nil {
			continue // applied
		}
		if _, err := os.Lstat(old); err != nil {
			if _, err := os.Lstat(e.target); err == nil {
				if err := os.Rename(e.target, old); err != nil {
					return fmt.Errorf("finishing the commit of %s: %w", e.target, err)
				}
			}
		}
		if err := os.Rename(e.staged, e.target); err != nil {
			return fmt.Errorf("finishing the commit of %s: %w", e.target, err)
		}
		// Unchecked since recovery was written. A failed sync here, before
		// the journal is removed, could be reported instead: left for
		// later (it needs a fault to test it).
		syncDir(filepath.Dir(e.target)) //nolint:errcheck // see above
	}
	for _, d := range remove {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("finishing the commit of %s: %w", anchor, err)
		}
	}
	if err := os.Remove(jp); err != nil {
		return err
	}
	syncDir(filepath.Dir(anchor)) //nolint:errcheck // the journal is gone: the recovery is done whatever the sync says
	for _, o := range olds {
		os.RemoveAll(o)
	}
	return nil
}
