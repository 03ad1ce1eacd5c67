package tokenize

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// btVocab is a vocabulary the backtracking encoder is checked on: tiktoken
// ranks (m nil) or a tokenizer.json's model.
type btVocab struct {
	name string
	v    *vocab
	m    *hfModel
}

func (c btVocab) tables(t testing.TB) *backtrack {
	t.Helper()
	if c.m == nil {
		return c.v.bt.get(c.v, nil)
	}
	return c.m.bt.get(c.m.tok, c.m.merges)
}

// bytesOf returns the bytes of each token of b by internal index, and the
// internal index of each id.
func (c btVocab) bytesOf(b *backtrack) ([]string, map[uint32]int32) {
	byID := map[uint32]string{}
	for _, e := range c.v.table {
		if e != 0 {
			o, n := int(e>>rankBits)&(maxArena-1), int(e>>(rankBits+offBits))&maxTokenLen
			byID[uint32(e&maxRank)] = c.v.arena[o : o+n]
		}
	}
	out := make([]string, len(b.id))
	idx := map[uint32]int32{}
	for i, id := range b.id {
		out[i] = byID[id]
		idx[id] = int32(i)
	}
	return out, idx
}

// ref merges p as the reference does: the linear scan (the reference's
// own algorithm) up to a few thousand bytes, the queue (checked against
// it in TestMergeQueueMatchesLinear) beyond.
func (c btVocab) ref(p string) []int {
	var out []int
	switch {
	case c.m == nil && len(p) <= 3000:
		out, _ = c.v.mergeLinear(p, make([]int32, len(p)+1), make([]uint32, len(p)+1), nil, true)
	case c.m == nil:
		out, _ = c.v.queueMerge(p, nil, true)
	case len(p) <= 3000:
		out, _ = c.m.mergeLinear(p, make([]uint32, len(p)), make([]uint32, len(p)), nil, true)
	default:
		out, _ = c.m.queueMerge(p, nil, true)
	}
	return out
}

