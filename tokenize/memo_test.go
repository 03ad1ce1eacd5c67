package tokenize

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// countingCounter counts calls, so tests can see what the memo answered.
type countingCounter struct{ calls atomic.Int64 }

func (c *countingCounter) Count(text string) int {
	c.calls.Add(1)
	return len(text) / 3
}

func longText(i int) string {
	return fmt.Sprintf("%06d ", i) + strings.Repeat("x", MemoMinBytes)
}

func TestMemoHitsAndMisses(t *testing.T) {
	tests := []struct {
		name             string
		texts            []string
		wantHits, wantMs int64
		wantCalls        int64
	}{
		{"short_texts_bypass", []string{"a", "a", "b"}, 0, 0, 3},
		// Stored on the second sighting, answered from the third on.
		{"repeat_hits", []string{longText(1), longText(1), longText(1), longText(1)}, 2, 2, 2},
		{"distinct_miss", []string{longText(1), longText(2), longText(3)}, 0, 3, 3},
		{"mixed", []string{longText(1), "s", longText(2), longText(1), "s", longText(1)}, 1, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &countingCounter{}
			m := distinctDoors(t, inner, tt.texts)
			for _, s := range tt.texts {
				if got, want := m.Count(s), len(s)/3; got != want {
					t.Fatalf("Count = %d, want %d", got, want)
				}
			}
			hits, misses := m.Stats()
			if hits != tt.wantHits || misses != tt.wantMs || inner.calls.Load() != tt.wantCalls {
				t.Errorf("hits %d misses %d calls %d; want %d %d %d", hits, misses, inner.calls.Load(), tt.wantHits, tt.wantMs, tt.wantCalls)
			}
		})
	}
}

// door is the first-sighting slot text takes in m. The slot table is
// lossy by design: two texts in one slot evict each other's sighting.
func door(m *MemoCounter, text string) uint64 {
	return maphash.String(m.seed, text) % (memoShards * doorSlots)
}

// distinctDoors returns a memo of inner (random seed) in which the distinct
// texts take distinct first-sighting slots, so that the counts a test
// expects do not depend on the seed (a shared slot has a 1 in 4096 chance).
func distinctDoors(t *testing.T, inner Counter, texts []string) *MemoCounter {
	t.Helper()
	for range 100 {
		m := Memo(inner, 1024)
		seen := map[uint64]string{}
		ok := true
		for _, s := range texts {
			if o, dup := seen[door(m, s)]; dup && o != s {
				ok = false
			}
			seen[door(m, s)] = s
		}
		if ok {
			return m
		}
	}
	t.Fatal("no seed in 100 gives distinct slots")
	return nil
}

func TestMemoBound(t *testing.T) {
	for _, max := range []int{0, 31, 32, 100, 1000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			m := Memo(&countingCounter{}, max)
			for i := range 5000 {
				m.Count(longText(i))
				if n := m.Len(); n > max {
					t.Fatalf("after %d inserts the memo holds %d texts, bound %d", i+1, n, max)
				}
			}
		})
	}
}

// TestMemoKeepsRecent checks eviction keeps a text that keeps being used.
func TestMemoKeepsRecent(t *testing.T) {
	inner := &countingCounter{}
	m := Memo(inner, 64)
	hot := longText(-1)
	for i := range 10000 {
		m.Count(hot)
		m.Count(longText(i))
	}
	// hot is missed once, plus at most once per rotation in which it was
	// not promoted; it must be answered from the memo almost always.
	hits, _ := m.Stats()
	if hits < 9000 {
		t.Errorf("hot text hit only %d times out of 10000", hits)
	}
}

// TestMemoCopiesKeys checks the memo copies the texts it keeps: a caller
// that reuses its buffer (here via unsafe.String) must not change the key.
func TestMemoCopiesKeys(t *testing.T) {
	m := Memo(&countingCounter{}, 1024)
	orig := longText(7)
	b := []byte(orig)
	m.Count(unsafe.String(&b[0], len(b)))
	m.Count(unsafe.String(&b[0], len(b))) // seen again: stored
	for i := range b {
		b[i] = 'Z' // the caller reuses its buffer
	}
	m.Count(orig)
	if hits, misses := m.Stats(); hits != 1 || misses != 2 {
		t.Fatalf("hits %d misses %d, want 1 2: the memo kept the caller's bytes", hits, misses)
	}
}

