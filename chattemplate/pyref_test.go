package chattemplate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// pyRef is Python jinja2 as one long-lived process (testdata/ref/server.py):
// each render is a line to its stdin and a line from its stdout, so that the
// corpus, the expression suite and the differential fuzzer compare
// thousands of renders without starting Python for each.
type pyRef struct {
	cmd     *exec.Cmd
	in      *bufio.Writer
	inPipe  io.WriteCloser
	out     *bufio.Reader
	Version string // "jinja2 3.1.2, python 3.11.2 (/usr/bin/python3)"
	mu      sync.Mutex
}

// pyResult is what jinja2 gave: the text, or the message and class of
// the exception it raised.
type pyResult struct {
	Text  *string `json:"text"`
	Error *string `json:"error"`
	Type  string  `json:"type"`
}

// pythonWithJinja2 returns the first python3 that imports jinja2: Debian's
// (/usr/bin/python3 with python3-jinja2, which testdata/ref/setup.sh
// installs), else the python3 on PATH; "" and the reason when none does.
func pythonWithJinja2() (string, string) {
	var why []string
	for _, py := range []string{refPython, "python3"} {
		err := exec.Command(py, "-c", "import jinja2").Run()
		if err == nil {
			return py, ""
		}
		why = append(why, fmt.Sprintf("%s: %v", py, err))
	}
	return "", fmt.Sprintf("no python3 imports jinja2 (%v); run chattemplate/testdata/ref/setup.sh", why)
}

// pythonCommand is the command running a reference script with the
// python3 that has jinja2, at the references' clock (REF_NOW) and in UTC;
// nil and the reason when no python3 has jinja2.
func pythonCommand(script string) (*exec.Cmd, string) {
	py, why := pythonWithJinja2()
	if py == "" {
		return nil, why
	}
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "TZ=UTC", "REF_NOW="+refNow.Format(time.RFC3339), "PYTHONIOENCODING=utf-8")
	cmd.Stderr = os.Stderr
	return cmd, ""
}

// startPyRef starts testdata/ref/server.py, or skips t saying why it cannot.
// The process ends with the test.
func startPyRef(t testing.TB) *pyRef {
	t.Helper()
	cmd, why := pythonCommand("testdata/ref/server.py")
	if cmd == nil {
		t.Skip(why)
	}
	py := cmd.Path
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
	p := &pyRef{cmd: cmd, in: bufio.NewWriterSize(in, 1<<16), inPipe: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() {
		p.inPipe.Close()
		_ = p.cmd.Wait()
	})
	var hello struct{ Jinja2, Python string }
	line, err := p.out.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &hello) != nil {
		t.Fatalf("server.py did not start: %v %q", err, line)
	}
	p.Version = fmt.Sprintf("jinja2 %s, python %s (%s)", hello.Jinja2, hello.Python, py)
	return p
}

// Render renders src with the variables of ctx (JSON values) in
// transformers' environment.
func (p *pyRef) Render(t testing.TB, src string, ctx map[string]json.RawMessage) pyResult {
	t.Helper()
	req, err := json.Marshal(struct {
		Src string                     `json:"src"`
		Ctx map[string]json.RawMessage `json:"ctx"`
	}{src, ctx})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.in.Write(req)
	p.in.WriteByte('\n')
	if err := p.in.Flush(); err != nil {
		t.Fatalf("server.py: %v", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("server.py: %v", err)
	}
	var r pyResult
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("server.py: %v: %q", err, line)
	}
	return r
}
