package job

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/task"
)

// A template that prints as many words as the day of the month
// strftime_now gives: its counts depend on the day a record is rendered.
const dayTemplate = `{% for i in range(strftime_now('%d')|int) %}word {% endfor %}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}`

// TestTemplateNowFixedForRun: strftime_now renders the time the run was
// created at, recorded in run.json, in every task: a resume or a shard
// run on another day (the clock injected) gives the counts and output of
// an uninterrupted run on the first day, and merge finishes it so;
// a fresh run on the other day counts differently (the template does
// read the date).
func TestTemplateNowFixedForRun(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"messages":[{"role":"user","content":"question %d %s"},{"role":"assistant","content":"answer"}]}`+"\n", i, strings.Repeat("x", 4000))
	}
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, b.Bytes(), 0o644)
	tpl := filepath.Join(dir, "day.jinja")
	os.WriteFile(tpl, []byte(dayTemplate), 0o644)
	day3 := time.Date(2026, 3, 3, 23, 59, 0, 0, time.UTC)
	day20 := time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)
	defer func(c func() time.Time) { runClock = c }(runClock)

	run := func(name string, at time.Time, shard task.Shard) {
		t.Helper()
		runClock = func() time.Time { return at }
		cfg := config.Default()
		cfg.Tokenizer.ChatTemplate = tpl
		cfg.Processing.NumWorkers = 1
		spec := Spec{Config: cfg, Shard: shard, Settings: Settings{Input: in, TaskSize: 1 << 20,
			Paths: Paths{Output: filepath.Join(dir, name, "out.jsonl"), Outcomes: filepath.Join(dir, name, "outcomes.jsonl")}}}
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		if _, err := Run(context.Background(), spec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	outcomes := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name, "outcomes.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	run("ref3", day3, task.Shard{})
	run("ref20", day20, task.Shard{})
	if outcomes("ref3") == outcomes("ref20") {
		t.Fatal("the template's counts do not depend on the day: the test cannot tell: " + outcomes("ref3")[:400])
	}

	// A shard on day 3, then a run on day 20 that resumes it.
	run("resumed", day3, task.Shard{Index: 0, Count: 2})
	man, err := readManifest(filepath.Join(dir, "resumed", ".out.jsonl.tc-run", manifestName))
	if err != nil {
		t.Fatal(err)
	}
	if want := day3.Format(time.RFC3339Nano); man.TemplateNow != want {
		t.Errorf("run.json template_now %q, want %q", man.TemplateNow, want)
	}
	run("resumed", day20, task.Shard{})
	if outcomes("resumed") != outcomes("ref3") {
		t.Error("a run created on day 3 and resumed on day 20 counts differently from one run on day 3")
	}

	// Two shards on two days, merged on a third.
	run("sharded", day3, task.Shard{Index: 0, Count: 2})
	run("sharded", day20, task.Shard{Index: 1, Count: 2})
	runClock = func() time.Time { return day20.AddDate(0, 0, 5) }
	if _, err := Merge(MergeSpec{Output: filepath.Join(dir, "sharded", "out.jsonl")}); err != nil {
		t.Fatal(err)
	}
	if outcomes("sharded") != outcomes("ref3") {
		t.Error("shards run on day 3 and day 20 count differently from one run on day 3")
	}
	for _, name := range []string{"resumed", "sharded"} {
		got, _ := os.ReadFile(filepath.Join(dir, name, "out.jsonl"))
		want, _ := os.ReadFile(filepath.Join(dir, "ref3", "out.jsonl"))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from the run on day 3", name)
		}
	}
}
