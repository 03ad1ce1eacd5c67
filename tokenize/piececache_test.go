package tokenize

import (
	"fmt"
	"strings"
	"testing"
)

// TestPieceCache: a hit is the piece stored, whole; a piece in a slot
// another piece took, of the same or another length, is a miss.
func TestPieceCache(t *testing.T) {
	c := newPieceCache(4)
	pieces := []string{"ab", "ba", "abc", strings.Repeat("x", 8), strings.Repeat("x", 9),
		strings.Repeat("y", pieceMaxLen), strings.Repeat("y", pieceMaxLen-1) + "z", "\x00", "\x00\x00"}
	for i, p := range pieces {
		h := uint64(7) // every piece in the same slot
		if _, ok := c.get(h, p); ok {
			t.Errorf("%q: hit before it was stored", p)
		}
		c.put(h, p, i+1)
		if n, ok := c.get(h, p); !ok || n != i+1 {
			t.Errorf("%q: get = %d, %v; want %d", p, n, ok, i+1)
		}
		for _, q := range pieces[:i] {
			if n, ok := c.get(h, q); ok {
				t.Errorf("%q after %q took its slot: hit %d", q, p, n)
			}
		}
	}
	c.put(1, strings.Repeat("z", pieceMaxLen+1), 3)
	c.put(1, "zz", 256)
	if _, ok := c.get(1, "zz"); ok {
		t.Error("a count above 255 was stored")
	}
	if _, ok := c.get(1, strings.Repeat("z", pieceMaxLen+1)); ok {
		t.Error("a piece longer than pieceMaxLen was stored")
	}
}

// TestHFPieceCacheExact counts the golden texts twice from four
// goroutines through a cache of 8 slots, so that pieces constantly evict
// each other, are read while being replaced and collide: every count must
// still equal the reference's (run under -race by make test).
func TestHFPieceCacheExact(t *testing.T) {
	cases := loadHFGolden(t)
	models := hfModelOrder
	if testing.Short() {
		// The cache is the same code for every model: under -short one
		// model (a fresh load each costs seconds); all without -short.
		models = []string{"llama3"}
	}
	for _, key := range models {
		t.Run(key, func(t *testing.T) {
			tk, err := LoadHF(hfModelPath(t, key))
			if err != nil {
				t.Fatal(err)
			}
			tk.model.pieces = newPieceCache(8)
			concurrently(t, func(g int) string {
				for k := range 2 * len(cases) {
					c := cases[(k+g*97)%len(cases)]
					if n := tk.Count(c.raw); n != len(c.ids[key]) {
						return fmt.Sprintf("golden.jsonl:%d: Count %d, want %d", c.line, n, len(c.ids[key]))
					}
				}
				return ""
			})
			used := 0
			for i := range tk.model.pieces.slots {
				if tk.model.pieces.slots[i].head.Load() != 0 {
					used++
				}
			}
			if used == 0 {
				t.Error("no piece was cached")
			}
		})
	}
}
