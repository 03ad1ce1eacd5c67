package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format"
)

type lcFunction struct {
	Name      *string `parquet:"name,optional"`
	Arguments *string `parquet:"arguments,optional"`
}

type lcCall struct {
	ID       *string     `parquet:"id,optional"`
	Type     *string     `parquet:"type,optional"`
	Function *lcFunction `parquet:"function,optional"`
}

type lcMessage struct {
	Role       *string   `parquet:"role,optional"`
	Content    []e2ePart `parquet:"content,list,optional"`
	ToolCallID *string   `parquet:"tool_call_id,optional"`
	ToolCalls  []lcCall  `parquet:"tool_calls,list,optional"`
}

type lcRow struct {
	ID       string      `parquet:"id"`
	Messages []lcMessage `parquet:"messages,list,optional"`
}

// writeListContent writes three records in datasets' layout for image
// parts (every message's content a list of {type, text, image} parts):
// two long ones with screenshots, and a short one (the tool-call columns
// are in the schema, null).
func writeListContent(t *testing.T, path string) int {
	t.Helper()
	str := func(s string) *string { return &s }
	var shot bytes.Buffer
	if err := png.Encode(&shot, image.NewGray(image.Rect(0, 0, 1024, 768))); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("lorem ipsum dolor sit amet ", 60)
	text := func(s string) []e2ePart { return []e2ePart{{Type: str("text"), Text: str(s)}} }
	var rows []lcRow
	for r := range 3 {
		ms := []lcMessage{{Role: str("system"), Content: text("You are a helpful agent.")}}
		for i := range 12 {
			if i%2 == 0 {
				ms = append(ms, lcMessage{Role: str("user"), Content: append(text(long), e2ePart{Type: str("image"), Image: &e2eImage{Bytes: shot.Bytes()}})})
			} else {
				ms = append(ms, lcMessage{Role: str("assistant"), Content: text(long)})
			}
		}
		if r == 2 {
			ms = ms[:3]
		}
		rows = append(rows, lcRow{ID: fmt.Sprint(r), Messages: ms})
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[lcRow](f, pq.KeyValueMetadata("huggingface", `{"info":{"features":{"id":{"dtype":"string","_type":"Value"},`+
		`"messages":[{"role":{"dtype":"string","_type":"Value"},"content":[{"type":{"dtype":"string","_type":"Value"},`+
		`"text":{"dtype":"string","_type":"Value"},"image":{"_type":"Image"}}],"tool_call_id":{"dtype":"string","_type":"Value"},`+
		`"tool_calls":[{"id":{"dtype":"string","_type":"Value"},"type":{"dtype":"string","_type":"Value"},`+
		`"function":{"name":{"dtype":"string","_type":"Value"},"arguments":{"dtype":"string","_type":"Value"}}}]}]}}}`))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// TestCompressListContent: `trajcompress compress` of a Parquet or Arrow
// file whose message content is a list of parts, with records that get a
// summary and a notice on the system prompt, writes every record (the run
// used to fail: `key "messages[3].content": want an array, got string`);
// the summary turn, written as a string, reads back as one text part, and
// the notice as a part appended to the system prompt's. (A digest, also
// written as a string, is format/internal/roundtrip's
// TestParquetStringContentAsTextPart.)
func TestCompressListContent(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "train.parquet")
	n := writeListContent(t, src)
	// The same records as an Arrow IPC stream, its schema taken from the
	// records (content: list<struct<type, text, image>>).
	arrowSrc := filepath.Join(tmp, "train.arrow")
	mustRun(t, "compress", "--quiet", "--input", src, "--output", arrowSrc, "--target-max-tokens", "10000000")

	for _, in := range []string{src, arrowSrc} {
		t.Run(filepath.Ext(in)[1:], func(t *testing.T) {
			out := filepath.Join(tmp, "out"+filepath.Ext(in))
			outcomes := filepath.Join(tmp, "o"+filepath.Ext(in)+".jsonl")
			var stderr bytes.Buffer
			args := []string{"compress", "--quiet", "--input", in, "--output", out, "--image-tokens", "openai",
				"--target-max-tokens", "6000", "--outcomes", outcomes}
			if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			var compressed int
			for _, l := range lines(t, outcomes) {
				if bytes.Contains(l, []byte(`"outcome":"compressed`)) {
					compressed++
				}
			}
			if compressed != 2 {
				t.Fatalf("%d records compressed, want 2:\n%s", compressed, bytes.Join(lines(t, outcomes), []byte("\n")))
			}
			r, err := format.Open(out, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := range n {
				rec, _, err := r.Next()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				var row struct {
					Messages []struct {
						Role    string
						Content []struct {
							Type  *string
							Text  *string
							Image any
						}
					}
				}
				if err := json.Unmarshal(rec, &row); err != nil {
					t.Fatalf("record %d: %v: %.300s", i, err, rec)
				}
				var summary bool
				for _, m := range row.Messages {
					if len(m.Content) == 0 || m.Content[0].Text == nil {
						continue
					}
					one := len(m.Content) == 1 && m.Content[0].Type != nil && *m.Content[0].Type == "text" && m.Content[0].Image == nil
					if strings.HasPrefix(*m.Content[0].Text, "[CONTEXT SUMMARY]") {
						summary = one
					}
				}
				sys := row.Messages[0].Content
				notice := len(sys) == 2 && *sys[0].Text == "You are a helpful agent." && sys[1].Text != nil
				if i < 2 && !(summary && notice) {
					t.Errorf("record %d: summary turn as one text part %v, notice as a system part %v:\n%s", i, summary, notice, brief(rec))
				}
				if i == 2 && (summary || len(sys) != 1) {
					t.Errorf("record 2 (short) changed: %.600s", rec)
				}
			}
		})
	}
}

// brief is rec with each text cut to 60 bytes and image bytes left out.
func brief(rec []byte) string {
	var v any
	if err := json.Unmarshal(rec, &v); err != nil {
		return string(rec)
	}
	var cut func(any) any
	cut = func(v any) any {
		switch x := v.(type) {
		case string:
			if len(x) > 60 {
				return x[:60] + "…"
			}
		case []any:
			for i := range x {
				x[i] = cut(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = cut(x[k])
			}
		}
		return v
	}
	b, _ := json.Marshal(cut(v))
	return string(b)
}
