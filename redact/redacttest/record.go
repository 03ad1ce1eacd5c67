package redacttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// WalkStrings calls fn for every non-empty string leaf of v (a value
// decoded by encoding/json) with its path ("messages[3].content"), object
// members in key order.
func WalkStrings(v any, path string, fn func(path, s string)) {
	switch v := v.(type) {
	case string:
		if v != "" {
			fn(path, v)
		}
	case []any:
		for i, x := range v {
			WalkStrings(x, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			WalkStrings(v[k], path+"."+k, fn)
		}
	}
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// FieldClass collapses a leaf path's indexes: messages[3].content →
// messages[].content.
func FieldClass(path string) string { return indexRE.ReplaceAllString(path, "[]") }

// Plant puts text into s, as a secret would sit in a trajectory: inside a
// string leaf of s when s is itself a JSON object or array (which is
// re-encoded, so the secret arrives JSON-escaped, as in tool-call
// arguments; where is then " (inside JSON)"), else on a line of its own at
// a random line boundary.
func Plant(rng *rand.Rand, s, text string) (planted, where string) {
	t := strings.TrimSpace(s)
	if len(t) > 1 && (t[0] == '{' || t[0] == '[') {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			done := false
			v = plantJSON(v, text, &done)
			if done {
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				if enc.Encode(v) == nil {
					return strings.TrimSuffix(b.String(), "\n"), " (inside JSON)"
				}
			}
		}
	}
	lines := strings.SplitAfter(s, "\n")
	i := rng.IntN(len(lines) + 1)
	before := strings.Join(lines[:i], "")
	if before != "" && !strings.HasSuffix(before, "\n") {
		before += "\n"
	}
	return before + text + "\n" + strings.Join(lines[i:], ""), ""
}

func plantJSON(v any, text string, done *bool) any {
	switch x := v.(type) {
	case string:
		if !*done {
			*done = true
			return x + "\n" + text
		}
	case []any:
		for i := range x {
			x[i] = plantJSON(x[i], text, done)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			x[k] = plantJSON(x[k], text, done)
		}
	}
	if !*done {
		if m, ok := v.(map[string]any); ok {
			m["note"] = text
			*done = true
		}
	}
	return v
}

// PlantRecord plants text into the k-th string leaf (counting from 0, in
// [WalkStrings] order) of rec, a decoded JSON value, and returns the
// changed value and the leaf's path class and place ([FieldClass], and
// Plant's where); ok is false when rec has fewer leaves.
func PlantRecord(rng *rand.Rand, rec any, k int, text string) (out any, field string, ok bool) {
	var path string
	n := 0
	WalkStrings(rec, "", func(p, _ string) {
		if n == k {
			path = p
		}
		n++
	})
	if k >= n {
		return rec, "", false
	}
	var where string
	out = setLeaf(rec, path, func(s string) string {
		var planted string
		planted, where = Plant(rng, s, text)
		return planted
	})
	return out, FieldClass(path) + where, true
}

// setLeaf replaces the string leaf at path (as WalkStrings names it).
func setLeaf(v any, path string, f func(string) string) any {
	if path == "" {
		if s, ok := v.(string); ok {
			return f(s)
		}
		return v
	}
	if path[0] == '[' {
		end := strings.IndexByte(path, ']')
		i, err := strconv.Atoi(path[1:end])
		if a, ok := v.([]any); ok && err == nil && i >= 0 && i < len(a) {
			a[i] = setLeaf(a[i], path[end+1:], f)
		}
		return v
	}
	rest := path[1:] // ".key…"
	end := len(rest)
	for j := 0; j < len(rest); j++ {
		if rest[j] == '.' || rest[j] == '[' {
			end = j
			break
		}
	}
	if m, ok := v.(map[string]any); ok {
		// Keys may hold '.' or '[': try the longest key that exists.
		for e := len(rest); e >= end; e-- {
			if x, ok := m[rest[:e]]; ok && (e == len(rest) || rest[e] == '.' || rest[e] == '[') {
				m[rest[:e]] = setLeaf(x, rest[e:], f)
				return v
			}
		}
	}
	return v
}
