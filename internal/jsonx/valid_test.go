package jsonx

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`, ` {"a" : [1, 2, {"b": null}] } `,
	`{"a":"\u00e9\n\t\\\/\"x"}`, "\"caf\xc3\xa9\"", "\"bad \xff utf8\"",
	`{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`,
	"\"ctl \x01\"", `"unterminated`, `1 2`, `[1 2]`, `{"a":1 "b":2}`, "", "   ", `[` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10002),
	strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000), strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("valid(%.60q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

// listed are the keys whose arrays checkValidMembers asks ValidMembers to
// list.
var listed = []string{"conversations", "messages", "t"}

// checkValidMembers: ValidMembers accepts exactly the Valid objects and
// lists the same Members as Members does; for each array value of a key in
// listed, the same Elements as Elements does up to and including the first
// one that is not an object, with the same Members for objects; and no
// other Elements (not those of other keys, nor arrays inside Elements).
func checkValidMembers(t *testing.T, s string) {
	t.Helper()
	b := []byte(s)
	ms, end, ok := ValidMembers(b, listed)
	isObj := json.Valid(b) && strings.TrimLeft(s, " \t\r\n")[0] == '{'
	if ok != isObj {
		t.Fatalf("validMembers(%.60q) ok = %v, want %v", s, ok, isObj)
	}
	if !ok {
		return
	}
	want, wend, err := Members(b, 0)
	if err != nil || end != wend || len(ms) != len(want) {
		t.Fatalf("validMembers(%.60q): %d Members ending at %d, Members: %d at %d (%v)", s, len(ms), end, len(want), wend, err)
	}
	sameMembers(t, s, ms, want)
	for _, m := range ms {
		if b[m.Start] != '[' || !keyIn(m.Key, listed) {
			if m.Elems != nil {
				t.Fatalf("validMembers(%.60q): Elements listed for %s", s, m.Key)
			}
			continue
		}
		els := Elements(b, m.Start)
		for j, e := range els {
			if b[e[0]] != '{' {
				els = els[:j+1] // listing stops after the first non-object
				break
			}
		}
		if len(els) != len(m.Elems) {
			t.Fatalf("validMembers(%.60q): %d Elements, want %d", s, len(m.Elems), len(els))
		}
		for j, e := range m.Elems {
			if e.Start != els[j][0] || e.End != els[j][1] || e.Object != (b[e.Start] == '{') {
				t.Fatalf("validMembers(%.60q): element %d = %+v, Elements says %v", s, j, e, els[j])
			}
			if e.Object {
				em, _, err := Members(b[:e.End], e.Start)
				if err != nil {
					t.Fatal(err)
				}
				sameMembers(t, s, e.Members, em)
				for _, m := range e.Members {
					if m.Elems != nil {
						t.Fatalf("validMembers(%.60q): an element's array %s was listed", s, m.Key)
					}
				}
			}
		}
	}
	if ms, _, _ := ValidMembers(b, nil); slices.ContainsFunc(ms, func(m Member) bool { return m.Elems != nil }) {
		t.Fatalf("validMembers(%.60q, nil) listed elements", s)
	}
}

func sameMembers(t *testing.T, s string, got, want []Member) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%.60q: %d Members, Members says %d", s, len(got), len(want))
	}
	for i := range got {
		if string(got[i].Key) != string(want[i].Key) || got[i].KeyStart != want[i].KeyStart || got[i].Start != want[i].Start || got[i].End != want[i].End {
			t.Fatalf("%.60q: Member %d = %+v, Members says %+v", s, i, got[i], want[i])
		}
	}
}

func TestValidMembers(t *testing.T) {
	// Around encoding/json's nesting limit, inside a listed array.
	for _, n := range []int{9997, 9998, 9999, 10000} {
		checkValidMembers(t, `{"t":[`+strings.Repeat(`{"a":[`, n/2)+strings.Repeat(`]}`, n/2)+`]}`)
		checkValidMembers(t, `{"t":`+strings.Repeat(`[`, n)+strings.Repeat(`]`, n)+`}`)
	}
	for _, c := range append(validCases, `{"a":1,"b":{"c":[1,"x"]},"a":"dup"}`, ` { "k" : "v" } `, `{"a":1}x`,
		`{"t": [ {"from": "a", "l": [{"x": 1}, 2]} , {}, "s", {"y": 1} ], "e": [{"z": 2}], "n": [ ], "messages": [1]}`,
		`{"conversations": [{"from": "human", "value": "x"}], "t": [[{"a": 1}]]}`,
		`{"t": [{"a": 1}, {"b": [1, 2]}]}`) {
		checkValidMembers(t, c)
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("valid(%q) = %v, encoding/json says %v", s, got, want)
		}
		checkValidMembers(t, s)
	})
}

// FuzzUnquote: on Valid UTF-8 string literals, Unquote agrees with
// encoding/json (which replaces invalid UTF-8, so that case is left out).
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\u00e9\ud83d\ude00"`, `"x\\y\"z"`, `"\ud800"`, `"plain"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || len(s) == 0 || s[0] != '"' || skipString([]byte(s), 0) != len(s) || !utf8.ValidString(s) {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := Unquote([]byte(s))
		if !ok || got != want {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json: %q", s, got, ok, want)
		}
	})
}

// TestSpecialMaskLowestExact: the lowest byte specialMask marks is the
// first '"', '\\' or control byte of the word, on words dense with them.
func TestSpecialMaskLowestExact(t *testing.T) {
	pick := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 'a', 0x7f, 0x80, 0xff, 0x5b, 0x5d, 0x01}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1_000_000 {
		var w [8]byte
		for i := range w {
			w[i] = pick[r.IntN(len(pick))]
		}
		want := 8
		for i, c := range w {
			if c == '"' || c == '\\' || c < 0x20 {
				want = i
				break
			}
		}
		got := 8
		if m := specialMask(binary.LittleEndian.Uint64(w[:])); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("%q: first special byte %d, mask says %d", w, want, got)
		}
	}
}

// TestSpecialMaskExhaustive: one byte of every value at every position of
// a word of plain, high or space bytes is marked exactly when special.
func TestSpecialMaskExhaustive(t *testing.T) {
	for pos := range 8 {
		for v := range 256 {
			for _, bg := range []byte{'a', 0x80, 0xff, ' '} {
				var b [8]byte
				for i := range b {
					b[i] = bg
				}
				b[pos] = byte(v)
				c := byte(v)
				want := c == '"' || c == '\\' || c < 0x20
				if got := specialMask(binary.LittleEndian.Uint64(b[:])) != 0; got != want {
					t.Fatalf("specialMask(% x) marked = %v, want %v", b, got, want)
				}
			}
		}
	}
}
