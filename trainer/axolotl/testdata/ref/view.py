#!/usr/bin/python3
"""view.py: the text axolotl gives a row's tokenizer, for trainview's tests.

    /usr/bin/python3 view.py CONFIG CASES.jsonl TEMPLATE.jinja

Each case of CASES.jsonl is {"name", "record", "field_messages",
"message_property_mappings", "swap_tools", "tools"}: a data set row as the
file holds it and the chat_template dataset keys it is read with; with
swap_tools, the row's "tools" is replaced by "tools" (null: removed). The row
is read by axolotl's own ChatTemplateStrategy (src/axolotl/prompt_strategies/
chat_template.py at commit 067b021c, imported unchanged through ref.py's
stand-ins; setup.sh puts it in ax/) as tokenize_prompt reads it:
remove_none_values (src/axolotl/utils/dict.py), get_conversation_thread (the message
property mappings, the roles mapping, the template's message variables, tool
call arguments parsed) and _get_tools (a tools string and its functions'
parameters strings parsed), then ChatTemplatePrompter.build_prompt, whose
apply_chat_template renders TEMPLATE.jinja with Python jinja2 in transformers'
environment (chattemplate/testdata/ref/render.py) and the special tokens of
CONFIG (a tokenizer_config.json), and returns the text.

Prints one JSON line per case: {"name", "text"}, or {"name", "error"} when
axolotl's code or the template raised.
"""
import importlib.util
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("axolotl_ref", os.path.join(here, "ref.py"))
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)  # the stand-ins, and axolotl's chat_template module as ref.ct


class TextTokenizer:
    """The tokenizer methods the strategy calls, rendering to text."""

    def __init__(self, config_path):
        with open(config_path, encoding="utf-8") as f:
            self.special = ref.special_tokens(json.load(f))
        self.name_or_path = os.path.basename(config_path)
        self.eos_token = self.special.get("eos_token")
        self.compiled = {}

    def encode(self, text, add_special_tokens=False):  # the eot ids' cache only
        return [0]

    def apply_chat_template(self, conversation, tokenize=True, return_dict=False, chat_template=None,
                            add_generation_prompt=False, tools=None, **kwargs):
        if chat_template not in self.compiled:
            self.compiled[chat_template] = ref.compile_template(chat_template)
        ctx = dict(self.special)
        ctx.update(kwargs)
        return self.compiled[chat_template].render(messages=conversation, tools=tools, documents=None,
                                                   add_generation_prompt=add_generation_prompt, **ctx)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    config, cases, template_path = sys.argv[1:]
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    tok = TextTokenizer(config)
    strategies = {}
    with open(cases, encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            key = (case.get("field_messages") or "messages", json.dumps(case.get("message_property_mappings")))
            if key not in strategies:
                prompter = ref.ct.ChatTemplatePrompter(tok, template, field_messages=key[0],
                                                       message_property_mappings=case.get("message_property_mappings"))
                strategies[key] = ref.ct.ChatTemplateStrategy(prompter, tok, train_on_inputs=False, sequence_len=10**9,
                                                              roles_to_train=["assistant"], train_on_eos="turn")
            strategy = strategies[key]
            row = case["record"]
            if case.get("swap_tools"):
                row.pop("tools", None)
                if case.get("tools") is not None:
                    row["tools"] = case["tools"]
            out = {"name": case["name"]}
            try:
                # tokenize_prompt's first step (chat_template.py, line 420):
                # null values removed from the whole row, at any depth.
                row = ref.ct.remove_none_values(row)
                turns = strategy.get_conversation_thread(row)
                tools = strategy._get_tools(row)
                out["text"] = strategy.prompter.build_prompt(turns, tools=tools)
            except Exception as e:  # noqa: BLE001 — axolotl's (or the template's) refusal
                out["error"] = "%s: %s" % (type(e).__name__, e)
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
