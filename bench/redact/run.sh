#!/usr/bin/env bash
# Redaction on the real data: what the rules redact as the data is (false positives,
# per rule, masked samples), recall on planted secrets per kind and per field, and speed against
# the tokenizer on the same strings. Usage: bench/redact/run.sh [flags of bench/redact]
# Writes bench/out/redact-<time>.txt. Skips (exit 0) when the real data is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p bench/out
out=bench/out/redact-$(date -u +%H%M).txt
go run ./bench/redact "$@" | tee "$out"
echo "report: $out"
