#!/usr/bin/env bash
# Repository hygiene, run by `make hygiene` (and so by `make test`): fails on
# a tracked file over 5 MB or a tracked executable binary (ELF, Mach-O, PE,
# WebAssembly): build outputs belong in bin/ (ignored), never in a commit.
# Reads `git ls-files`, so it sees what a clone gets; outside a git checkout
# it says so and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((5 * 1024 * 1024))
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "hygiene: not a git checkout" >&2; exit 1; }
bad=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue # deleted in the work tree, not yet committed
	size=$(stat -c %s -- "$f")
	if [ "$size" -gt "$limit" ]; then
		echo "hygiene: $f is $size bytes, over the 5 MB limit for a tracked file" >&2
		bad=1
	fi
	magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | cafebabe | 0061736d)
		echo "hygiene: $f is an executable binary (magic $magic); build outputs go to bin/" >&2
		bad=1
		;;
	4d5a*)
		echo "hygiene: $f is a Windows executable (MZ); build outputs go to bin/" >&2
		bad=1
		;;
	esac
done < <(git ls-files -z)
[ "$bad" -eq 0 ] || exit 1
echo "hygiene: ok: $(git ls-files | wc -l) tracked files, none over 5 MB, no executable binary"
