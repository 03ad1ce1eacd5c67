package tokenize

import (
	"encoding/base64"
	"fmt"
	"math/bits"
	"strings"
	"testing"
)

// allBytes returns rank-file rows for the 256 single bytes, ranks 0..255.
func allBytes() []string {
	rows := make([]string, 256)
	for b := range 256 {
		rows[b] = fmt.Sprintf("%s %d", base64.StdEncoding.EncodeToString([]byte{byte(b)}), b)
	}
	return rows
}

func TestParseVocab(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name    string
		extra   []string
		sep     string
		want    map[string]uint32
		wantErr string
	}{
		{name: "identity", extra: []string{b64("ab") + " 256", b64("abc") + " 257"}, want: map[string]uint32{"ab": 256, "abc": 257, "a": 'a', "abcd": noRank}},
		{name: "non_identity", extra: []string{b64("ab") + " 300", b64("hello") + " 290"}, want: map[string]uint32{"ab": 300, "hello": 290, "z": 'z'}},
		{name: "crlf", sep: "\r\n", extra: []string{b64("xyz") + " 256"}, want: map[string]uint32{"xyz": 256}},
		{name: "long_token", extra: []string{b64(strings.Repeat("q", 40)) + " 256"}, want: map[string]uint32{strings.Repeat("q", 40): 256, strings.Repeat("q", 39): noRank}},
		{name: "key_lengths", extra: []string{b64("abcdefg") + " 256", b64("abcdefgh") + " 257", b64("abcdefghi") + " 258", b64("abcdefghij") + " 259", b64("abcdefghijklmnopq") + " 260"},
			want: map[string]uint32{"abc": noRank, "abcdefg": 256, "abcdefgh": 257, "abcdefghi": 258, "abcdefghij": 259, "abcdefghijklmnopq": 260, "abcdefghX": noRank, "abcdefgX": noRank, "abcdefghijklmnopX": noRank}},
		{name: "duplicate_long", extra: []string{b64("abcdefghij") + " 256", b64("abcdefghij") + " 257"}, wantErr: "listed twice"},
		{name: "bad_base64", extra: []string{"!!!! 256"}, wantErr: "test.tiktoken:257: bad base64"},
		{name: "bad_rank", extra: []string{b64("ab") + " 2x"}, wantErr: "test.tiktoken:257: bad rank"},
		{name: "no_rank", extra: []string{b64("ab")}, wantErr: "test.tiktoken:257: want"},
		{name: "duplicate", extra: []string{b64("ab") + " 256", b64("ab") + " 257"}, wantErr: "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sep := tt.sep
			if sep == "" {
				sep = "\n"
			}
			text := strings.Join(append(allBytes(), tt.extra...), sep) + sep
			v, err := parseVocab("test.tiktoken", strings.NewReader(text), len(text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for tok, want := range tt.want {
				if got := v.lookup(tok); got != want {
					t.Errorf("lookup(%q) = %d, want %d", tok, got, want)
				}
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		if _, err := parseVocab("t", strings.NewReader(""), 0); err == nil || !strings.Contains(err.Error(), "no tokens") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("grows", func(t *testing.T) {
		// 3-byte tokens make rows of about 10 bytes, well under the 18 the
		// initial table size assumes, so the table must double.
		tok := func(i int) string { return string([]byte{byte(i), byte(i >> 8), 'q'}) }
		rows := allBytes()
		for i := range 5000 {
			rows = append(rows, fmt.Sprintf("%s %d", b64(tok(i)), 256+i))
		}
		text := strings.Join(rows, "\n")
		v, err := parseVocab("t", strings.NewReader(text), len(text))
		if err != nil {
			t.Fatal(err)
		}
		if est := len(text) / 18; len(v.table) <= 1<<bits.Len(uint(est+est/4)) {
			t.Fatalf("table has %d slots: it did not grow", len(v.table))
		}
		for i := range 5000 {
			if got := v.lookup(tok(i)); got != uint32(256+i) {
				t.Fatalf("lookup(%q) = %d, want %d", tok(i), got, 256+i)
			}
		}
	})
	t.Run("missing_byte", func(t *testing.T) {
		text := strings.Join(allBytes()[1:], "\n")
		if _, err := parseVocab("t", strings.NewReader(text), len(text)); err == nil || !strings.Contains(err.Error(), "byte 0x00") {
			t.Fatalf("err = %v", err)
		}
	})
}
