package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/redact"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/validate"
)

// realFiles lists the JSONL files of the real data (testenv.RealDataDir),
// or skips.
func realFiles(t *testing.T) []string {
	t.Helper()
	files, dir := testenv.RealJSONL()
	if len(files) == 0 {
		t.Skipf("no real data at %s (it lives beside the repository, in shared/)", dir)
	}
	return files
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	r, err := jsonl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][]byte
	for {
		b, _, err := r.Next()
		if err != nil {
			break
		}
		out = append(out, b)
	}
	return out
}

type outcomeLine struct {
	Line       int64           `json:"line"`
	Outcome    outcome.Outcome `json:"outcome"`
	Region     *[2]int         `json:"region"`
	Redactions map[string]int  `json:"redactions"`
}

// redacted is line with every string redacted one by one, decoded (the
// exact answer the pipeline's scan of the encoded line stands in for), and
// the counts.
func redacted(line []byte) ([]byte, redact.Counts) {
	counts := redact.Counts{}
	out, _ := jsonx.MapStrings(line, redact.Default().Func(counts))
	return out, counts
}

// TestRealData compresses every real file at a target that forces
// compression and checks, record by record: records in = out + rejected;
// the secrets redacted are those of redacting the input's strings one by
// one (no more, no fewer, same counts), and a record written unchanged is
// exactly that;
// in every compressed record the turn after the summary is not a tool
// turn, every kept turn is byte-identical to its input turn (system turns
// of the head differ only by the appended notice), so every kept tool
// turn still follows the turn it followed in the input; and for OpenAI
// records, compression adds no tool-pairing problem by id.
func TestRealData(t *testing.T) {
	t.Parallel()
	files := realFiles(t)
	if testing.Short() {
		t.Skip("real-data integration runs in the full (non -short) test run")
	}
	for _, in := range files {
		// Long files at a target that compresses most of them; the short
		// demo sets also at a target far below their sizes.
		targets := []string{"3000:300"}
		if st, err := os.Stat(in); err == nil && st.Size() < 2<<20 {
			targets = append(targets, "400:60")
		}
		for _, ts := range targets {
			target, sum, _ := strings.Cut(ts, ":")
			name := filepath.Base(filepath.Dir(in)) + "/" + filepath.Base(in) + "@" + target
			t.Run(name, func(t *testing.T) { checkRealFile(t, in, target, sum) })
		}
	}
}

func checkRealFile(t *testing.T, in, target, sumTarget string) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out.jsonl")
	args := []string{"compress", "--quiet", "--input", in, "--output", out,
		"--outcomes", filepath.Join(tmp, "outcomes.jsonl"), "--rejects", filepath.Join(tmp, "rejects.jsonl"),
		"--target-max-tokens", target, "--summary-target-tokens", sumTarget}
	var stderr bytes.Buffer
	if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	inputs := readLines(t, in)
	outputs := readLines(t, out)
	rejects := readLines(t, filepath.Join(tmp, "rejects.jsonl"))
	var outcomes []outcomeLine
	for _, l := range readLines(t, filepath.Join(tmp, "outcomes.jsonl")) {
		var o outcomeLine
		if err := json.Unmarshal(l, &o); err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, o)
	}
	if len(outcomes) != len(inputs) || len(inputs) != len(outputs)+len(rejects) {
		t.Fatalf("records in %d, outcomes %d, out %d + rejected %d", len(inputs), len(outcomes), len(outputs), len(rejects))
	}
	counts := map[outcome.Outcome]int{}
	k := 0 // index into outputs
	for i, o := range outcomes {
		counts[o.Outcome]++
		if o.Outcome == outcome.Invalid {
			continue
		}
		got := outputs[k]
		k++
		in, counts := redacted(inputs[i])
		if counts.Total() != redact.Counts(o.Redactions).Total() || len(counts) != len(o.Redactions) {
			t.Errorf("line %d: redactions %v, redacting each string gives %v", o.Line, o.Redactions, counts)
		}
		if o.Outcome != outcome.Compressed && o.Outcome != outcome.CompressedOverLimit {
			if !bytes.Equal(got, in) {
				t.Errorf("line %d (%s): written changed", o.Line, o.Outcome)
			}
			continue
		}
		checkCompressed(t, o, in, got)
	}
	t.Logf("%d records: %v", len(inputs), counts)
}

