package prepass

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// pngOf is a real PNG of w×h pixels.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dataURL(t testing.TB, w, h int) string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngOf(t, w, h))
}

func oaImage(t testing.TB, w, h int) m {
	return m{"type": "image_url", "image_url": m{"url": dataURL(t, w, h)}}
}

func anImage(t testing.TB, w, h int) m {
	return m{"type": "image", "source": m{"type": "base64", "media_type": "image/png",
		"data": base64.StdEncoding.EncodeToString(pngOf(t, w, h))}}
}

func text(s string) m { return m{"type": "text", "text": s} }

// shots writes PNG files of the given widths (height 30) into a new
// directory and returns it with their relative paths.
func shots(t *testing.T, widths ...int) (string, []any) {
	dir := t.TempDir()
	var paths []any
	for i, w := range widths {
		p := filepath.Join("shots", "s"+string(rune('a'+i))+".png")
		if err := os.MkdirAll(filepath.Join(dir, "shots"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), pngOf(t, w, 30), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.ToSlash(p))
	}
	return dir, paths
}

// recount is the record's turns counted as the pipeline counts them
// (Text under the counter plus Extra).
func recount(t testing.TB, turns []traj.Turn) int {
	c, n := counter(t), 0
	for _, tu := range turns {
		n += c.Count(tu.Text) + tu.Extra
	}
	return n
}