// btSynthetic returns two small vocabularies whose trees are not all
// monotone, as Llama-3's: "abc" is merged from "a" and "bc" at a rank
// below the one that makes "bc". One has tiktoken ranks, the other
// tokenizer.json merges. Two traps: the walk of compatible would take
// "x", "abc" for compatible, but "xa" merges first and gives "xa", "bc";
// and "yabc" looks made of "ya" and "bc" until the pair "a", "bc" of the
// token "abc" (which the build meets only later) is known.
func btSynthetic(t testing.TB) []btVocab {
	t.Helper()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	extra := []string{"abc", "xa", "bc", "ab", "abcabc", "ca", "cab", "aa", "aaaa", "abcab", "ya", "yabc"}
	rows := allBytes()
	for i, s := range extra {
		rows = append(rows, b64(s)+" "+strconv.Itoa(256+i))
	}
	text := strings.Join(rows, "\n")
	v, err := parseVocab("synthetic.tiktoken", strings.NewReader(text), len(text))
	if err != nil {
		t.Fatal(err)
	}
	// The same tokens with these merges, in this order.
	merges := []string{"a bc", "x a", "b c", "a b", "abc abc", "c a", "c ab", "a a", "aa aa", "abc ab", "y a", "ya bc", "y abc"}
	var vb, mb strings.Builder
	vb.WriteString("{")
	for b := range 256 {
		fmt.Fprintf(&vb, "%q: %d,", string(byteLevelChar[b]), b)
	}
	for i, s := range extra {
		fmt.Fprintf(&vb, "%q: %d", s, 256+i)
		if i < len(extra)-1 {
			vb.WriteString(",")
		}
	}
	vb.WriteString("}")
	mb.WriteString("[")
	for i, m := range merges {
		if i > 0 {
			mb.WriteString(",")
		}
		fmt.Fprintf(&mb, "%q", m)
	}
	mb.WriteString("]")
	m, err := buildHFModel([]byte(vb.String()), []byte(mb.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	return []btVocab{{"synthetic-tiktoken", v, nil}, {"synthetic-merges", m.tok, m}}
}

// btVocabs runs f on each vocabulary: o200k_base, cl100k_base, the
// synthetic ones, and the tokenizer.json files of the golden tests (those
// subtests skip, saying why, when the files cannot be installed). With
// -short (the -race run of make test, where building the tables takes
// seconds each) only o200k_base, the synthetic ones and Llama-3, whose
// merges are not all monotone.
func btVocabs(t *testing.T, f func(t *testing.T, c btVocab)) {
	encs, models := []string{O200kBase, CL100kBase}, hfModelOrder
	if testing.Short() {
		encs, models = encs[:1], []string{"llama3"}
	}
	for _, name := range encs {
		t.Run(name, func(t *testing.T) { f(t, btVocab{name, mustEncoding(t, name).v, nil}) })
	}
	for _, c := range btSynthetic(t) {
		t.Run(c.name, func(t *testing.T) { f(t, c) })
	}
	for _, key := range models {
		t.Run(key, func(t *testing.T) {
			m := hfTokenizer(t, key).model
			f(t, btVocab{key, m.tok, m})
		})
	}
}

// TestBacktrackTables checks the tables that the encoder's exactness rests
// on against the reference merge, for every token of every vocabulary:
// a token is proposed exactly when merging its bytes gives it back, its
// split is the last merge of that run and rho that merge's rank, and the
// monotone flag is the definition's. The build finds the splits without
// merging where it can, so this is the check that it may.
func TestBacktrackTables(t *testing.T) {
	btVocabs(t, func(t *testing.T, c btVocab) {
		step := int32(1)
		if testing.Short() {
			step = 7 // a sample: the quick loop
		}
		step = raceOr(step*raceEvery, step) // under -race the whole takes minutes
		reachable, notMono := checkTables(t, c, step)
		t.Logf("%d reachable tokens checked, %d not monotone", reachable, notMono)
		if strings.HasPrefix(c.name, "synthetic") && notMono == 0 && step == 1 {
			t.Error("the synthetic vocabulary should have tokens that are not monotone")
		}
	})
}

// checkTables checks every step-th token of c's tables against the
// reference merge (see TestBacktrackTables) and returns how many
// reachable tokens it checked and how many of them are not monotone.
func checkTables(t *testing.T, c btVocab, step int32) (reachable, notMono int) {
	t.Helper()
	b := c.tables(t)
	if b == nil {
		t.Fatal("no tables")
	}
	var sc refScratch
	tokBytes, index := c.bytesOf(b)
	for ti := int32(0); ti < int32(len(b.tok)); ti += step {
		nd := &b.tok[ti]
		id := int32(b.id[ti])
		s := tokBytes[ti]
		// Reachable: the reference's own linear scan gives the token.
		got := c.ref(s)
		one := len(got) == 1 && got[0] == int(id)
		if one != (nd.len() > 0) {
			t.Fatalf("token %d %q: reachable %v, tables say length %d", id, s, one, nd.len())
		}
		if !one {
			continue
		}
		reachable++
		if len(s) == 1 {
			if nd.rho() != -1 || nd.left != -1 || nd.right != -1 || !nd.mono() {
				t.Fatalf("byte token %d: %+v", id, *nd)
			}
			continue
		}
		start, rank, ids := sc.slices(len(s))
		m := b.refMerger(s, ids)
		k, r := refMerge(&m, len(s), 2, start, rank)
		mid := start[1]
		if k != 2 || uint32(nd.rho()) != r || tokBytes[nd.left] != s[:mid] || tokBytes[nd.right] != s[mid:] {
			t.Fatalf("token %d %q: split %q+%q at rank %d, want %q+%q at rank %d", id, s, tokBytes[nd.left], tokBytes[nd.right], nd.rho(), s[:mid], s[mid:], r)
		}
		l, rt := &b.tok[nd.left], &b.tok[nd.right]
		mono := l.mono() && rt.mono() && l.rho() < nd.rho() && rt.rho() < nd.rho()
		if nd.mono() != mono {
			t.Fatalf("token %d %q: monotone %v, want %v", id, s, nd.mono(), mono)
		}
		if !mono {
			notMono++
		}
		// The longest reachable proper prefix.
		want := int32(-1)
		for j := len(s) - 1; j > 0 && want < 0; j-- {
			if r := c.v.lookup(s[:j]); r != noRank {
				if x, ok := index[r]; ok && b.tok[x].len() > 0 {
					want = x
				}
			}
		}
		if nd.nextPrefix != want {
			t.Fatalf("token %d %q: next prefix %d, want %d", id, s, nd.nextPrefix, want)
		}
	}
	return reachable, notMono
}

// randomVocab returns a small vocabulary over the bytes of alpha: tokens
// made by merging two earlier ones, at random, with ranks (tiktoken) or a
// merges list order (tokenizer.json) shuffled, so that many merges come
// before the merges of their parts and the split trees are far from
// monotone.
func randomVocab(t testing.TB, rng *rand.Rand, alpha string, tiktoken bool) btVocab {
	t.Helper()
	toks := strings.Split(alpha, "")
	seen := map[string]bool{}
	type merge struct{ a, b string }
	var merges []merge
	for n := 10 + rng.IntN(30); len(merges) < n; {
		a, b := toks[rng.IntN(len(toks))], toks[rng.IntN(len(toks))]
		if len(a)+len(b) > 8 || seen[a+b] {
			continue
		}
		seen[a+b] = true
		toks = append(toks, a+b)
		merges = append(merges, merge{a, b})
	}
	for i := range merges {
		if rng.IntN(3) == 0 {
			j := rng.IntN(len(merges))
			merges[i], merges[j] = merges[j], merges[i]
		}
	}
	if tiktoken {
		rows := allBytes()
		for i, m := range merges {
			rows = append(rows, base64.StdEncoding.EncodeToString([]byte(m.a+m.b))+" "+strconv.Itoa(256+i))
		}
		text := strings.Join(rows, "\n")
		v, err := parseVocab("random.tiktoken", strings.NewReader(text), len(text))
		if err != nil {
			t.Fatal(err)
		}
		return btVocab{"random-tiktoken", v, nil}
	}
	var vb, mb strings.Builder
	vb.WriteString("{")
	for b := range 256 {
		fmt.Fprintf(&vb, "%q: %d,", string(byteLevelChar[b]), b)
	}
	for i, m := range merges {
		if i > 0 {
			vb.WriteString(",")
			mb.WriteString(",")
		}
		fmt.Fprintf(&vb, "%q: %d", m.a+m.b, 256+i)
		fmt.Fprintf(&mb, "%q", m.a+" "+m.b)
	}
	vb.WriteString("}")
	m, err := buildHFModel([]byte(vb.String()), []byte("["+mb.String()+"]"), false)
	if err != nil {
		t.Fatal(err)
	}
	return btVocab{"random-merges", m.tok, m}
}

// TestBacktrackRandomVocabularies checks the tables and the ids of many
// small random vocabularies whose trees are not monotone: it fails within
// a few vocabularies if compatibleAt walks the split trees of tokens that
// are not monotone instead of merging their bytes, or if the build keeps
// splits found by the walk above the first token that is not.
func TestBacktrackRandomVocabularies(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	vocabs := 400
	if testing.Short() {
		vocabs = 60
	}
	notMono := 0
	for k := range vocabs {
		c := randomVocab(t, rng, "abcd", k%2 == 0)
		_, nm := checkTables(t, c, 1)
		notMono += nm
		b := c.tables(t)
		for range 20 {
			var sb strings.Builder
			for n := 2 + rng.IntN(200); sb.Len() < n; {
				sb.WriteByte("abcd"[rng.IntN(4)])
			}
			p := sb.String()
			want := c.ref(p)
			if got, _, ok := b.run(p, nil, true); !ok || !slices.Equal(got, want) {
				t.Fatalf("%s %d %q: backtracking %v, reference %v", c.name, k, p, got, want)
			}
		}
	}
	t.Logf("%d vocabularies, %d tokens not monotone", vocabs, notMono)
}

// btInputs returns adversarial pieces for vocabulary c: runs of one unit,
// random bytes, random text over small and large alphabets, whitespace
// runs, CJK, emoji, random concatenations of the vocabulary's own tokens,
// and the golden texts, each taken whole as one piece. Lengths cross
// backtrackMin and the linear/queue border of ref.
func btInputs(c btVocab, short bool) []string {
	rng := rand.New(rand.NewPCG(14, uint64(len(c.name))))
	sizes := []int{1500, 2900, 40000}
	if short {
		sizes = []int{1500, 6000}
	}
	random := func(n int, atom func() string) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(atom())
		}
		return b.String()
	}
	pick := func(s ...string) func() string { return func() string { return s[rng.IntN(len(s))] } }
	var out []string
	for _, n := range sizes {
		for _, unit := range []string{"a", "ab", "abc", " ", "\n", "\t", " \n", "\r\n", "-", "=", "0", "00", ".", "我", "🎉", " a", "é", "\x00", "\xff", "bc", "cab", "xabc", "yabc", "xyabc"} {
			out = append(out, strings.Repeat(unit, n/len(unit)))
		}
		out = append(out,
			random(n, func() string { return string(rune(rng.IntN(256))) }),
			random(n, func() string { return string([]byte{byte(rng.IntN(256))}) }),
			random(n, func() string { return string(rune('a' + rng.IntN(26))) }),
			random(n, pick("a", "b", "c")),
			random(n, pick("a", "b", "c", "ab", "bc", "abc")),
			random(n, pick("a", "b", "c", "x", "y")),
			random(n, pick(" ", " ", "\t", "\n", "\r\n", "\u3000", "\u00a0")),
			random(n, func() string { return string(rune(0x4e00 + rng.IntN(2000))) }),
			random(n, pick("🎉", "👍🏽", "é", "\u0301", "ก\u0e31")),
			random(n, func() string { return c.randomToken(rng) }),
		)
	}
	return append(out, longPieces()...)
}

