#!/usr/bin/python3
"""render.py: the Python jinja2 reference for chattemplate.

    /usr/bin/python3 render.py CONFIG CASES.jsonl [TEMPLATE.jinja]

Renders each case of CASES.jsonl (one {"name", "messages", "tools"} object a
line) with the chat template exactly as Hugging Face transformers does in
apply_chat_template(messages, tools=tools, tokenize=False,
add_generation_prompt=False), without importing transformers: the environment
built below is the one of transformers' _compile_jinja_template
(src/transformers/utils/chat_template_utils.py): an ImmutableSandboxedEnvironment
with trim_blocks and lstrip_blocks, the loopcontrols extension and the
{% generation %} tag, tojson as json.dumps with ensure_ascii=False,
raise_exception raising TemplateError and strftime_now. The context is what
render_jinja_template passes: messages, tools, documents=None,
add_generation_prompt=False and the tokenizer's special tokens map.

CONFIG is a tokenizer_config.json: it gives the special tokens and, unless
TEMPLATE.jinja is given, the template (a string, or a list of named templates
chosen as transformers does: "tool_use" when tools is not None, else "default").

Prints one JSON line per case: {"name", "text"}, or {"name", "error"} with the
message of the exception the template raised. REF_NOW (an ISO time such as
2025-01-15T12:00:00) fixes the clock strftime_now reads.
"""
import json
import sys
import os
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

SPECIAL_TOKENS_ATTRIBUTES = [
    "bos_token", "eos_token", "unk_token", "sep_token",
    "pad_token", "cls_token", "mask_token", "additional_special_tokens",
]


class GenerationTag(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %} renders its body, as transformers'
    AssistantTracker does when no assistant mask is asked for."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def compile_template(source):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        now = os.environ.get("REF_NOW")
        t = datetime.fromisoformat(now.replace("Z", "+00:00")) if now else datetime.now()
        return t.strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def token_content(v):
    if isinstance(v, dict):
        return v.get("content")
    return v


def special_tokens(config):
    out = {}
    for key in SPECIAL_TOKENS_ATTRIBUTES:
        v = config.get(key)
        if key == "additional_special_tokens":
            if v:
                out[key] = [token_content(t) for t in v]
            continue
        v = token_content(v)
        if v:
            out[key] = v
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write(__doc__)
        sys.exit(2)
    config_path, cases_path = sys.argv[1], sys.argv[2]
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    override = None
    if len(sys.argv) == 4:
        with open(sys.argv[3], encoding="utf-8") as f:
            override = f.read()
    templates = config.get("chat_template")
    if isinstance(templates, list):
        templates = {t["name"]: t["template"] for t in templates}
    compiled = {}
    kwargs = special_tokens(config)
    with open(cases_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except ValueError as e:
                sys.exit("%s:%d: %s" % (cases_path, n, e))
            tools = case.get("tools")
            if override is not None:
                source = override
            elif isinstance(templates, dict):
                source = templates["tool_use"] if tools is not None and "tool_use" in templates else templates["default"]
            else:
                source = templates
            if source not in compiled:
                compiled[source] = compile_template(source)
            out = {"name": case.get("name")}
            try:
                out["text"] = compiled[source].render(
                    messages=case["messages"], tools=tools, documents=None,
                    add_generation_prompt=False, **kwargs)
            except Exception as e:  # the template's own message, or jinja2's
                out["error"] = str(e)
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
