package redact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// MinSecretLen is the shortest value [WithSecrets] accepts: a shorter one
// ("EMPTY", "none", the dummy keys local OpenAI-compatible servers take)
// is no secret, and replacing it everywhere would eat ordinary words.
const MinSecretLen = 8

// WithSecrets returns a redactor that finds what r finds (nothing more
// when r is nil) and also each of values, a secret known exactly (the run's
// own API key, whatever its format): wherever it occurs, as written, in
// lower case and in upper case (and, so that the scan of an encoded JSON
// line sees it, in each spelling's JSON-escaped form), replaced by the
// marker of id's kind ("llm-api-key" → "[REDACTED:llm_api_key]"). No
// entropy threshold or allowlist applies to it, and a finding of another
// rule that overlaps it is merged into its finding, so no byte of it is
// left. Values shorter than [MinSecretLen] bytes are left out; when none
// is left, r is returned as it is (nil too). r is not changed.
func WithSecrets(r *Redactor, id string, values ...string) (*Redactor, error) {
	var spellings []string
	for _, v := range values {
		if len(v) < MinSecretLen {
			continue
		}
		for _, sp := range []string{v, strings.ToLower(v), strings.ToUpper(v)} {
			esc := string(jsonx.AppendString(nil, sp))
			for _, w := range []string{sp, esc[1 : len(esc)-1]} {
				if !slices.Contains(spellings, w) {
					spellings = append(spellings, w)
				}
			}
		}
	}
	if len(spellings) == 0 {
		return r, nil
	}
	// Longest first: where one spelling begins another (an escaped
	// form), the whole is taken.
	slices.SortStableFunc(spellings, func(a, b string) int { return len(b) - len(a) })
	quoted := make([]string, len(spellings))
	var keywords []string
	for i, w := range spellings {
		quoted[i] = regexp.QuoteMeta(w)
		if k := strings.ToLower(w); !slices.Contains(keywords, k) {
			keywords = append(keywords, k)
		}
	}
	ru, err := compileRule(ruleSpec{ID: id, Regex: "(?:" + strings.Join(quoted, "|") + ")", Keywords: keywords, Known: true})
	if err != nil {
		return nil, fmt.Errorf("redact: known secret %s: %w", id, err)
	}
	// The rules already compiled are shared (compiled rules are read
	// only); only the keyword index is built again.
	out := &Redactor{kern: bestKernel()}
	if r != nil {
		out.kern, out.global, out.ours, out.rules = r.kern, r.global, r.ours, slices.Clip(r.rules)
	}
	out.rules = append(out.rules, ru)
	out.index()
	return out, nil
}
