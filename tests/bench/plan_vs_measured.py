#!/usr/bin/python3
"""Compare `slr-sweep plan`'s cost estimate of a job with the time its points took in an archive.

    tests/bench/plan_vs_measured.py build/bin/slr-sweep JOB.toml ARCHIVE.h5 [JOB.toml ARCHIVE.h5 ...]

For every method of every job: the points, the planned single-thread CPU time (plan's per-method
total), the measured sum of the points' `wall_s` (each point runs on one thread, so on a machine
with a core per worker this is its CPU time) and their ratio. Ratios outside [0.5, 2] are marked:
plan's estimates are what users budget cluster hours with. Exit status 1 if any is marked.
"""
import re
import subprocess
import sys

import h5py
import numpy as np

UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def planned(binary, job):
    """{method label: (points, seconds)} from plan's 'method' lines."""
    out = subprocess.run([binary, "plan", job], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        m = re.match(r"^method\s+(.+?)\s+(\d+)\s+(\d+)\s+([\d.e+-]+)\s+(s|min|h|d)\s", line)
        if m:
            result[m.group(1).strip()] = (int(m.group(2)), float(m.group(4)) * UNITS[m.group(5)])
    if not result:  # a job of one method prints only the entry lines and the total
        for line in out.splitlines():
            m = re.match(r"^\d+\s+(.+?)\s+(\d+)\s+(\d+)\s+([\d.e+-]+)\s+(s|min|h|d)\s", line)
            if m:
                label = m.group(1).strip()
                n, sec = result.get(label, (0, 0.0))
                result[label] = (n + int(m.group(2)), sec + float(m.group(4)) * UNITS[m.group(5)])
    return result


def measured(archive):
    """{method label: (points, seconds)} from the archive's rows (label as plan prints it)."""
    with h5py.File(archive, "r") as f:
        rows = f["points"][()]
    names = rows.dtype.names
    methods = np.array([m.decode() for m in rows["method"]])
    models = np.array([m.decode() for m in rows["model"]]) if "model" in names else np.array([""] * len(rows))
    result = {}
    for method, model in sorted(set(zip(methods, models))):
        mask = (methods == method) & (models == model)
        label = method if model in ("", "slr") else f"{method} [{model}]"
        wall = rows["wall_s"][mask]
        result[label] = (int(mask.sum()), float(np.nansum(wall)))
    return result


def human(seconds):
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def main(argv):
    if len(argv) < 4 or len(argv) % 2 != 0:
        print(__doc__, file=sys.stderr)
        return 2
    binary, pairs = argv[1], list(zip(argv[2::2], argv[3::2]))
    bad = False
    print(f"{'job':34} {'method':28} {'points':>7} {'plan':>10} {'measured':>10} {'ratio':>6}")
    for job, archive in pairs:
        plan, got = planned(binary, job), measured(archive)
        for label, (n, seconds) in got.items():
            key = label if label in plan else label.split(" [")[0]
            if key not in plan:
                print(f"{job:34} {label:28} {n:7d} {'?':>10} {human(seconds):>10}")
                continue
            ratio = seconds / plan[key][1] if plan[key][1] > 0 else float("inf")
            mark = "" if 0.5 <= ratio <= 2 else "  <-- outside [0.5, 2]"
            bad |= bool(mark)
            name = job.rsplit("/", 1)[-1]
            print(f"{name:34} {label:28} {n:7d} {human(plan[key][1]):>10} {human(seconds):>10} {ratio:6.2f}{mark}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
