#!/bin/bash
# docs/examples/tour.ipynb runs top to bottom (jupyter nbconvert --execute) on an archive made
# here; skipped, saying so, where nbconvert or ipykernel is not installed.
# Usage: notebook_test.sh <source dir>   (env SLR_SWEEP)
set -eu
source_dir=$1
: "${SLR_SWEEP:?set SLR_SWEEP to the slr-sweep binary}"
if ! /usr/bin/python3 -c "import nbconvert, nbformat, ipykernel" 2> /dev/null; then
  echo "SKIPPED: nbconvert/ipykernel not installed (Debian: python3-nbconvert python3-ipykernel)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$SLR_SWEEP" run "$source_dir/jobs/smoke.toml" -o "$work/smoke.h5" > "$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
cp "$source_dir/docs/examples/tour.ipynb" "$work/"
cd "$work"
SLR_ARCHIVE="$work/smoke.h5" PYTHONPATH="$source_dir/src/python${PYTHONPATH:+:$PYTHONPATH}" \
  /usr/bin/python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 tour.ipynb \
  --output executed.ipynb > nbconvert.log 2>&1 || { cat nbconvert.log; exit 1; }
[ -s "$work/tour_population.png" ] || { echo "FAIL: the tour did not draw its figure"; exit 1; }
echo "PASS: docs/examples/tour.ipynb executed"