func TestDropOldImages(t *testing.T) {
	dir, paths := shots(t, 40, 50, 60)
	for _, tc := range []struct {
		name   string
		rec    m
		dir    string
		lo, hi int
		// want: per changed turn, the text of its removed images, in order
		want map[int][]string
		// list: the images list written (nil: no field)
		list []any
	}{
		{
			name: "openai parts",
			rec: m{"messages": []any{
				m{"role": "system", "content": "browse"},
				m{"role": "user", "content": []any{text("page 1"), oaImage(t, 64, 48)}},
				m{"role": "assistant", "content": "click 3"},
				m{"role": "user", "content": []any{oaImage(t, 32, 16), text("page 2"), oaImage(t, 8, 8)}},
				m{"role": "assistant", "content": "scroll"},
				m{"role": "user", "content": []any{text("page 3"), oaImage(t, 16, 16)}},
				m{"role": "assistant", "content": "answer"},
			}},
			lo: 1, hi: 6,
			want: map[int][]string{1: {"[image removed: 64x48 png]"}, 3: {"[image removed: 32x16 png]", "[image removed: 8x8 png]"}},
		},
		{
			name: "anthropic blocks, also in a tool_result",
			rec: m{"messages": []any{
				m{"role": "user", "content": []any{text("task"), anImage(t, 20, 10)}},
				m{"role": "user", "content": []any{anImage(t, 30, 10), text("see")}},
				m{"role": "user", "content": []any{m{"type": "tool_result", "tool_use_id": "t1", "content": []any{anImage(t, 40, 10), text("shot")}}}},
				m{"role": "assistant", "content": "ok"},
				m{"role": "user", "content": []any{anImage(t, 50, 10)}},
				m{"role": "assistant", "content": "done"},
			}},
			lo: 1, hi: 5,
			want: map[int][]string{1: {"[image removed: 30x10 png]"}, 2: {"[image removed: 40x10 png]"}},
		},
		{
			name: "llama-factory markers and images list",
			rec: m{"id": "x", "messages": []any{
				m{"role": "system", "content": "browse"},
				m{"role": "user", "content": "Observation: <image> page 1"},
				m{"role": "assistant", "content": "click"},
				m{"role": "user", "content": "Observation: <image> page 2"},
				m{"role": "assistant", "content": "scroll"},
				m{"role": "user", "content": "Observation: <image> page 3"},
				m{"role": "assistant", "content": "answer"},
			}, "images": paths},
			dir: dir, lo: 1, hi: 7,
			want: map[int][]string{1: {"[image removed: 40x30 png]"}, 3: {"[image removed: 50x30 png]"}},
			list: paths[2:],
		},
		{
			name: "sharegpt markers, a missing file of unknown size",
			rec: m{"conversations": []any{
				m{"from": "human", "value": "<image><image> two shots"},
				m{"from": "gpt", "value": "ok"},
				m{"from": "human", "value": "<image> last"},
				m{"from": "gpt", "value": "done"},
			}, "images": []any{"gone.png", paths[1], paths[2]}},
			dir: dir, lo: 0, hi: 4,
			want: map[int][]string{0: {"[image removed]", "[image removed: 50x30 png]"}},
			list: paths[2:],
		},
		{
			name: "newest image-bearing turn in the middle stays",
			rec: m{"messages": []any{
				m{"role": "system", "content": "s"},
				m{"role": "user", "content": []any{oaImage(t, 10, 10)}},
				m{"role": "assistant", "content": "a"},
				m{"role": "user", "content": []any{oaImage(t, 12, 12)}},
				m{"role": "assistant", "content": "b"},
				m{"role": "user", "content": "no image"},
				m{"role": "assistant", "content": "c"},
			}},
			lo: 1, hi: 6,
			want: map[int][]string{1: {"[image removed: 10x10 png]"}},
		},
		{
			name: "images only in the head and tail",
			rec: m{"messages": []any{
				m{"role": "user", "content": []any{oaImage(t, 10, 10)}},
				m{"role": "assistant", "content": "a"},
				m{"role": "user", "content": "text"},
				m{"role": "assistant", "content": "b"},
				m{"role": "user", "content": []any{oaImage(t, 12, 12)}},
			}},
			lo: 1, hi: 4,
		},
		{
			name: "markers that do not pair with the list are left",
			rec: m{"messages": []any{
				m{"role": "user", "content": "<image> a"},
				m{"role": "assistant", "content": "a"},
				m{"role": "user", "content": "<image> b"},
			}, "images": paths[:1]},
			dir: dir, lo: 0, hi: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := decode(t, tc.rec)
			cfg := Config{Counter: counter(t), DropOldImages: true, ImagesOnly: true, Finder: &imagetok.Finder{Dir: tc.dir}}
			turns, rep := Apply(rec, rec.Turns, tc.lo, tc.hi, never, cfg)
			removed := 0
			for i, tu := range turns {
				want, changed := tc.want[i]
				if changed != tu.Made() {
					t.Errorf("turn %d changed %v, want %v", i, tu.Made(), changed)
				}
				if !changed {
					if !bytes.Equal(tu.Raw, rec.Turns[i].Raw) {
						t.Errorf("turn %d: bytes changed", i)
					}
					continue
				}
				removed += len(want)
				// The bytes: traj's Text leaves out a tool_result's parts.
				for _, s := range want {
					if !bytes.Contains(tu.Raw, []byte(s)) {
						t.Errorf("turn %d: %s lacks %q", i, tu.Raw, s)
					}
				}
				if n := bytes.Count(tu.Raw, []byte("[image removed")); n != len(want) {
					t.Errorf("turn %d: %d removed texts, want %d: %s", i, n, len(want), tu.Raw)
				}
			}
			if rep.ImagesRemoved != removed {
				t.Errorf("ImagesRemoved %d, want %d", rep.ImagesRemoved, removed)
			}
			if d := recount(t, rec.Turns) - recount(t, turns); rep.ImageTokensSaved != d {
				t.Errorf("ImageTokensSaved %d, the recount says %d", rep.ImageTokensSaved, d)
			}
			if rep.Total() != 0 {
				t.Errorf("the text steps ran: %+v", rep.Saved)
			}
			out := rec.AppendJSON(nil, turns, fields(rec, rep)...)
			if !jsonx.Valid(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
			if removed == 0 && !bytes.Equal(out, rec.Raw()) {
				t.Errorf("nothing removed, yet the bytes changed:\n%s", out)
			}
			checkList(t, out, tc.list, tc.dir)
			// Idempotent: the output has nothing more to remove.
			again := mustDecode(t, out)
			turns2, rep2 := Apply(again, again.Turns, tc.lo, tc.hi, never, cfg)
			if rep2.ImagesRemoved != 0 || !bytes.Equal(again.AppendJSON(nil, turns2, fields(again, rep2)...), out) {
				t.Errorf("second run removed %d more", rep2.ImagesRemoved)
			}
		})
	}
}

// fields are the top-level fields rec is written with after rep.
func fields(rec *traj.Record, rep Report) []traj.Field {
	if f, ok := ImagesListWithout(rec, rep.ImagesDropped); ok {
		return []traj.Field{f}
	}
	return nil
}