func TestMemoConcurrent(t *testing.T) {
	enc := mustEncoding(t, O200kBase)
	m := Memo(enc, 256)
	texts := make([]string, 300)
	want := make([]int, len(texts))
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("turn %d says hello, world. ", i%40), 12+i%5)
		want[i] = enc.Count(texts[i])
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 2000 {
				i := (k*7 + g*13) % len(texts)
				if got := m.Count(texts[i]); got != want[i] {
					t.Errorf("text %d: Count = %d, want %d", i, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	hits, misses := m.Stats()
	if hits+misses != 8*2000 || hits == 0 {
		t.Errorf("hits %d + misses %d != %d", hits, misses, 8*2000)
	}
	if m.Len() > 256 {
		t.Errorf("memo holds %d > 256", m.Len())
	}
}

func TestEncodingConcurrent(t *testing.T) {
	for _, name := range []string{O200kBase, CL100kBase} {
		enc := mustEncoding(t, name)
		cases := loadGolden(t)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range cases {
					c := cases[(k+g*31)%len(cases)]
					if n := enc.Count(c.raw); n != len(c.ids(name)) {
						t.Errorf("%s %s: Count = %d, want %d", name, c.Name, n, len(c.ids(name)))
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}

// TestMemoExactOnHashCollision: two texts with the same hash (forced
// here by sharing one slot and one map key) never answer for each other.
func TestMemoExactOnHashCollision(t *testing.T) {
	inner := &countingCounter{}
	m := Memo(inner, 1024)
	a, b := longText(1), longText(2)+"yy"
	h := maphash.String(m.seed, a)
	sh := &m.shards[h%memoShards]
	sh.cur[h] = memoEntry{b, 12345} // b stored under a's hash
	if got := m.Count(a); got != len(a)/3 {
		t.Fatalf("Count(a) = %d, want %d (answered for another text)", got, len(a)/3)
	}
}

// TestMemoStoresOnlyRepeats: texts seen once are not kept.
func TestMemoStoresOnlyRepeats(t *testing.T) {
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = longText(i)
	}
	m := distinctDoors(t, &countingCounter{}, texts)
	for _, s := range texts {
		m.Count(s)
	}
	if n := m.Len(); n != 0 {
		t.Fatalf("memo holds %d texts seen once", n)
	}
	m.Count(longText(5))
	if n := m.Len(); n != 1 {
		t.Fatalf("memo holds %d texts after one repeat, want 1", n)
	}
}

func TestMemoSkipsLongTexts(t *testing.T) {
	c, err := New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	m := Memo(c, 64)
	long := strings.Repeat("tool output line\n", MemoMaxBytes/16)
	for range 3 {
		if got, want := m.Count(long), c.Count(long); got != want {
			t.Fatalf("Count = %d, want %d", got, want)
		}
	}
	if hits, misses := m.Stats(); hits != 0 || misses != 0 || m.Len() != 0 {
		t.Fatalf("a text over MemoMaxBytes was memoised: hits %d misses %d len %d", hits, misses, m.Len())
	}
}

// TestCountAtMost: the exact count when it is at most max, else more than
// max, for every golden text and a range of limits, through the encoding,
// the memo and a counter without the method.
func TestCountAtMost(t *testing.T) {
	enc := mustEncoding(t, O200kBase)
	counters := map[string]Counter{"encoding": enc, "memo": Memo(enc, 64), "plain": &countingCounter{}}
	texts := []string{"", "a", "hello world", strings.Repeat("word ", 200), "\xff\xfe bad utf8 " + strings.Repeat("x", 300)}
	for _, c := range loadGolden(t) {
		texts = append(texts, c.raw)
	}
	for name, c := range counters {
		for _, text := range texts {
			n := c.Count(text)
			for _, max := range []int{-3, -1, 0, 1, 2, n / 2, n - 1, n, n + 1, 1000} {
				got := CountAtMost(c, text, max)
				if n <= max && got != n || n > max && got <= max {
					t.Fatalf("%s: CountAtMost(%.30q, %d) = %d; Count = %d", name, text, max, got, n)
				}
			}
		}
	}
}
