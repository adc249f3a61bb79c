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
# One ERM point trained by gradient flow with its trajectory recorded.
printf '%s\n' 'name = "traj"' 'seed = 2' '[grid]' 'alpha = 2.0' 'r_k = 0.1' 'r_v = 0.1' '[[method]]' 'name = "erm"' \
  'D = 40' 'optimizer = "gradient-flow"' 'trajectory = "1"' 'test-samples = 500' > traj.toml
"$SLR_SWEEP" run traj.toml -o traj.h5 > run.log 2>&1 || { cat run.log; exit 1; }
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
# Provenance and the gradient-flow trajectory.
prov = slr_sweep.provenance("traj.h5")
assert prov["job_name"] == "traj" and prov["runs"][0]["exit_reason"] == "complete", prov
assert "hdf5" in prov["libraries"], prov["libraries"]
pid = slr_sweep.load_columns("traj.h5")["point_id"][0]
traj = slr_sweep.trajectory("traj.h5", pid)
assert len(traj["t"]) > 10 and all(k in traj for k in ("m_kk", "q_vv", "train_loss")), sorted(traj)
assert (traj["t"][1:] > traj["t"][:-1]).all(), "times increase"
assert traj["train_loss_regularised"][-1] <= traj["train_loss_regularised"][0], "gradient flow decreases the objective"
print("PASS: installed into a venv offline; text columns are str; provenance and trajectory read")
PY
