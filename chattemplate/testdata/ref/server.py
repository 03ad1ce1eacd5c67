"""server.py: Python jinja2 as a long-lived process, for the Go tests that
compare the engine with it many times (the corpus, the expression suite,
the differential fuzzer) without starting Python once a case.

    python3 server.py

Reads one JSON object a line on stdin, {"src": TEMPLATE, "ctx": {...}},
renders TEMPLATE with the variables of ctx in transformers' environment
(render.py's compile_template: ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks, loopcontrols and {% generation %}, its tojson,
raise_exception and strftime_now), and writes one line, {"text": ...} or
{"error": MESSAGE, "type": EXCEPTION_CLASS}. The first line it writes is
{"jinja2": VERSION, "python": VERSION}. A template is compiled once
(cached by its source); a template that does not compile gives its
TemplateSyntaxError as the error of each render. REF_NOW fixes the clock
of strftime_now, as for render.py.

A request may carry "timeout" (seconds, a number): a render that has not
finished by then is stopped (SIGALRM, between two Python bytecodes) and
answered {"error": "render exceeded N s", "type": "ReferenceTimeout"}: the
reference could not say what the text is, which the caller counts apart
from both an equal text and a difference.
"""
import json
import os
import signal
import sys
import warnings

warnings.simplefilter("ignore")  # SyntaxWarnings of generated snippets ('1'[0]): noise on stderr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.setrecursionlimit(10000)

import jinja2  # noqa: E402
import render  # noqa: E402


class ReferenceTimeout(BaseException):
    """Raised by the alarm in a render that overran its timeout; a
    BaseException so that no except Exception in jinja2 swallows it."""


def _alarm(signum, frame):
    raise ReferenceTimeout()


def main():
    signal.signal(signal.SIGALRM, _alarm)
    out = sys.stdout
    out.write(json.dumps({"jinja2": jinja2.__version__, "python": sys.version.split()[0]}) + "\n")
    out.flush()
    compiled = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        src = req["src"]
        timeout = req.get("timeout") or 0
        try:
            try:
                if timeout:
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                t = compiled.get(src)
                if t is None:
                    if len(compiled) > 2000:
                        compiled.clear()
                    try:
                        t = render.compile_template(src)
                    except Exception as e:  # kept: each render of it raises the same
                        t = e
                    compiled[src] = t
                if isinstance(t, Exception):
                    raise t
                res = {"text": t.render(**(req.get("ctx") or {}))}
            finally:  # an alarm until the timer is off is still a timeout
                if timeout:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except ReferenceTimeout:
            res = {"error": "render exceeded %g s" % timeout, "type": "ReferenceTimeout"}
        except Exception as e:
            res = {"error": str(e), "type": type(e).__name__}
        out.write(json.dumps(res, ensure_ascii=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
