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
// concatenated text. LLaMA-Factory adds the template's stop words to the
// tokenizer as special tokens (Template.StopWords): the counter must count
// each as one token, as the tokenizers of the models these templates are
// for do.
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
// [Renderer.Cutoff] applies supervised.py's loop to a row's pairs for a
// cutoff_len: total_length starts at 1 with efficient_eos, pairs are
// visited last-first under mask_history, each pair is cut at its end by
// [InferSeqlen] to the budget left, and the loop stops when the budget is
// spent. It returns what is kept, which pairs were cut or dropped, the
// tokens and turns lost, and the tokens trained.
//
// The system argument stands for the dataset's system column (what
// dataset_info.json maps with "columns": {"system": …}; "" when it maps
// none): the converters use it when the first turn is not a system turn.
// The OpenAI converter edits the system prompt: "detailed thinking off"
// is appended (or is the whole prompt) when the row has no tools, "\n"
// when it has some. It also merges consecutive tool messages into one
// observation and never emits tool messages that end the row: those turns
// are lost (a Pair's First and End show what each pair covers).
//
// Multimodal plugins: a row is text; the plugin of a multimodal template
// (gemma3's) raises on an "<image>", "<video>" or "<audio>" placeholder in
// a row without media, as mm_plugin's _validate_messages does, and that is
// reported (Skip.Fatal, ValueError). Not modelled: media (a row with
// images), the "{{image}}" text gemma3's plugin rewrites, packing's
// knapsack (Cutoff takes cutoff_len as given: under packing the caller
// subtracts 1, as DataArguments.__post_init__ does; packing never drops a
// row), the Arrow schema unification of the datasets library beyond a
// missing message key read as None, ranking and KTO examples.
//
// The tests run LLaMA-Factory's own code (testdata/README.md): every real
// record and the synthetic rows under 19 configurations give the same
// elements; the counts equal Hugging Face tokenizers' counts of those
// elements for Qwen3, Llama-3 and DeepSeek-V3; the cutoff loop equals
// _encode_data_example's.
package llamafactory
