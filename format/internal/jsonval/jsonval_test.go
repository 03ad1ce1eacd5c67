package jsonval

import (
	"math"
	"strings"
	"testing"
)

func TestDecodeAppendRoundTrip(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"object order kept", `{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{"big int exact", `{"n":9007199254740993}`, `{"n":9007199254740993}`},
		{"nested", `{"m":[{"role":"user","content":null},[],{}]}`, `{"m":[{"role":"user","content":null},[],{}]}`},
		{"escapes", `{"s":"a\"b\\c\n\t\u0001<>&é"}`, `{"s":"a\"b\\c\n\t\u0001<>&é"}`},
		{"whitespace dropped", "{ \"a\" : [ 1 , 2 ] }", `{"a":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(Append(nil, v)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"duplicate key", `{"a":1,"a":2}`, "duplicate key"},
		{"trailing", `{"a":1} x`, "trailing"},
		{"truncated", `{"a":`, "EOF"},
		{"not object", `[1]`, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeObject([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAppendFloat(t *testing.T) {
	tests := []struct {
		name string
		f    float64
		bits int
		want string
	}{
		{"integral keeps .0", 1, 64, "1.0"},
		{"tenth", 0.1, 64, "0.1"},
		{"tiny", 5e-324, 64, "5e-324"},
		{"huge", 1e300, 64, "1e+300"},
		{"float32 shortest", float64(float32(0.1)), 32, "0.1"},
		{"nan", math.NaN(), 64, `"NaN"`},
		{"-inf", math.Inf(-1), 64, `"-Infinity"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendFloat(nil, tt.f, tt.bits))
			if got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			v, err := Decode([]byte(got))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseFloat(v, tt.bits)
			if err != nil {
				t.Fatal(err)
			}
			if back != tt.f && !(math.IsNaN(back) && math.IsNaN(tt.f)) {
				t.Fatalf("round trip %v -> %s -> %v", tt.f, got, back)
			}
		})
	}
}

func TestInfer(t *testing.T) {
	tests := []struct {
		name    string
		samples []string
		want    string // rendered with render()
	}{
		{"scalars", []string{`{"a":1,"b":1.5,"c":"x","d":true,"e":null}`}, "{a:int,b:float,c:string,d:bool,e:string}"},
		{"int then float", []string{`{"a":1}`, `{"a":2.5}`}, "{a:float}"},
		{"union keys first seen order", []string{`{"b":1}`, `{"a":1,"b":2}`}, "{b:int,a:int}"},
		{"mixed kinds → json", []string{`{"c":"x"}`, `{"c":[{"type":"text"}]}`}, "{c:json}"},
		{"big int → json", []string{`{"n":18446744073709551615}`}, "{n:json}"},
		{"nested messages", []string{`{"m":[{"role":"user"},{"role":"assistant","tool_calls":[{"id":"1"}]}]}`},
			"{m:[{role:string,tool_calls:[{id:string}]}]}"},
		{"empty list and object", []string{`{"l":[],"o":{}}`}, "{l:[string],o:json}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s [][]byte
			for _, x := range tt.samples {
				s = append(s, []byte(x))
			}
			typ, err := Infer(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(typ); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := Infer(nil); err == nil {
		t.Error("empty sample: want error")
	}
	if _, err := Infer([][]byte{[]byte(`{"a":1}`), []byte(`nope`)}); err == nil || !strings.Contains(err.Error(), "sample 1") {
		t.Errorf("bad sample: err = %v, want it to name sample 1", err)
	}
}

func render(t *Type) string {
	switch t.Kind {
	case KindBool:
		return "bool"
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindString:
		return "string"
	case KindList:
		return "[" + render(t.Elem) + "]"
	case KindStruct:
		var parts []string
		for _, f := range t.Fields {
			parts = append(parts, f.Name+":"+render(f.Type))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case KindJSON:
		return "json"
	case KindBytes:
		return "bytes"
	}
	return "?"
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		o    EqualOptions
		want bool
	}{
		{"same", `{"a":1}`, `{"a":1}`, EqualOptions{}, true},
		{"order differs", `{"a":1,"b":2}`, `{"b":2,"a":1}`, EqualOptions{}, false},
		{"order ignored", `{"a":1,"b":2}`, `{"b":2,"a":1}`, EqualOptions{IgnoreOrder: true}, true},
		{"order ignored, values differ", `{"a":1,"b":2}`, `{"b":1,"a":1}`, EqualOptions{IgnoreOrder: true}, false},
		{"float forms", `{"a":1.0}`, `{"a":1}`, EqualOptions{}, true},
		{"big ints differ", `{"a":9007199254740993}`, `{"a":9007199254740992}`, EqualOptions{}, false},
		{"null vs absent strict", `{"a":1,"b":null}`, `{"a":1}`, EqualOptions{}, false},
		{"null vs absent loose", `{"a":1,"b":null}`, `{"a":1}`, EqualOptions{NullIsAbsent: true}, true},
		{"array length", `[1,2]`, `[1]`, EqualOptions{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := Decode([]byte(tt.a))
			b, _ := Decode([]byte(tt.b))
			if got := Equal(a, b, tt.o); got != tt.want {
				t.Fatalf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAddHFFeature(t *testing.T) {
	in := `{"info":{"features":{"conversations":{"feature":{"from":{"dtype":"string","_type":"Value"}},"_type":"Sequence"}}}}`
	got := AddHFFeature(in, "compression_metrics")
	want := `{"info":{"features":{"conversations":{"feature":{"from":{"dtype":"string","_type":"Value"}},"_type":"Sequence"},"compression_metrics":{"dtype":"string","_type":"Value"}}}}`
	if got != want {
		t.Fatalf("got %s", got)
	}
	if got := AddHFFeature("not json", "x"); got != "not json" {
		t.Fatalf("unparsable metadata changed: %s", got)
	}
}

func TestSetHFFeature(t *testing.T) {
	typ, err := Infer([][]byte{[]byte(`{"m":{"n":1,"r":0.5,"ok":true,"region":{"s":-1}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	m := typ.Fields[0].Type
	want := `{"n":{"dtype":"int64","_type":"Value"},"r":{"dtype":"float64","_type":"Value"},"ok":{"dtype":"bool","_type":"Value"},"region":{"s":{"dtype":"int64","_type":"Value"}}}`
	in := `{"info":{"features":{"a":{"dtype":"string","_type":"Value"}}}}`
	got := SetHFFeature(in, "compression_metrics", m)
	if got != `{"info":{"features":{"a":{"dtype":"string","_type":"Value"},"compression_metrics":`+want+`}}}` {
		t.Fatalf("appended: %s", got)
	}
	// A string feature from an earlier version is replaced in place.
	in = `{"info":{"features":{"compression_metrics":{"dtype":"string","_type":"Value"},"a":{"dtype":"string","_type":"Value"}}}}`
	if got := SetHFFeature(in, "compression_metrics", m); got != `{"info":{"features":{"compression_metrics":`+want+`,"a":{"dtype":"string","_type":"Value"}}}}` {
		t.Fatalf("replaced: %s", got)
	}
}

// decodeCases are inputs on which Decode's in-place parser must give the
// tree (or the error) encoding/json's Decoder gives.
var decodeCases = []string{
	`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
	" \t\n{ \"a\" : [ 1 , -0 , 1e5 , 2.50 , -1E-7 , 18446744073709551616 ] , \"b\" : { } , \"c\" : [ ] }\r\n",
	`{"s":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800 x"}`,
	`["\ud800\u0041","\udc00","\ud83d\ud83d\ude00","\ud83d\\n",""]`,
	`{"borrowed \u00e9 key":"and \"value\"","plain":"no escapes"}`,
	"{\"s\":\"bad \xff\xfe utf8 \xc3\"}",
	"{\"s\":\"ok ünï 😀\",\"\xff\":1}",
	`{"a":1,"a":2}`,
	`{"a":{"b":1,"b":2}}`,
	`[{"x":[[[]]]},"",0]`,
	`"just a string"`,
	`{"a":1} x`,
	`{"a":`,
}

func TestDecodeInPlaceMatchesEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		got, gerr := Decode([]byte(c))
		want, werr := decodeStd([]byte(c))
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Errorf("%q: error %v, encoding/json %v", c, gerr, werr)
			continue
		}
		if gerr == nil && string(Append(nil, got)) != string(Append(nil, want)) {
			t.Errorf("%q: %s, encoding/json %s", c, Append(nil, got), Append(nil, want))
		}
		if _, isObj := want.(*Object); isObj {
			b := []byte(c)
			bo, err := DecodeObjectBorrowed(b)
			if err != nil || string(Append(nil, bo)) != string(Append(nil, want)) {
				t.Errorf("%q: borrowed %s, %v; encoding/json %s", c, Append(nil, bo), err, Append(nil, want))
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := Decode(b)
		want, werr := decodeStd(b)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", b, gerr, werr)
		}
		if gerr == nil && string(Append(nil, got)) != string(Append(nil, want)) {
			t.Fatalf("%q: %s, encoding/json %s", b, Append(nil, got), Append(nil, want))
		}
	})
}

func TestWithHFImages(t *testing.T) {
	img := `{"_type":"Image"}`
	meta := `{"info":{"features":{"a":{"feature":` + img + `,"_type":"Sequence"},"b":{"feature":` + img + `,"_type":"List"},` +
		`"c":[{"x":` + img + `}],"d":` + img + `,"e":` + img + `,"f":{"dtype":"string","_type":"Value"}}}}`
	typ, err := Infer([][]byte{[]byte(`{"a":[{"bytes":"QQ==","path":null}],"b":[null],"c":[{"x":{"path":"p"}}],"d":{"bytes":"QQ==","other":1},"e":"p","f":"s"}`)})
	if err != nil {
		t.Fatal(err)
	}
	typ.Fields[4].Type.Kind = KindString
	got := render(WithHFImages(typ, meta))
	// a, c: retyped; b: a list only ever seen with null elements gets its
	// element type from the feature; d (a struct with another field), e (a
	// string) and f are left alone.
	want := "{a:[{bytes:bytes,path:string}],b:[{bytes:bytes,path:string}],c:[{x:{bytes:bytes,path:string}}],d:{bytes:string,other:int},e:string,f:string}"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := render(WithHFImages(typ, "not json")); got != want {
		t.Errorf("bad metadata changed the type: %s", got)
	}
	typ, err = Infer([][]byte{[]byte(`{"b":[null]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(WithHFImages(typ, "not json")); got != "{b:[string]}" {
		t.Errorf("bad metadata changed the type: %s", got)
	}
}

// TestWithHFImagesUnseen: an Image position the sample saw only as null
// or as the element of always-empty lists is typed from the features
// (review D2), the older Sequence of a dict, stored as a struct of lists,
// is retyped (D3), and a null-only position with no Image in its feature
// stays string.
func TestWithHFImagesUnseen(t *testing.T) {
	img := `{"_type":"Image"}`
	str := `{"dtype":"string","_type":"Value"}`
	i64 := `{"dtype":"int64","_type":"Value"}`
	for _, c := range []struct{ name, feats, row, want string }{
		{"null every row", `{"img":` + img + `}`, `{"img":null}`, "{img:{bytes:bytes,path:string}}"},
		{"list always empty", `{"imgs":[` + img + `],"seq":{"feature":` + img + `,"_type":"Sequence"}}`, `{"imgs":[],"seq":null}`,
			"{imgs:[{bytes:bytes,path:string}],seq:[{bytes:bytes,path:string}]}"},
		{"dict with an image, null", `{"m":{"text":` + str + `,"n":` + i64 + `,"image":` + img + `}}`, `{"m":null}`,
			"{m:{text:string,n:int,image:{bytes:bytes,path:string}}}"},
		{"image in a list of dicts, null", `{"m":[{"c":[{"image":` + img + `,"text":` + str + `}]}]}`, `{"m":[{"c":null}]}`,
			"{m:[{c:[{image:{bytes:bytes,path:string},text:string}]}]}"},
		{"legacy Sequence of dict", `{"s":{"feature":{"image":` + img + `,"id":` + i64 + `},"_type":"Sequence"}}`,
			`{"s":{"image":[{"bytes":"QQ==","path":null}],"id":[1]}}`, "{s:{image:[{bytes:bytes,path:string}],id:[int]}}"},
		{"legacy Sequence of dict, empty lists", `{"s":{"feature":{"image":` + img + `,"id":` + i64 + `},"_type":"Sequence"}}`,
			`{"s":{"image":[],"id":[]}}`, "{s:{image:[{bytes:bytes,path:string}],id:[string]}}"},
		{"legacy Sequence of dict, null", `{"s":{"feature":{"image":` + img + `,"id":` + i64 + `},"_type":"Sequence"}}`,
			`{"s":null}`, "{s:{image:[{bytes:bytes,path:string}],id:[int]}}"},
		{"no image: left alone", `{"a":` + i64 + `,"b":[` + i64 + `],"c":{"x":` + i64 + `}}`, `{"a":null,"b":[],"c":null}`,
			"{a:string,b:[string],c:string}"},
		{"a string is not retyped", `{"img":` + img + `,"imgs":[` + img + `]}`, `{"img":"p","imgs":["p"]}`, "{img:string,imgs:[string]}"},
	} {
		typ, err := Infer([][]byte{[]byte(c.row)})
		if err != nil {
			t.Fatal(err)
		}
		if got := render(WithHFImages(typ, `{"info":{"features":`+c.feats+`}}`)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}
