// Command mem measures the peak RSS of `trajcompress compress` on inputs
// with big rows and prints each against its bound:
// 300 MB + 4 x the largest record for JSONL inputs, and for Parquet
// 300 MB + 2 x the largest row group's uncompressed size (Arrow: the
// larger of the two, with its largest record batch for the row group). See
// bench/README.md, "Memory on big rows".
//
//	go run ./bench/mem -bin bin/trajcompress [-out bench/out/mem] [-mb 50]
//
// Inputs (generated into -out once, reused after): a Parquet and an Arrow
// file of about 190 MB from the fixture generator, and JSONL files with one
// record of about -mb MB each, of four shapes: one long prose tool output,
// one CJK tool output without spaces (a single pre-tokenizer piece), a
// base64 blob, and thousands of turns.
package main

import (
	"bufio"
	"encoding/base64"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

const mb = 1 << 20

func main() {
	bin := flag.String("bin", "bin/trajcompress", "trajcompress binary")
	out := flag.String("out", "bench/out/mem", "directory for inputs and outputs")
	size := flag.Int("mb", 50, "size of the big JSONL records, MB")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	type input struct {
		name, outFormat string
		make            func(path string) error
	}
	fixtures := func(format string) func(string) error {
		return func(path string) error {
			// 12,000 mix records at median 6,000 / p99 60,000 tokens: ~190 MB of Parquet.
			return run(*bin, "fixtures", "--output", path, "--format", format, "--count", "12000", "--seed", "3",
				"--profile", "mix", "--median-tokens", "6000", "--p99-tokens", "60000")
		}
	}
	n := *size * mb
	inputs := []input{
		{"big.parquet", "parquet", fixtures("parquet")},
		{"big.parquet", "jsonl", nil},
		{"big.arrow", "arrow", fixtures("arrow")},
		{"prose.jsonl", "jsonl", bigRecord(n, prose)},
		{"cjk.jsonl", "jsonl", bigRecord(n, cjk)},
		{"base64.jsonl", "jsonl", bigRecord(n, b64)},
		{"turns.jsonl", "jsonl", manyTurns(n)},
	}
	fmt.Printf("# %s, load %s, %s\n\n", time.Now().UTC().Format(time.RFC3339), loadavg(), *bin)
	fmt.Println("| input | size MB | output | largest record / row group MB | bound MB | peak RSS MB | RSS / bound | wall s |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, in := range inputs {
		path := filepath.Join(*out, in.name)
		if _, err := os.Stat(path); err != nil {
			if in.make == nil {
				fatal(fmt.Errorf("%s: not made", path))
			}
			if err := in.make(path); err != nil {
				fatal(fmt.Errorf("making %s: %w", path, err))
			}
		}
		st, err := os.Stat(path)
		if err != nil {
			fatal(err)
		}
		var largest, bound int64
		if strings.HasSuffix(path, ".parquet") {
			largest, err = largestRowGroup(path)
			bound = 300*mb + 2*largest
		} else {
			largest, err = largestRecord(*bin, path)
			bound = 300*mb + 4*largest
			if strings.HasSuffix(path, ".arrow") && err == nil {
				// Record batches are read whole, like Parquet row groups.
				var batch int64
				batch, err = largestBatch(path)
				bound = max(bound, 300*mb+2*batch)
				largest = max(largest, batch)
			}
		}
		if err != nil {
			fatal(err)
		}
		dst := filepath.Join(*out, "out."+in.outFormat)
		os.Remove(dst)
		start := time.Now()
		cmd := exec.Command(*bin, "compress", "--quiet", "--input", path, "--output", dst)
		cmd.Stderr = os.Stderr
		err = cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
			err = nil // partial: some records rejected or unsummarised; memory is what we measure
		}
		if err != nil {
			fatal(fmt.Errorf("compress %s: %w", path, err))
		}
		wall := time.Since(start)
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
		fmt.Printf("| %s | %.0f | %s | %.1f | %.0f | %.0f | %.2f | %.1f |\n", in.name, float64(st.Size())/mb, in.outFormat,
			float64(largest)/mb, float64(bound)/mb, float64(rss)/mb, float64(rss)/float64(bound), wall.Seconds())
	}
}

// largestRowGroup is the largest uncompressed size of a row group of the
// Parquet file at path, from its footer.
func largestRowGroup(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, err
	}
	var largest int64
	for _, rg := range pf.Metadata().RowGroups {
		largest = max(largest, rg.TotalByteSize)
	}
	return largest, nil
}

