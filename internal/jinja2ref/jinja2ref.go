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
	out     *bufio.Reader
	Version string // "jinja2 3.1.2, python 3.11.2 (/usr/bin/python3)"
	mu      sync.Mutex
}

// Result is what jinja2 gave: the text, or the message and class of the
// exception it raised.
type Result struct {
	Text  *string `json:"text"`
	Error *string `json:"error"`
	Type  string  `json:"type"`
}

// Start starts server.py, or skips t saying why it cannot. The process
// ends with the test.
func Start(t testing.TB) *Ref {
	t.Helper()
	cmd, why := Command("server.py")
	if cmd == nil {
		t.Skip(why)
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
	r := &Ref{cmd: cmd, in: bufio.NewWriterSize(in, 1<<16), inPipe: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() {
		r.inPipe.Close()
		_ = r.cmd.Wait()
	})
	var hello struct{ Jinja2, Python string }
	line, err := r.out.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &hello) != nil {
		t.Fatalf("server.py did not start: %v %q", err, line)
	}
	r.Version = fmt.Sprintf("jinja2 %s, python %s (%s)", hello.Jinja2, hello.Python, cmd.Path)
	return r
}

// Render renders src with the variables of ctx (JSON values) in
// transformers' environment.
func (r *Ref) Render(t testing.TB, src string, ctx map[string]json.RawMessage) Result {
	t.Helper()
	req, err := json.Marshal(struct {
		Src string                     `json:"src"`
		Ctx map[string]json.RawMessage `json:"ctx"`
	}{src, ctx})
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
	line, err := r.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("server.py: %v", err)
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
