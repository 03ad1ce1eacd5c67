package redact

import (
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"testing"
)

// imageCase is a record holding an image inline whose base64 holds a
// string a rule matches (testAWS, between '/' and '+'), with the same
// secret in a text part beside it.
type imageCase struct {
	name    string
	line    string // with IMG for the image's base64 and TEXT for the text
	keep    bool   // whether the payload is an image (kept byte for byte)
	payload string // the payload as written in the line, for the check
}

func imageCases(b64 string) []imageCase {
	text := "my key is " + testAWS
	cs := []imageCase{
		{"openai data URL", `{"messages": [{"role": "user", "content": [{"type": "text", "text": "TEXT"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,IMG", "detail": "high"}}]}]}`, true, "data:image/png;base64,IMG"},
		{"openai input_image", `{"input": [{"role": "user", "content": [{"type": "input_text", "text": "TEXT"}, {"type": "input_image", "image_url": "DATA:Image/PNG; base64,IMG"}]}]}`, true, "DATA:Image/PNG; base64,IMG"},
		{"data URL with escapes", `{"content": [{"type": "text", "text": "TEXT"}, {"type": "image_url", "image_url": {"url": "data:image\/png;base64,IMG"}}]}`, true, "data:image\\/png;base64,IMG"},
		{"anthropic source", `{"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "IMG"}}, {"type": "text", "text": "TEXT"}]}]}`, true, "IMG"},
		{"anthropic in a tool_result", `{"content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "TEXT"}, {"type": "image", "source": {"media_type": "image/jpeg", "data": "IMG", "type": "base64"}}]}]}`, true, "IMG"},
		{"datasets Image", `{"messages": [{"role": "user", "content": "<image>TEXT"}], "images": [{"bytes": "IMG", "path": "shot.png"}]}`, true, "IMG"},
		{"datasets Image, path null", `{"messages": [{"role": "user", "content": [{"type": "image", "image": {"path": null, "bytes": "IMG"}}, {"type": "text", "text": "TEXT"}]}]}`, true, "IMG"},
		{"image in arguments", `{"tool_calls": [{"function": {"name": "show", "arguments": "{\"note\": \"TEXT\", \"image\": \"data:image/png;base64,IMG\"}"}}]}`, true, "data:image/png;base64,IMG"},
		// Not images: redacted as before.
		{"text data URL", `{"content": [{"type": "text", "text": "TEXT"}, {"type": "file", "file": {"file_data": "data:text/plain;base64,IMG"}}]}`, false, "data:text/plain;base64,IMG"},
		{"image data URL not base64", `{"content": [{"type": "text", "text": "TEXT"}, {"type": "image_url", "image_url": {"url": "data:image/svg+xml,IMG"}}]}`, false, "data:image/svg+xml,IMG"},
		{"anthropic document", `{"content": [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "IMG"}}, {"type": "text", "text": "TEXT"}]}`, false, "IMG"},
		{"bytes with another member", `{"file": {"bytes": "IMG", "path": "a.bin", "size": 3}, "note": "TEXT"}`, false, "IMG"},
	}
	for i := range cs {
		cs[i].line = strings.NewReplacer("IMG", b64, "TEXT", text).Replace(cs[i].line)
		cs[i].payload = strings.ReplaceAll(cs[i].payload, "IMG", b64)
	}
	return cs
}

// TestRedactLineKeepsImages: a string that holds an image inline is kept
// byte for byte even when its base64 holds what a rule matches, while the
// same secret in a text beside it is redacted; a payload that is not an
// image (a text data: URL, a PDF) is redacted as any text is.
func TestRedactLineKeepsImages(t *testing.T) {
	b64 := plantB64(pngBase64(t, 16, 16, 96<<10), testAWS, 40000)
	for _, kern := range kernels {
		t.Run(kern.name, func(t *testing.T) {
			r := onKernel(t, kern)
			// A real positive: the base64 on its own is redacted.
			if _, c := r.RedactString(b64); c["aws_access_token"] != 1 {
				t.Fatalf("the planted base64 is not a finding on its own: %v", c)
			}
			for _, tc := range imageCases(b64) {
				line := []byte(tc.line)
				if !json.Valid(line) {
					t.Fatalf("%s: bad case", tc.name)
				}
				if !strings.Contains(tc.line, tc.payload) {
					t.Fatalf("%s: payload not in the line", tc.name)
				}
				// The scan of the encoded line sees the planted key.
				if _, c, _ := r.RedactEncoded(nil, line); c["aws_access_token"] < 2 {
					t.Fatalf("%s: the encoded scan found %v, want the key in the text and in the base64", tc.name, c)
				}
				out, c := r.RedactLine(line)
				if !json.Valid(out) {
					t.Fatalf("%s: output not JSON", tc.name)
				}
				if strings.Contains(string(out), "my key is "+testAWS) || !strings.Contains(string(out), "my key is [REDACTED:aws_access_token]") {
					t.Errorf("%s: the text's secret is not redacted", tc.name)
				}
				want := 2
				if tc.keep {
					want = 1
				}
				if c["aws_access_token"] != want || c.Total() != want {
					t.Errorf("%s: counts %v, want %d aws_access_token", tc.name, c, want)
				}
				if kept := strings.Contains(string(out), tc.payload); kept != tc.keep {
					t.Errorf("%s: payload kept %v, want %v", tc.name, kept, tc.keep)
				}
				if got, wc := exactLine(r, line); string(got) != string(out) || wc.Total() != c.Total() {
					t.Errorf("%s: RedactLine differs from its exact answer", tc.name)
				}
			}
		})
	}
}