// checkList checks the images list written: list (when non-nil) exactly,
// and markers paired with it.
func checkList(t *testing.T, out []byte, list []any, dir string) {
	t.Helper()
	got := imagetok.RecordImages(out)
	if list != nil {
		if want := jsonOf(t, list); string(got) != want {
			t.Errorf("images list %s, want %s", got, want)
		}
	}
	rec := mustDecode(t, out)
	if _, err := FindImages(&imagetok.Finder{Dir: dir}, rec.Turns, got); got != nil && errors.Is(err, imagetok.ErrMarkerCount) && list != nil {
		t.Errorf("markers and list no longer pair: %v", err)
	}
}

func jsonOf(t *testing.T, v any) string {
	rec := decode(t, m{"messages": []any{}, "v": v})
	b, _ := rec.Field("v")
	return string(b)
}

func mustDecode(t testing.TB, b []byte) *traj.Record {
	t.Helper()
	r, err := traj.Decode(b, traj.Pos{File: "t", Line: 1}, traj.Schema{})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return r
}

// The step stops once the record fits: the oldest image goes first.
func TestDropOldImagesStopsWhenFits(t *testing.T) {
	rec := decode(t, m{"messages": []any{
		m{"role": "system", "content": "s"},
		m{"role": "user", "content": []any{oaImage(t, 10, 10)}},
		m{"role": "user", "content": []any{oaImage(t, 11, 11)}},
		m{"role": "user", "content": []any{oaImage(t, 12, 12)}},
		m{"role": "assistant", "content": "done"},
	}})
	calls := 0
	fits := func(int) bool { calls++; return calls > 1 } // fits after the first change
	turns, rep := Apply(rec, rec.Turns, 1, 4, fits, Config{Counter: counter(t), DropOldImages: true})
	if !turns[1].Made() || turns[2].Made() || turns[3].Made() || rep.ImagesRemoved != 1 || !rep.Fits {
		t.Fatalf("changed %v %v %v, report %+v", turns[1].Made(), turns[2].Made(), turns[3].Made(), rep)
	}
	if rep.Total() != 0 {
		t.Errorf("a text step ran after the record fit: %+v", rep.Saved)
	}
}

// Without ImagesOnly the text steps follow the image step; without
// DropOldImages no image is touched.
func TestDropOldImagesWithTextSteps(t *testing.T) {
	out := big("same output line", 50)
	msgs := threeRuns(out, m{"role": "user", "content": []any{oaImage(t, 9, 9)}})
	msgs[0] = m{"role": "user", "content": []any{oaImage(t, 8, 8), text("first")}}
	rec := decode(t, m{"messages": msgs})
	turns, rep := Apply(rec, rec.Turns, 0, 7, never, Config{Counter: counter(t), DigestOver: 1 << 20, DropOldImages: true})
	if rep.ImagesRemoved != 1 || rep.Changes[Duplicates] != 2 || !strings.Contains(turns[0].Text, "[image removed: 8x8 png]") || turns[7].Made() {
		t.Fatalf("report %+v, turn 0 %q", rep, turns[0].Text)
	}
	turns, rep = Apply(rec, rec.Turns, 0, 7, never, Config{Counter: counter(t), DigestOver: 1 << 20})
	if rep.ImagesRemoved != 0 || turns[0].Made() {
		t.Fatalf("images removed without DropOldImages: %+v", rep)
	}
}

// A removed image's bytes are gone from the record; the newest's are
// written as read.
func TestDropOldImagesBytes(t *testing.T) {
	old, newest := dataURL(t, 300, 200), dataURL(t, 301, 200)
	rec := decode(t, m{"messages": []any{
		m{"role": "system", "content": "s"},
		m{"role": "user", "content": []any{m{"type": "image_url", "image_url": m{"url": old, "detail": "high"}}}},
		m{"role": "user", "content": []any{m{"type": "image_url", "image_url": m{"url": newest}}}},
		m{"role": "assistant", "content": "done"},
	}})
	turns, rep := Apply(rec, rec.Turns, 1, 3, never, Config{Counter: counter(t), DropOldImages: true, ImagesOnly: true})
	b := rec.AppendJSON(nil, turns, fields(rec, rep)...)
	if bytes.Contains(b, []byte(old[30:80])) || !bytes.Contains(b, []byte(newest)) {
		t.Fatalf("old image kept or newest lost:\n%.300s", b)
	}
	if want := `{"type":"text","text":"[image removed: 300x200 png]"}`; !bytes.Contains(b, []byte(want)) {
		t.Fatalf("no %s in\n%.400s", want, b)
	}
	if len(b) >= len(rec.Raw()) || !jsonx.Valid(b) {
		t.Fatalf("%d bytes from %d, valid %v", len(b), len(rec.Raw()), jsonx.Valid(b))
	}
}

