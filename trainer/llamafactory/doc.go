// Package llamafactory counts a record as LLaMA-Factory's supervised
// pre-processing does, from LLaMA-Factory's own source (commit ff6d4d12eeb0,
// src/llamafactory/data/): its dataset converters (converter.py, ShareGPT
// and OpenAI formatting), its template registry (template.py, formatter.py,
// tool_utils.py) and the cutoff of supervised.py
// (_encode_data_example, processor_utils.infer_seqlen). It never uses the
// tokenizer's jinja chat template: LLaMA-Factory does not either.
//
// The package is pure: no I/O, no goroutines. It reads traj records and
// counts with a tokenize.Counter.
//
// # API
//
//	r, err := llamafactory.New(llamafactory.Options{Template: "qwen3"})
//	row := r.Encode(rec, turns, system, llamafactory.Tokens{Counter: c, HasBOS: false})
//	// row.Skip != nil: not trained on (row.Skip.Reason, .Fatal, .Detail)
//	// row.Pairs[i].Source, .Target: token counts; .First, .End: the turns
//	// row.Total(): the tokens supervised.py compares with cutoff_len
//	cut := r.Cutoff(row, 4096)          // what supervised.py keeps and loses
//	skip := r.Skip(rec, turns, system)  // the skip alone, nothing counted
//	s, t := llamafactory.InferSeqlen(src, tgt, cutoffLen)
//
// [Renderer.Encode] takes what trainview.Mapper.View takes (the record, the
// turns to count in place of its own, the system prompt held outside the
// turns) and returns a [Row]: for each (prompt, response) pair the source
// and target token counts exactly as Template.encode_multiturn returns
// them (before infer_seqlen), or, when LLaMA-Factory would not train on
// the record, a [Skip] with its reason. Counting follows
// Template._convert_elements_to_ids: every slot string of a message is
// tokenized on its own (add_special_tokens=False, the tokenizer's special
// tokens inside it counted as one token each), a {"eos_token"} or
// {"bos_token"} slot is one token (bos only when [Tokens].HasBOS), and the
// empty think block a reasoning template adds is tokenized on its own. So
// a pair's count is a sum over its elements, not the count of the
// concatenated text.
//
// The record is read as LLaMA-Factory's converter reads the dataset row
// (the turns' raw JSON: "from"/"value" or "role"/"content" as [Tags] name
// them, the OpenAI "tool_calls"), not as trainview maps it: the converter
// sees the original ShareGPT roles. The row's "tools" value (or
// [Options].ToolsKey) is taken as the record holds it: the ShareGPT
// converter passes it on as it is (a JSON string is what its templates
// read; a list makes ToolFormatter raise), the OpenAI converter serialises
// a list or object with json.dumps. Where LLaMA-Factory's converter logs
// "Invalid role tag" or "Invalid message count" and returns an empty
// example (dropped by supervised.py), the row is skipped with
// ReasonRoleTag / ReasonMessageCount; where its code raises instead
// (a KeyError on an unknown role, a non-string content, malformed
// function-call JSON, tools given as a list), the dataset's
// pre-processing stops: Skip.Fatal is set, and Skip.Reason says what
// raised.
//
// JSON is re-serialised as Python's json.dumps(…, ensure_ascii=False)
// writes it (separators ", " and ": ", or "," with indent=4; floats as
// Python's repr; keys in their order), since LLaMA-Factory's tool formats
// json.loads and json.dumps tool schemas and call arguments.
//
// Templates implemented (template.py's register_template entries, with
// their formatters, default system, efficient_eos, prefix and template
// class): qwen, qwen3, qwen3_nothink, llama3, mistral, glm4, deepseek3,
// gemma3, chatml, default, empty. Tool formats (tool_utils.py): default,
// qwen, llama3, mistral, glm4. [Options] carries the data arguments that
// change counts: tool_format, default_system, enable_thinking,
// preserve_thinking, mask_history, train_on_prompt (which only changes the
// labels, not the counts), and the llama3 tool prompt's date.
//
// [Renderer.Cutoff] applies supervised.py's loop to a row's pairs for a cutoff_len:
// total_length starts at 1 with efficient_eos, pairs are visited last-first
// under mask_history, each pair is cut by [InferSeqlen] to the budget
// left, and the loop stops when the budget is spent. It returns what is
// kept, which pairs were cut or dropped, and the tokens and turns lost.
//
// Not modelled: multimodal plugins (text only; an "<image>" marker stays
// text), packing's knapsack (Cutoff takes cutoff_len as given: the caller
// subtracts 1 under packing, as DataArguments.__post_init__ does), the
// Arrow schema unification of the datasets library beyond a missing
// message key read as None, ranking/KTO examples.
package llamafactory
