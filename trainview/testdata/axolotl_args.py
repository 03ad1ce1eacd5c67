#!/usr/bin/python3
"""axolotl_args.py: what axolotl does to a row's messages before templating.

    /usr/bin/python3 axolotl_args.py IN.jsonl OUT.jsonl

Reads reference cases ({"name", "messages", "tools"} a line) and writes them
with every tool call's arguments given as a str replaced by json.loads of it,
as axolotl's ChatTemplateStrategy.transform_message does
(src/axolotl/prompt_strategies/chat_template.py at commit 067b021c): a case
whose arguments are not JSON gets "error" (axolotl raises) and no messages.
"""
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        case = json.loads(line)
        try:
            for m in case["messages"]:
                for tc in m.get("tool_calls") or []:
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                        fn["arguments"] = json.loads(fn["arguments"])
        except json.JSONDecodeError as e:
            case = {"name": case["name"], "error": str(e)}
        out.write(json.dumps(case, ensure_ascii=False) + "\n")
