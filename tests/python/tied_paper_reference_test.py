#!/usr/bin/python3
"""Script test: the committed paper-size tied-attention archives against independent numbers.

1. Factorised against direct (jobs/figures/data/tied_factorised_vs_direct.h5): the tool's theory test
   errors at lambda = 0.01 and with lambda tuned per model (argmin on the job's lambda grid) against
   tests/reference/tied_factorised_vs_direct.json (as written, 2-3 significant digits: within 1 % or
   half a unit of the last digit), the tuned lambda equal to the reference's.
2. The d = 200 spectra (jobs/figures/data/tied_fig1_spectra.h5, job jobs/tied_fig1_spectra.toml) against the singular-value quantiles of the authors' released
spectra (Adam, d = 200, 64 runs) and of their replica-symmetric theory, copied from
tests/reference/tied_spectra_quantiles.json (released / theory per alpha: quantiles at
p = 0.5, 0.7, 0.9, 0.99, the maximum, and the fraction of singular values above 0.05).

Units: the paper's singular values s = sqrt|lambda(S)| (slr_sweep.spectrum(..., root=True)).
  * theory: the tool's fixed-point quantiles (p = 0.5, 0.7, 0.9, 0.99) within 0.01 of the authors'
    theory, or, where the level p falls on a gap of the spectrum, the authors' value inside the gap
    (between the tool's quantiles at p -+ 0.01: at alpha = 40 the atom at 0 and the small interval
    next to it hold exactly 1 - k0 = 0.5, the mass of the target's zero eigenvalues, so every point
    of the gap [0.247, 0.334] is a median); and its rank fraction 1 - atom_at_0 within 0.005 of theirs;
  * ERM: the tool's pooled singular values (every seed at that alpha) give each quantile an
    order-statistic interval (ranks n p -+ 3 sqrt(n p (1 - p)), independent-sample width: the
    eigenvalues of one matrix repel, so the true spread is smaller); the released quantile must lie in
    it (widened by 0.0005, the rounding of the released table). The fraction above 0.05 within 3
    binomial standard errors of the released one.
Prints the spectra comparison as a markdown table (the one in jobs/figures/README.md, "Fig 1 at the
paper's size: spectra at d = 200").
usage: tied_paper_reference_test.py REPOSITORY"""
import json
import math
import os
import sys

import numpy as np

REPO = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(REPO, "src", "python"))
import slr_sweep  # noqa: E402

ARCHIVE = os.path.join(REPO, "jobs", "figures", "data", "tied_fig1_spectra.h5")
REFERENCE = os.path.join(REPO, "tests", "reference", "tied_spectra_quantiles.json")
FVD_ARCHIVE = os.path.join(REPO, "jobs", "figures", "data", "tied_factorised_vs_direct.h5")
FVD_REFERENCE = os.path.join(REPO, "tests", "reference", "tied_factorised_vs_direct.json")
LEVELS = (0.5, 0.7, 0.9, 0.99)
THRESHOLD = 0.05  # the released table's cut between "zero" and "nonzero" singular values
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def interval(sorted_values, p, sigmas=3.0):
    """The order-statistic interval of the p-quantile of n values: ranks n p -+ sigmas sqrt(n p (1 - p))."""
    n = sorted_values.size
    half = sigmas * math.sqrt(n * p * (1 - p))
    lo = int(max(0, math.floor(n * p - half) - 1))
    hi = int(min(n - 1, math.ceil(n * p + half)))
    return float(sorted_values[lo]), float(sorted_values[hi])


def digits_close(ours, theirs):
    """Equal to a value as written (2-3 significant digits): within 1 % or half a unit of its last digit."""
    text = repr(float(theirs))
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 3
    return abs(ours - theirs) <= max(0.01 * abs(theirs), 0.5 * 10.0 ** -decimals)


def factorised_vs_direct():
    with open(FVD_REFERENCE) as f:
        reference = json.load(f)
    cols = slr_sweep.load_columns(FVD_ARCHIVE)
    fp = (cols["method"] == "fixed-point") & (cols["status"] == "ok")
    alpha, lam, param, y = cols["alpha"], cols["lambda"], cols["parametrisation"], cols["test_clean"]

    def best(p, a, at=None):
        rows = np.flatnonzero(fp & (param == p) & np.isclose(alpha, a) &
                              (np.isclose(lam, at) if at is not None else True))
        check(len(rows) > 0, f"factorised-vs-direct: no theory row {p} alpha {a} lambda {at}")
        i = rows[np.argmin(y[rows])] if len(rows) else None
        return (float(y[i]), float(lam[i])) if i is not None else (float("nan"), float("nan"))

    equal = reference["equal_lambda"]
    for p in ("factorised", "direct"):
        for a, theirs in zip(equal["alpha"], equal[p]):
            ours, _ = best(p, a, equal["lambda"])
            check(digits_close(ours, theirs), f"{p} alpha {a} lambda {equal['lambda']}: {ours:.5f} vs {theirs}")
        tuned = reference["tuned_lambda"]
        for a, theirs, theirs_lam in zip(tuned["alpha"], tuned[p]["test_clean"], tuned[p]["lambda"]):
            ours, ours_lam = best(p, a)
            check(digits_close(ours, theirs) and math.isclose(ours_lam, theirs_lam),
                  f"{p} alpha {a} tuned: {ours:.5f} at lambda {ours_lam:g} vs {theirs} at {theirs_lam:g}")


