#!/usr/bin/env bash
# bench/images/speed.sh OLD_BIN NEW_BIN [ROUNDS]: what counting images costs on records without
# any: `compress` over all of ../shared/data/real (or $REAL; no images there), deterministic
# summarizer, target $TARGET (15250), the two builds alternating (old, new, old, new, …), ROUNDS
# rounds (5). Prints wall and user CPU seconds and max RSS of every run, then the best (lowest)
# wall and user CPU of each build and their ratios new/old. Extra compress flags: $ARGS.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); rounds=${3:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
real=${REAL:-$root/../shared/data/real}
[ -d "$real" ] || { echo "real data absent ($real): nothing to measure"; exit 0; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
one() { # bin -> "wall_s user_s maxrss_kb"
	rm -rf "$work/o"
	/usr/bin/time -f '%e %U %M' -o "$work/time" "$1" compress --quiet --input "$real" --output "$work/o" \
		--target-max-tokens "${TARGET:-15250}" ${ARGS:-} 2>/dev/null || [ $? -eq 3 ]
	cat "$work/time"
}
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); old $old, new $new, $rounds rounds"
bwo=999999 buo=999999 bwn=999999 bun=999999
for i in $(seq "$rounds"); do
	read -r w u r < <(one "$old"); echo "round $i old: ${w}s wall ${u}s user ${r}KB"
	bwo=$(echo "if ($w < $bwo) $w else $bwo" | bc); buo=$(echo "if ($u < $buo) $u else $buo" | bc)
	read -r w u r < <(one "$new"); echo "round $i new: ${w}s wall ${u}s user ${r}KB"
	bwn=$(echo "if ($w < $bwn) $w else $bwn" | bc); bun=$(echo "if ($u < $bun) $u else $bun" | bc)
done
echo "best: old ${bwo}s wall ${buo}s user; new ${bwn}s wall ${bun}s user; ratio wall $(echo "scale=3; $bwn / $bwo" | bc), user $(echo "scale=3; $bun / $buo" | bc)"
echo "# end load $(cut -d' ' -f1-3 /proc/loadavg)"