// TestRedactLineImageOnly: a record whose only finding lies in an image
// is returned as it is, with no counts.
func TestRedactLineImageOnly(t *testing.T) {
	b64 := plantB64(pngBase64(t, 16, 16, 96<<10), testAWS, 40000)
	r := Default()
	for _, tc := range imageCases(b64) {
		if !tc.keep {
			continue
		}
		line := []byte(strings.ReplaceAll(tc.line, "my key is "+testAWS, "my key is the-key"))
		if strings.Count(string(line), testAWS) != 1 {
			t.Fatalf("%s: bad case", tc.name)
		}
		out, c := r.RedactLine(line)
		if c != nil || &out[0] != &line[0] {
			t.Errorf("%s: changed (%v)", tc.name, c)
		}
	}
}

// TestRedactLineImageNoCopy: a record with a large image and a secret
// beside it costs a copy of the line (the output) and little more: the
// image is neither decoded, nor copied, nor scanned again for secrets
// (only read once to check that it is an image's base64).
func TestRedactLineImageNoCopy(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	b64 := plantB64(pngBase64(t, 16, 16, 4<<20), testAWS, 1<<20)
	r := Default()
	for _, tc := range imageCases(b64) {
		if !tc.keep || strings.Contains(tc.line, `\"`) {
			// An image in JSON held in a string (arguments) is kept
			// too, but that string is decoded and redacted as a whole
			// first, as any other.
			continue
		}
		line := []byte(tc.line)
		r.RedactLine(line) // warm the pools
		// The least of three runs: a collection between two runs empties
		// the pools (the escape view of a line with "\/" is a pool's).
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, c := r.RedactLine(line)
			runtime.ReadMemStats(&after)
			if c.Total() != 1 || len(out) == len(line) {
				t.Fatalf("%s: counts %v", tc.name, c)
			}
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		// The output is one copy; anything more than a quarter of the
		// line again is a copy of the image.
		if least > uint64(len(line))*5/4 {
			t.Errorf("%s: %d bytes allocated for a %d-byte line", tc.name, least, len(line))
		}
	}
}

// TestRedactLineFakeImages: a string shaped like an inline image whose
// payload is not an image's base64 (text after a data:image/… header, a
// secret as a datasets value's or an Anthropic source's bytes) is a text:
// its secret is redacted. The known bypasses of the image exemption.
func TestRedactLineFakeImages(t *testing.T) {
	png := pngBase64(t, 4, 4, 0)[:24] // a real PNG's first 18 bytes
	for _, kern := range kernels {
		t.Run(kern.name, func(t *testing.T) {
			r := onKernel(t, kern)
			for _, line := range []string{
				`{"role":"assistant","content":[{"type":"text","text":"data:image/png;base64,` + testPAT + `"}]}`,
				`{"role":"tool","content":"data:image/png;base64,\nexport GITHUB_TOKEN=` + testPAT + `\n"}`,
				`{"role":"tool","content":"data:image/png;base64, my token is ` + testPAT + ` ok"}`,
				`{"role":"tool","content":"data:image\/png;base64,` + testPAT + `"}`,
				`{"images":[{"bytes":"` + testPAT + `","path":null}]}`,
				`{"x":{"path":"notes.txt","bytes":"token=` + testPAT + `"}}`,
				`{"source":{"type":"base64","media_type":"image/png","data":"` + testPAT + `"}}`,
				`{"tool_calls":[{"function":{"arguments":"{\"img\":\"data:image/png;base64,` + testPAT + `\"}"}}]}`,
				`{"tool_calls":[{"function":{"arguments":"{\"images\":[{\"bytes\":\"` + testPAT + `\",\"path\":null}]}"}}]}`,
				`{"tool_calls":[{"function":{"arguments":"{\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"` + testPAT + `\"}}"}}]}`,
				// A real image header, then text that is not base64.
				`{"url":"data:image/png;base64,` + png + ` ` + testPAT + `"}`,
				`{"images":[{"bytes":"` + png + `\n` + testPAT + `","path":"a.png"}]}`,
				// Base64 characters only, but no image signature.
				`{"url":"data:image/png;base64,` + testAWS + `"}`,
				`{"source":{"type":"base64","media_type":"image/png","data":"` + testAWS + `"}}`,
			} {
				if !json.Valid([]byte(line)) {
					t.Fatalf("bad case %s", line)
				}
				out, c := r.RedactLine([]byte(line))
				if strings.Contains(string(out), testPAT) || strings.Contains(string(out), testAWS) || c.Total() != 1 {
					t.Errorf("not redacted (counts %v):\n in: %s\nout: %s", c, line, out)
				}
				if !json.Valid(out) {
					t.Errorf("output not JSON: %s", out)
				}
			}
		})
	}
}
