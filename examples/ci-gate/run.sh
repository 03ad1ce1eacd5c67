#!/usr/bin/env bash
# The CI savings gate (github-actions.yml beside this file), run locally: a
# run of the committed sample is compared with the committed baseline
# metrics; a change that makes compression worse fails the gate (exit 1)
# with a table naming the figure that regressed.
. "$(dirname "$0")/../lib.sh"

sample=$REPO/fixtures/example/agent_runs.jsonl.gz
config=$REPO/fixtures/example/trajectory_compression.yaml
baseline=$REPO/fixtures/example/baseline_metrics.json
mkdir -p "$WORK/out"

# The gate passes on the committed setup.
rc=0
"$TRAJCOMPRESS" compress --quiet --input "$sample" --config "$config" --output "$WORK/out/runs.jsonl" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
"$TRAJCOMPRESS" check --baseline "$baseline" "$WORK/out/runs_metrics.json" >"$WORK/pass.txt"
expect_line "$WORK/pass.txt" '^ok: 8 checks within bounds'
"$TRAJCOMPRESS" report "$WORK/out/runs_metrics.json" --baseline "$baseline" --output "$WORK/out/report.html"

# A regression: a change that protects more of each trajectory's tail saves
# fewer tokens. The config differs, so the gate must be told that the setup
# changed on purpose (--allow-different-setup); it then fails on the savings.
rc=0
"$TRAJCOMPRESS" compress --quiet --input "$sample" --config "$config" --protect-last-n 12 \
	--output "$WORK/out/worse.jsonl" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
rc=0
"$TRAJCOMPRESS" check --baseline "$baseline" --allow-different-setup "$WORK/out/worse_metrics.json" >"$WORK/fail.txt" || rc=$?
[ "$rc" -eq 1 ]
expect_line "$WORK/fail.txt" '^tokens.overall_compression_ratio .*REGRESSED$'
echo "ci-gate: ok"
