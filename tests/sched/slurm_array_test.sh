#!/bin/bash
# jobs/slurm/array.sbatch outside Slurm: the array tasks' environment set by hand, mpirun as the
# launcher, a fake `sbatch` that records resubmissions and a fake `scontrol`. Task 0 gets SIGUSR1
# (exit 3, resubmitted as a plain job of sweep.sbatch with SLR_SHARD=0/3), tasks 1 and 2 complete
# and leave the merge to the last shard; the resubmitted shard 0 completes and merges the three
# shards into RESULTS.h5, which then holds every point of the job.
# Usage: slurm_array_test.sh <jobs/slurm directory> "<mpirun command with flags>"   (env SLR_SWEEP)
set -u
dir=$1
mpiexec=$2
: "${SLR_SWEEP:?set SLR_SWEEP to the slr-sweep binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
printf '#!/bin/sh\necho "count=$SLR_RESUBMIT_COUNT shard=$SLR_SHARD args=$*" >> "%s/sbatch.calls"\n' "$work" > "$work/bin/sbatch"
chmod +x "$work/bin/sbatch"
printf '#!/bin/sh\necho "   JobId=4243 JobName=shards Partition=compute"\necho "   TimeLimit=01:00:00 NumNodes=1 Command=%s"\n' \
  "$dir/array.sbatch" > "$work/bin/scontrol"
chmod +x "$work/bin/scontrol"
printf '%s\n' 'name = "slurm-array"' 'seed = 4' '[grid]' 'alpha = {linspace = [1, 300, 300]}' 'r_k = 0.0' \
  'r_v = 0.0' '[[method]]' 'name = "synthetic"' 'cost-us = 20000' > "$work/job.toml"
fail() { echo "FAIL: $*"; for log in "$work"/task*.log; do echo "--- $log:"; cat "$log"; done; exit 1; }
task() {  # task INDEX: array.sbatch in the environment Slurm gives array task INDEX of 0-2
  env PATH="$work/bin:$PATH" SLR_LAUNCHER="$mpiexec -n 2" SLR_GRACE=5 SLR_SWEEP_ARGS="--progress-interval 0.05" \
    SLURM_JOB_ID=$((4243 + $1)) SLURM_ARRAY_JOB_ID=4243 SLURM_ARRAY_TASK_ID=$1 SLURM_ARRAY_TASK_COUNT=3 \
    SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 bash "$dir/array.sbatch" "$work/job.toml" "$work/results.h5"
}

# In the background without a subshell between: SIGUSR1 must reach the batch shell itself.
env PATH="$work/bin:$PATH" SLR_LAUNCHER="$mpiexec -n 2" SLR_GRACE=5 SLR_SWEEP_ARGS="--progress-interval 0.05" \
  SLURM_JOB_ID=4243 SLURM_ARRAY_JOB_ID=4243 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 \
  SLURM_ARRAY_TASK_MAX=2 bash "$dir/array.sbatch" "$work/job.toml" "$work/results.h5" > "$work/task0.log" 2>&1 &
batch=$!
for _ in $(seq 1 600); do
  grep -q "points (" "$work/task0.log" && break
  sleep 0.05
done
grep -q "(shard 0/3)" "$work/task0.log" || fail "task 0 did not start shard 0/3"
kill -USR1 "$batch"
wait "$batch"
code=$?
[ "$code" -eq 3 ] || fail "task 0 exited with $code after SIGUSR1, expected 3"
[ "$(wc -l < "$work/sbatch.calls")" -eq 1 ] || fail "expected one resubmission"
grep -q "count=1 shard=0/3 args=--export=ALL .*$dir/sweep.sbatch $work/job.toml $work/results.h5" "$work/sbatch.calls" \
  || fail "wrong resubmission: $(cat "$work/sbatch.calls")"

for i in 1 2; do
  task $i > "$work/task$i.log" 2>&1 || fail "task $i exited with $?"
  grep -q "the last to complete merges" "$work/task$i.log" || fail "task $i did not wait for the other shards"
done
[ -e "$work/results.h5" ] && fail "merged before every shard was complete"

# The resubmitted shard 0: a plain job of sweep.sbatch with SLR_SHARD in its environment.
PATH="$work/bin:$PATH" SLR_LAUNCHER="$mpiexec -n 2" SLR_SHARD=0/3 SLR_RESUBMIT_COUNT=1 SLURM_JOB_ID=4300 \
  bash "$dir/sweep.sbatch" "$work/job.toml" "$work/results.h5" > "$work/task0.log" 2>&1 || fail "shard 0 resumed: exit $?"
grep -q "resume $work/results.shard-0-of-3.h5" "$work/task0.log" || fail "the resubmitted shard did not resume"
grep -q "every shard is complete" "$work/task0.log" || fail "the last shard did not merge"
"$SLR_SWEEP" status "$work/results.h5" --json | grep -q '"points_total":300,"points_done":300' \
  || fail "the merged archive lacks points: $("$SLR_SWEEP" status "$work/results.h5")"
[ "$(wc -l < "$work/sbatch.calls")" -eq 1 ] || fail "a complete shard was resubmitted"
echo "slurm array: SIGUSR1 -> exit 3 -> one resubmission of the shard; the last shard merges all 300 points"
