#!/usr/bin/env bash
# Shards, as a Slurm array or a Kubernetes Indexed Job runs them
# (slurm.sbatch and k8s-indexed-job.yaml beside this file), here on one
# machine: 4 shards of the bundled example, each with the environment its
# scheduler gives it, then merge. The merged outputs are byte-identical to
# one process's; a shard killed part way goes on from its finished tasks.
. "$(dirname "$0")/../lib.sh"

data=$WORK/train.jsonl
# An uncompressed JSONL file is split in byte ranges (tasks) of
# --target-task-size; the example's 1.4 MB make 6 tasks.
gzip -dc "$REPO/fixtures/example/agent_runs.jsonl.gz" >"$data"
config=$REPO/fixtures/example/trajectory_compression.yaml
shard() { # the same command line for every shard; the index comes from the environment
	"$TRAJCOMPRESS" compress --quiet --input "$data" --config "$config" --target-task-size 256KiB \
		--output "$WORK/sharded/train_compressed.jsonl" "$@"
}
mkdir -p "$WORK/sharded" "$WORK/single"

# Slurm: shards 0 and 1 of an array 10-13 (step 1, 4 tasks).
for id in 10 11; do
	rc=0
	SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=4 shard || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] # 3: some lines of the example are not trajectories (rejected)
done
# Merging too early names the missing tasks and exits 2.
rc=0
"$TRAJCOMPRESS" merge --output "$WORK/sharded/train_compressed.jsonl" 2>"$WORK/merge-early.txt" || rc=$?
[ "$rc" -eq 2 ]
expect_line "$WORK/merge-early.txt" 'task'
# Kubernetes: indexes 2 and 3 of an Indexed Job with 4 completions.
for index in 2 3; do
	rc=0
	JOB_COMPLETION_INDEX=$index shard --num-shards 4 || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
done
rc=0
"$TRAJCOMPRESS" merge --output "$WORK/sharded/train_compressed.jsonl" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]

# One process, for comparison: the same records, the same bytes.
rc=0
"$TRAJCOMPRESS" compress --quiet --input "$data" --config "$config" --output "$WORK/single/train_compressed.jsonl" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
cmp "$WORK/single/train_compressed.jsonl" "$WORK/sharded/train_compressed.jsonl"
cmp "$WORK/single/train_compressed_rejects.jsonl" "$WORK/sharded/train_compressed_rejects.jsonl"
echo "shards: ok"