def main():
    factorised_vs_direct()
    with open(REFERENCE) as f:
        reference = json.load(f)["alpha"]
    cols = slr_sweep.load_columns(ARCHIVE)
    method, alpha, ids, status = cols["method"], cols["alpha"], cols["point_id"], cols["status"]
    print("| α | source | p = 0.5 | 0.7 | 0.9 | 0.99 | max | fraction s > 0.05 |")
    print("|---|---|---|---|---|---|---|---|")
    for key, ref in reference.items():
        a = float(key)
        here = np.isclose(alpha, a) & (status == "ok")
        fp = np.flatnonzero(here & (method == "fixed-point"))
        erm = np.flatnonzero(here & (method == "erm"))
        check(len(fp) == 1 and len(erm) >= 1, f"alpha {a}: one fixed-point row and ERM rows (got {len(fp)}, {len(erm)})")
        if len(fp) != 1 or not len(erm):
            continue
        theory = slr_sweep.spectrum(ARCHIVE, int(ids[fp[0]]), root=True)
        levels = np.asarray(theory["levels"])
        t_q = [float(theory["quantiles"][np.argmin(np.abs(levels - p))]) for p in LEVELS]
        t_rank = 1.0 - theory["atom_at_0"]
        pooled = np.sort(np.concatenate([slr_sweep.spectrum(ARCHIVE, int(ids[i]), root=True)["eigenvalues"]
                                         for i in erm]))
        e_q = [float(np.quantile(pooled, p)) for p in LEVELS]
        e_frac = float(np.mean(pooled > THRESHOLD))
        for p, ours, theirs in zip(LEVELS, t_q, ref["theory"][:4]):
            below = float(theory["quantiles"][np.argmin(np.abs(levels - (p - 0.01)))])
            above = float(theory["quantiles"][np.argmin(np.abs(levels - min(p + 0.01, 1.0)))])
            check(abs(ours - theirs) <= 0.01 or below - 0.01 <= theirs <= above + 0.01,
                  f"alpha {a}: theory quantile p={p}: {ours:.4f} vs {theirs} (levels p -+ 0.01: {below:.4f}, {above:.4f})")
        check(abs(t_rank - ref["theory"][5]) <= 0.005, f"alpha {a}: theory rank {t_rank:.4f} vs {ref['theory'][5]}")
        for p, theirs in zip(LEVELS, ref["released"][:4]):
            lo, hi = interval(pooled, p)
            check(lo - 5e-4 <= theirs <= hi + 5e-4,
                  f"alpha {a}: released quantile p={p} = {theirs} outside the ERM interval [{lo:.4f}, {hi:.4f}]")
        se = math.sqrt(max(e_frac * (1 - e_frac), 1e-4) / pooled.size)
        check(abs(e_frac - ref["released"][5]) <= 3 * se,
              f"alpha {a}: fraction above {THRESHOLD}: {e_frac:.4f} vs released {ref['released'][5]} (3 s.e. = {3 * se:.4f})")
        runs = f"{len(erm)} runs × d = {pooled.size // len(erm)}"
        print(f"| {a:g} | tool ERM ({runs}) | " + " | ".join(f"{v:.3f}" for v in e_q) +
              f" | {pooled[-1]:.3f} | {e_frac:.3f} |")
        print(f"| | released (Adam, 64 runs) | " + " | ".join(f"{v:.3f}" for v in ref["released"][:5]) +
              f" | {ref['released'][5]:.3f} |")
        print(f"| | tool theory | " + " | ".join(f"{v:.3f}" for v in t_q) +
              f" | {float(theory['quantiles'][-1]):.3f} | rank {t_rank:.3f} |")
        print(f"| | authors' theory | " + " | ".join(f"{v:.3f}" for v in ref["theory"][:5]) +
              f" | rank {ref['theory'][5]:.3f} |")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("tied attention at the paper's size against the reference numbers: all checks passed")


if __name__ == "__main__":
    main()
