"""Script test: the frozen schema-1 archive (tests/archive/schema1/, written by the schema-1 release
from jobs/smoke.toml) stays readable and resumable by this release: status, query, export --format
grid, plot, the Python reader, and resume --extend with the same job (nothing recomputed, no
finished point lost or changed). Works on a scratch copy; the frozen files are never written.
usage: schema1_test.py SCHEMA1_DIR SMOKE_JOB PYTHON_SOURCE_DIR   (env SLR_SWEEP = slr-sweep)"""
import os
import shutil
import subprocess
import sys
import tempfile

schema1_dir, smoke_job, python_dir = (os.path.abspath(a) for a in sys.argv[1:4])
sys.path.insert(0, python_dir)
import numpy as np  # noqa: E402
import slr_sweep  # noqa: E402

sweep = os.environ["SLR_SWEEP"]
failures = []
POINTS = 52  # jobs/smoke.toml when the archive was written


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(*args, cwd):
    result = subprocess.run([sweep, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    check(result.returncode == 0, f"slr-sweep {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout + result.stderr


with tempfile.TemporaryDirectory() as tmp:
    for name in ("smoke_schema1.h5", "smoke_schema1.h5.journal"):
        shutil.copy(os.path.join(schema1_dir, name), tmp)
    archive = "smoke_schema1.h5"
    before = slr_sweep.load(os.path.join(tmp, archive), as_dict=True)

    out = run("status", archive, cwd=tmp)
    check(f"{POINTS} / {POINTS} done" in out, f"status: {out}")
    out = run("query", archive, "--where", "method=population", "--format", "csv", "--columns",
              "task,nu,activation,risk", cwd=tmp)
    check(len(out.strip().splitlines()) == 1 + 24, f"query: {out}")
    out = run("export", archive, "--format", "grid", "-o", "grid.h5", "--where", "method=fixed-point", cwd=tmp)
    check("0 of 8 grid points missing" in out, f"export: {out}")
    out = run("plot", archive, "--figure", "population", "-o", "figures", "--formats", "png", cwd=tmp)
    check(os.path.exists(os.path.join(tmp, "figures", "smoke-population.png")), f"plot: {out}")

    # The Python reader: one row per point, text as str, options as typed columns.
    check(len(before["point_id"]) == POINTS, f"load: {len(before['point_id'])} rows")
    check(all(isinstance(m, str) for m in before["method"]), "load: method as str")
    check(set(before["method"]) == {"bayes", "population", "fixed-point", "state-evolution", "erm"}, "load: methods")
    erm = before["method"] == "erm"
    check(np.all(before["D"][erm] == 200) and np.all(before["init"][erm] == "informed"), "load: typed option columns")

    # resume --extend with the same job: every point already done, nothing recomputed or changed.
    out = run("resume", archive, "--extend", smoke_job, cwd=tmp)
    check(f"({POINTS} already done)" in out, f"resume --extend: {out}")
    after = slr_sweep.load(os.path.join(tmp, archive), as_dict=True)
    order_b, order_a = np.argsort(before["point_id"]), np.argsort(after["point_id"])
    check(np.array_equal(before["point_id"][order_b], after["point_id"][order_a]), "resume changed the point ids")
    check(np.array_equal(before["seed"][order_b], after["seed"][order_a]), "resume changed the seeds")
    for column in ("risk", "test_risk", "order_parameters_m_kk", "train_loss"):
        check(np.array_equal(before[column][order_b], after[column][order_a], equal_nan=True),
              f"resume changed column {column}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("frozen schema-1 archive: status, query, export, plot, load and resume --extend work; nothing changed")
