#!/usr/bin/env bash
# Opens trajcompress HTML reports in headless Chromium (Debian's chromium
# package) with playwright-core from npm: the example run, an empty run, an
# all-rejected run, the example against its baseline, and a synthetic run
# of a million records. browser.mjs fails on any console
# error, any network request, a DOM figure that differs from the metrics
# file, or a page wider than a phone; it takes screenshots and times the
# loads.
#
#   run.sh [OUT_DIR]     default OUT_DIR: bin/browser (screenshots in OUT_DIR/shots)
#
# Setup: installs chromium with apt-get when it is missing (as root, or
# with passwordless sudo) and the pinned npm packages with npm ci. Where
# that is impossible it prints "test-browser: SKIPPED: <why>" and exits 0,
# unless TRAJCOMPRESS_REQUIRE_BROWSER=1 (then it fails).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${1:-$root/bin/browser}"
chromium="${CHROMIUM:-/usr/bin/chromium}"

skip() {
	if [[ "${TRAJCOMPRESS_REQUIRE_BROWSER:-}" == 1 ]]; then
		echo "test-browser: FAILED: $*" >&2
		exit 1
	fi
	echo "test-browser: SKIPPED: $* (the HTML report was not checked in a browser)"
	exit 0
}

if [[ ! -x "$chromium" ]]; then
	sudo=""
	if [[ $(id -u) -ne 0 ]]; then
		sudo -n true 2>/dev/null || skip "$chromium is missing and apt-get needs root (no passwordless sudo): install Debian's chromium package"
		sudo="sudo -n"
	fi
	command -v apt-get >/dev/null || skip "$chromium is missing and there is no apt-get"
	echo "test-browser: installing Debian's chromium (apt-get install chromium)"
	apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }
	if ! apt install -y -q chromium >/tmp/trajcompress-apt.log 2>&1; then
		apt update -q >>/tmp/trajcompress-apt.log 2>&1 || true
		apt install -y -q chromium >>/tmp/trajcompress-apt.log 2>&1 ||
			skip "apt-get install chromium failed (offline? see /tmp/trajcompress-apt.log)"
	fi
	[[ -x "$chromium" ]] || skip "apt-get installed chromium but $chromium is not there"
fi
command -v node >/dev/null || skip "node is not installed"
if [[ ! -d "$here/node_modules/playwright-core" ]]; then
	command -v npm >/dev/null || skip "npm is not installed"
	(cd "$here" && npm ci --no-audit --no-fund >/dev/null 2>&1) || skip "npm ci failed (offline?)"
fi

# The reports: each case is a directory with metrics.json and report.html
# (and, for the gate, check.txt: what trajcompress check printed).
cd "$root"
go build -o bin/trajcompress ./cmd/trajcompress
go build -o bin/reportbench ./bench/report
tc=bin/trajcompress
rm -rf "$out" && mkdir -p "$out"
ok() { local rc=$?; [[ $rc -eq 0 || $rc -eq 3 || $rc -eq ${1:-0} ]] || { echo "test-browser: exit $rc" >&2; exit 1; }; }
example=(--input fixtures/example/agent_runs.jsonl.gz --config fixtures/example/trajectory_compression.yaml)

mkdir -p "$out/example"
$tc compress --quiet "${example[@]}" --output "$out/example/out.jsonl" --metrics "$out/example/metrics.json" \
	--outcomes "$out/example/outcomes.jsonl" --report "$out/example/report.html" || ok

mkdir -p "$out/baseline"
cp "$out/example/metrics.json" "$out/baseline/metrics.json"
$tc report "$out/example/metrics.json" --baseline fixtures/example/baseline_metrics.json \
	--outcomes "$out/example/outcomes.jsonl" --output "$out/baseline/report.html"
$tc check --baseline fixtures/example/baseline_metrics.json "$out/example/metrics.json" >"$out/baseline/check.txt" || true

mkdir -p "$out/empty"
: >"$out/empty/input.jsonl"
$tc compress --quiet --input "$out/empty/input.jsonl" --metrics "$out/empty/metrics.json" --report "$out/empty/report.html" || ok

mkdir -p "$out/rejected"
printf '%s\n' '{"conversations": [' 'not json' '{"messages_typo": []}' >"$out/rejected/input.jsonl"
$tc compress --quiet --input "$out/rejected/input.jsonl" --metrics "$out/rejected/metrics.json" --report "$out/rejected/report.html" 2>/dev/null || ok 4

mkdir -p "$out/million"
bin/reportbench -records 1000000 -out "$out/million"

exec node "$here/browser.mjs" "$chromium" "$out"