// randomToken returns the bytes of a random token of c.
func (c btVocab) randomToken(rng *rand.Rand) string {
	for {
		e := c.v.table[rng.IntN(len(c.v.table))]
		if e != 0 {
			o, n := int(e>>rankBits)&(maxArena-1), int(e>>(rankBits+offBits))&maxTokenLen
			return c.v.arena[o : o+n]
		}
	}
}

// TestBacktrackMatchesReference checks, for each vocabulary, that the
// backtracking encoder gives the reference's ids on adversarial pieces,
// directly and through the piece path that uses it from backtrackMin
// bytes on.
func TestBacktrackMatchesReference(t *testing.T) {
	btVocabs(t, func(t *testing.T, c btVocab) {
		b := c.tables(t)
		inputs := btInputs(c, testing.Short())
		if !testing.Short() {
			for _, g := range loadGolden(t) {
				inputs = append(inputs, g.raw)
			}
		}
		for _, p := range inputs {
			want := c.ref(p)
			got, n, ok := b.run(p, nil, true)
			if !ok || n != len(want) || !slices.Equal(got, want) {
				t.Fatalf("%.60q (%d bytes): backtracking differs from the reference at token %d of %d (ok %v)", p, len(p), firstDiff(got, want), len(want), ok)
			}
			var viaPiece []int
			if c.m == nil {
				viaPiece, _ = c.v.mergeLarge(p, nil, true)
			} else {
				viaPiece, _ = c.m.merge(p, nil, true)
			}
			if len(p) > smallPiece && !slices.Equal(viaPiece, want) {
				t.Fatalf("%.60q (%d bytes): the piece path differs from the reference", p, len(p))
			}
		}
	})
}

