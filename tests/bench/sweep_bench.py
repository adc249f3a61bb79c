#!/usr/bin/env python3
"""Benchmarks of the MPI sweep (not a test; prints a table).

  throughput  trivial points (method synthetic, cost 0) archived by `slr-sweep run`:
              points/s over the sweep (start/end of the run in the archive's /runs table),
              goal >= 1e4 points/s on 2 ranks (1 coordinator + 1 worker);
  efficiency  compute-bound points (busy work of --cost-ms each) on 1 worker (2 ranks) and
              2 workers (3 ranks): speed-up and parallel efficiency T1 / (2 T2).

Usage: sweep_bench.py --slr-sweep build/src/cli/slr-sweep [--mpiexec "mpirun --oversubscribe"]
On a machine shared with other jobs the numbers are noisy; run it on an idle node.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time

import h5py

JOB = """name = "{name}"
seed = 1
[grid]
alpha = {{linspace = [1, {n}, {n}]}}
r_k = 0.0
r_v = 0.0
[[method]]
name = "synthetic"
cost-us = {cost_us}
"""


def sweep(args, work, name, points, cost_us, ranks):
    job = os.path.join(work, name + ".toml")
    with open(job, "w") as f:
        f.write(JOB.format(name=name, n=points, cost_us=cost_us))
    archive = os.path.join(work, f"{name}-np{ranks}.h5")
    command = shlex.split(args.mpiexec) + ["-n", str(ranks), args.slr_sweep, "run", job, "-o", archive,
                                           "--progress-interval", "1000"]
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = time.monotonic() - started
    with h5py.File(archive, "r") as f:
        run = f["/runs"][0]
        count = f["/points"].shape[0]
    assert count == points, f"{archive}: {count} points"
    return run["end_unix"] - run["start_unix"], total


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slr-sweep", default=os.environ.get("SLR_SWEEP"), required=os.environ.get("SLR_SWEEP") is None)
    parser.add_argument("--mpiexec", default="mpirun --oversubscribe")
    parser.add_argument("--trivial-points", type=int, default=50000)
    parser.add_argument("--compute-points", type=int, default=160)
    parser.add_argument("--cost-ms", type=float, default=25.0)
    args = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    rows = []
    with tempfile.TemporaryDirectory(prefix="slr-bench-") as work:
        for ranks in (1, 2):
            sweep_s, total_s = sweep(args, work, "throughput", args.trivial_points, 0, ranks)
            rows.append((f"throughput, {ranks} rank(s)", args.trivial_points, sweep_s, total_s,
                         f"{args.trivial_points / sweep_s:,.0f} points/s archived"))
        cost_us = int(args.cost_ms * 1000)
        t1, total1 = sweep(args, work, "compute", args.compute_points, cost_us, 2)
        t2, total2 = sweep(args, work, "compute", args.compute_points, cost_us, 3)
        ideal = args.compute_points * args.cost_ms / 1000
        rows.append(("compute-bound, 1 worker (2 ranks)", args.compute_points, t1, total1,
                     f"{ideal / t1:.1%} of ideal {ideal:.2f} s"))
        rows.append(("compute-bound, 2 workers (3 ranks)", args.compute_points, t2, total2,
                     f"speed-up {t1 / t2:.2f}, efficiency {t1 / (2 * t2):.1%}"))
    print(f"{'benchmark':38} {'points':>8} {'sweep s':>9} {'mpirun s':>9}  result")
    for name, points, sweep_s, total_s, result in rows:
        print(f"{name:38} {points:8d} {sweep_s:9.3f} {total_s:9.3f}  {result}")
    print(f"(cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
