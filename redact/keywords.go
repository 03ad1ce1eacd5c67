package redact

// keywordIndex finds, case-insensitively, every occurrence of a set of
// lower-case keywords (each at least 2 bytes long) in a text. It is a
// prefilter: a 2^16-bit table says which case-folded byte pairs begin a
// keyword, so the scan of a text without any candidate pair is a loop of
// independent table probes, with no state carried from byte to byte; only
// at a candidate pair are the keywords that start with it compared.
type keywordIndex struct {
	first [1 << 16 / 64]uint64 // bit set: some keyword starts with this folded pair
	// byPair maps a folded pair to the keywords starting with it.
	byPair map[uint16][]int32
	words  []string
}

// fold maps ASCII upper-case letters to lower case; other bytes are
// unchanged. The pair table uses b|0x20, which also merges some
// punctuation pairs: that only adds candidates, which the exact comparison
// then rejects.
func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

func pairKey(a, b byte) uint16 { return uint16(a|0x20)<<8 | uint16(b|0x20) }

func newKeywordIndex(words []string) *keywordIndex {
	k := &keywordIndex{byPair: map[uint16][]int32{}, words: words}
	for i, w := range words {
		if len(w) < 2 {
			panic("redact: keyword shorter than 2 bytes: " + w)
		}
		p := pairKey(w[0], w[1])
		k.first[p>>6] |= 1 << (p & 63)
		k.byPair[p] = append(k.byPair[p], int32(i))
	}
	return k
}

// scan calls hit(word, end) for each occurrence of a keyword in text,
// end being the offset just past it, in increasing order of start.
func (k *keywordIndex) scan(text string, hit func(word int32, end int)) {
	n := len(text) - 1
	for i := 0; i < n; i++ {
		p := pairKey(text[i], text[i+1])
		if k.first[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, w := range k.byPair[p] {
			word := k.words[w]
			if hasFoldedPrefix(text[i:], word) {
				hit(w, i+len(word))
			}
		}
	}
}

// any reports whether text holds some keyword.
func (k *keywordIndex) any(text string) bool {
	n := len(text) - 1
	for i := 0; i < n; i++ {
		p := pairKey(text[i], text[i+1])
		if k.first[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, w := range k.byPair[p] {
			if hasFoldedPrefix(text[i:], k.words[w]) {
				return true
			}
		}
	}
	return false
}

// hasFoldedPrefix reports whether s starts with the lower-case word,
// ignoring ASCII case in s.
func hasFoldedPrefix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for j := 0; j < len(word); j++ {
		if fold(s[j]) != word[j] {
			return false
		}
	}
	return true
}
