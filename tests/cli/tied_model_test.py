#!/usr/bin/env python3
"""The tied-attention model through the whole pipeline: a job file with `model = "tied-attention"`
(its own declared parameters), `slr-sweep run`, the archive's typed columns and `query`, and the
fixed points against tests/reference/tied_attention.json (trust stated there: q, m, V to 3e-3,
test and training errors to 2e-3 relative). Also `slr-sweep point --model tied-attention` and its
refusals of bad values (exit 2 naming the parameter).

Usage: tied_model_test.py <source dir>   (env SLR_SWEEP)
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SLR = os.environ["SLR_SWEEP"]
source = sys.argv[1]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(*args, cwd, expect=0):
    result = subprocess.run([SLR, *args], cwd=cwd, capture_output=True, text=True)
    check(result.returncode == expect, f"slr-sweep {' '.join(args)}: exit {result.returncode}, expected {expect}: "
                                       f"{result.stderr.strip()}")
    return result


with open(os.path.join(source, "tests", "reference", "tied_attention.json")) as f:
    reference = json.load(f)

job = """name = "tied-check"
seed = 3
model = "tied-attention"
[grid]
alpha = [0.05, 0.5]
parametrisation = ["psd-nuclear", "direct"]
k0 = 0.5
lambda = 0.01
delta = 0.5
T = 2
[[method]]
name = "fixed-point"

[[method]]
name = "recovery-threshold"
grid = { parametrisation = ["psd-nuclear", "direct"] }

[[method]]
name = "erm"
grid = { alpha = 0.5, parametrisation = "factorised", d = 60, repeats = 4 }
"""
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "tied.toml"), "w") as f:
        f.write(job)
    run("run", "tied.toml", "-o", "tied.h5", cwd=tmp)
    with h5py.File(os.path.join(tmp, "tied.h5"), "r") as f:
        points = f["/points"][:]
        declared = f["/points"].attrs["parameter_columns"]
    declared = (declared.decode() if isinstance(declared, bytes) else declared).split(",")
    check(len(points) == 4 + 2 + 4, f"10 points expected, got {len(points)}")
    method = np.array([m.decode() for m in points["method"]])
    erm_rows = points[method == "erm"]
    threshold_rows = points[method == "recovery-threshold"]
    points = points[method == "fixed-point"]
    check(np.all(np.isnan(points["d"])) and np.all(erm_rows["d"] == 60),
          "d is a parameter of the ERM rows only (NaN for the d -> infinity theory)")
    check({"d", "T", "alpha", "k0", "k", "lambda", "delta", "beta", "beta0", "parametrisation"} <= set(declared)
          and "task" not in declared and "nu" not in declared,
          f"the model's own parameters are the columns (no SLR ones): {declared}")
    check(points.dtype["T"] == np.int64 and points.dtype["alpha"] == np.float64, "typed parameter columns")
    tolerance = {"q": 3e-3, "m": 3e-3, "V": 3e-3, "test_clean": 2e-3, "test_noisy": 2e-3, "train_loss": 2e-3,
                 "rank_fraction": 3e-3}
    compared = 0
    for row in points:
        kind = row["parametrisation"].decode()
        key = ("psd_nuclear" if kind == "psd-nuclear" else "ridge") + f"_alpha{row['alpha']:g}"
        ref = reference["theory"][key]
        check(row["status"] == b"ok", f"{key}: status {row['status']}")
        for name, tol in tolerance.items():
            if name == "rank_fraction" and kind == "direct":
                continue  # no rank for the direct (ridge) estimator
            got, want = float(row[name]), float(ref[name])
            compared += 1
            check(abs(got - want) <= tol * abs(want), f"{key} {name}: {got} vs reference {want} (tolerance {tol})")
    check(compared == 4 * 7 - 2, f"compared {compared} numbers")
    # The conic threshold, a closed form: equal to the reference to rounding.
    conic = reference["thresholds"]["conic_T2_k0_0p5"]
    for row in threshold_rows:
        kind = row["parametrisation"].decode()
        want = conic["alpha_rec_psd" if kind == "psd-nuclear" else "alpha_rec_direct"]
        check(abs(row["alpha_rec"] - want) <= 1e-9 * want, f"alpha_rec {kind}: {row['alpha_rec']} vs {want}")
    # ERM at d = 60, alpha = 0.5 (factorised, k = 1): the mean over 4 seeds within 3 standard errors of
    # the reference's 8-seed mean (their spread combined).
    ref = reference["erm"]["fact1_alpha0.5_d60"]
    check(len(erm_rows) == 4 and all(r["status"] == b"ok" for r in erm_rows), "4 converged ERM seeds")
    check(np.all(erm_rows["kkt_residual"] < 1e-4), f"factorised minima certified (KKT {erm_rows['kkt_residual']})")
    for name in ("test_clean", "test_noisy", "train_loss", "objective_per_d2"):
        mean = float(np.mean(erm_rows[name]))
        band = 3 * np.hypot(ref[name]["erm_sd"] / np.sqrt(len(erm_rows)), ref[name]["erm_sem"])
        check(abs(mean - ref[name]["erm_mean"]) <= band,
              f"ERM {name}: {mean} vs reference {ref[name]['erm_mean']} +- {band}")
    out = run("query", "tied.h5", "--where", "parametrisation=direct,method=fixed-point",
              "--columns", "alpha,q,m,test_clean", "--format", "csv", cwd=tmp).stdout.splitlines()
    check(out[0] == "alpha,q,m,test_clean" and len(out) == 3, f"query of the tied archive: {out}")

    point = run("point", "--model", "tied-attention", "--method", "fixed-point", "--parametrisation", "factorised",
                "--alpha", "4", "--k0", "0.5", "--k", "1", "--lambda", "0.01", "--delta", "0.5", "--T", "2",
                "--beta", "1", "--beta0", "1", "--seed", "1", cwd=tmp)
    values = json.loads(point.stdout)
    for key in ("q", "m", "V", "test_clean", "test_noisy", "train_loss", "objective_per_d2", "rank_fraction",
                "atom_at_0", "eig_quantiles", "status"):
        check(key in values, f"point: key {key} missing")
    check(len(values.get("eig_quantiles", [])) == 101, "point: 101 eigenvalue quantiles")
    for flag, value, name in (("--T", "1", "--T"), ("--k0", "0", "--k0"), ("--lambda", "-1", "--lambda"),
                              ("--parametrisation", "lowrank", "--parametrisation")):
        bad = run("point", "--model", "tied-attention", "--method", "fixed-point", "--alpha", "1", flag, value,
                  cwd=tmp, expect=2)
        check(name in bad.stderr, f"point {flag} {value}: the message names {name}: {bad.stderr.strip()}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print(f"tied-attention model: job -> run -> archive -> query; {compared} fixed-point numbers within the reference's "
      "trust; point JSON and refusals")