func checkCompressed(t *testing.T, o outcomeLine, inLine, outLine []byte) {
	t.Helper()
	p := traj.Pos{File: "t", Line: o.Line}
	ri, err := traj.Decode(inLine, p, traj.Schema{})
	if err != nil {
		t.Fatalf("line %d: input: %v", o.Line, err)
	}
	ro, err := traj.Decode(outLine, p, traj.Schema{})
	if err != nil {
		t.Fatalf("line %d: output does not decode: %v", o.Line, err)
	}
	start, end := o.Region[0], o.Region[1]
	n := len(ri.Turns)
	if len(ro.Turns) != start+1+(n-end) {
		t.Fatalf("line %d: %d turns out, want %d", o.Line, len(ro.Turns), start+1+n-end)
	}
	if end < n && ri.Turns[end].Role.IsTool() {
		t.Errorf("line %d: the turn after the summary is a tool turn", o.Line)
	}
	if !strings.HasPrefix(ro.Turns[start].Text, "[CONTEXT SUMMARY]:") {
		t.Errorf("line %d: turn %d is not the summary", o.Line, start)
	}
	for j := 0; j < start; j++ {
		a, b := ri.Turns[j], ro.Turns[j]
		if a.Role == traj.RoleSystem {
			if !strings.HasPrefix(b.Text, a.Text) || b.Text == a.Text && !bytes.Equal(a.Raw, b.Raw) {
				t.Errorf("line %d: head system turn %d changed beyond the notice", o.Line, j)
			}
			continue
		}
		if !bytes.Equal(a.Raw, b.Raw) {
			t.Errorf("line %d: head turn %d not verbatim", o.Line, j)
		}
	}
	for j := end; j < n; j++ {
		if !bytes.Equal(ri.Turns[j].Raw, ro.Turns[start+1+j-end].Raw) {
			t.Errorf("line %d: tail turn %d not verbatim", o.Line, j)
		}
	}
	if ri.Dialect == traj.DialectOpenAI {
		before := len(snap.CheckPairing(ri.Turns))
		if after := len(snap.CheckPairing(ro.Turns)); after > before {
			t.Errorf("line %d: compression added tool-pairing problems (%d → %d)", o.Line, before, after)
		}
	}
}

// TestRealDataWorkersIdentical: the same real file gives byte-identical
// output with 1 and 8 workers.
func TestRealDataWorkersIdentical(t *testing.T) {
	t.Parallel()
	files := realFiles(t)
	if testing.Short() {
		t.Skip("real-data integration runs in the full (non -short) test run")
	}
	in := files[0]
	for _, f := range files {
		if strings.Contains(f, "trajectory_samples") {
			in = f
		}
	}
	var outs [][]byte
	for _, w := range []string{"1", "8"} {
		out := filepath.Join(t.TempDir(), "o.jsonl")
		args := []string{"compress", "--quiet", "--input", in, "--output", out, "--workers", w, "--target-max-tokens", "4000"}
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK && code != exitPartial {
			t.Fatalf("exit %d", code)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("output differs between 1 and 8 workers")
	}
}

var _ pipeline.Source = (*jsonl.Reader)(nil)

// TestRealDataAlternation: LLaMA-Factory's own demo sets, compressed in
// alternation mode at a target far below their sizes, still pass
// LLaMA-Factory's role check record by record (their inputs do).
func TestRealDataAlternation(t *testing.T) {
	t.Parallel()
	files := realFiles(t)
	if testing.Short() {
		t.Skip("real-data integration runs in the full (non -short) test run")
	}
	checked := 0
	for _, in := range files {
		if !strings.Contains(in, "llamafactory") {
			continue
		}
		out := filepath.Join(t.TempDir(), "o.jsonl")
		args := []string{"compress", "--quiet", "--alternation", "--input", in, "--output", out,
			"--target-max-tokens", "300", "--summary-target-tokens", "60", "--rejects", filepath.Join(t.TempDir(), "r.jsonl")}
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK && code != exitPartial {
			t.Fatalf("%s: exit %d", in, code)
		}
		ins, outs := readLines(t, in), readLines(t, out)
		for i := range outs {
			ri, _ := traj.Decode(ins[i], traj.Pos{}, traj.Schema{})
			ro, err := traj.Decode(outs[i], traj.Pos{}, traj.Schema{})
			if err != nil || ri == nil {
				t.Fatalf("%s record %d: %v", in, i+1, err)
			}
			before, _ := validate.Check(ri.Turns, validate.LlamaFactory)
			after, _ := validate.Check(ro.Turns, validate.LlamaFactory)
			if len(before) == 0 && len(after) > 0 {
				t.Errorf("%s record %d: alternation mode output rejected: %v", in, i+1, after)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no LLaMA-Factory file found in the real data")
	}
}
