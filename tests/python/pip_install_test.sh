#!/bin/bash
# The Python package installs offline into a fresh venv (Debian's numpy/h5py seen through
# --system-site-packages) and, imported from the venv, reads an archive with text as str.
# Usage: pip_install_test.sh <source dir>   (env SLR_SWEEP)
set -eu
source_dir=$1
: "${SLR_SWEEP:?set SLR_SWEEP to the slr-sweep binary}"
if ! /usr/bin/python3 -c "import venv, ensurepip" 2> /dev/null; then
  echo "SKIPPED: /usr/bin/python3 has no venv/ensurepip (Debian package python3-venv)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy: setuptools builds in the project directory, which must stay clean.
cp -r "$source_dir/src/python" "$work/package"
rm -rf "$work/package/slr_sweep/__pycache__"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --no-index --no-build-isolation --no-deps --quiet "$work/package"
cd "$work"
printf '%s\n' 'name = "pip"' 'seed = 1' '[grid]' 'nu = [1, 2]' '[[method]]' 'name = "bayes"' 'samples = 200' > job.toml
"$SLR_SWEEP" run job.toml -o a.h5 > run.log 2>&1 || { cat run.log; exit 1; }
"$work/venv/bin/python" - <<'PY'
import os
import sys

import slr_sweep

where = os.path.realpath(slr_sweep.__file__)
assert where.startswith(os.path.realpath(sys.prefix)), f"imported from {where}, not from the venv {sys.prefix}"
cols = slr_sweep.load_columns("a.h5")
assert len(cols["point_id"]) == 2, cols["point_id"]
for name in ("method", "task", "activation", "status"):
    assert all(isinstance(v, str) for v in cols[name]), (name, cols[name])
assert list(cols["method"]) == ["bayes", "bayes"]
try:
    import pandas  # noqa: F401
except ImportError:
    print("pandas not installed: DataFrame selection not checked")
else:
    frame = slr_sweep.load("a.h5")
    assert len(frame[frame.method == "bayes"]) == 2
print("PASS: installed into a venv offline; text columns are str")
PY