// TestLongPiecesOracle checks Encode and Count on long one-piece inputs
// (testdata/long_golden.jsonl, from testdata/hf/gen_long.mjs) against the
// references themselves: npm tiktoken for o200k_base and cl100k_base, npm
// tokenizers for the tokenizer.json models (skipped, saying why, when
// those files cannot be installed). The file holds each sequence's length
// and SHA-256, not the ids.
func TestLongPiecesOracle(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "long_golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type digest struct {
		N      int    `json:"n"`
		SHA256 string `json:"sha256"`
	}
	var rows []map[string]json.RawMessage
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var row map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	check := func(t *testing.T, key string, c Counter, encode func(string) []int) {
		long := 0
		for _, row := range rows {
			var name, b64 string
			var want digest
			if json.Unmarshal(row["name"], &name) != nil || json.Unmarshal(row["text"], &b64) != nil || json.Unmarshal(row[key], &want) != nil {
				t.Fatalf("long_golden.jsonl: a row without name, text or %s", key)
			}
			text, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			ids := encode(string(text))
			strs := make([]string, len(ids))
			for i, id := range ids {
				strs[i] = strconv.Itoa(id)
			}
			sum := sha256.Sum256([]byte(strings.Join(strs, ",")))
			if n := c.Count(string(text)); n != want.N || len(ids) != want.N || hex.EncodeToString(sum[:]) != want.SHA256 {
				t.Errorf("%s %s: Count %d, %d ids, want %d and the reference's ids", key, name, n, len(ids), want.N)
			}
			long++
		}
		t.Logf("%s: %d long inputs equal to the reference", key, long)
	}
	encs, models := []string{O200kBase, CL100kBase}, hfModelOrder
	if testing.Short() { // as btVocabs
		encs, models = encs[:1], []string{"llama3"}
	}
	for _, name := range encs {
		t.Run(name, func(t *testing.T) {
			enc := mustEncoding(t, name)
			check(t, name, enc, enc.Encode)
		})
	}
	for _, key := range models {
		t.Run(key, func(t *testing.T) {
			tk := hfTokenizer(t, key)
			check(t, key, tk, tk.Encode)
		})
	}
}

