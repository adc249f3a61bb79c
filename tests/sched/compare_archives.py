#!/usr/bin/env python3
"""Checks that archives of the same sweep run on different rank counts are identical.

Every archive must hold each point exactly once, the same set of points, and the same values in
every column except timings and memory (wall_s, completed_unix, run_index, grad_time_s, peak_rss_mb). A few unchained points are
also checked against `slr-sweep point` (one process, no MPI): an independent computation.
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

TIMING = {"wall_s", "completed_unix", "run_index", "grad_time_s", "peak_rss_mb"}  # and memory


def load(path):
    with h5py.File(path, "r") as f:
        points = f["/points"][:]
    ids = points["point_id"]
    assert len(np.unique(ids)) == len(ids), f"{path}: a point appears twice"
    return {int(r["point_id"]): r for r in points}


def equal(x, y):
    if isinstance(x, (float, np.floating)):
        return x == y or (np.isnan(x) and np.isnan(y))
    return x == y


def main(expected_points, reference_path, *others):
    expected_points = int(expected_points)
    reference = load(reference_path)
    assert len(reference) == expected_points, f"{reference_path}: {len(reference)} points, expected {expected_points}"
    for other_path in others:
        other = load(other_path)
        assert other.keys() == reference.keys(), f"{other_path}: different points than {reference_path}"
        for point_id, row in other.items():
            for name in row.dtype.names:
                if name not in TIMING and not equal(row[name], reference[point_id][name]):
                    raise AssertionError(f"{other_path}: point {point_id} column {name}: "
                                         f"{row[name]!r} != {reference[point_id][name]!r}")
    statuses = {r["status"] for r in reference.values()}
    assert statuses == {b"ok", b"failed"}, statuses
    chained = [r for r in reference.values() if r["iterations"] > 1]
    assert chained, "no warm-started chain point"

    # Independent check of single points with `slr-sweep point`.
    checked = 0
    model = {"task", "nu", "L", "L_pmf", "delta", "activation", "erf_offset", "alpha", "r_k", "r_v"}
    with h5py.File(reference_path, "r") as f:
        attribute = f["/points"].attrs["parameter_columns"]
    declared = (attribute.decode() if isinstance(attribute, bytes) else attribute).split(",")
    option_names = [name for name in declared if name not in model]
    for row in reference.values():
        options = {}
        for name in option_names:  # the options of this row's method: other methods' are NaN / ""
            value = row[name]
            if isinstance(value, bytes):
                if value:
                    options[name] = value.decode()
            elif not np.isnan(value):
                options[name] = repr(value.item())
        if row["status"] != b"ok" or row["iterations"] != 1 or checked >= 4 or float(row["cost-us"]) != 0:
            continue
        command = [os.environ["SLR_SWEEP"], "point", "--method", "synthetic", "--alpha", repr(float(row["alpha"])),
                   "--r-k", repr(float(row["r_k"])), "--r-v", repr(float(row["r_v"])), "--seed", str(int(row["seed"]))]
        for key, value in options.items():
            command += [f"--{key}", value]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        risk = result.get("risk", result.get("results", {}).get("risk"))
        assert risk == float(row["risk"]), f"point {row['point_id']}: archive risk {row['risk']!r}, point says {risk!r}"
        checked += 1
    assert checked == 4, f"only {checked} points checked against `slr-sweep point`"
    print(f"{len(others) + 1} archives identical: {len(reference)} points, {len(chained)} warm-started chain points, "
          f"{checked} points equal to `slr-sweep point`")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
