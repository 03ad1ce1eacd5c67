// Package jinja2ref runs Python's jinja2, set up as transformers'
// apply_chat_template sets it up, as one long-lived process
// (chattemplate/testdata/ref/server.py) for the tests that compare the
// engine with it many times: chattemplate's corpus, expression suite and
// differential fuzzer, trainview's --max-length comparison. Each render is
// a JSON line to the process and one back; no Python starts per case. The
// python3 used is the first of /usr/bin/python3 (Debian's python3-jinja2,
// which chattemplate/testdata/ref/setup.sh installs) and the python3 on
// PATH that imports jinja2; without one the caller skips, saying why. It is
// a test helper: it runs a process and reads nothing else.
//
// RenderTimeout bounds one render: server.py stops a render that overruns
// (SIGALRM) and answers a ReferenceTimeout; should Python not answer at
// all (stuck inside one C call), the process is killed and started again
// and the render is a ReferenceTimeout too. The caller counts these apart:
// jinja2 could not say what the text is.
package jinja2ref

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// Now is the clock strftime_now reads in the references (REF_NOW), the
// same as the goldens of package chattemplate.
var Now = time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)

// Python is the python3 every reference script is run with: the
// first that imports jinja2 of /usr/bin/python3 and the python3 on PATH;
// "" and the reason when none does.
func Python() (string, string) {
	var why []string
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		err := exec.Command(py, "-c", "import jinja2").Run()
		if err == nil {
			return py, ""
		}
		why = append(why, fmt.Sprintf("%s: %v", py, err))
	}
	return "", fmt.Sprintf("no python3 imports jinja2 (%v); run chattemplate/testdata/ref/setup.sh", why)
}

// Command is the command running a script of chattemplate/testdata/ref
// (by its name) with Python, in UTC at the references' clock; nil and the
// reason when no python3 has jinja2.
func Command(script string) (*exec.Cmd, string) {
	py, why := Python()
	if py == "" {
		return nil, why
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		return nil, err.Error()
	}
	cmd := exec.Command(py, filepath.Join(root, "chattemplate", "testdata", "ref", script))
	cmd.Env = append(os.Environ(), "TZ=UTC", "REF_NOW="+Now.Format(time.RFC3339), "PYTHONIOENCODING=utf-8")
	cmd.Stderr = os.Stderr
	return cmd, ""
}

// Ref is the running server.py.
type Ref struct {
	cmd     *exec.Cmd
	in      *bufio.Writer
	inPipe  io.WriteCloser
	lines   chan []byte // server.py's lines, read by one goroutine per process
	Version string      // "jinja2 3.1.2, python 3.11.2 (/usr/bin/python3)"
	mu      sync.Mutex
}

// TimeoutType is the Type of a Result whose render overran its timeout.
const TimeoutType = "ReferenceTimeout"

// killGrace is how long past a render's timeout server.py has to answer
// before it is taken for stuck and restarted.
const killGrace = 30 * time.Second

// Result is what jinja2 gave: the text, or the message and class of the
// exception it raised (TimeoutType: it did not finish in time).
type Result struct {
	Text  *string `json:"text"`
	Error *string `json:"error"`
	Type  string  `json:"type"`
}

// TimedOut reports whether the render overran its timeout.
func (r Result) TimedOut() bool { return r.Error != nil && r.Type == TimeoutType }

// Start starts server.py, or skips t saying why it cannot. The process
// ends with the test.
func Start(t testing.TB) *Ref {
	t.Helper()
	r := &Ref{}
	if why := r.start(t); why != "" {
		t.Skip(why)
	}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.stop(false)
	})
	return r
}

// start starts a server.py process and reads its first line; the reason
// when no python3 has jinja2.
func (r *Ref) start(t testing.TB) string {
	t.Helper()
	cmd, why := Command("server.py")
	if cmd == nil {
		return why
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan []byte, 1)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	r.cmd, r.in, r.inPipe, r.lines = cmd, bufio.NewWriterSize(in, 1<<16), in, lines
	var hello struct{ Jinja2, Python string }
	line, ok := <-lines
	if !ok || json.Unmarshal(line, &hello) != nil {
		t.Fatalf("server.py did not start: %q", line)
	}
	r.Version = fmt.Sprintf("jinja2 %s, python %s (%s)", hello.Jinja2, hello.Python, cmd.Path)
	return ""
}

// stop ends the process: closing its input, or killing it.
func (r *Ref) stop(kill bool) {
	if kill {
		_ = r.cmd.Process.Kill()
	}
	r.inPipe.Close()
	_ = r.cmd.Wait()
	for line := range r.lines { // drain until the reader ends
		_ = line
	}
}

// Render renders src with the variables of ctx (JSON values) in
// transformers' environment.
func (r *Ref) Render(t testing.TB, src string, ctx map[string]json.RawMessage) Result {
	t.Helper()
	return r.RenderTimeout(t, src, ctx, 0)
}

// RenderTimeout is Render stopped after timeout (0: none); a render that
// overran it is a Result with TimedOut.
func (r *Ref) RenderTimeout(t testing.TB, src string, ctx map[string]json.RawMessage, timeout time.Duration) Result {
	t.Helper()
	req, err := json.Marshal(struct {
		Src     string                     `json:"src"`
		Ctx     map[string]json.RawMessage `json:"ctx"`
		Timeout float64                    `json:"timeout,omitempty"`
	}{src, ctx, timeout.Seconds()})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.in.Write(req)
	r.in.WriteByte('\n')
	if err := r.in.Flush(); err != nil {
		t.Fatalf("server.py: %v", err)
	}
	var line []byte
	var ok bool
	if timeout > 0 {
		select {
		case line, ok = <-r.lines:
		case <-time.After(timeout + killGrace):
			r.stop(true)
			if why := r.start(t); why != "" {
				t.Fatalf("server.py restart: %s", why)
			}
			msg := fmt.Sprintf("no answer in %s: server.py restarted", timeout+killGrace)
			return Result{Error: &msg, Type: TimeoutType}
		}
	} else {
		line, ok = <-r.lines
	}
	if !ok {
		t.Fatalf("server.py ended")
	}
	var res Result
	if err := json.Unmarshal(line, &res); err != nil {
		t.Fatalf("server.py: %v: %q", err, line)
	}
	return res
}

// ChatContext is the context transformers' render_jinja_template gives a
// chat template: messages, tools (null when absent), documents=None,
// add_generation_prompt=False and the special tokens.
func ChatContext(messages, tools json.RawMessage, special map[string]string) map[string]json.RawMessage {
	ctx := map[string]json.RawMessage{
		"messages": messages, "tools": json.RawMessage("null"),
		"documents": json.RawMessage("null"), "add_generation_prompt": json.RawMessage("false"),
	}
	if len(tools) > 0 {
		ctx["tools"] = tools
	}
	for k, v := range special {
		ctx[k], _ = json.Marshal(v)
	}
	return ctx
}
