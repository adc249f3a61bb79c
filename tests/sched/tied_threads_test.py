#!/usr/bin/env python3
"""Tied-attention ERM archives do not depend on how the machine runs them.

The job tied_threads_job.toml (8 ERM trainings through OpenBLAS dgemm/dsyrk) is run on 1, 2 and
3 ranks, with OPENBLAS_NUM_THREADS=1, with OPENBLAS_NUM_THREADS=2 and OMP_NUM_THREADS=3, with
--threads-per-worker 2 and pinned to one CPU (taskset -c 0, where available); every archive must
equal the first in every column but timings (compare_archives.py's rule).

usage: tied_threads_test.py JOB --mpiexec MPIEXEC [PREFLAGS...]   (env SLR_SWEEP)
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

TIMING = {"wall_s", "completed_unix", "run_index", "grad_time_s", "peak_rss_mb", "optimiser_seconds"}


def rows(path):
    with h5py.File(path, "r") as f:
        points = f["/points"][:]
    return points[np.argsort(points["point_id"], kind="stable")]


def main():
    job = sys.argv[1]
    mpiexec = shlex.split(" ".join(sys.argv[sys.argv.index("--mpiexec") + 1:]))
    slr = os.environ["SLR_SWEEP"]
    base_env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    variants = [("1 rank", [slr], {}, []),
                ("2 ranks", [*mpiexec, "-n", "2", slr], {}, []),
                ("3 ranks", [*mpiexec, "-n", "3", slr], {}, []),
                ("OPENBLAS_NUM_THREADS=1", [slr], {"OPENBLAS_NUM_THREADS": "1"}, []),
                ("OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=3", [slr], {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "3"}, []),
                ("--threads-per-worker 2", [slr], {}, ["--threads-per-worker", "2"])]
    if shutil.which("taskset"):
        variants.append(("taskset -c 0", ["taskset", "-c", "0", slr], {}, []))
    with tempfile.TemporaryDirectory() as tmp:
        archives = []
        for label, launcher, env, extra in variants:
            path = os.path.join(tmp, f"v{len(archives)}.h5")
            result = subprocess.run([*launcher, "run", job, "-o", path, *extra], capture_output=True, text=True,
                                    env={**base_env, **env})
            if result.returncode != 0:
                print(f"FAIL: {label}: exit {result.returncode}\n{result.stderr}")
                return 1
            archives.append((label, path))
        reference_label, reference = archives[0]
        a = rows(reference)
        if len(a) != 4 or not np.all(a["status"] == b"ok"):
            print(f"FAIL: {reference_label}: {len(a)} rows, statuses {set(a['status'])}")
            return 1
        for label, path in archives[1:]:
            b = rows(path)
            if len(b) != len(a) or not np.array_equal(a["point_id"], b["point_id"]):
                print(f"FAIL: {label}: other points than {reference_label}")
                return 1
            for name in a.dtype.names:
                if name in TIMING:
                    continue
                x, y = a[name], b[name]
                same = (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y
                if not np.all(same):
                    print(f"FAIL: {label}: column {name} differs from {reference_label}")
                    return 1
        print(f"{len(archives)} archives identical: " + "; ".join(label for label, _ in archives))
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
