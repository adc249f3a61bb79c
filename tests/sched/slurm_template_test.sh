#!/bin/bash
# jobs/slurm/sweep.sbatch outside Slurm: mpirun as the launcher and a fake `sbatch` that records
# resubmissions. SIGUSR1 to the batch shell (what --signal=B:USR1@300 does) must be forwarded,
# end the sweep with exit 3 and resubmit the script once; running the script again resumes the
# archive to completion (exit 0) without resubmitting.
# Usage: slurm_template_test.sh <sweep.sbatch> "<mpirun command with flags>"   (env SLR_SWEEP)
set -u
template=$1
mpiexec=$2
: "${SLR_SWEEP:?set SLR_SWEEP to the slr-sweep binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
printf '#!/bin/sh\necho "count=$SLR_RESUBMIT_COUNT args=$*" >> "%s/sbatch.calls"\n' "$work" > "$work/bin/sbatch"
chmod +x "$work/bin/sbatch"
# What `scontrol show job` says of a job submitted with --time=02:30:00 -p compute -A physics.
printf '#!/bin/sh\necho "   JobId=4242 JobName=fig3 Partition=compute Account=physics QOS=normal"\necho "   TimeLimit=02:30:00 NumNodes=4 Command=%s"\n' \
  "$template" > "$work/bin/scontrol"
chmod +x "$work/bin/scontrol"
printf '%s\n' 'name = "slurm-template"' 'seed = 3' '[grid]' 'alpha = {linspace = [1, 200, 200]}' 'r_k = 0.0' \
  'r_v = 0.0' '[[method]]' 'name = "synthetic"' 'cost-us = 20000' > "$work/job.toml"
fail() { echo "FAIL: $*"; echo "--- batch log:"; cat "$work/batch.log"; exit 1; }

# The environment Slurm gives a job submitted with --nodes=4 --ntasks-per-node=64 --mem=180G.
PATH="$work/bin:$PATH" SLR_LAUNCHER="$mpiexec -n 3" SLR_GRACE=5 SLR_SWEEP_ARGS="--progress-interval 0.05" \
  SLURM_JOB_ID=4242 SLURM_JOB_NAME=fig3 SLURM_JOB_NUM_NODES=4 SLURM_NTASKS_PER_NODE=64 SLURM_MEM_PER_NODE=184320 \
  bash "$template" "$work/job.toml" "$work/results.h5" > "$work/batch.log" 2>&1 &
batch=$!
for _ in $(seq 1 600); do
  grep -q "points (" "$work/batch.log" && break
  sleep 0.05
done
grep -q "points (" "$work/batch.log" || fail "the sweep did not start"
kill -USR1 "$batch"
wait "$batch"
code=$?
[ "$code" -eq 3 ] || fail "batch script exited with $code after SIGUSR1, expected 3"
grep -q "SIGUSR1 received: no new points" "$work/batch.log" || fail "the coordinator did not see SIGUSR1"
[ "$(wc -l < "$work/sbatch.calls")" -eq 1 ] || fail "expected one resubmission"
grep -q "count=1 args=--export=ALL .*sweep.sbatch $work/job.toml $work/results.h5" "$work/sbatch.calls" \
  || fail "wrong resubmission: $(cat "$work/sbatch.calls")"
for option in --job-name=fig3 --nodes=4 --ntasks-per-node=64 --mem=184320M --time=02:30:00 --partition=compute \
  --account=physics --qos=normal; do
  grep -q -- " $option " "$work/sbatch.calls" || fail "the resubmission lost $option: $(cat "$work/sbatch.calls")"
done

PATH="$work/bin:$PATH" SLR_LAUNCHER="$mpiexec -n 3" SLR_RESUBMIT_COUNT=1 \
  bash "$template" "$work/job.toml" "$work/results.h5" > "$work/batch.log" 2>&1
code=$?
[ "$code" -eq 0 ] || fail "the resubmitted job exited with $code, expected 0"
grep -q "resume $work/results.h5" "$work/batch.log" || fail "the resubmitted job did not resume"
grep -q "complete: 200/200 points" "$work/batch.log" || fail "the resumed sweep did not complete"
[ "$(wc -l < "$work/sbatch.calls")" -eq 1 ] || fail "a complete sweep was resubmitted"
echo "slurm template: SIGUSR1 -> exit 3 -> one resubmission -> resume -> complete"