// largestBatch is the largest record batch of the Arrow file (or stream)
// at path: the total length of its buffers.
func largestBatch(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size := func(rec arrow.Record) int64 {
		var n int64
		var walk func(d arrow.ArrayData)
		walk = func(d arrow.ArrayData) {
			for _, b := range d.Buffers() {
				if b != nil {
					n += int64(b.Len())
				}
			}
			for _, c := range d.Children() {
				walk(c)
			}
		}
		for _, col := range rec.Columns() {
			walk(col.Data())
		}
		return n
	}
	var largest int64
	if fr, err := ipc.NewFileReader(f); err == nil {
		defer fr.Close()
		for i := range fr.NumRecords() {
			rec, err := fr.Record(i)
			if err != nil {
				return 0, err
			}
			largest = max(largest, size(rec))
		}
		return largest, nil
	}
	if _, err := f.Seek(0, 0); err != nil {
		return 0, err
	}
	sr, err := ipc.NewReader(f)
	if err != nil {
		return 0, err
	}
	defer sr.Release()
	for sr.Next() {
		largest = max(largest, size(sr.Record()))
	}
	return largest, sr.Err()
}

// largestRecord is the length of the longest record of the file at path,
// as JSON: the longest line of a JSONL file; for Arrow, the longest line
// of the file converted to JSONL by a dry-run-free pass of the tool (the
// records as the pipeline sees them).
func largestRecord(bin, path string) (int64, error) {
	if strings.HasSuffix(path, ".arrow") {
		tmp := path + ".as.jsonl"
		if _, err := os.Stat(tmp); err != nil {
			// A target no record reaches: every record is written unchanged.
			if err := run(bin, "compress", "--quiet", "--input", path, "--output", tmp, "--output-format", "jsonl",
				"--target-max-tokens", "1000000000", "--metrics", os.DevNull); err != nil {
				return 0, err
			}
		}
		path = tmp
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var largest, cur int64
	for {
		line, err := r.ReadSlice('\n')
		cur += int64(len(line))
		if err == bufio.ErrBufferFull {
			continue
		}
		largest = max(largest, cur)
		cur = 0
		if err != nil {
			return largest, nil
		}
	}
}

// bigRecord writes a JSONL file of one record whose tool output is about n
// bytes of text from gen, then ten small records.
func bigRecord(n int, gen func(n int) string) func(string) error {
	return func(path string) error {
		turns := []string{
			turn("system", "You are a helpful agent."),
			turn("human", "Build the project."),
			turn("gpt", `<tool_call>{"name":"bash","arguments":{"cmd":"make"}}</tool_call>`),
			turn("tool", "<tool_response>"+gen(n)+"</tool_response>"),
			turn("gpt", `<tool_call>{"name":"bash","arguments":{"cmd":"make test"}}</tool_call>`),
			turn("tool", "<tool_response>ok</tool_response>"),
			turn("gpt", "Done."),
			turn("human", "Thanks"),
			turn("gpt", "You're welcome."),
		}
		return writeRecords(path, turns)
	}
}

// manyTurns writes one record of about n bytes in tool call/result pairs
// of about 3 KB each, then ten small records.
func manyTurns(n int) func(string) error {
	return func(path string) error {
		turns := []string{turn("system", "You are a helpful agent."), turn("human", "Go.")}
		for i, size := 0, 0; size < n; i++ {
			call := turn("gpt", fmt.Sprintf(`<tool_call>{"name":"bash","arguments":{"cmd":"step %d"}}</tool_call>`, i))
			res := turn("tool", "<tool_response>"+prose(3000)+"</tool_response>")
			turns = append(turns, call, res)
			size += len(call) + len(res)
		}
		turns = append(turns, turn("gpt", "Done."))
		return writeRecords(path, turns)
	}
}

func writeRecords(path string, turns []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"conversations":[` + strings.Join(turns, ",") + "]}\n")
	for i := range 10 {
		fmt.Fprintf(w, `{"conversations":[%s,%s]}`+"\n", turn("human", fmt.Sprintf("hi %d", i)), turn("gpt", "hello"))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func turn(role, value string) string {
	return `{"from":` + string(jsonx.AppendString(nil, role)) + `,"value":` + string(jsonx.AppendString(nil, value)) + "}"
}

var rng = rand.New(rand.NewPCG(1, 2))

var words = strings.Fields("error warning build test compile module package function return value the of and to in is for on with")

func prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		if rng.IntN(12) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func cjk(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteRune(rune(0x4e00 + rng.IntN(0x9fff-0x4e00)))
	}
	return b.String()
}

func b64(n int) string {
	raw := make([]byte, n*3/4)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func run(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		return nil
	}
	return err
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mem:", err)
	os.Exit(1)
}
