"""Run LLaMA-Factory's own converter and template code on test cases.

Usage: python3 ref.py LF_SRC CASES.jsonl > OUT.jsonl

LF_SRC is a directory holding LLaMA-Factory's src/llamafactory/data (a
checkout or the files `git archive` wrote from the fetched snapshot; see
setup.sh). Its converter.py, data_utils.py, formatter.py, tool_utils.py,
template.py and processor/processor_utils.py are imported unchanged; the
modules they import that cannot be installed here (datasets, fsspec,
transformers via mm_plugin, the package's logging) are replaced by small
stand-ins below. The tokenizer stand-in does not tokenize: encode(text)
returns [["s", text]], a {"token": t} slot ["t", t], bos and eos ["bos"] and
["eos"], so each pair comes out as the list of elements
_convert_elements_to_ids saw, which the Go test counts and compares.

Each case line: {"name", "row" (the dataset row), "formatting", "messages"
(the column), "system" (the system column or null), "tags" (dict or null),
"configs": [{"template", "tool_format", "enable_thinking", "mask_history",
"preserve_thinking", "default_system"}…]}. Each output line: {"name",
"config" (index), "result"}: {"pairs": [[src, tgt]…]}, {"skip": reason} or
{"fatal": exception type}.
"""

import copy
import datetime as _dt
import hashlib
import json
import os
import sys
import types