// FuzzDropOldImages: on any record line, the image step writes valid JSON
// that decodes, never touches a turn outside [lo, hi) or the newest
// image-bearing turn, keeps markers and list paired when they were, and
// a second run removes nothing more.
func FuzzDropOldImages(f *testing.F) {
	img := `{"type": "image_url", "image_url": {"url": "` + dataURL(f, 3, 2) + `"}}`
	an := `{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + base64.StdEncoding.EncodeToString(pngOf(f, 5, 4)) + `"}}`
	f.Add(`{"messages": [{"role": "user", "content": [`+img+`]}, {"role": "user", "content": [{"type": "text", "text": "a"}, `+img+`, `+an+`]}, {"role": "user", "content": [`+an+`]}]}`, uint8(0), uint8(3))
	f.Add(`{"messages":[{"role":"user","content":"<image><image>"},{"role":"user","content":"x <image>"},{"role":"user","content":"<image>"}],"images":["a.png","b.png",{"bytes":"`+base64.StdEncoding.EncodeToString(pngOf(f, 2, 2))+`","path":null},"d"]}`, uint8(0), uint8(3))
	f.Add(`{"conversations": [{"from": "human", "value": "<image>"}, {"from": "gpt", "value": "\u003cimage\u003e"}], "image": "x.png"}`, uint8(0), uint8(2))
	f.Add(`{"messages": [{"role": "user", "content": [{"type": "tool_result", "content": [`+an+`, {"type": "text"}]}]}, {"role": "user", "content": [`+img+`]}]}`, uint8(0), uint8(2))
	c := counter(f)
	f.Fuzz(func(t *testing.T, line string, lo, hi uint8) {
		rec, err := traj.Decode([]byte(line), traj.Pos{File: "t", Line: 1}, traj.Schema{})
		if err != nil {
			return
		}
		finder := &imagetok.Finder{Open: func(string) (io.ReadCloser, error) { return nil, os.ErrNotExist }}
		cfg := Config{Counter: c, DropOldImages: true, ImagesOnly: true, Finder: finder}
		_, list := ImagesField(rec)
		_, pairErr := FindImages(finder, rec.Turns, list)
		turns, rep := Apply(rec, rec.Turns, int(lo), int(hi), never, cfg)
		out := rec.AppendJSON(nil, turns, fields(rec, rep)...)
		if !jsonx.Valid(out) {
			t.Fatalf("invalid JSON:\n%s", out)
		}
		back, err := traj.Decode(out, traj.Pos{File: "t", Line: 1}, traj.Schema{})
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		newest := -1
		ims, _ := FindImages(finder, rec.Turns, list)
		for _, im := range ims {
			newest = max(newest, im.Turn)
		}
		for i, tu := range turns {
			if tu.Made() && (i < int(lo) || i >= int(hi) || i >= newest) {
				t.Fatalf("turn %d changed (lo %d hi %d newest %d)", i, lo, hi, newest)
			}
		}
		_, list2 := ImagesField(back)
		if _, err := FindImages(finder, back.Turns, list2); list != nil && pairErr == nil && err != nil {
			t.Fatalf("markers and list no longer pair: %v\n%s", err, out)
		}
		turns2, rep2 := Apply(back, back.Turns, int(lo), int(hi), never, cfg)
		if rep2.ImagesRemoved != 0 || !bytes.Equal(back.AppendJSON(nil, turns2, fields(back, rep2)...), out) {
			t.Fatalf("second run removed %d more:\n%s", rep2.ImagesRemoved, out)
		}
	})
}

