// Package atomicfile writes files that appear at their path only when
// complete: a [File] is a temporary file in the destination's directory
// (so the final rename cannot cross file systems) that [File.Commit]
// syncs and renames into place and [File.Abort] removes. Whatever fails,
// the destination holds either its old content or the whole new file.
// Every output of trajcompress (records, rejects, outcomes, metrics) goes
// through it. A File is not safe for concurrent use.
//
// Commit's fsync makes the new file durable before it replaces the old
// one. So that it does not have to write a whole multi-GB output at the
// end while the run waits, File asks the kernel to start writing back each
// [WritebackChunk] as soon as it has been written, and once a chunk is
// [DropLag] bytes behind the end it waits for that chunk's write-back (long
// finished by then, unless the disk is slower than the writer) and drops
// its pages from the page cache (Linux, on filesystems whose writes go
// through the file's own page cache: measured on ext4, expected on XFS and
// Btrfs; on overlayfs (measured), tmpfs and ZFS, and on other systems, the
// pages stay cached and the fsync does all the writing). A multi-GB output
// thus holds at most a few chunks of page cache: it does not push the
// user's other files out of memory, and the kernel hands the dropped pages
// straight back for the next chunks instead of finding fresh ones, which on
// the virtual machines we measured costs more than the copy itself
// (bench/README.md, "End to end"). The price: a program that reads the
// output right after the run reads it from disk. Waiting for a write-back
// is also where its failure shows (and, once seen, a later fsync would not
// report it again): it fails that Write, every later one and Commit.
package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WritebackChunk is how many bytes File lets accumulate before it starts
// their write-back.
const WritebackChunk = 8 << 20

// DropLag is how far behind the end of the written data File drops pages
// from the page cache.
const DropLag = 2 * WritebackChunk

// File is an output being written; write to it as to an *os.File.
type File struct {
	*os.File
	path    string
	done    bool
	inPlace bool  // Append: written at path itself; Commit does not rename
	written int64 // bytes written through Write
	flushed int64 // bytes whose write-back was started
	dropped int64 // bytes dropped from the page cache
	err     error // a failed write-back: sticky, fails Commit
}

// Write writes to the temporary file, starting write-back of each
// completed WritebackChunk and dropping the cached pages DropLag behind.
// A failed write-back of earlier data is returned here (and by every later
// Write and by Commit), since the file can no longer be complete.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.File.Write(p)
	f.written += int64(n)
	if err == nil && f.written-f.flushed >= WritebackChunk {
		startWriteback(f, f.flushed, f.written-f.flushed)
		f.flushed = f.written
		if end := f.flushed - DropLag; end > f.dropped {
			if werr := dropCache(f, f.dropped, end-f.dropped); werr != nil {
				f.err = &os.PathError{Op: "write-back", Path: f.path, Err: werr}
				err = f.err
			}
			f.dropped = end
		}
	}
	return n, err
}

// nameMax is the longest file name (in bytes) of the file systems we write
// to (NAME_MAX on Linux ext4, XFS, Btrfs, tmpfs; macOS APFS).
const nameMax = 255

// ShortKept is the longest name [ShortName] keeps as it is: the longest
// name it returns. The hidden names made of it stay under nameMax with
// room for their longest additions: commit's ".<name>.tc-<16 hex>.tmp"
// (25 bytes), and this package's ".tmp-<up to 10 digits>" after that.
const ShortKept = 175

// ShortName is the name that the hidden names beside a file named base
// (temporary files, locks, journals, run directories) are made of: base
// itself when it has at most ShortKept bytes, else its first bytes (cut
// at a character boundary) and "~" and 16 hex digits of its sha256, in
// ShortKept bytes. So a hidden name is never "file name too long" for any
// name the file system accepts, and stays unique to base.
func ShortName(base string) string { return Fit(base, ShortKept) }

