#!/usr/bin/python3
"""Rerun the f64 ERM points of an archive with f32 token storage, paired (same seed), and compare.

    tests/bench/f32_vs_f64_archive.py build/bin/slr-sweep ARCHIVE.h5 [--jobs 2] [--max-evals N] > log

A point's identity includes its precision, so a job run twice with `precision = "f32"` and "f64"
draws different seeds; this pairs them instead: every ok `erm` point with precision f64 is run again
through `slr-sweep point` with the archive's seed and parameters and `--precision f32` (the same
teacher, tokens before rounding, start and test set). Printed per point: test risk of both, their
difference against the test-set standard error, m_kk and q_kk, loss + gradient evaluations and
seconds (f64: the point's wall_s in the archive; f32: this run's wall time); then the median / rms /
max of |difference| / standard error and the ratio of the summed times. --max-evals N keeps the
points whose f64 training took at most N evaluations (a quick check of the pairing).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python"))
import slr_sweep  # noqa: E402  (the archive reader of this repository: decoding, schema 1 and 2)

RESULTS = ("test_risk", "test_risk_stderr", "order_parameters_m_kk", "order_parameters_q_kk", "grad_evals", "wall_s")


def points(archive):
    """The ok f64 erm rows: (seed, {parameter: value}, {result: value})."""
    columns = slr_sweep.load_columns(archive)
    names = slr_sweep.parameter_columns(archive)
    rows = []
    for i in range(len(columns["seed"])):
        # archives older than the precision option have no such column: their points are f64
        precision = columns["precision"][i] if "precision" in columns else "f64"
        if columns["method"][i] != "erm" or columns["status"][i] != "ok" or precision not in ("f64", ""):
            continue
        parameters = {}
        for name in names:
            value = columns[name][i]
            if value == "" or (isinstance(value, float) and math.isnan(value)):
                continue  # not a parameter of this point
            parameters[name] = value
        if "L" in parameters and parameters.get("L_pmf") == str(parameters["L"]):
            del parameters["L_pmf"]  # the same length written twice; the CLI takes one
        rows.append((int(columns["seed"][i]), parameters, {n: columns[n][i] for n in RESULTS}))
    return rows


def run_f32(binary, seed, parameters):
    command = [binary, "point", "--method", "erm", "--seed", str(seed), "--threads", "1", "--precision", "f32"]
    for name, value in parameters.items():
        if name != "precision":
            command += ["--" + name.replace("_", "-"), str(value)]
    start = time.perf_counter()
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("archive")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-evals", type=int, default=None)
    args = parser.parse_args()

    rows = points(args.archive)
    if args.max_evals is not None:
        rows = [r for r in rows if r[2]["grad_evals"] <= args.max_evals]
    rows.sort(key=lambda r: -r[2]["grad_evals"])  # longest first: the wall time is not its tail
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(lambda r: run_f32(args.binary, r[0], r[1]), rows))

    print(f"{'activation':<10} {'r_k':>5} {'r_v':>5} | {'test f64':>8} {'test f32':>8} {'|diff|':>7} {'stderr':>7} | "
          f"{'m_kk f64':>8} {'m_kk f32':>8} | {'q_kk f64':>8} {'q_kk f32':>8} | {'ev f64':>6} {'ev f32':>6} | "
          f"{'s f64':>6} {'s f32':>6}")
    ratios, time64, time32, same = [], 0.0, 0.0, 0
    order = sorted(range(len(rows)), key=lambda i: (rows[i][1].get("activation", ""), float(rows[i][1]["r_k"]),
                                                     float(rows[i][1]["r_v"])))
    for i in order:
        seed, p, a = rows[i]
        b, seconds = runs[i]
        assert int(b["seed"]) == seed
        diff = abs(b["test_risk"] - a["test_risk"])
        ratios.append(diff / a["test_risk_stderr"])
        same += diff < 5e-5
        time64 += a["wall_s"]
        time32 += seconds
        print(f"{p.get('activation', ''):<10} {p['r_k']:>5g} {p['r_v']:>5g} | {a['test_risk']:8.4f} {b['test_risk']:8.4f} "
              f"{diff:7.4f} {a['test_risk_stderr']:7.4f} | {a['order_parameters_m_kk']:8.4f} "
              f"{b['order_parameters']['m_kk']:8.4f} | {a['order_parameters_q_kk']:8.3f} {b['order_parameters']['q_kk']:8.3f} | "
              f"{int(a['grad_evals']):6d} {b['grad_evals']:6d} | {a['wall_s']:6.1f} {seconds:6.1f}")
    r = np.array(ratios)
    print(f"points {len(r)}; |test f32 - f64| / test-set stderr: median {np.median(r):.3f}, rms "
          f"{np.sqrt(np.mean(r ** 2)):.3f}, max {r.max():.3f}; test risk within 5e-5: {same}")
    print(f"summed seconds: f64 {time64:.0f}, f32 {time32:.0f}; f64 / f32 {time64 / time32:.2f}")


if __name__ == "__main__":
    main()
