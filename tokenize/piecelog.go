package tokenize

import (
	"sort"
	"unsafe"
)

// PieceLog records the pre-tokenized pieces that counting parts of one
// text split them into, by their place in the text, with their token
// counts, so that another part of the same text can be counted again
// without looking up or merging the pieces it splits into at the same
// places (a chat template's rendering of a record, counted first whole,
// then turn by turn: the turn texts are in the rendering). The count is
// always the same as Count's: a piece's count depends on its bytes only,
// and a piece is taken from the log only when the new count split the
// text at exactly its start and end; any other piece is counted as Count
// counts it. Pieces of a copy of the text (ill-formed UTF-8 replaced, or a
// normalizer that changed it) are not in the text's memory, so they are
// neither logged nor looked up. A PieceLog holds 12 bytes per piece (about
// three bytes per byte of text) and is not safe for concurrent use.
type PieceLog struct {
	text    string
	entries []logEntry // ascending, not overlapping
	cur     int        // where the last lookup ended
}

type logEntry struct{ start, end, n int32 }

// Reset empties the log and makes it a log of text (texts of 2 GiB or
// more are not logged).
func (l *PieceLog) Reset(text string) {
	l.text, l.entries, l.cur = text, l.entries[:0], 0
	// About one piece per 4 bytes of text: room for them up front, so
	// that logging does not copy the entries as they grow.
	if n := len(text)/4 + 16; cap(l.entries) < n && len(text) < 1<<31 {
		l.entries = make([]logEntry, 0, n)
	}
}

// Text is the text the log is of.
func (l *PieceLog) Text() string { return l.text }

// Len is the number of pieces logged.
func (l *PieceLog) Len() int { return len(l.entries) }

// offset returns where p lies in the log's text, if it lies in its memory.
func (l *PieceLog) offset(p string) (int, bool) {
	if len(l.text) == 0 || len(l.text) >= 1<<31 || len(p) == 0 {
		return 0, false
	}
	d := uintptr(unsafe.Pointer(unsafe.StringData(p))) - uintptr(unsafe.Pointer(unsafe.StringData(l.text)))
	if d > uintptr(len(l.text)-len(p)) { // also when p starts before the text
		return 0, false
	}
	return int(d), true
}

func (l *PieceLog) add(p string, n int) {
	off, ok := l.offset(p)
	if !ok || n >= 1<<31 {
		return
	}
	if k := len(l.entries); k > 0 && int(l.entries[k-1].end) > off {
		return // out of order: a part counted again
	}
	l.entries = append(l.entries, logEntry{int32(off), int32(off + len(p)), int32(n)})
}

// find returns the count of piece p when the log holds a piece at exactly
// its place.
func (l *PieceLog) find(p string) (int, bool) {
	off, ok := l.offset(p)
	if !ok || len(l.entries) == 0 {
		return 0, false
	}
	e := l.entries
	if l.cur >= len(e) || int(e[l.cur].start) > off {
		l.cur = sort.Search(len(e), func(i int) bool { return int(e[i].end) > off })
	}
	for l.cur < len(e) && int(e[l.cur].end) <= off {
		l.cur++
	}
	if l.cur < len(e) && int(e[l.cur].start) == off && int(e[l.cur].end) == off+len(p) {
		return int(e[l.cur].n), true
	}
	return 0, false
}

// PieceCounter is a [Counter] that can log the pieces of what it counts
// and count parts of a logged text again from the log (see [PieceLog]).
type PieceCounter interface {
	Counter
	// CountLogged is Count(s), s a part of log's text (a substring
	// sharing its memory), adding s's pieces to log.
	CountLogged(s string, log *PieceLog) int
	// CountReusing is Count(s), s a part of log's text, taking from log
	// the counts of the pieces it holds at the same places.
	CountReusing(s string, log *PieceLog) int
}

// CountLogged implements [PieceCounter].
func (t *HFTokenizer) CountLogged(s string, log *PieceLog) int {
	a := hfAcc{max: maxInt, log: log}
	t.run(s, &a)
	return a.n
}

// CountReusing implements [PieceCounter].
func (t *HFTokenizer) CountReusing(s string, log *PieceLog) int {
	a := hfAcc{max: maxInt, reuse: log}
	t.run(s, &a)
	return a.n
}

// CountLogged implements [PieceCounter] when the wrapped counter does
// (else it is Count): a text the memo holds is not logged.
func (m *MemoCounter) CountLogged(s string, log *PieceLog) int {
	pc, ok := m.c.(PieceCounter)
	if !ok {
		return m.Count(s)
	}
	return m.count(s, func(s string) int { return pc.CountLogged(s, log) })
}

// CountReusing implements [PieceCounter] when the wrapped counter does
// (else it is Count).
func (m *MemoCounter) CountReusing(s string, log *PieceLog) int {
	pc, ok := m.c.(PieceCounter)
	if !ok {
		return m.Count(s)
	}
	return m.count(s, func(s string) int { return pc.CountReusing(s, log) })
}
