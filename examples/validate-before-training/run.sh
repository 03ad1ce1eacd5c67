#!/usr/bin/env bash
# Before a training run: find the rows the trainer would cut or reject, make
# them fit, and check again.
#
# `validate --max-length N` renders each record with the model's chat
# template and its tools, exactly as the trainer's apply_chat_template does,
# and names every record over N tokens (a trainer's cutoff_len /
# max_seq_length); `--dialect llamafactory` names those whose role order
# LLaMA-Factory's converter would reject. `compress` with the same tokenizer
# and target counts the same way, so after it the only records over N are
# the ones it reports as failed to fit (their protected head and tail alone
# are over the target), each with its reason in the outcome lines.
. "$(dirname "$0")/../lib.sh"

model=$(qwen_vl_model) # Qwen2.5's tokenizer and chat template (and Qwen2.5-VL's image rule)
data=$WORK/train.jsonl
gzip -dc "$REPO/fixtures/example/agent_runs.jsonl.gz" >"$data"

# 1. Before: 53 records over 6,000 tokens once templated (exit 1).
rc=0
"$TRAJCOMPRESS" validate --tokenizer "$model" --max-length 6000 --max-report 5 "$data" >"$WORK/before.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ]
expect_line "$WORK/before.txt" '53 would be rejected \(53 over --max-length 6000'

# 2. Compress to the trainer's limit. --alternation keeps LLaMA-Factory's
# role order where a summary goes. Exit 3: 8 lines of the example are not
# trajectories (rejected, in out_rejects.jsonl with their line and reason).
rc=0
"$TRAJCOMPRESS" compress --quiet --input "$data" --output "$WORK/out.jsonl" --outcomes "$WORK/outcomes.jsonl" \
	--tokenizer "$model" --target-max-tokens 6000 --alternation || rc=$?
[ "$rc" -eq 3 ]

# 3. After: the records still over are exactly the ones reported as failed to
# fit (compressed_over_limit or uncompressible, with reasons).
rc=0
"$TRAJCOMPRESS" validate --tokenizer "$model" --max-length 6000 --max-report 0 "$WORK/out.jsonl" >"$WORK/after.txt" 2>&1 || rc=$?
over=$(sed -n 's/.* (\([0-9]*\) over --max-length 6000.*/\1/p' "$WORK/after.txt")
failed=$(json_number "$WORK/out_metrics.json" failed_to_fit)
[ -n "$over" ] && [ "$over" = "$failed" ] && [ "$over" -lt 53 ]
[ "$(grep -Ec '"outcome":"(compressed_over_limit|uncompressible)"' "$WORK/outcomes.jsonl")" = "$failed" ]
echo "validate-before-training: ok ($over of 53 still over: the records reported as failed to fit)"
