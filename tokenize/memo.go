package tokenize

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// MemoMinBytes is the shortest text MemoCounter memoises; shorter texts are
// counted directly, which is cheaper than hashing, locking and storing them
// (see bench/README.md, "Tokenizer").
const MemoMinBytes = 256

// MemoMaxBytes is the longest text MemoCounter memoises. What repeats
// across records is system prompts and tool schemas, which are shorter;
// long tool outputs rarely repeat and would make the memo's memory
// unbounded in practice. The memo holds at most maxEntries × MemoMaxBytes
// bytes of text.
const MemoMaxBytes = 64 << 10

const memoShards = 16

// doorSlots is the number of first-sighting hashes each shard remembers.
const doorSlots = 256

// MemoCounter wraps a Counter with a bounded, concurrency-safe memo of whole
// texts, for turn texts that repeat across records (system prompts, tool
// schemas). A text is stored the second time it is seen: the first time
// only its hash is noted (a direct-mapped "doorkeeper" of doorSlots hashes
// per shard), so the many texts that never repeat (tool outputs) cost one
// hash, not a copy into the memo and the eviction of a text that does
// repeat (bench/README.md: the store-everything memo made counting slower
// than no memo at all on the benchmark corpus). Stored keys are full
// copies of the texts (so the memo never pins a caller's buffer) and a hit
// compares the whole text, so a hit is always exact; the hash only picks
// where to look. Each shard keeps two generations: when the current one is
// full it becomes the previous one and the old previous one is dropped,
// and a hit in the previous generation is promoted. The memo therefore
// holds at most maxEntries texts.
type MemoCounter struct {
	c      Counter
	seed   maphash.Seed
	perGen int // entries per shard generation
	shards [memoShards]memoShard
	hits   atomic.Int64
	misses atomic.Int64
}

type memoEntry struct {
	text string
	n    int
}

type memoShard struct {
	mu        sync.Mutex
	cur, prev map[uint64]memoEntry
	door      [doorSlots]uint64
	_         [40]byte // keep shards on separate cache lines
}

// Memo returns a MemoCounter over c holding at most maxEntries texts of
// MemoMinBytes to MemoMaxBytes bytes. maxEntries < 2*16 disables memoisation (every
// call goes to c) but still counts misses.
func Memo(c Counter, maxEntries int) *MemoCounter {
	m := &MemoCounter{c: c, seed: maphash.MakeSeed(), perGen: maxEntries / (2 * memoShards)}
	for i := range m.shards {
		m.shards[i].cur = make(map[uint64]memoEntry)
	}
	return m
}

// Count returns c.Count(text), from the memo when text was seen before.
func (m *MemoCounter) Count(text string) int { return m.countWith(text, m.c.Count) }

// countWith is Count counting what the memo does not hold with count.
func (m *MemoCounter) countWith(text string, count func(string) int) int {
	if len(text) < MemoMinBytes || len(text) > MemoMaxBytes {
		return count(text)
	}
	if m.perGen == 0 {
		m.misses.Add(1)
		return count(text)
	}
	h := maphash.String(m.seed, text)
	sh := &m.shards[h%memoShards]
	sh.mu.Lock()
	if e, ok := sh.cur[h]; ok && e.text == text {
		sh.mu.Unlock()
		m.hits.Add(1)
		return e.n
	}
	if e, ok := sh.prev[h]; ok && e.text == text {
		m.insertLocked(sh, h, e) // promote
		sh.mu.Unlock()
		m.hits.Add(1)
		return e.n
	}
	// Seen before (by hash): worth storing. Else only note it.
	slot := &sh.door[(h/memoShards)%doorSlots]
	again := *slot == h
	*slot = h
	sh.mu.Unlock()
	m.misses.Add(1)
	n := count(text) // outside the lock: counting is the slow part
	if again {
		sh.mu.Lock()
		if e, ok := sh.cur[h]; !ok || e.text != text {
			m.insertLocked(sh, h, memoEntry{strings.Clone(text), n})
		}
		sh.mu.Unlock()
	}
	return n
}

// cached returns the memo's count of text when it holds it (a hit, as
// Count's), without counting or noting it otherwise.
func (m *MemoCounter) cached(text string) (int, bool) {
	if len(text) < MemoMinBytes || len(text) > MemoMaxBytes || m.perGen == 0 {
		return 0, false
	}
	h := maphash.String(m.seed, text)
	sh := &m.shards[h%memoShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e, ok := sh.cur[h]
	if !ok || e.text != text {
		if e, ok = sh.prev[h]; !ok || e.text != text {
			return 0, false
		}
		m.insertLocked(sh, h, e) // promote
	}
	m.hits.Add(1)
	return e.n, true
}

// CountAtMost is [CountAtMost] of the wrapped counter for texts the memo
// does not take (shorter than MemoMinBytes or longer than MemoMaxBytes),
// and Count for the others.
func (m *MemoCounter) CountAtMost(text string, max int) int {
	if len(text) < MemoMinBytes || len(text) > MemoMaxBytes {
		return CountAtMost(m.c, text, max)
	}
	return m.Count(text)
}

func (m *MemoCounter) insertLocked(sh *memoShard, h uint64, e memoEntry) {
	if len(sh.cur) >= m.perGen {
		sh.prev, sh.cur = sh.cur, make(map[uint64]memoEntry, m.perGen)
	}
	sh.cur[h] = e
}

// Stats returns how many memo-eligible calls (texts of MemoMinBytes to
// MemoMaxBytes bytes) were answered from the memo and how many were not.
// The hit rate is hits / (hits + misses).
func (m *MemoCounter) Stats() (hits, misses int64) {
	return m.hits.Load(), m.misses.Load()
}

// Len returns the number of texts currently held.
func (m *MemoCounter) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.cur) + len(sh.prev)
		sh.mu.Unlock()
	}
	return n
}
