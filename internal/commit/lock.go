package commit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// heldLock is a lock file held, and the lock path it was taken on.
type heldLock struct {
	path string
	f    *os.File
}

// lockAll takes the locks (how: unix.LOCK_EX or LOCK_SH) of the outputs
// at paths (their directories must exist; a symbolic link is followed;
// two names of one lock are taken once), in the order of their lock
// paths, so that two runs waiting for each other's outputs (one's side
// file the other's output) take them in the same order and never wait
// for each other forever. On failure it holds none, and the error names
// the output whose lock another run holds (and its pid, when it wrote
// it).
func lockAll(paths []string, how int, wait bool) ([]heldLock, error) {
	byLock := map[string]string{}
	var order []string
	for _, p := range paths {
		r := atomicfile.Resolve(p)
		lp := LockPath(r)
		if _, ok := byLock[lp]; !ok {
			byLock[lp] = r
			order = append(order, lp)
		}
	}
	slices.Sort(order)
	var held []heldLock
	for _, lp := range order {
		f, err := flock(lp, how, wait)
		if err != nil {
			for _, h := range held {
				unlock(h.f, how == unix.LOCK_EX)
			}
			path := byLock[lp]
			if errors.Is(err, unix.EWOULDBLOCK) {
				holder := ""
				if b, rerr := os.ReadFile(lp); rerr == nil && len(bytes.TrimSpace(b)) > 0 {
					holder = " (pid " + strings.TrimSpace(string(b)) + ")"
				}
				return nil, fmt.Errorf("%s: %w%s; wait for it, or pass --wait", path, ErrLocked, holder)
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		held = append(held, heldLock{lp, f})
	}
	return held, nil
}

// unlock lets a lock file go; an exclusive holder removes it first (see
// lock).
func unlock(f *os.File, remove bool) {
	if remove {
		os.Remove(f.Name())
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN) //nolint:errcheck // closing the descriptor releases the lock anyway
	f.Close()
}

// flock takes a lock of kind how (LOCK_EX or LOCK_SH) on the file at path,
// creating it. A file that was removed or replaced between open and lock
// (its holder released it meanwhile) is opened again, so two runs never
// hold locks on different files of one name; this is what lets release
// remove it.
func flock(path string, how int, wait bool) (*os.File, error) {
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		// O_NOFOLLOW: a link planted at the lock's name is not
		// truncated through (the open fails, naming it).
		lf, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, err
		}
		for {
			err = unix.Flock(int(lf.Fd()), how)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			lf.Close()
			return nil, err
		}
		held, herr := lf.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return lf, nil
		}
		lf.Close() // released and removed meanwhile: try the new file
	}
}

// Shared is a shared lock on an output set: the processes of a sharded
// run each hold one while they work on their own tasks, so that they run
// together but no single run, and no merge, writes the same outputs
// meanwhile ([Begin] takes the lock exclusively).
type Shared struct{ locks []heldLock }

// Share takes a shared lock on the output set anchored at anchor (whose
// directory must exist), and on the side files also (see
// [Options].Also): it fails at once with [ErrLocked] while a run holds
// one of them exclusively, or waits when wait is set.
func Share(anchor string, wait bool, also ...string) (*Shared, error) {
	locks, err := lockAll(append([]string{anchor}, also...), unix.LOCK_SH, wait)
	if err != nil {
		return nil, err
	}
	return &Shared{locks}, nil
}

// Release lets the shared locks go. The lock files stay (other processes
// may hold them too); the next exclusive holder removes them.
func (s *Shared) Release() {
	if s == nil {
		return
	}
	for _, l := range s.locks {
		unlock(l.f, false)
	}
	s.locks = nil
}

// release removes the lock files while still holding them, then unlocks.
func (t *Tx) release() {
	if t.lock != nil {
		unlock(t.lock, true)
		t.lock = nil
	}
	for _, f := range t.also {
		unlock(f, true)
	}
	t.also = nil
}
