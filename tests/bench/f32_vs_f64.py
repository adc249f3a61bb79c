#!/usr/bin/python3
"""ERM with f32 token storage against f64, paired: the same points and seeds in both precisions.

    tests/bench/f32_vs_f64.py [--binary build/bin/slr-sweep] [--D 1000] [--seeds 5] [--jobs 2] > log

The erm method's `precision = "f32"` stores the tokens in single precision (arithmetic stays in
double). A seed fixes the teacher, the tokens before rounding, the start and the test set, so the
f32 run of a seed sees the same data rounded to 24 bits. Run here on the settings of Fig 4
(gradient flow from the informed start, α = 4, spiked ν = 1, L = 3, softmax and linear,
r_k = r_v ∈ {0.1, 1}) at a given D: per setting, the largest |f32 − f64| over the seeds of each
order parameter and of the test risk, next to the seed-to-seed standard deviation of the f64 runs,
and the loss + gradient evaluations of both.
"""
import argparse
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

KEYS = ["m_kk", "m_kv", "m_vk", "m_vv", "q_kk", "q_kv", "q_vv"]


def run_point(binary, activation, r, D, seed, precision):
    command = [binary, "point", "--method", "erm", "--task", "spiked", "--nu", "1", "--L", "3", "--delta", "0",
               "--activation", activation, "--alpha", "4", "--r-k", r, "--r-v", r, "--D", str(D),
               "--optimizer", "gradient-flow", "--init", "informed", "--init-noise", "0.1", "--horizon", "100",
               "--precision", precision, "--seed", str(seed), "--threads", "1"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bin/slr-sweep")
    parser.add_argument("--D", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    settings = [(a, r) for a in ("softmax", "linear") for r in ("0.1", "1")]
    tasks = [(a, r, s, p) for a, r in settings for s in range(1, args.seeds + 1) for p in ("f64", "f32")]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(tasks, pool.map(lambda t: run_point(args.binary, t[0], t[1], args.D, t[2], t[3]), tasks)))
    print(f"f32 against f64 token storage, gradient flow, alpha = 4, D = {args.D}, seeds 1..{args.seeds}")
    worst = 0.0
    for a, r in settings:
        print(f"\n{a}, r_k = r_v = {r}")
        print(f"  {'quantity':<10} {'max |f32-f64|':>14} {'seed s.d.':>10} {'ratio':>9}")
        for key in KEYS + ["test_risk"]:
            get = (lambda j: j["test_risk"]) if key == "test_risk" else (lambda j, k=key: j["order_parameters"][k])
            diffs = [abs(get(results[(a, r, s, "f32")]) - get(results[(a, r, s, "f64")]))
                     for s in range(1, args.seeds + 1)]
            spread = statistics.stdev(get(results[(a, r, s, "f64")]) for s in range(1, args.seeds + 1))
            ratio = max(diffs) / spread
            worst = max(worst, ratio)
            print(f"  {key:<10} {max(diffs):>14.2e} {spread:>10.2e} {ratio:>9.1e}")
        evals = [(results[(a, r, s, "f64")]["grad_evals"], results[(a, r, s, "f32")]["grad_evals"])
                 for s in range(1, args.seeds + 1)]
        print("  evaluations f64/f32 per seed: " + ", ".join(f"{x}/{y}" for x, y in evals))
    print(f"\nlargest |f32 - f64| over all settings and quantities: {worst:.1e} seed standard deviations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
