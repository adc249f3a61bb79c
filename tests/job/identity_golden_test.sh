#!/bin/bash
# Point identities and seeds never change: `plan --list` of a job that uses every SLR parameter
# kind, every method, zips, option axes, a continuation chain and a length pmf must print exactly
# the ids, seeds and canonical texts recorded by the schema-1 release (identity_golden.txt), with
# the same job fingerprint. Archives written by that release can then be resumed and extended.
# Usage: identity_golden_test.sh <tests/job directory>   (env SLR_SWEEP)
set -eu
dir=$1
: "${SLR_SWEEP:?set SLR_SWEEP to the slr-sweep binary}"
cd "$dir"
now=$("$SLR_SWEEP" plan --list identity_golden.toml)
fingerprint=$(sed -n '1s/.*fingerprint \([0-9a-f]*\).*/\1/p' identity_golden.txt)
echo "$now" | grep -q "fingerprint $fingerprint" || { echo "FAIL: the job fingerprint is no longer $fingerprint"; exit 1; }
if ! diff <(grep -E '^[0-9a-f]{16} ' identity_golden.txt) <(echo "$now" | grep -E '^[0-9a-f]{16} '); then
  echo "FAIL: point identities, seeds or canonical texts changed (lines above: < recorded, > now)"
  exit 1
fi
echo "PASS: $(grep -cE '^[0-9a-f]{16} ' identity_golden.txt) point identities and seeds as recorded; fingerprint $fingerprint"
