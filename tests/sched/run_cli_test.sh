#!/bin/bash
# `slr-sweep run` / `resume` from the command line (1 process, no mpirun: MPI singleton; and
# 2 ranks): exit codes 2 for bad input without creating or touching an archive, --extend refused
# and accepted, --retry-failed; `point`, `plan`, `status` keep working without MPI.
# Usage: run_cli_test.sh "<mpirun command with flags>"   (env SLR_SWEEP)
set -u
mpiexec=$1
: "${SLR_SWEEP:?set SLR_SWEEP to the slr-sweep binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
expect() { # expect <code> <command…>
  local want=$1
  shift
  "$@" > out.log 2>&1
  local got=$?
  [ "$got" -eq "$want" ] || { cat out.log; fail "exit $got, expected $want: $*"; }
}
job() { # job <file> <seed> <alphas> [extra grid line]
  printf '%s\n' 'name = "cli"' "seed = $2" '[grid]' "alpha = [$3]" 'r_k = 0.0' 'r_v = 0.0' ${4:+"$4"} \
    '[[method]]' 'name = "synthetic"' 'fail-if = "alpha=2"' > "$1"
}
job good.toml 1 "1, 2, 3"
job extended.toml 1 "1, 2, 3, 4"
job reseeded.toml 2 "1, 2, 3, 4"
job unknown_key.toml 1 "1, 2" "bogus = 1"
job empty_axis.toml 1 ""

for bad in unknown_key.toml empty_axis.toml missing.toml; do
  expect 2 $mpiexec -n 2 "$SLR_SWEEP" run "$bad" -o bad.h5
  grep -q "slr-sweep: error: .*$bad" out.log || { cat out.log; fail "no error naming $bad"; }
  [ ! -e bad.h5 ] && [ ! -e bad.h5.journal ] || fail "$bad created an archive"
done
expect 2 "$SLR_SWEEP" run good.toml -o bad.h5 --grace -1
expect 2 "$SLR_SWEEP" run good.toml -o bad.h5 --mem-per-node 12Q
[ ! -e bad.h5 ] || fail "bad options created an archive"

expect 0 "$SLR_SWEEP" run good.toml -o a.h5
grep -q "complete: 3/3 points (100.0%), not ok: 1 failed" out.log || { cat out.log; fail "first run"; }
before=$(cksum < a.h5.journal)
expect 2 $mpiexec -n 2 "$SLR_SWEEP" run good.toml -o a.h5
grep -q "already exists" out.log || { cat out.log; fail "existing archive not named"; }
expect 2 "$SLR_SWEEP" resume a.h5 --extend reseeded.toml
grep -q "refused" out.log || { cat out.log; fail "extension with another seed not refused"; }
[ "$(cksum < a.h5.journal)" = "$before" ] || fail "a refused command touched the journal"
expect 2 "$SLR_SWEEP" resume missing.h5

expect 0 $mpiexec -n 2 "$SLR_SWEEP" resume a.h5 --retry-failed
grep -q "3 points in 3 units (2 already done)" out.log || { cat out.log; fail "--retry-failed did not rerun the failed point"; }
expect 0 "$SLR_SWEEP" resume a.h5 --extend extended.toml
grep -q "4 points in 4 units (3 already done)" out.log || { cat out.log; fail "--extend did not add one point"; }
expect 0 "$SLR_SWEEP" resume a.h5
grep -q "(4 already done)" out.log || { cat out.log; fail "complete archive not recognised"; }

expect 0 "$SLR_SWEEP" status a.h5

# Statuses that cannot be missed: unconverged points are counted by kind in the last line.
printf '%s\n' 'name = "unconverged"' 'seed = 3' '[grid]' 'alpha = [1, 2]' '[[method]]' 'name = "state-evolution"' \
  'max-iter = 2' 'samples = 2000' > unconverged.toml
expect 0 "$SLR_SWEEP" run unconverged.toml -o u.h5
tail -n 1 out.log | grep -q "complete: 2/2 points (100.0%), not ok: 2 not_converged" || { cat out.log; fail "last line hides not_converged"; }
expect 0 "$SLR_SWEEP" status u.h5
grep -q "not_converged 2" out.log || { cat out.log; fail "status hides not_converged"; }
expect 0 "$SLR_SWEEP" status u.h5 --json
grep -q '"points_total":2,"points_done":2' out.log && grep -q '"by_status":{"not_converged":2}' out.log \
  || { cat out.log; fail "status --json"; }
expect 0 timeout 20 "$SLR_SWEEP" status u.h5 --watch 0.5   # a complete sweep: prints once and returns

# query over several archives: rows tagged by their archive.
expect 0 "$SLR_SWEEP" query a.h5 u.h5 --format csv --columns archive,method,alpha,status
[ "$(grep -c '^a.h5,synthetic,' out.log)" -eq 4 ] && [ "$(grep -c '^u.h5,state-evolution,' out.log)" -eq 2 ] \
  || { cat out.log; fail "query of two archives"; }
# Machine formats keep parameters that a filter made constant; the default table stays narrow.
expect 0 "$SLR_SWEEP" query u.h5 --where alpha=1 --format jsonl
grep -q '"alpha":1' out.log && grep -q '"task":"spiked"' out.log || { cat out.log; fail "jsonl dropped constant parameters"; }
expect 0 "$SLR_SWEEP" query u.h5
narrow=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' out.log)
expect 0 "$SLR_SWEEP" query u.h5 --wide
wide=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' out.log)
[ "$narrow" -le 160 ] && [ "$wide" -gt "$narrow" ] || fail "table widths: default $narrow, --wide $wide"
# The jump of the Bayes-optimal curve as a method of its own: its bracket is archived as columns
# of their own (NaN in the other methods' rows) and drawn on the curve.
printf '%s\n' 'name = "jump"' 'seed = 5' '[grid]' 'delta = 0.03' 'alpha = [1, 2]' '[[method]]' \
  'name = "state-evolution"' 'samples = 2000' '[[method]]' 'name = "bayes-jump"' 'samples = 2000' 'scan = 4' \
  'jump-tol = 0.01' > jump.toml
expect 0 $mpiexec -n 2 "$SLR_SWEEP" run jump.toml -o j.h5
expect 0 "$SLR_SWEEP" query j.h5 --where method=bayes-jump --format csv --columns jump_found,alpha_below,alpha_jump,alpha_above
tail -n 1 out.log | awk -F, '$1 == 1 && $2 <= $3 && $3 <= $4 && $4 / $2 - 1 <= 0.01 && $3 > 1 && $3 < 2 { ok = 1 } END { exit !ok }' \
  || { cat out.log; fail "bayes-jump bracket"; }
expect 0 "$SLR_SWEEP" query j.h5 --where method=state-evolution --format csv --columns alpha_jump
[ "$(grep -c '^nan$' out.log)" -eq 2 ] || { cat out.log; fail "alpha_jump not NaN in state-evolution rows"; }
expect 0 "$SLR_SWEEP" plan good.toml
# Per-method totals when a job has several methods.
expect 0 "$SLR_SWEEP" plan jump.toml
grep -q "^method  state-evolution  *2 " out.log && grep -q "^method  bayes-jump  *1 " out.log \
  || { cat out.log; fail "plan: per-method totals"; }
expect 0 "$SLR_SWEEP" point --method synthetic --alpha 1 --r-k 0 --r-v 0
echo "run/resume command line: exit codes, refusals, --retry-failed, --extend and MPI-free commands as expected"