// TestBacktrackNotForSharedRanks: a tiktoken file in which two tokens
// share a rank has no backtracking tables (ids would not name tokens), and
// long pieces are merged by the queue instead, exactly.
func TestBacktrackNotForSharedRanks(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	text := strings.Join(append(allBytes(), b64("ab")+" 256", b64("cd")+" 256", b64("abcd")+" 257"), "\n")
	v, err := parseVocab("shared.tiktoken", strings.NewReader(text), len(text))
	if err != nil {
		t.Fatal(err)
	}
	if v.bt.get(v, nil) != nil {
		t.Fatal("tables built for a vocabulary with a shared rank")
	}
	c := btVocab{"shared", v, nil}
	p := strings.Repeat("abcdab", 500)
	got, _ := v.mergeLarge(p, nil, true)
	if want := c.ref(p); !slices.Equal(got, want) {
		t.Fatalf("differs from the reference at token %d", firstDiff(got, want))
	}
}

// TestBacktrackConcurrent merges long pieces from several goroutines on
// vocabularies whose tables are not built yet, so that the build and the
// pooled scratch are shared (run under -race by make test).
func TestBacktrackConcurrent(t *testing.T) {
	for _, c := range btSynthetic(t) {
		inputs := btInputs(c, true)
		want := make([][]int, len(inputs))
		for i, p := range inputs {
			want[i] = c.ref(p)
		}
		concurrently(t, func(g int) string {
			for k := range inputs {
				i := (k + g*7) % len(inputs)
				var got []int
				if c.m == nil {
					got, _ = c.v.mergeLarge(inputs[i], nil, true)
				} else {
					got, _ = c.m.merge(inputs[i], nil, true)
				}
				if !slices.Equal(got, want[i]) {
					return fmt.Sprintf("%s input %d: differs from the reference at token %d", c.name, i, firstDiff(got, want[i]))
				}
			}
			return ""
		})
	}
}

// FuzzBacktrack compares the backtracking encoder with the reference's
// linear merge on any bytes taken as one piece, for o200k_base,
// cl100k_base, the synthetic vocabularies and two random ones over "abcd"
// (none of the last four monotone).
func FuzzBacktrack(f *testing.F) {
	for _, s := range []string{"abcabcabc", "xabcxabc", "yabcyabc", "dadcdabcdbbcadd", "aaaaaaaaaaaa", "  \n\n\t  ", "我需要为生成一张发票", "\xff\xfe\x00abc", "cabcabcab", strings.Repeat("ab", 300)} {
		f.Add(s)
	}
	var vocabs []btVocab
	for _, name := range []string{O200kBase, CL100kBase} {
		vocabs = append(vocabs, btVocab{name, mustEncoding(f, name).v, nil})
	}
	vocabs = append(vocabs, btSynthetic(f)...)
	rng := rand.New(rand.NewPCG(5, 5))
	vocabs = append(vocabs, randomVocab(f, rng, "abcd", true), randomVocab(f, rng, "abcd", false))
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || len(s) > 3000 {
			t.Skip()
		}
		for _, c := range vocabs {
			want := c.ref(s)
			got, _, ok := c.tables(t).run(s, nil, true)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("%s %q: backtracking %v, reference %v", c.name, s, got, want)
			}
		}
	})
}

// BenchmarkBacktrackBuild times building the tables, which the first piece
// of backtrackMin bytes or more in a process pays once per vocabulary.
func BenchmarkBacktrackBuild(b *testing.B) {
	for _, name := range []string{O200kBase, CL100kBase} {
		b.Run(name, func(b *testing.B) {
			v := mustEncoding(b, name).v
			for b.Loop() {
				newBacktrack(v, nil)
			}
		})
	}
	for _, key := range hfModelOrder {
		b.Run(key, func(b *testing.B) {
			m := hfTokenizer(b, key).model
			for b.Loop() {
				newBacktrack(m.tok, m.merges)
			}
		})
	}
}
