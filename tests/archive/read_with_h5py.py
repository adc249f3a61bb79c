#!/usr/bin/python3
"""The archive is readable from Python with Debian's h5py + numpy: /points loads in one line into
a DataFrame-shaped structure (numpy structured array / dict of columns), and its numbers are
those `slr-sweep point` computes for the same parameters and seed. Also checks `status` and
that `recover` rebuilds an identical table from the journal.

usage: read_with_h5py.py FILL_ARCHIVE_TOOL JOB_FILE   (env SLR_SWEEP = the slr-sweep binary)
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

fill_tool, job_file = sys.argv[1], sys.argv[2]
slr_sweep = slr_sweep_binary = os.environ["SLR_SWEEP"]


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "smoke.h5")
    # A partial run first: status reports progress and that nothing is running.
    subprocess.run([fill_tool, job_file, path, "10"], check=True, stdout=subprocess.DEVNULL)
    status = subprocess.run([slr_sweep, "status", path], capture_output=True, text=True)
    if status.returncode != 0 or "10 / 36 done" not in status.stdout or "26 missing" not in status.stdout \
            or "not running" not in status.stdout:
        print("FAIL: status of a partial archive:\n" + status.stdout + status.stderr)
        sys.exit(1)
    # …then the rest (the archive is reopened and only missing points run).
    subprocess.run([fill_tool, job_file, path], check=True, stdout=subprocess.DEVNULL)

    with h5py.File(path, "r") as f:
        points = f["/points"][:]  # numpy structured array: pd.DataFrame(points) is the DataFrame
        table = {name: points[name] for name in points.dtype.names}  # dict of columns
        runs = f["/runs"][:]
        attrs = dict(f.attrs)
        parameter_columns = f["/points"].attrs["parameter_columns"]

    check(len(points) == 36, f"36 rows expected, got {len(points)}")
    check(points.dtype["point_id"] == np.uint64, "point_id is uint64")
    for column in ["method", "task", "nu", "L", "L_pmf", "delta", "activation", "samples", "seed",
                   "repeat", "status", "message", "risk", "bayes_risk", "order_parameters_m_kk",
                   "order_parameters_q_vv", "V_kk", "hat_m_kk", "wall_s", "extra_json"]:
        check(column in table, f"column {column} missing")
    # Every parameter is a typed column of its own; a parameter no point has is no column at all.
    check("options" not in table and "alpha" not in table, "no options text, no alpha column for population points")
    check(points.dtype["samples"] == np.int64 and points.dtype["L"] == np.int64 and points.dtype["nu"] == np.float64,
          "typed parameter columns (samples, L int64; nu float64)")
    parameter_columns = parameter_columns.decode() if isinstance(parameter_columns, bytes) else parameter_columns
    check({"task", "nu", "L", "samples"} <= set(parameter_columns.split(",")), "parameter_columns names the parameters")
    check(len(set(table["point_id"].tolist())) == 36, "point ids are unique")
    check(attrs["schema_version"] == 2, "schema_version")
    with open(job_file) as job:
        check(attrs["job_text"] == job.read(), "the job text is stored verbatim")
    check(len(runs) == 2 and runs["exit_reason"][0] == b"stopped" and runs["exit_reason"][1] == b"complete",
          "a stopped and a complete run")
    check(int(runs["points_done"][0]) == 10 and int(runs["points_done"][1]) == 26, "points_done per run")

    def text(value):
        return value.decode() if isinstance(value, bytes) else value

    # The archived numbers are those of `slr-sweep point` for the same point and seed.
    def point_json(row, method, options):
        args = [slr_sweep, "point", "--method", method, "--task", text(row["task"]),
                "--nu", repr(float(row["nu"])), "--L", str(int(row["L"])), "--activation", text(row["activation"]),
                "--seed", str(int(row["seed"]))] + options
        return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)

    bayes = points[(points["method"] == b"bayes") & (points["task"] == b"spiked") & (points["nu"] == 4.0)
                   & (points["repeat"] == 0)]
    check(len(bayes) == 1, "one bayes row at spiked, nu = 4, repeat 0")
    expected = point_json(bayes[0], "bayes", ["--samples", "20000"])
    check(bayes[0]["risk"] == expected["risk"], f"bayes risk {bayes[0]['risk']} != {expected['risk']}")
    # Bayes risk at nu = 4, L = 3 is well below the trivial risk 1 and above 0 (docs/theory.md §3).
    check(0.0 < bayes[0]["risk"] < 1.0, "bayes risk in (0, 1)")

    population = points[(points["method"] == b"population") & (points["task"] == b"max")
                         & (points["activation"] == b"linear") & (points["nu"] == 9.0) & (points["repeat"] == 1)]
    check(len(population) == 1, "one population row")
    expected = point_json(population[0], "population", ["--samples", "5000"])
    check(population[0]["risk"] == expected["risk"], "population risk equals `slr-sweep point`")
    check(population[0]["order_parameters_m_kk"] == expected["order_parameters"]["m_kk"], "m_kk")

    try:
        import pandas as pd  # optional: not a Debian dependency of the project
        frame = pd.DataFrame(h5py.File(path, "r")["/points"][:])
        check(frame.shape[0] == 36, "pandas one-liner")
        print("pandas one-liner checked")
    except ImportError:
        print("pandas not installed: checked the structured array / dict of columns only")

    status = subprocess.run([slr_sweep, "status", path], capture_output=True, text=True)
    check(status.returncode == 0, "status exit code: " + status.stderr)
    check("36 / 36 done" in status.stdout, "status reports 36 / 36:\n" + status.stdout)

    # recover rebuilds the same table from the journal alone.
    os.remove(path)
    rec = subprocess.run([slr_sweep, "recover", path], capture_output=True, text=True)
    check(rec.returncode == 0, "recover: " + rec.stderr)
    with h5py.File(path, "r") as f:
        again = f["/points"][:]
    check(again.dtype == points.dtype, "same columns after recover")
    for name in points.dtype.names:
        a, b = points[name], again[name]
        same = np.array_equal(a, b, equal_nan=True) if a.dtype.kind == "f" else np.array_equal(a, b)
        check(same, f"column {name} identical after recover")

    # A text of one row edited in the .h5 (the global heap, which no HDF5 checksum covers): the
    # row's text checksum no longer matches. Python leaves it out with a DamagedRowWarning,
    # `query` and `status` say so, and `recover` brings the row back from the journal.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python"))
    import warnings

    import slr_sweep
    from slr_sweep.archive import DamagedRowWarning

    with h5py.File(path, "r+") as f:
        rows = f["points"][:]
        edited_id = int(rows["point_id"][5])
        rows["message"][5] = b"edited"
        f["points"][...] = rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = slr_sweep.load_columns(path)
    check(len(loaded["point_id"]) == len(points) - 1 and edited_id not in set(loaded["point_id"].tolist()),
          "the edited row is left out by slr_sweep.load_columns")
    check(any(issubclass(w.category, DamagedRowWarning) and format(edited_id, "016x") in str(w.message)
              for w in caught), f"a DamagedRowWarning names the row: {[str(w.message) for w in caught]}")
    query = subprocess.run([slr_sweep_binary, "query", path, "--columns", "point_id"], capture_output=True, text=True)
    check(query.returncode == 0 and "fail their checksum" in query.stderr and format(edited_id, "016x") in query.stderr,
          "query names the refused row:\n" + query.stderr)
    status = subprocess.run([slr_sweep_binary, "status", path], capture_output=True, text=True)
    check("1 row(s) whose texts fail their checksum" in status.stdout, "status counts the refused row:\n" + status.stdout)
    rec = subprocess.run([slr_sweep_binary, "recover", path], capture_output=True, text=True)
    check(rec.returncode == 0, "recover after an edited text: " + rec.stderr)
    with h5py.File(path, "r") as f:
        again = f["/points"][:]
    check(again["message"][again["point_id"] == edited_id][0] != b"edited", "recover restored the row's text")
    check(len(slr_sweep.load_columns(path)["point_id"]) == len(points), "every row back after recover")
print("ok")