def build(lf_src):
    data = os.path.join(lf_src, "src", "llamafactory", "data")
    if not os.path.isdir(data):
        sys.exit(f"ref.py: no LLaMA-Factory source in {lf_src} (want src/llamafactory/data)")

    def module(name, path=None, **attrs):
        m = types.ModuleType(name)
        if path is not None:
            m.__path__ = [path]
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    logs = []

    class Logger:
        def warning_rank0(self, msg, *a):
            logs.append(str(msg))

        warning_rank0_once = info_rank0 = warning_rank0

        def __getattr__(self, name):
            return lambda *a, **k: None

    module("fsspec")
    module("datasets", DatasetDict=dict, concatenate_datasets=None, interleave_datasets=None)
    module("llamafactory", os.path.join(lf_src, "src", "llamafactory"))
    module("llamafactory.extras", None)
    module("llamafactory.extras.logging", get_logger=lambda name=None: Logger())
    sys.modules["llamafactory.extras"].logging = sys.modules["llamafactory.extras.logging"]
    module("llamafactory.extras.constants", IGNORE_INDEX=-100)
    module("llamafactory.data", data)

    # mm_plugin.py imports numpy, PIL, torch and transformers: only its
    # MMPluginMixin._validate_messages is taken from it (the plugins of
    # multimodal templates call it first in process_messages; the base
    # plugin does not), with the placeholders of extras/constants.py.
    import ast

    src = open(os.path.join(data, "mm_plugin.py"), encoding="utf-8").read()
    fn = None
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.FunctionDef) and node.name == "_validate_messages":
            fn = ast.get_source_segment(src, node)
            break
    if fn is None:
        sys.exit("ref.py: mm_plugin.py has no _validate_messages")
    scope = {"IMAGE_PLACEHOLDER": "<image>", "VIDEO_PLACEHOLDER": "<video>", "AUDIO_PLACEHOLDER": "<audio>"}
    exec("import textwrap\n" + __import__("textwrap").dedent(fn), scope)
    validate_messages = scope["_validate_messages"]

    class Plugin:  # text only: messages and ids pass unchanged
        def __init__(self, name):
            self.name = name

        def process_messages(self, messages, images, videos, audios, processor):
            if self.name != "base":
                validate_messages(self, messages, images, videos, audios)
            return messages

        def process_token_ids(self, input_ids, labels, *a):
            return input_ids, labels

    module("llamafactory.data.mm_plugin", get_mm_plugin=lambda name="base", **k: Plugin(name))
    module("llamafactory.data.processor", os.path.join(data, "processor"))

    import importlib

    mods = {}
    for name in ["data_utils", "tool_utils", "formatter", "template", "converter", "processor.processor_utils",
                 "processor.supervised"]:
        mods[name] = importlib.import_module("llamafactory.data." + name)

    class FixedDate(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls(2025, 1, 15, 12, 0, 0)

    mods["tool_utils"].datetime = FixedDate
    return mods, logs


class Tokenizer:
    """Stands in for a PreTrainedTokenizer: returns the elements it is given."""

    chat_template = None

    def __init__(self):
        self.eos_token = "<eos>"
        self.pad_token = self.eos_token
        self.bos_token = "<bos>"

    bos_token_id = property(lambda self: ["bos"])
    eos_token_id = property(lambda self: ["eos"])
    pad_token_id = property(lambda self: ["pad"])

    def encode(self, text, add_special_tokens=False):
        return [["s", text]]

    def convert_tokens_to_ids(self, token):
        return ["t", token]

    def add_special_tokens(self, d, replace_additional_special_tokens=False):
        if "eos_token" in d:
            self.eos_token = d["eos_token"]
        return 0


class CharTokenizer(Tokenizer):
    """A tokenizer of one token per code point (bos 1, eos 2, a named token 3),
    for running supervised.py's cutoff loop on real lengths."""

    bos_token_id = 1
    eos_token_id = 2
    pad_token_id = 0

    def encode(self, text, add_special_tokens=False):
        return [4] * len(text)

    def convert_tokens_to_ids(self, token):
        return 3


class Attr:
    """Stands in for parser.DatasetAttr: the attributes the converters read."""

    def __init__(self, case):
        self.formatting = case["formatting"]
        self.ranking = False
        self.kto_tag = None
        self.messages = case["messages"]
        self.system = case.get("system")
        self.tools = case.get("tools", "tools")
        self.images = self.videos = self.audios = None
        self.load_from = "file"
        tags = case.get("tags")
        if tags is None:
            self.role_tag, self.content_tag = "from", "value"
            self.user_tag, self.assistant_tag = "human", "gpt"
            self.observation_tag, self.function_tag, self.system_tag = "observation", "function_call", "system"
        else:
            for t in ["role_tag", "content_tag", "user_tag", "assistant_tag", "observation_tag", "function_tag", "system_tag"]:
                setattr(self, t, tags.get(t))


class DataArgs:
    def __init__(self, cfg):
        self.template = cfg["template"]
        self.tool_format = cfg.get("tool_format")
        self.default_system = cfg.get("default_system")
        self.enable_thinking = cfg.get("enable_thinking", True)
        self.preserve_thinking = cfg.get("preserve_thinking", False)
        self.mask_history = cfg.get("mask_history", False)
        self.train_on_prompt = cfg.get("train_on_prompt", False)
        self.cutoff_len = cfg.get("cutoff_len", 2048)
        self.media_dir = ""


def fill_missing(row, case):
    """The datasets library reads a message key absent from a message as None."""
    msgs = row.get(case["messages"])
    if not isinstance(msgs, list):
        return
    keys = []
    for m in msgs:
        for k in m:
            if k not in keys:
                keys.append(k)
    for m in msgs:
        for k in keys:
            m.setdefault(k, None)


def convert(mods, logs, case):
    """The converter's example for the case's row (the same for every config)."""
    conv = mods["converter"]
    row = copy.deepcopy(case["row"])
    fill_missing(row, case)
    del logs[:]
    try:
        ex = conv.get_dataset_converter(case["formatting"], Attr(case), DataArgs({"template": None}))(row)
    except Exception as e:  # the dataset's map stops here
        return {"fatal": type(e).__name__}
    if len(ex["_prompt"]) % 2 != 1 or len(ex["_response"]) != 1:
        reason = "invalid_example"
        for msg in logs:
            if msg.startswith("Invalid role tag"):
                reason = "invalid_role_tag"
                break
            if msg.startswith("Invalid message count"):
                reason = "invalid_message_count"
                break
        return {"skip": reason}
    return ex


def fresh_template(mods, tok, args):
    """get_template_and_fix_tokenizer on a copy of the registered template
    (it sets the data arguments on the registry's object)."""
    tm = mods["template"]
    saved = tm.TEMPLATES
    tm.TEMPLATES = dict(saved)
    tm.TEMPLATES[args.template] = copy.deepcopy(saved[args.template])
    try:
        return tm.get_template_and_fix_tokenizer(tok, args)
    finally:
        tm.TEMPLATES = saved


def run(mods, ex, cfg):
    if "_prompt" not in ex:
        return ex
    args = DataArgs(cfg)
    tok = Tokenizer()
    try:
        template = fresh_template(mods, tok, args)
        discard = args.mask_history and not template.preserve_thinking
        messages = template.mm_plugin.process_messages(ex["_prompt"] + ex["_response"], [], [], [], None)
        pairs = template.encode_multiturn(tok, messages, ex["_system"], ex["_tools"], discard)
    except Exception as e:
        return {"fatal": type(e).__name__}
    return {"pairs": [[s, t] for s, t in pairs]}


def cutoff(mods, ex, cfg):
    """supervised.py's _encode_data_example with the one-token-per-code-point tokenizer."""
    if "_prompt" not in ex:
        return ex
    sup = mods["processor.supervised"]
    args = DataArgs(cfg)
    tok = CharTokenizer()
    try:
        template = fresh_template(mods, tok, args)
        proc = sup.SupervisedDatasetProcessor(template=template, tokenizer=tok, processor=None, data_args=args)
        ids, labels = proc._encode_data_example(
            ex["_prompt"], ex["_response"], ex["_system"], ex["_tools"], [], [], []
        )
    except Exception as e:
        return {"fatal": type(e).__name__}
    return {"length": len(ids), "trained": sum(1 for x in labels if x != -100)}


def main():
    mods, logs = build(sys.argv[1])
    if sys.argv[2] == "--registry":
        # the registry's facts of the named templates
        tm = mods["template"]
        facts = {}
        for name in sys.argv[3:]:
            t = tm.TEMPLATES[name]
            facts[name] = {
                "stop_words": t.stop_words,
                "replace_eos": t.replace_eos,
                "efficient_eos": t.efficient_eos,
                "default_system": t.default_system,
                "reasoning": isinstance(t, tm.ReasoningTemplate),
                "llama2": isinstance(t, tm.Llama2Template),
                "thought_words": list(t.thought_words),
                "tool_call_words": list(t.tool_call_words),
                "function_tool_format": t.format_function.tool_format,
                "tool_format": t.format_tools.tool_format,
            }
        json.dump(facts, sys.stdout, indent=1, ensure_ascii=False, sort_keys=True)
        sys.stdout.write("\n")
        return
    if len(sys.argv) > 3 and sys.argv[3] == "--cutoff":
        with open(sys.argv[2], encoding="utf-8") as f:
            for line in f:
                case = json.loads(line)
                ex = convert(mods, logs, case)
                for i, cfg in enumerate(case["configs"]):
                    res = cutoff(mods, ex, cfg)
                    sys.stdout.write(json.dumps({"name": case["name"], "config": i, "result": res}) + "\n")
        return
    out = sys.stdout
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            ex = convert(mods, logs, case)
            for i, cfg in enumerate(case["configs"]):
                res = run(mods, ex, cfg)
                if "pairs" in res:
                    blob = json.dumps(res["pairs"], ensure_ascii=False).encode("utf-8", "surrogatepass")
                    res = {"n": len(res["pairs"]), "sha": hashlib.sha256(blob).hexdigest()[:12]}
                    if os.environ.get("REF_FULL"):
                        res["pairs"] = json.loads(blob)
                out.write(json.dumps({"name": case["name"], "config": i, "result": res}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
