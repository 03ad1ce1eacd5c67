package redact

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/redact/redacttest"
)

// hashShaped are values that must never be redacted: hex digests and
// commit ids (MD5, SHA-1, SHA-256 lengths), UUIDs, base64 image data.
// (A 12-digit hex value next to "password" — a password generator's
// answer in the LLaMA-Factory demos — is a password and is redacted.)
var hashShaped = regexp.MustCompile(`^(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|iVBOR[A-Za-z0-9+/=]*|/9j/[A-Za-z0-9+/=]*)$`)

// TestRealData runs the redactor over the real trajectories' turn texts
// (skipped when the real data is absent): nothing shaped like a hash,
// commit id, UUID or base64 image is redacted, and secrets planted into
// the texts (one in every 5th text) are all removed. bench/redact gives
// the full per-rule and per-field report.
func TestRealData(t *testing.T) {
	dir := testenv.NeedRealData(t)
	texts, err := testenv.RealTurnTexts(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := Default()
	total := Counts{}
	for _, s := range texts {
		out, c := r.RedactString(s)
		if c == nil {
			continue
		}
		total.Add(c)
		for _, v := range removed(s, out) {
			if hashShaped.MatchString(v) {
				t.Errorf("redacted a hash-shaped value of length %d (%v)", len(v), c)
			}
		}
	}
	t.Logf("redactions in the real turn texts as they are: %v", total)
	rng := rand.New(rand.NewPCG(3, 4))
	planted, missed := 0, 0
	for i, s := range texts {
		if i%5 != 0 {
			continue
		}
		sec := redacttest.Make(rng, rng.IntN(len(redacttest.Kinds())))
		text := s + "\n" + sec.Text + "\n"
		if i%2 == 0 {
			text = sec.Text + "\n" + s
		}
		out, _ := r.RedactString(text)
		planted++
		if strings.Contains(out, sec.Value) {
			missed++
			if missed <= 5 {
				t.Logf("missed %s: %q", sec.Kind, sec.Text)
			}
		}
	}
	// generic-api-key keeps gitleaks' stopwords: a random value holding a
	// word such as "learn" is not redacted (about 1.5% of those planted).
	if float64(missed) > 0.005*float64(planted) {
		t.Errorf("missed %d of %d planted secrets", missed, planted)
	}
	t.Logf("planted %d, missed %d", planted, missed)
}

// removed returns the spans of in that markers replaced in out.
func removed(in, out string) []string {
	var vals []string
	for {
		i := strings.Index(out, "[REDACTED:")
		if i < 0 {
			return vals
		}
		j := strings.IndexByte(out[i:], ']') + i + 1
		in, out = in[i:], out[j:]
		// The kept text after the marker, up to the next marker.
		next := out
		if k := strings.Index(out, "[REDACTED:"); k >= 0 {
			next = out[:k]
		}
		end := len(in)
		if next != "" {
			if k := strings.Index(in, next); k >= 0 {
				end = k
			}
		}
		vals = append(vals, in[:end])
		in = in[end:]
	}
}