// Fit returns s when it has at most room bytes, else its first bytes (cut
// at a character boundary) and "~" and 16 hex digits of the sha256 of s,
// in at most room bytes (room >= 17).
func Fit(s string, room int) string {
	if len(s) <= room {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	tag := "~" + hex.EncodeToString(sum[:8])
	keep := room - 17
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + tag
}

// NameMax is the longest file name, in bytes, of the file systems written
// to (NAME_MAX of Linux ext4, XFS, Btrfs and tmpfs, and of macOS APFS).
const NameMax = nameMax

// FitName joins stem and tail into a file name of at most NameMax bytes:
// stem is cut by [Fit] when the whole would be longer.
func FitName(stem, tail string) string { return Fit(stem, NameMax-len(tail)) + tail }

// Resolve follows a symbolic link at path (all of them, to the final
// file), so that the file it points to is replaced, never the link; path
// itself when it is no link (or a broken one).
func Resolve(path string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(path); err == nil {
			return r
		}
	}
	return path
}

// Create starts writing path. The temporary file is named
// ".<name>.tmp-<digits>" beside it (<name> is [ShortName] of the file's
// name when the whole would be longer than a file name may be) and has the
// mode a new file gets, 0666 &^ umask, or the mode of the file it
// replaces: a file written over keeps its mode. A symbolic link at path is
// followed: the file it points to is replaced (in its own directory),
// never the link.
func Create(path string) (*File, error) {
	path = Resolve(path)
	name := filepath.Base(path)
	if len(name)+len("..tmp-")+10 > nameMax {
		name = ShortName(name)
	}
	f, err := CreateTemp(filepath.Dir(path), "."+name+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := keepMode(f, path); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// CreateTemp is [os.CreateTemp] (the "*" in pattern becomes digits) but
// for the mode: 0666 &^ umask, a new file's, where os.CreateTemp makes
// every file private (0600) whatever the user's umask says.
func CreateTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}

// keepMode gives f, which is to replace path, the mode of the regular
// file at path (following links); f keeps its own when there is none.
func keepMode(f *os.File, path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if have, err := f.Stat(); err == nil && have.Mode().Perm() == fi.Mode().Perm() {
		return nil
	}
	return f.Chmod(fi.Mode().Perm())
}

// Append opens path to write after its first keep bytes: it is created
// when missing and cut to keep bytes when longer (what a killed writer
// left past its last checkpoint). Writes go to path itself, with the same
// write-back and page-cache drop as [Create]'s; [File.Checkpoint] makes
// them durable, Commit syncs and closes (no rename), Abort closes. It is
// for the segments of a resumable run, whose commit point is elsewhere.
func Append(path string, keep int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() < keep {
		err = fmt.Errorf("%s: %d bytes, %d expected: the segment was cut", path, st.Size(), keep)
	}
	if err == nil {
		err = f.Truncate(keep)
	}
	if err == nil {
		_, err = f.Seek(keep, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{File: f, path: path, inPlace: true, written: keep, flushed: keep, dropped: keep}, nil
}

// Checkpoint makes everything written so far durable (fsync), or returns
// the write-back error an earlier Write saw.
func (f *File) Checkpoint() error {
	if f.err != nil {
		return f.err
	}
	return f.Sync()
}

// Path is the destination.
func (f *File) Path() string { return f.path }

// Commit syncs, closes and renames the file into place, then syncs the
// directory. On error (including a write-back error seen by an earlier
// Write) the temporary file is removed and the destination is untouched.
// Commit after Commit or Abort is a no-op.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.err
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if f.inPlace {
		return err
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	if d, derr := os.Open(filepath.Dir(f.path)); derr == nil {
		d.Sync() //nolint:errcheck // best effort: the rename is done; a directory that cannot sync loses nothing the rename did not
		d.Close()
	}
	return nil
}

// Finish ends a write whose outcome is err: nil commits (and returns
// Commit's error), anything else aborts and returns err. It is the one
// place where "finished writing" turns into "in place or gone".
func (f *File) Finish(err error) error {
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// Abort closes and removes the temporary file; the destination is
// untouched. Abort after Commit or Abort is a no-op.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	f.File.Close()
	if f.inPlace {
		return nil
	}
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
