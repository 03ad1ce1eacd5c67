// Command images reports what images cost on a real multimodal set
// (fixtures/multimodal/webvoyager by default) under the counting rules of
// package imagetok: images per record, tokens per record by flat:85,
// openai and the Qwen2.5-VL rule (and Qwen3-VL), and the records that fit a
// target under flat:85 but not under the model's rule.
//
// Text tokens are the project's count of each turn's text (package traj
// reads the record, package tokenize counts, o200k_base by default); image
// tokens come from the rule. The set is read in its LLaMA-Factory layout
// (markers and an images list of files) and, built in memory from the same
// files, in the OpenAI layout (image_url parts with data: URLs); both must
// give the same images, or the command fails.
//
//	go run ./bench/images [-dir fixtures/multimodal/webvoyager] [-tokenizer o200k_base] [-targets 10000,15250]
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/trajcompress/trajcompress/imagetok"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type record struct {
	ID       string          `json:"id"`
	Messages []message       `json:"messages"`
	Images   json.RawMessage `json:"images"`
}

func main() {
	dir := flag.String("dir", "fixtures/multimodal/webvoyager", "directory holding records.jsonl and the files its images list names")
	qwen25 := flag.String("qwen", "imagetok/testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json", "Qwen2.5-VL preprocessor_config.json")
	qwen3 := flag.String("qwen3", "imagetok/testdata/qwen3-vl-8b-instruct.preprocessor_config.json", "Qwen3-VL preprocessor_config.json")
	tok := flag.String("tokenizer", "o200k_base", "tokenizer for the text (tokenize.New name)")
	targets := flag.String("targets", "10000,15250", "token targets, comma-separated")
	openai := flag.String("openai", "", "write the set in the OpenAI layout (image_url parts with data: URLs) to this JSON Lines file, and stop")
	flag.Parse()
	if *openai != "" {
		if err := writeOpenAI(*dir, *openai); err != nil {
			fmt.Fprintln(os.Stderr, "images:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dir, *qwen25, *qwen3, *tok, *targets); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

type row struct {
	id            string
	turns, images int
	unknown       int
	text          int
	img           []int // per rule
}

// whatIf turns rows into the runs as they went: one image per user turn
// (an observation), each of the size of the record's last image. WebVoyager
// keeps only the last three screenshots in context; its runs saved one
// screenshot per observation, all of the browser window's size (1024×768
// for these runs: checked on the source files, see the bench README).
func whatIf(rows []row, users []int, last []imagetok.Image, rules []imagetok.Rule) []row {
	out := make([]row, len(rows))
	for i, r := range rows {
		r.images = users[i]
		r.img = make([]int, len(rules))
		for k, rule := range rules {
			n, _ := rule.Tokens(last[i])
			r.img[k] = n * users[i]
		}
		out[i] = r
	}
	return out
}

func run(dir, qwen25Path, qwen3Path, tokName, targetList string) error {
	q25, err := imagetok.LoadQwen(qwen25Path)
	if err != nil {
		return err
	}
	q3, err := imagetok.LoadQwen(qwen3Path)
	if err != nil {
		return err
	}
	rules := []imagetok.Rule{imagetok.Flat(85), imagetok.OpenAI(), q25.Rule(), q3.Rule()}
	names := []string{"flat:85", "openai", "qwen2.5-vl", "qwen3-vl"}
	var tgts []int
	for _, s := range strings.Split(targetList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-targets: %v", err)
		}
		tgts = append(tgts, n)
	}
	counter, err := tokenize.New(tokName)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "records.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	finder := imagetok.Finder{Dir: dir}
	var rows []row
	var users []int
	var last []imagetok.Image
	for line := 1; sc.Scan(); line++ {
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
		// LLaMA-Factory layout: markers and the images list.
		contents := make([][]byte, len(rec.Messages))
		for i, m := range rec.Messages {
			contents[i] = m.Content
		}
		lf, err := finder.Record(contents, rec.Images)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
		// OpenAI layout, built from the same files.
		oa, err := openAIForm(dir, rec)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
		r, err := traj.Decode(oa, traj.Pos{File: path, Line: int64(line)}, traj.Schema{Dialect: traj.DialectOpenAI})
		if err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
		var oaImages []imagetok.Image
		var msgs struct {
			Messages []message `json:"messages"`
		}
		if err := json.Unmarshal(oa, &msgs); err != nil {
			return err
		}
		for i, m := range msgs.Messages {
			oaImages = append(oaImages, finder.Content(m.Content, i)...)
		}
		if len(oaImages) != len(lf) {
			return fmt.Errorf("%s:%d: %d images as markers, %d as image_url parts", path, line, len(lf), len(oaImages))
		}
		rw := row{id: rec.ID, turns: len(r.Turns), images: len(lf), img: make([]int, len(rules))}
		for i, im := range lf {
			o := oaImages[i]
			if o.Turn != im.Turn || o.Width != im.Width || o.Height != im.Height || o.Format != im.Format {
				return fmt.Errorf("%s:%d: image %d: %s %dx%d in turn %d as a marker, %s %dx%d in turn %d as a part",
					path, line, i, im.Format, im.Width, im.Height, im.Turn, o.Format, o.Width, o.Height, o.Turn)
			}
			if !im.Known() {
				rw.unknown++
			}
			for k, rule := range rules {
				n, _ := rule.Tokens(im)
				rw.img[k] += n
			}
		}
		rw.text = counter.Count(r.System)
		for _, t := range r.Turns {
			rw.text += counter.Count(t.Text)
		}
		rows = append(rows, rw)
		u := 0
		for _, t := range r.Turns {
			if t.Role == traj.RoleUser {
				u++
			}
		}
		users = append(users, u)
		last = append(last, lf[len(lf)-1])
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	fmt.Println("== the set as stored: the messages of each run's last model call (its last three screenshots)")
	report(os.Stdout, rows, names, tgts, tokName)
	fmt.Println()
	fmt.Println("== the runs as they went: one screenshot per observation (user turn), same text")
	report(os.Stdout, whatIf(rows, users, last, rules), names, tgts, tokName)
	return nil
}

// writeOpenAI writes every record of dir's records.jsonl in the OpenAI
// layout (openAIForm) to out, one per line, for compress runs on it.
func writeOpenAI(dir, out string) error {
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for i, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec record
		if err := json.Unmarshal(l, &rec); err != nil {
			return fmt.Errorf("records.jsonl:%d: %v", i+1, err)
		}
		oa, err := openAIForm(dir, rec)
		if err != nil {
			return fmt.Errorf("records.jsonl:%d: %v", i+1, err)
		}
		buf.Write(oa)
		buf.WriteByte('\n')
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// openAIForm rebuilds rec with each "<image>" marker as an OpenAI image_url
// part whose data: URL holds the file the images list names.
func openAIForm(dir string, rec record) ([]byte, error) {
	var paths []string
	if err := json.Unmarshal(rec.Images, &paths); err != nil {
		return nil, fmt.Errorf("images: %v", err)
	}
	type part struct {
		Type     string            `json:"type"`
		Text     string            `json:"text,omitempty"`
		ImageURL map[string]string `json:"image_url,omitempty"`
	}
	type msg struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	next := 0
	var out []msg
	for _, m := range rec.Messages {
		var s string
		if err := json.Unmarshal(m.Content, &s); err != nil {
			return nil, fmt.Errorf("content is not a string: %v", err)
		}
		if !strings.Contains(s, imagetok.Marker) {
			out = append(out, msg{m.Role, s})
			continue
		}
		var parts []part
		for i, seg := range strings.Split(s, imagetok.Marker) {
			if i > 0 {
				if next >= len(paths) {
					return nil, fmt.Errorf("more markers than images")
				}
				b, err := os.ReadFile(filepath.Join(dir, paths[next]))
				if err != nil {
					return nil, err
				}
				next++
				parts = append(parts, part{Type: "image_url", ImageURL: map[string]string{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)}})
			}
			if seg != "" {
				parts = append(parts, part{Type: "text", Text: seg})
			}
		}
		out = append(out, msg{m.Role, parts})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"messages": out}); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

func report(w *os.File, rows []row, names []string, tgts []int, tokName string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "record\tturns\timages\tunknown size\ttext (%s)\t", tokName)
	for _, n := range names {
		fmt.Fprintf(tw, "total %s\t", n)
	}
	fmt.Fprintln(tw)
	tot := row{img: make([]int, len(names))}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t", strings.TrimPrefix(r.id, "webvoyager/"), r.turns, r.images, r.unknown, r.text)
		for k := range names {
			fmt.Fprintf(tw, "%d\t", r.text+r.img[k])
		}
		fmt.Fprintln(tw)
		tot.turns += r.turns
		tot.images += r.images
		tot.unknown += r.unknown
		tot.text += r.text
		for k := range names {
			tot.img[k] += r.img[k]
		}
	}
	fmt.Fprintf(tw, "all %d records\t%d\t%d\t%d\t%d\t", len(rows), tot.turns, tot.images, tot.unknown, tot.text)
	for k := range names {
		fmt.Fprintf(tw, "%d\t", tot.text+tot.img[k])
	}
	fmt.Fprintln(tw)
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "image tokens per image (all records): ")
	for k, n := range names {
		if k > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%s %.0f", n, float64(tot.img[k])/float64(max(tot.images, 1)))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "target\tfit under flat:85\t")
	for _, n := range names[1:] {
		fmt.Fprintf(tw, "fit under %s\tflat says fits, %s does not\t", n, n)
	}
	fmt.Fprintln(tw)
	for _, t := range tgts {
		fits := func(r row, k int) bool { return r.text+r.img[k] <= t }
		nflat := 0
		for _, r := range rows {
			if fits(r, 0) {
				nflat++
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t", t, nflat)
		for k := 1; k < len(names); k++ {
			fit, wrong := 0, 0
			for _, r := range rows {
				if fits(r, k) {
					fit++
				} else if fits(r, 0) {
					wrong++
				}
			}
			fmt.Fprintf(tw, "%d\t%d\t", fit, wrong)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
