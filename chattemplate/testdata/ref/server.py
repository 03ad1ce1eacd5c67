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
"""
import json
import os
import sys
import warnings

warnings.simplefilter("ignore")  # SyntaxWarnings of generated snippets ('1'[0]): noise on stderr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.setrecursionlimit(10000)

import jinja2  # noqa: E402
import render  # noqa: E402


def main():
    out = sys.stdout
    out.write(json.dumps({"jinja2": jinja2.__version__, "python": sys.version.split()[0]}) + "\n")
    out.flush()
    compiled = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        src = req["src"]
        try:
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
            res = {"text": t.render(**req.get("ctx", {}))}
        except Exception as e:
            res = {"error": str(e), "type": type(e).__name__}
        out.write(json.dumps(res, ensure_ascii=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
