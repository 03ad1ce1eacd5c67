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

// MemoCounter wraps a Counter with a bounded, concurrency-safe memo of whole
// texts, for turn texts that repeat across records (system prompts, tool
// schemas). Keys are the full texts (copied, so the memo never pins a
// caller's buffer), so a hit is always exact. Each shard keeps two
// generations: when the current one is full it becomes the previous one and
// the old previous one is dropped, and a hit in the previous generation is
// promoted. The memo therefore holds at most maxEntries texts.
type MemoCounter struct {
	c      Counter
	seed   maphash.Seed
	perGen int // entries per shard generation
	shards [memoShards]memoShard
	hits   atomic.Int64
	misses atomic.Int64
}

type memoShard struct {
	mu        sync.Mutex
	cur, prev map[string]int
	_         [40]byte // keep shards on separate cache lines
}

// Memo returns a MemoCounter over c holding at most maxEntries texts of
// MemoMinBytes to MemoMaxBytes bytes. maxEntries < 2*16 disables memoisation (every
// call goes to c) but still counts misses.
func Memo(c Counter, maxEntries int) *MemoCounter {
	m := &MemoCounter{c: c, seed: maphash.MakeSeed(), perGen: maxEntries / (2 * memoShards)}
	for i := range m.shards {
		m.shards[i].cur = make(map[string]int)
	}
	return m
}

// Count returns c.Count(text), from the memo when text was seen before.
func (m *MemoCounter) Count(text string) int {
	if len(text) < MemoMinBytes || len(text) > MemoMaxBytes {
		return m.c.Count(text)
	}
	if m.perGen == 0 {
		m.misses.Add(1)
		return m.c.Count(text)
	}
	sh := &m.shards[maphash.String(m.seed, text)%memoShards]
	sh.mu.Lock()
	if n, ok := sh.cur[text]; ok {
		sh.mu.Unlock()
		m.hits.Add(1)
		return n
	}
	if n, ok := sh.prev[text]; ok {
		m.insertLocked(sh, strings.Clone(text), n) // promote (a copy: text is the caller's)
		sh.mu.Unlock()
		m.hits.Add(1)
		return n
	}
	sh.mu.Unlock()
	m.misses.Add(1)
	n := m.c.Count(text) // outside the lock: counting is the slow part
	sh.mu.Lock()
	if _, ok := sh.cur[text]; !ok {
		m.insertLocked(sh, strings.Clone(text), n)
	}
	sh.mu.Unlock()
	return n
}

func (m *MemoCounter) insertLocked(sh *memoShard, text string, n int) {
	if len(sh.cur) >= m.perGen {
		sh.prev, sh.cur = sh.cur, make(map[string]int, m.perGen)
	}
	sh.cur[text] = n
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