// TestDropOldImagesDoesNotCopyImages: removing an 8 MB base64 screenshot
// and keeping another allocates far less than one image: neither image's
// bytes are copied (sizes come from a few KB of the header).
func TestDropOldImagesDoesNotCopyImages(t *testing.T) {
	const size = 8 << 20
	shot := func(w int) string {
		u := dataURL(t, w, 768)
		return u + strings.Repeat("A", size-len(u)) // a header, then 8 MB of data never read
	}
	rec := decode(t, m{"messages": []any{
		m{"role": "system", "content": "s"},
		m{"role": "user", "content": []any{m{"type": "image_url", "image_url": m{"url": shot(1024)}}, text("old")}},
		m{"role": "user", "content": []any{m{"type": "image_url", "image_url": m{"url": shot(1025)}}, text("new")}},
		m{"role": "assistant", "content": "done"},
	}})
	cfg := Config{Counter: counter(t), DropOldImages: true, ImagesOnly: true}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	turns, rep := Apply(rec, rec.Turns, 1, 3, never, cfg)
	runtime.ReadMemStats(&after)
	if rep.ImagesRemoved != 1 || !strings.Contains(turns[1].Text, "[image removed: 1024x768 png]") || turns[2].Made() {
		t.Fatalf("report %+v, turn 1 %q", rep, turns[1].Text)
	}
	n := after.TotalAlloc - before.TotalAlloc
	if n > size/8 {
		t.Errorf("the step allocated %d bytes for two %d-byte images", n, size)
	}
	t.Logf("allocated %d bytes for two %d-byte images", n, size)
}

// The text steps (duplicates, digests, arguments) never remove or change
// an image: a tool result holding one (an image part, or an "<image>"
// marker paired with the images list) is left whole, the newest above
// all, with or without the image step.
func TestTextStepsKeepImages(t *testing.T) {
	body := func(k int) string { return big("line of run "+string(rune('a'+k))+": some terminal output", 60) }
	run := func(id string, content any) []any {
		return []any{
			m{"role": "assistant", "content": nil, "tool_calls": []m{oaCall(id, "screenshot", `{}`)}},
			m{"role": "tool", "tool_call_id": id, "content": content},
		}
	}
	dir, paths := shots(t, 40, 50)
	for _, tc := range []struct {
		name  string
		parts bool
	}{{"parts", true}, {"markers", false}} {
		for _, drop := range []bool{false, true} {
			msgs := []any{m{"role": "system", "content": "s"}, m{"role": "user", "content": "do it"}}
			for k := range 4 {
				var content any = body(k)
				if k == 1 || k == 2 { // turns 5 and 7 hold an image
					if tc.parts {
						content = []any{text(body(k)), oaImage(t, 40+k, 30)}
					} else {
						content = "<image>" + body(k)
					}
				}
				msgs = append(msgs, run(string(rune('a'+k)), content)...)
			}
			// A later identical copy of turn 7's text: a back-reference
			// would drop turn 7's image.
			if tc.parts {
				msgs = append(msgs, run("z", body(2))...)
			}
			msgs = append(msgs, m{"role": "assistant", "content": "done"})
			r := m{"messages": msgs}
			if !tc.parts {
				r["images"] = paths
			}
			rec := decode(t, r)
			cfg := Config{Counter: counter(t), DigestOver: 50, DropOldImages: drop, Finder: &imagetok.Finder{Dir: dir}}
			turns, rep := Apply(rec, rec.Turns, 2, len(rec.Turns)-1, never, cfg)
			name := tc.name
			if drop {
				name += "/drop"
			}
			if rep.Changes[Digests] == 0 {
				t.Fatalf("%s: nothing digested: %+v", name, rep)
			}
			for _, i := range []int{5, 7} {
				if drop && i == 5 {
					continue // its old image became text: it may be digested
				}
				if turns[i].Made() {
					t.Errorf("%s: turn %d, holding an image, changed by a text step: %q", name, i, clip(turns[i].Text, 80))
				}
			}
			if drop && rep.ImagesRemoved != 1 {
				t.Errorf("%s: images removed %d, want 1 (turn 5's)", name, rep.ImagesRemoved)
			}
			// Images left: 2, or 1 after the image step; markers pair with
			// the list written.
			_, list := ImagesField(rec)
			if f, ok := ImagesListWithout(rec, rep.ImagesDropped); ok {
				list = f.Value
			}
			ims, err := FindImages(&imagetok.Finder{Dir: dir}, turns, list)
			want := 2
			if drop {
				want = 1
			}
			if err != nil || len(ims) != want || ims[len(ims)-1].Turn != 7 {
				t.Errorf("%s: images left %+v, %v; want %d, the newest in turn 7", name, ims, err, want)
			}
		}
	}
}
