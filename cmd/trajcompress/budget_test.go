package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// templateInput writes a JSON Lines file of n small OpenAI records.
func templateInput(t *testing.T, dir string, n int) string {
	t.Helper()
	var b bytes.Buffer
	for range n {
		b.WriteString(`{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}` + "\n")
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// maxRSSBound is the peak resident memory a run refusing a hostile
// template must stay under: the CLI's own (about 60 MiB here), the
// default byte budget of a render (64 MiB + 16 per byte of the record)
// and the garbage a loop makes before the collector runs. Without the
// budget, 'x' * 2000000000 alone takes 2 GB, the doubling loop and the
// replace loop all the memory there is. Under -race the bound is three
// times as much (the detector's shadow memory; 422 MiB measured for the
// nested loops).
const maxRSSBound = 512 << 20

// The hostile templates of the render budget's tests, run by the CLI:
// every record is refused as the template's (uncompressible,
// chat_template) with the budget's message in its outcome line, the run
// ends with its output in place, within seconds, and its peak RSS (the
// child's rusage) stays bounded.
func TestHostileTemplateRunBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: six CLI runs of templates that spend their whole budget (1-30 s each); go test without -short runs them")
	}
	bound := int64(maxRSSBound)
	if raceEnabled {
		bound *= 3
	}
	for _, h := range []struct{ name, src, want string }{
		{"repeat", `{{ 'x' * 2000000000 }}`, "template output over"},
		{"doubling", `{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}`, "template output over"},
		{"replace", `{% set ns = namespace(a='x' * 1000) %}{% for i in range(10) %}{% set ns.a = ns.a.replace('x', ns.a) %}{% endfor %}{{ ns.a|length }}`, "template output over"},
		{"range", `{% for i in range(10**9) %}{% endfor %}`, "Range too big"},
		{"nested", `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`, "template exceeded"},
		{"macro", `{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}`, "template exceeded"},
	} {
		t.Run(h.name, func(t *testing.T) {
			dir := t.TempDir()
			in := templateInput(t, dir, 2)
			tpl := filepath.Join(dir, h.name+".jinja")
			os.WriteFile(tpl, []byte(h.src), 0o644)
			out := filepath.Join(dir, "out.jsonl")
			outcomes := filepath.Join(dir, "outcomes.jsonl")
			cmd := cliCmd(t, nil, "compress", "--quiet", "--input", in, "--output", out, "--outcomes", outcomes,
				"--chat-template", tpl, "--target-max-tokens", "2000", "--workers", "1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			var ee *exec.ExitError
			if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != exitPartial) {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			lines, _ := os.ReadFile(outcomes)
			n := 0
			for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
				var o struct {
					Outcome string `json:"outcome"`
					Reason  string `json:"reason"`
					Error   string `json:"chat_template_error"`
				}
				if err := json.Unmarshal([]byte(l), &o); err != nil {
					t.Fatalf("outcome line %q: %v", l, err)
				}
				if o.Outcome != "uncompressible" || o.Reason != "chat_template" || !strings.Contains(o.Error, h.want) {
					t.Errorf("outcome %s/%s %q, want uncompressible/chat_template saying %q", o.Outcome, o.Reason, o.Error, h.want)
				}
				n++
			}
			if n != 2 {
				t.Errorf("%d outcome lines, want 2", n)
			}
			if rss > bound {
				t.Errorf("peak RSS %d MiB, over %d MiB", rss>>20, bound>>20)
			}
			t.Logf("2 records refused in %v, peak RSS %d MiB", took.Round(10*time.Millisecond), rss>>20)
		})
	}
}

// SIGTERM (how Kubernetes and Slurm stop a job) while a template renders
// without end stops the run within 2 s: the render polls the run's
// context. Exit 130, nothing put in place.
func TestSignalStopsEndlessRender(t *testing.T) {
	dir := t.TempDir()
	in := templateInput(t, dir, 4)
	tpl := filepath.Join(dir, "endless.jinja")
	os.WriteFile(tpl, []byte(`{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}{% endfor %}{% endfor %}{% endfor %}`), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	cmd := cliCmd(t, nil, "compress", "--quiet", "--input", in, "--output", out, "--chat-template", tpl,
		"--chat-template-max-steps", "9000000000000000000", "--target-max-tokens", "2000", "--workers", "1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The run directory exists once tasks are planned; a second later the
	// first record is well into its render.
	runDir := filepath.Join(dir, ".out.jsonl.tc-run")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(runDir); err == nil {
			break
		}
	}
	time.Sleep(time.Second)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("%v, want exit %d\n%s", err, exitInterrupted, stderr.String())
	}
	if took > 2*time.Second {
		t.Errorf("exited %v after SIGTERM, want within 2 s", took)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("output put in place by an interrupted run")
	}
	t.Logf("exit %d %v after SIGTERM, nothing in place", exitInterrupted, took.Round(time.Millisecond))
}
