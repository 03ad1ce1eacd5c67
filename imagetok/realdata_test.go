package imagetok

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWebVoyagerSet finds the images of the real multimodal set
// (fixtures/multimodal/webvoyager: 8 WebVoyager runs in LLaMA-Factory's
// layout, 3 screenshots each, all 1024×768 PNG) from their file headers,
// and counts them: 765 (openai), 999 + 2 (Qwen2.5-VL), 768 + 2 (Qwen3-VL).
func TestWebVoyagerSet(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "multimodal", "webvoyager")
	f, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q25, err := LoadQwen("testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json")
	if err != nil {
		t.Fatal(err)
	}
	q3, err := LoadQwen("testdata/qwen3-vl-8b-instruct.preprocessor_config.json")
	if err != nil {
		t.Fatal(err)
	}
	fi := Finder{Dir: dir}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	records, images := 0, 0
	for sc.Scan() {
		var rec struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Images json.RawMessage `json:"images"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var turns [][]byte
		for _, m := range rec.Messages {
			turns = append(turns, m.Content)
		}
		ims, err := fi.Record(turns, RecordImages(sc.Bytes()))
		if err != nil {
			t.Fatalf("record %d: %v", records+1, err)
		}
		records++
		if len(ims) != 3 {
			t.Errorf("record %d: %d images, want 3", records, len(ims))
		}
		prev := -1
		for _, im := range ims {
			images++
			if im.Kind != KindMarker || im.Source != SourceFile || im.Format != "png" || im.Width != 1024 || im.Height != 768 || im.Turn <= prev {
				t.Errorf("record %d: %+v", records, im)
			}
			prev = im.Turn
			for _, c := range []struct {
				r    Rule
				want int
			}{{OpenAI(), 765}, {q25.Rule(), 1001}, {q3.Rule(), 770}} {
				if n, exact := c.r.Tokens(im); n != c.want || !exact {
					t.Errorf("%s: %d, %v; want %d", c.r, n, exact, c.want)
				}
			}
		}
	}
	if records != 8 || images != 24 {
		t.Errorf("%d records, %d images; want 8, 24", records, images)
	}
}
