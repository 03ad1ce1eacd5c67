// Command redactbench measures package redact on the real trajectories
// (internal/testenv.RealDataDir): what the rules redact in records that
// hold no planted secret (false positives, per rule, with masked samples),
// recall on secrets planted into every string field of every record (per
// kind and per field), and the speed of Redact over the records' strings.
//
// Every string value of a record is a text, whatever its key — turn
// contents, tool-call arguments, system prompts, metadata — and a string
// that is itself a JSON document (tool-call arguments) is planted into
// at its own string leaves and re-encoded, so the secret reaches the
// redactor JSON-escaped, as it will in the pipeline.
//
//	go run ./bench/redact [-dir DIR] [-seed 1] [-every 7] [-samples 5]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/redact/redacttest"
	"github.com/trajcompress/trajcompress/tokenize"
)

func main() {
	dir := flag.String("dir", "", "real data directory (default: testenv.RealDataDir, the real data beside the repository)")
	seed := flag.Uint64("seed", 1, "random seed for planting")
	every := flag.Int("every", 7, "plant into one string leaf in every N")
	samples := flag.Int("samples", 5, "masked samples to print per rule")
	reps := flag.Int("reps", 5, "timed passes over the clean strings (the best is reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed redaction passes to this file")
	flag.Parse()
	if *dir == "" {
		*dir = testenv.RealDataDir()
	}
	if *dir == "" {
		fmt.Println("real data absent (testenv.RealDataDir): nothing to measure")
		return
	}
	files, _ := filepath.Glob(filepath.Join(*dir, "*", "*.jsonl"))
	sort.Strings(files)
	r := redact.Default()

	// 1. False positives: every string leaf of every record, unchanged.
	var texts []string
	type fp struct {
		n       int
		samples []string
	}
	fps := map[string]*fp{}
	var records int
	perSource := map[string]redact.Counts{}
	for _, file := range files {
		source := filepath.Base(filepath.Dir(file))
		for _, rec := range readRecords(file) {
			records++
			redacttest.WalkStrings(rec, "", func(path, s string) {
				texts = append(texts, s)
				out, c := r.RedactString(s)
				if c == nil {
					return
				}
				if perSource[source] == nil {
					perSource[source] = redact.Counts{}
				}
				perSource[source].Add(c)
				vals := redactedValues(s, out)
				for kind, n := range c {
					f := fps[kind]
					if f == nil {
						f = &fp{}
						fps[kind] = f
					}
					f.n += n
				}
				for _, v := range vals {
					f := fps[v.kind]
					if len(f.samples) < *samples {
						f.samples = append(f.samples, fmt.Sprintf("%s %s in %s", mask(v.value), shape(v.value), path))
					}
				}
			})
		}
	}
	total := 0
	for _, t := range texts {
		total += len(t)
	}
	fmt.Printf("== redactions in the real data as it is (%d files, %d records, %d strings, %.1f MB)\n", len(files), records, len(texts), float64(total)/1e6)
	kinds := make([]string, 0, len(fps))
	for k := range fps {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		return fps[kinds[i]].n > fps[kinds[j]].n || fps[kinds[i]].n == fps[kinds[j]].n && kinds[i] < kinds[j]
	})
	if len(kinds) == 0 {
		fmt.Println("none")
	}
	for _, k := range kinds {
		fmt.Printf("%-32s %5d\n", k, fps[k].n)
		for _, s := range fps[k].samples {
			fmt.Printf("    %s\n", s)
		}
	}
	srcs := make([]string, 0, len(perSource))
	for s := range perSource {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		fmt.Printf("  %-34s %d\n", s, perSource[s].Total())
	}

	// 2. Recall on planted secrets.
	rng := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	type tally struct{ planted, found, counted int }
	byKind := map[string]*tally{}
	byField := map[string]*tally{}
	var misses []string
	leaf := 0
	for _, file := range files {
		for _, rec := range readRecords(file) {
			redacttest.WalkStrings(rec, "", func(path, s string) {
				leaf++
				if leaf%*every != 0 {
					return
				}
				sec := redacttest.Make(rng, rng.IntN(len(redacttest.Kinds())))
				planted, where := redacttest.Plant(rng, s, sec.Text)
				out, c := r.RedactString(planted)
				field := redacttest.FieldClass(path) + where
				k, f := byKind[sec.Kind], byField[field]
				if k == nil {
					k = &tally{}
					byKind[sec.Kind] = k
				}
				if f == nil {
					f = &tally{}
					byField[field] = f
				}
				k.planted++
				f.planted++
				gone := !strings.Contains(out, sec.Value) && !strings.Contains(out, jsonInner(sec.Value))
				if gone {
					k.found++
					f.found++
				} else if len(misses) < 20 {
					misses = append(misses, fmt.Sprintf("%s in %s: %q", sec.Kind, field, sec.Text))
				}
				if c[sec.Kind] > 0 {
					k.counted++
					f.counted++
				}
			})
		}
	}
	fmt.Printf("\n== recall on planted secrets (one string leaf in %d, seed %d): removed / planted; counted under its own kind\n", *every, *seed)
	printTally := func(m map[string]*tally) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var p, f int
		for _, k := range keys {
			t := m[k]
			p += t.planted
			f += t.found
			fmt.Printf("%-48s %5d / %5d  %6.2f%%   own kind %5d\n", k, t.found, t.planted, 100*float64(t.found)/float64(t.planted), t.counted)
		}
		fmt.Printf("%-48s %5d / %5d  %6.2f%%\n", "all", f, p, 100*float64(f)/float64(max(p, 1)))
	}
	printTally(byKind)
	fmt.Println()
	printTally(byField)
	for _, m := range misses {
		fmt.Println("  missed:", m)
	}

	// 2b. The same through whole records, as the pipeline redacts them:
	// one secret planted into one string leaf of every record, the record
	// encoded three ways (Go without HTML escapes; encoding/json's
	// default, whose \u003c escapes make the line "mixed"; Python's
	// json.dumps default, non-ASCII as \u escapes), then
	// Redactor.RedactLine on the line.
	fmt.Printf("\n== recall through whole records (Redactor.RedactLine; one secret per record, seed %d)\n", *seed)
	lineKind := map[string]*tally{}
	lineEnc := map[string]*tally{}
	var lineMisses []string
	scanMisses := 0
	for _, file := range files {
		for ri, rec := range readRecords(file) {
			n := 0
			redacttest.WalkStrings(rec, "", func(string, string) { n++ })
			if n == 0 {
				continue
			}
			sec := redacttest.Make(rng, rng.IntN(len(redacttest.Kinds())))
			planted, field, ok := redacttest.PlantRecord(rng, rec, rng.IntN(n), sec.Text)
			if !ok {
				continue
			}
			encName, line := encodeRecord(planted, ri%3)
			out, c := r.RedactLine(line)
			// The exact answer RedactLine's scan of the encoded line stands
			// in for: every string decoded and redacted.
			exact := redact.Counts{}
			jsonx.MapStrings(line, r.Func(exact))
			if exact.Total() != c.Total() {
				scanMisses++
			}
			gone := !strings.Contains(string(out), sec.Value) && !strings.Contains(string(out), jsonInner(sec.Value)) && !strings.Contains(string(out), jsonInner(jsonInner(sec.Value)))
			for key, m := range map[string]map[string]*tally{sec.Kind: lineKind, encName: lineEnc} {
				t := m[key]
				if t == nil {
					t = &tally{}
					m[key] = t
				}
				t.planted++
				if gone {
					t.found++
				}
				if c[sec.Kind] > 0 {
					t.counted++
				}
			}
			if !gone && len(lineMisses) < 20 {
				lineMisses = append(lineMisses, fmt.Sprintf("%s in %s (%s)", sec.Kind, field, encName))
			}
		}
	}
	printTally(lineKind)
	fmt.Println()
	printTally(lineEnc)
	for _, m := range lineMisses {
		fmt.Println("  missed:", m)
	}
	fmt.Printf("records whose redactions differ from redacting every decoded string: %d\n", scanMisses)

	// 3. Speed over the clean strings, against the tokenizer on the same
	// strings: the pipeline's cost per byte is about the tokenizer's
	// (bench/README.md: end to end runs at about 0.75 of the tokenizer
	// alone), so time(redact) / (time(tokenize) / 0.75) estimates the
	// end-to-end slowdown of redacting every string.
	raw := make([][]byte, len(texts))
	for i, t := range texts {
		raw[i] = []byte(t)
	}
	enc, err := tokenize.New("o200k_base")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bestR, bestT := time.Duration(1<<62), time.Duration(1<<62)
	changed := 0
	var prof *os.File
	if *cpuprofile != "" {
		if prof, err = os.Create(*cpuprofile); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for range *reps {
		if prof != nil {
			pprof.StartCPUProfile(prof)
		}
		start := time.Now()
		var dst []byte
		changed = 0
		for _, t := range raw {
			var c redact.Counts
			dst, c = r.Redact(dst[:0], t)
			if c != nil {
				changed++
			}
		}
		bestR = min(bestR, time.Since(start))
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
			prof = nil
		}
		start = time.Now()
		for _, t := range texts {
			enc.Count(t)
		}
		bestT = min(bestT, time.Since(start))
	}
	mb := float64(total) / 1e6
	fmt.Printf("\n== speed (one goroutine, best of %d interleaved passes; load average %s)\n", *reps, loadAvg())
	fmt.Printf("redact   %.1f MB in %v: %.0f MB/s (%d of %d strings changed)\n", mb, bestR.Round(time.Millisecond), mb/bestR.Seconds(), changed, len(raw))
	fmt.Printf("tokenize %.1f MB in %v: %.0f MB/s (o200k_base, no memo)\n", mb, bestT.Round(time.Millisecond), mb/bestT.Seconds())
	fmt.Printf("estimated end-to-end slowdown from redacting every string: %.1f%%\n", 100*bestR.Seconds()/(bestT.Seconds()/0.75))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func readRecords(file string) []any {
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	var out []any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		var v any
		if json.Unmarshal(sc.Bytes(), &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// encodeRecord encodes v one of three ways (i mod 3): Go without HTML
// escapes, encoding/json's default (<, > and & as \u escapes), or
// Python's json.dumps default (every non-ASCII character as \u escapes).
func encodeRecord(v any, i int) (string, []byte) {
	switch i % 3 {
	case 1:
		b, _ := json.Marshal(v)
		return "go html-escaped", b
	case 2:
		b, _ := json.Marshal(v)
		var out []byte
		for _, r := range string(b) {
			if r < 0x80 {
				out = append(out, byte(r))
				continue
			}
			if r >= 0x10000 {
				r -= 0x10000
				out = fmt.Appendf(out, "\\u%04x\\u%04x", 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				continue
			}
			out = fmt.Appendf(out, "\\u%04x", r)
		}
		return "python ensure_ascii", out
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return "go", bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

type redacted struct{ kind, value string }

var markerRE = regexp.MustCompile(`\[REDACTED:([a-z0-9_]+)\]`)

// redactedValues recovers what each marker of out replaced in in (out is
// in with some spans replaced by markers, in order).
func redactedValues(in, out string) []redacted {
	var res []redacted
	locs := markerRE.FindAllStringSubmatchIndex(out, -1)
	ip, op := 0, 0
	for i, m := range locs {
		ip += m[0] - op // the kept text before the marker
		// The kept text after this marker, up to the next marker or the end.
		next := len(out)
		if i+1 < len(locs) {
			next = locs[i+1][0]
		}
		kept := out[m[1]:next]
		end := len(in)
		if i+1 < len(locs) || kept != "" {
			if j := strings.Index(in[ip:], kept); j >= 0 && kept != "" {
				end = ip + j
			}
		}
		res = append(res, redacted{kind: out[m[2]:m[3]], value: in[ip:end]})
		ip = end
		op = m[1]
	}
	return res
}

// mask shows a value's first 4 bytes and length only: the real data may
// hold real credentials, which the report must not reprint.
func mask(v string) string {
	if len(v) <= 4 {
		return fmt.Sprintf("%q(len %d)", v, len(v))
	}
	return fmt.Sprintf("%q…(len %d)", v[:4], len(v))
}

var (
	hexRE  = regexp.MustCompile(`^[0-9a-fA-F]+$`)
	uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	b64RE  = regexp.MustCompile(`^[A-Za-z0-9+/]{16,}={0,2}$`)
)

// shape names what a redacted value looks like, to spot false positives
// without printing the value.
func shape(v string) string {
	switch {
	case uuidRE.MatchString(v):
		return "[uuid]"
	case hexRE.MatchString(v) && (len(v) == 40 || len(v) == 64 || len(v) == 32):
		return fmt.Sprintf("[hex%d: hash or commit id]", len(v))
	case hexRE.MatchString(v):
		return "[hex]"
	case b64RE.MatchString(v):
		return "[base64-like]"
	}
	return ""
}
