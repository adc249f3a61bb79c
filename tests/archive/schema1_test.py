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
import h5py  # noqa: E402
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

    # `upgrade` rewrites a copy losslessly as the current schema; the old journal is kept as it was.
    upgraded_dir = os.path.join(tmp, "upgraded")
    os.makedirs(upgraded_dir)
    for name in ("smoke_schema1.h5", "smoke_schema1.h5.journal"):
        shutil.copy(os.path.join(schema1_dir, name), upgraded_dir)
    out = run("upgrade", archive, cwd=upgraded_dir)
    check(f"{POINTS} points" in out and "schema1" in out, f"upgrade: {out}")
    with open(os.path.join(schema1_dir, "smoke_schema1.h5.journal"), "rb") as a, \
            open(os.path.join(upgraded_dir, "smoke_schema1.h5.journal.schema1"), "rb") as b:
        check(a.read() == b.read(), "upgrade: the old journal is kept byte for byte")
    with h5py.File(os.path.join(upgraded_dir, archive), "r") as f:
        points = f["/points"]
        check(int(f.attrs["schema_version"]) == 2, "upgrade: schema_version 2")
        names = points.dtype.names
        check("options" not in names, "upgrade: no options column")
        check(points.dtype["samples"] == np.int64 or points.dtype["samples"] == np.float64, "upgrade: samples numeric")
        check(points.dtype["D"].kind == "f" and points.dtype["init"].kind in "SO", "upgrade: D real, init text")
        # Choices stay text as in a fresh archive (erm names a method of two models).
        check(points.dtype["trajectory"].kind in "SO", f"upgrade: trajectory text, got {points.dtype['trajectory']}")
        declared = points.attrs["parameter_columns"]
        declared = declared.decode() if isinstance(declared, bytes) else declared
        check({"task", "nu", "L", "delta", "activation", "alpha", "r_k", "r_v", "samples", "D", "init"}
              <= set(declared.split(",")), f"upgrade: parameter columns {declared}")
    upgraded = slr_sweep.load(os.path.join(upgraded_dir, archive), as_dict=True)
    order_u = np.argsort(upgraded["point_id"])
    check(np.array_equal(before["point_id"][order_b], upgraded["point_id"][order_u]), "upgrade changed the point ids")
    check(np.array_equal(before["seed"][order_b], upgraded["seed"][order_u]), "upgrade changed the seeds")
    for column in ("risk", "test_risk", "order_parameters_m_kk", "train_loss", "alpha", "nu", "D"):
        check(np.array_equal(np.asarray(before[column][order_b], dtype=float),
                             np.asarray(upgraded[column][order_u], dtype=float), equal_nan=True),
              f"upgrade changed column {column}")
    out = run("query", archive, "--where", "D>=100", "--columns", "alpha,D,test_risk", "--format", "csv",
              cwd=upgraded_dir)
    check(out.splitlines()[0] == "alpha,D,test_risk" and len(out.strip().splitlines()) == 1 + int(erm.sum()),
          f"query --where D>=100 on the upgraded archive: {out}")
    out = run("resume", archive, "--extend", smoke_job, cwd=upgraded_dir)
    check(f"({POINTS} already done)" in out, f"resume --extend after upgrade: {out}")
    out = run("upgrade", archive, cwd=upgraded_dir)
    check("nothing to do" in out, f"upgrade of an upgraded archive: {out}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("frozen schema-1 archive: status, query, export, plot, load and resume --extend work; nothing changed; "
      "upgrade rewrites it losslessly as schema 2 and resume --extend accepts the result")
