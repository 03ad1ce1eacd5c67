package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
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
	rows := listContentRows(t, false)
	writeRows(t, path, rows)
	return len(rows)
}

// listContentFeatures is the "huggingface" metadata of lcRow.
const listContentFeatures = `{"info":{"features":{"id":{"dtype":"string","_type":"Value"},` +
	`"messages":[{"role":{"dtype":"string","_type":"Value"},"content":[{"type":{"dtype":"string","_type":"Value"},` +
	`"text":{"dtype":"string","_type":"Value"},"image":{"_type":"Image"}}],"tool_call_id":{"dtype":"string","_type":"Value"},` +
	`"tool_calls":[{"id":{"dtype":"string","_type":"Value"},"type":{"dtype":"string","_type":"Value"},` +
	`"function":{"name":{"dtype":"string","_type":"Value"},"arguments":{"dtype":"string","_type":"Value"}}}]}]}}}`

// writeRows writes rows with parquet-go, opts added (e.g. a row group per
// row).
func writeRows[T any](t *testing.T, path string, rows []T, opts ...pq.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[T](f, append(opts, pq.KeyValueMetadata("huggingface", listContentFeatures))...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// listContentRows are the records; noise makes the screenshot random
// pixels (a row of about 2 MB: more than a task).
func listContentRows(t *testing.T, noise bool) []lcRow {
	t.Helper()
	str := func(s string) *string { return &s }
	var shot bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 1024, 768))
	if noise {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range img.Pix {
			img.Pix[i] = uint8(rng.Uint32())
		}
	}
	if err := png.Encode(&shot, img); err != nil {
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
	return rows
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
	t.Parallel()
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

// lcOldMetrics is a compression_metrics column of another shape (a file
// written by another tool): the metrics this version writes do not fit it.
type lcOldMetrics struct {
	Foo *int64 `parquet:"foo,optional"`
}

type lcRowOld struct {
	ID       string        `parquet:"id"`
	Messages []lcMessage   `parquet:"messages,list,optional"`
	Metrics  *lcOldMetrics `parquet:"compression_metrics,optional"`
}

// TestCompressRejectsWhatTheOutputCannotHold: a record the output's schema
// cannot hold (here: its compression_metrics, where the input's column is
// a struct of other fields) is rejected as output_schema, with the
// writer's error and the input row, and every other record is written —
// in a run of one task (the writer refuses the row) and in a run of
// several tasks put together at the end (the row is checked before it
// goes to a part).
func TestCompressRejectsWhatTheOutputCannotHold(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for _, tc := range []struct {
		name  string
		noise bool
		opts  []pq.WriterOption
		args  []string
	}{
		{"one task", false, nil, nil},
		// Rows of about 2 MB, a row group each, tasks of 1 MiB: a task per
		// row group, the output put together from their parts.
		{"tasks", true, []pq.WriterOption{pq.MaxRowsPerRowGroup(1)}, []string{"--target-task-size", "1MiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			src, out, rejects := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "out.parquet"), filepath.Join(dir, "rej.jsonl")
			var rows []lcRowOld
			for _, r := range listContentRows(t, tc.noise) {
				rows = append(rows, lcRowOld{ID: r.ID, Messages: r.Messages})
			}
			writeRows(t, src, rows, tc.opts...)
			var stderr bytes.Buffer
			args := append([]string{"compress", "--quiet", "--input", src, "--output", out, "--image-tokens", "openai",
				"--target-max-tokens", "6000", "--rejects", rejects, "--max-reject-rate", "1"}, tc.args...)
			if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitPartial {
				t.Fatalf("exit %d, want %d (partial): %s", code, exitPartial, stderr.String())
			}
			rej := lines(t, rejects)
			if len(rej) != 2 {
				t.Fatalf("%d rejects, want 2: %s", len(rej), bytes.Join(rej, []byte("\n")))
			}
			for i, l := range rej {
				var r struct {
					Line                int64
					Reason, Detail, Raw string
				}
				if err := json.Unmarshal(l, &r); err != nil {
					t.Fatal(err)
				}
				if r.Reason != "output_schema" || r.Line != int64(i+1) || !strings.Contains(r.Detail, `key "compression_metrics.`) ||
					!strings.Contains(r.Detail, "not a column") || !strings.HasPrefix(r.Raw, fmt.Sprintf(`{"id":"%d",`, i)) {
					t.Errorf("reject %d: %.300s", i, l)
				}
			}
			r, err := format.Open(out, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rec, _, err := r.Next()
			if err != nil || !bytes.HasPrefix(rec, []byte(`{"id":"2",`)) {
				t.Fatalf("first record out: %v %.100s, want the short record 2", err, rec)
			}
			if _, _, err := r.Next(); err == nil {
				t.Fatal("more than one record out")
			}
		})
	}
}
