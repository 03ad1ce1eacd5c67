package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

func TestCustomID(t *testing.T) {
	key := strings.Repeat("ab", 32)
	id := customID(750, 12345, key)
	if target, region, k, ok := parseCustomID(id); !ok || target != 750 || region != 12345 || k != key {
		t.Fatalf("%s → %d %d %s %v", id, target, region, k, ok)
	}
	for _, bad := range []string{"", "tc1-", "tc1-750-1-" + key[:63], "tc1-0-1-" + key, "tc1-x-1-" + key, "tc2-750-1-" + key, "tc1-750-1-" + strings.ToUpper(key), "tc1-750-1-2-" + key} {
		if _, _, _, ok := parseCustomID(bad); ok {
			t.Errorf("parsed %q", bad)
		}
	}
}

func exportRequest(t *testing.T, text string) summary.Request {
	t.Helper()
	rec, err := traj.Decode([]byte(`{"conversations": [{"from": "human", "value": "`+text+`"}, {"from": "gpt", "value": "`+strings.Repeat("done ", 200)+`"}]}`), traj.Pos{}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return summary.Request{Turns: rec.Turns, Start: 3, TargetTokens: 40, RecordID: "t:1", Counter: quarter{}}
}

func TestExporter(t *testing.T) {
	cache := t.TempDir()
	cfg := Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", CacheDir: cache, Counter: quarter{}}
	e, err := NewExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := exportRequest(t, "first"), exportRequest(t, "second")
	if r := e.Estimate(a); r.APICalls != 1 || r.CacheHit {
		t.Fatalf("estimate %+v", r)
	}
	e.Estimate(a) // the same request again: one line
	e.Estimate(b)
	var buf bytes.Buffer
	st, err := e.WriteRequests(&buf)
	if err != nil || st.Requests != 2 || st.Repeated != 1 || st.Cached != 0 || st.Bytes != int64(buf.Len()) {
		t.Fatalf("stats %+v %v", st, err)
	}
	var lines []batchLine
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var bl batchLine
		if err := json.Unmarshal([]byte(l), &bl); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, bl)
	}
	if lines[0].CustomID > lines[1].CustomID || lines[0].URL != BatchURL || lines[0].Method != "POST" {
		t.Errorf("lines %+v", lines)
	}
	var body struct {
		Model     string    `json:"model"`
		Messages  []message `json:"messages"`
		MaxTokens int       `json:"max_completion_tokens"`
	}
	json.Unmarshal(lines[0].Body, &body)
	if body.Model != "m" || body.MaxTokens != 80 || len(body.Messages) != 1 || !strings.Contains(body.Messages[0].Content, "TURNS TO SUMMARIZE") {
		t.Errorf("body %+v", body)
	}

	// Import an answer to a: the next export leaves it out.
	c, _ := NewOffline(cfg)
	ans := resultLine(lines[0].CustomID, "[CONTEXT SUMMARY]: short and sweet.")
	imp, err := c.ImportBatch(strings.NewReader(ans+"\n"), quarter{})
	if err != nil || imp.Imported != 1 {
		t.Fatalf("import %+v %v", imp, err)
	}
	e2, _ := NewExporter(cfg)
	hitA, hitB := e2.Estimate(a).CacheHit, e2.Estimate(b).CacheHit
	if hitA == hitB {
		t.Errorf("after importing one answer: cached %v and %v, want exactly one", hitA, hitB)
	}
	// And a client sends nothing for it: the answer comes from the cache.
	if _, err := NewExporter(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", CacheDir: CacheDisabled}); err == nil {
		t.Error("an exporter without a cache")
	}
}

