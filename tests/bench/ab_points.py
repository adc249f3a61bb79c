#!/usr/bin/python3
"""Two (or more) builds of slr-sweep on the same points, interleaved: CPU time and results.

    tests/bench/ab_points.py [--rounds N] BINARY... > log

For every point below and every round, each binary evaluates the point with `slr-sweep point`
(one thread) in turn, so drifts of the machine's speed hit all binaries alike. Printed per run: the
user CPU seconds of the process, for fixed points also the channel time per sample-iteration (the
prox problems alone, without the draw and the test risk), and the headline result, so that a
speed-up that changed a number shows it. The medians over the rounds close the report; the
machine's CPU model and flags open it.
"""
import argparse
import json
import resource
import subprocess
import sys
import time

# (label, arguments of `slr-sweep point`)
POINTS = [
    ("fixed point softmax alpha=4 r=0.1 (3 solves, S=8000)",
     ["--method", "fixed-point", "--alpha", "4", "--r-k", "0.1", "--r-v", "0.1", "--samples", "8000",
      "--init", "informed", "--tol", "1e-5"]),
    ("fixed point linear alpha=4 r=0.1 (3 solves, S=8000)",
     ["--method", "fixed-point", "--activation", "linear", "--alpha", "4", "--r-k", "0.1", "--r-v", "0.1",
      "--samples", "8000", "--init", "informed", "--tol", "1e-5"]),
] + [
    (f"swapped descent {a} L=10 nu=1 S=1e5",
     ["--method", "population", "--start", "swapped", "--activation", a, "--L", "10", "--nu", "1",
      "--samples", "100000"])
    for a in ("softmax", "linear", "erf", "softplus-kernel")
] + [
    (f"population minimum {a} L=3 nu=1 S=2e5",
     ["--method", "population", "--activation", a, "--L", "3", "--nu", "1", "--samples", "200000"])
    for a in ("softmax", "linear", "erf", "softplus-kernel")
]


def cpu_info():
    model, flags = "?", "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and flags == "?":
                flags = line.split(":", 1)[1].strip()
    return model, flags


def run(binary, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    out = subprocess.run([binary, "point", "--threads", "1", *args], capture_output=True, text=True, check=True).stdout
    user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    d = json.loads(out)
    channel = None
    if "repeat_solves" in d:
        seconds = sum(r["channel_seconds"] for r in d["repeat_solves"])
        samples = sum(r["channel_samples"] for r in d["repeat_solves"])
        channel = 1e6 * seconds / samples
    return user, channel, d.get("test_risk", d.get("risk")), d.get("status"), d.get("iterations")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="run only the points whose label contains this text")
    parser.add_argument("binaries", nargs="+")
    opts = parser.parse_args()
    model, flags = cpu_info()
    print(time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    print("cpu_model:", model)
    print("cpu_flags:", flags)
    for i, b in enumerate(opts.binaries):
        print(f"binary {i}: {b}")
    summary = []
    for label, args in POINTS:
        if opts.only not in label:
            continue
        users = {b: [] for b in opts.binaries}
        channels = {b: [] for b in opts.binaries}
        for _ in range(opts.rounds):
            for i, b in enumerate(opts.binaries):
                user, channel, risk, status, iterations = run(b, args)
                users[b].append(user)
                if channel is not None:
                    channels[b].append(channel)
                extra = f" channel {channel:.3f} us/sample-iteration iterations {iterations}" if channel else ""
                print(f"{label} | binary {i} | user {user:.2f} s{extra} | risk {risk!r} status {status}", flush=True)
        for i, b in enumerate(opts.binaries):
            u = sorted(users[b])[len(users[b]) // 2]
            c = sorted(channels[b])[len(channels[b]) // 2] if channels[b] else None
            summary.append((label, i, u, c))
    print("\nmedians over rounds")
    for label, i, u, c in summary:
        extra = f", channel {c:.3f} us/sample-iteration" if c else ""
        print(f"  {label} | binary {i} | user {u:.2f} s{extra}")


if __name__ == "__main__":
    sys.exit(main())
