#!/usr/bin/env bash
# Check trajcompress Parquet/Arrow output with npm hyparquet and apache-arrow
# (the files must open in the JavaScript readers users load them with).
#
#   verify.sh                                generate files in a Go test and check them
#   verify.sh --jsonl F.jsonl [--parquet F.parquet] [--arrow F.arrow]
#                                            check existing files against their JSONL
#
# Exits 0 with a "skipped" message when node/npm are missing or the pinned
# packages cannot be installed (offline), unless TRAJCOMPRESS_REQUIRE_NODE=1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"

skip() {
	if [[ "${TRAJCOMPRESS_REQUIRE_NODE:-}" == 1 ]]; then
		echo "verify.sh: $*" >&2
		exit 1
	fi
	echo "verify.sh: skipped: $*"
	exit 0
}

command -v node >/dev/null || skip "node is not installed"
if [[ ! -d "$here/node_modules/hyparquet" || ! -d "$here/node_modules/apache-arrow" ]]; then
	command -v npm >/dev/null || skip "npm is not installed"
	(cd "$here" && npm ci --no-audit --no-fund >/dev/null 2>&1) || skip "npm ci failed (offline?)"
fi

if [[ $# -eq 0 ]]; then
	cd "$root"
	TRAJCOMPRESS_REQUIRE_NODE=1 exec go test -count=1 -run 'TestNodeReaders' -v ./format/internal/roundtrip/
fi
exec node "$here/verify.mjs" "$@"