// resultLine is a Batch output line answering id with content.
func resultLine(id, content string) string {
	body, _ := json.Marshal(map[string]any{"object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	return `{"id": "batch_req_1", "custom_id": "` + id + `", "response": {"status_code": 200, "request_id": "r", "body": ` + string(body) + `}, "error": null}`
}

func TestImportBatch(t *testing.T) {
	c, err := NewOffline(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", CacheDir: t.TempDir(), Counter: quarter{}})
	if err != nil {
		t.Fatal(err)
	}
	key := func(n byte) string { return strings.Repeat(string("0123456789abcdef"[n]), 64) }
	in := strings.Join([]string{
		resultLine(customID(40, 500, key(1)), "<think>plan</think>[CONTEXT SUMMARY]: fine."),               // imported, normalised
		resultLine(customID(40, 500, key(2)), "[CONTEXT SUMMARY]: "+strings.Repeat("too long ", 100)),      // over 1.5 × 40
		resultLine(customID(40, 8, key(3)), "[CONTEXT SUMMARY]: not shorter than the region it replaces."), // region of 8 tokens
		resultLine(customID(40, 500, key(4)), ""),                                                          // empty
		`{"custom_id": "` + customID(40, 500, key(5)) + `", "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}}, "error": null}`,
		`{"custom_id": "` + customID(40, 500, key(6)) + `", "response": null, "error": {"code": "batch_expired", "message": "expired"}}`,
		resultLine(customID(40, 500, key(1)), "[CONTEXT SUMMARY]: again."), // repeated
		resultLine("my-own-id-1", "[CONTEXT SUMMARY]: not ours."),
		`{"custom_id": "x"}`,
		`[1, 2]`,
		``,
		`{`,
	}, "\n")
	st, err := c.ImportBatch(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ImportStats{Lines: 11, Imported: 1, Repeated: 1, Foreign: 1, Malformed: 3,
		Rejected: map[string]int{CauseInvalid: 2, CauseEmpty: 1}, Failed: map[string]int{"429": 1, "batch_expired": 1}, MalformedLines: []int{9, 10, 12}}
	if b1, b2 := jsonOf(st), jsonOf(want); b1 != b2 {
		t.Fatalf("stats\n%s\nwant\n%s", b1, b2)
	}
	e, ok, _ := c.cache.get(key(1))
	if !ok || e.Text != "[CONTEXT SUMMARY]: fine.\n"+summary.EndMarker {
		t.Errorf("cached %q %v", e.Text, ok)
	}
	for _, k := range []byte{2, 3, 4, 5, 6} {
		if _, ok, _ := c.cache.get(key(k)); ok {
			t.Errorf("key %d cached", k)
		}
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// FuzzImportBatch: any bytes as a results file: no panic, every line
// accounted for once, and every summary cached is a normalised one that
// passes Validate under the limits of a line that carried it, with no
// secret left in it.
func FuzzImportBatch(f *testing.F) {
	key := strings.Repeat("7", 64)
	f.Add(resultLine(customID(40, 500, key), "[CONTEXT SUMMARY]: fine.") + "\n")
	f.Add(`{"custom_id": "` + customID(40, 500, key) + `", "response": null, "error": {"code": 5}}` + "\n{\n")
	f.Add(resultLine(customID(40, 500, key), "[CONTEXT SUMMARY]: key AKIAQ2W3E4R5T6Y7U2I3 token ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5") + "\n")
	f.Add(`{"custom_id": "tc1-1-2-` + key + `", "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "[CONTEXT SUMMARY]: x"}, "finish_reason": "length"}]}}}`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := NewOffline(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", CacheDir: t.TempDir(), Counter: quarter{}, Redactor: redact.Default()})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.ImportBatch(strings.NewReader(in), nil)
		if err != nil {
			return // a line over the limit
		}
		n := st.Imported + st.Repeated + st.Foreign + st.Malformed
		for _, v := range st.Rejected {
			n += v
		}
		for _, v := range st.Failed {
			n += v
		}
		if n != st.Lines {
			t.Fatalf("%d lines, %d accounted for: %+v", st.Lines, n, st)
		}
		limits := map[string][][2]int{}
		for _, line := range strings.Split(in, "\n") {
			var r batchResult
			if json.Unmarshal([]byte(line), &r) == nil {
				if target, region, k, ok := parseCustomID(r.CustomID); ok {
					limits[k] = append(limits[k], [2]int{target, region})
				}
			}
		}
		cached := 0
		for k, ls := range limits {
			e, hit, _ := c.cache.get(k)
			if !hit {
				continue
			}
			cached++
			if again, ok := Normalize(e.Text); !ok || again != e.Text {
				t.Fatalf("cached text is not normalised: %q", e.Text)
			}
			if again, _ := redact.Default().RedactString(e.Text); again != e.Text {
				t.Fatalf("cached text holds a secret: %q", e.Text)
			}
			passes := false
			for _, l := range ls {
				passes = passes || Validate(e.Text, l[0], l[1], quarter{}) == nil
			}
			if !passes {
				t.Fatalf("cached %q fails Validate under every limit %v", e.Text, ls)
			}
		}
		if cached != st.Imported {
			t.Fatalf("%d imported, %d cached", st.Imported, cached)
		}
	})
}
