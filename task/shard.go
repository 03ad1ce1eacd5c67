package task

import (
	"fmt"
	"strconv"
)

// Shard is the share of a run's tasks one process runs: the tasks whose
// index modulo Count is Index. From names where it came from, for
// messages.
type Shard struct {
	Index, Count int
	From         string
}

// Single is the whole run in one process.
var Single = Shard{Index: 0, Count: 1}

// ShardOf works out a process's shard from its flags (index and count, -1
// when not given) and the environment batch schedulers set (getenv, e.g.
// os.Getenv), in this order:
//
//   - --shard I and --num-shards N;
//   - Slurm job arrays: SLURM_ARRAY_TASK_ID, less SLURM_ARRAY_TASK_MIN
//     (arrays need not start at 0), divided by SLURM_ARRAY_TASK_STEP (when
//     the array has a step), of SLURM_ARRAY_TASK_COUNT (--num-shards wins);
//   - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, with --num-shards
//     (the job's completions, which Kubernetes does not put in the
//     environment);
//   - AWS Batch array jobs: AWS_BATCH_JOB_ARRAY_INDEX, with --num-shards.
//
// With none of them the process runs every task ([Single]). Anything
// else (GNU parallel, a shell loop) passes --shard and --num-shards.
func ShardOf(flagIndex, flagCount int, getenv func(string) string) (Shard, error) {
	env := func(key string) (int, bool, error) {
		v := getenv(key)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, true, fmt.Errorf("%s=%q is not a whole number >= 0", key, v)
		}
		return n, true, nil
	}
	s := Shard{Index: flagIndex, Count: flagCount, From: "--shard"}
	if flagIndex < 0 {
		switch {
		case getenv("SLURM_ARRAY_TASK_ID") != "":
			id, _, err := env("SLURM_ARRAY_TASK_ID")
			if err != nil {
				return s, err
			}
			low, _, err := env("SLURM_ARRAY_TASK_MIN")
			if err != nil {
				return s, err
			}
			step, hasStep, err := env("SLURM_ARRAY_TASK_STEP")
			if err != nil {
				return s, err
			}
			if !hasStep || step == 0 {
				step = 1
			}
			if id < low || (id-low)%step != 0 {
				return s, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is not SLURM_ARRAY_TASK_MIN=%d plus a multiple of the step %d (sparse arrays like --array=1,3,7 are not supported: use --array=0-N or pass --shard)", id, low, step)
			}
			s = Shard{Index: (id - low) / step, Count: flagCount, From: "SLURM_ARRAY_TASK_ID"}
			if s.Count < 0 {
				n, ok, err := env("SLURM_ARRAY_TASK_COUNT")
				if err != nil {
					return s, err
				}
				if !ok {
					return s, fmt.Errorf("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: pass --num-shards")
				}
				s.Count = n
			}
		case getenv("JOB_COMPLETION_INDEX") != "", getenv("AWS_BATCH_JOB_ARRAY_INDEX") != "":
			key := "JOB_COMPLETION_INDEX"
			if getenv(key) == "" {
				key = "AWS_BATCH_JOB_ARRAY_INDEX"
			}
			i, _, err := env(key)
			if err != nil {
				return s, err
			}
			if flagCount < 0 {
				return s, fmt.Errorf("%s is set: pass --num-shards with the number of shards (the job's completions or array size)", key)
			}
			s = Shard{Index: i, Count: flagCount, From: key}
		default:
			if flagCount > 1 {
				return s, fmt.Errorf("--num-shards %d without --shard (or a scheduler's index in the environment)", flagCount)
			}
			return Single, nil
		}
	} else if flagCount < 0 {
		return s, fmt.Errorf("--shard %d without --num-shards", flagIndex)
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return s, fmt.Errorf("shard %d of %d (from %s): want 0 <= shard < num-shards", s.Index, s.Count, s.From)
	}
	return s, nil
}
