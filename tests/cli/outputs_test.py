#!/usr/bin/env python3
"""Every output of every listed method is declared (`slr-sweep outputs`), and every declaration is emitted.

For each listed method, `slr-sweep point` runs at cheap settings (and, where a declaration names a
condition the runs can meet cheaply, once more under it). Each JSON object is flattened as the
archive's readers flatten the extras (nested objects joined with '.', arrays whole). Then:
  * every key is a parameter of the point, a bookkeeping key, or a declared output of its method;
  * every output declared without a condition is emitted by at least one run of its method.

usage: outputs_test.py   (env SLR_SWEEP: the binary, default slr-sweep on PATH)
"""
import json
import os
import subprocess
import sys
import time

BINARY = os.environ.get("SLR_SWEEP", "slr-sweep")

# Keys json_output.cpp (src/cli/json_output.cpp) writes for every point besides its parameters and
# outputs. "L_pmf" is the length law L when it is not a point mass.
BOOKKEEPING = {"model", "method", "seed", "status", "message", "L_pmf"}

SLR = ("--task", "spiked", "--nu", "1", "--L", "3", "--activation", "softmax")
TIED = ("--model", "tied-attention")
# (model, method) -> the runs, each the arguments after `point`. Each run takes well under 10 s.
RUNS = {
    ("slr", "bayes"): [SLR + ("--method", "bayes", "--samples", "1000")],
    ("slr", "population"): [
        SLR + ("--method", "population", "--samples", "2000"),
        SLR + ("--method", "population", "--start", "swapped", "--samples", "2000"),
    ],
    ("slr", "fixed-point"): [
        SLR + ("--method", "fixed-point", "--alpha", "2", "--r-k", "1", "--r-v", "1", "--samples", "200",
               "--test-samples", "1000", "--repeats", "2", "--max-iter", "30"),
    ],
    ("slr", "state-evolution"): [
        SLR + ("--method", "state-evolution", "--alpha", "1", "--samples", "500", "--delta", "0"),
    ],
    ("slr", "bayes-jump"): [
        SLR + ("--method", "bayes-jump", "--samples", "500", "--scan", "3", "--jump-tol", "0.5",
               "--jump-batches", "2"),
    ],
    ("slr", "erm"): [
        SLR + ("--method", "erm", "--alpha", "2", "--r-k", "1", "--r-v", "1", "--D", "40", "--test-samples", "200"),
        SLR + ("--method", "erm", "--alpha", "2", "--r-k", "1", "--r-v", "1", "--D", "40", "--test-samples", "200",
               "--optimizer", "gradient-flow", "--horizon", "1", "--trajectory", "1"),
    ],
    ("tied-attention", "fixed-point"): [
        TIED + ("--method", "fixed-point", "--alpha", "1", "--qmc-points", "8"),
    ],
    ("tied-attention", "erm"): [
        TIED + ("--method", "erm", "--d", "12", "--alpha", "0.5", "--test-samples", "2000"),
    ],
    ("tied-attention", "recovery-threshold"): [
        TIED + ("--method", "recovery-threshold"),
        TIED + ("--method", "recovery-threshold", "--interpolation", "rs", "--lambda-max", "0.01",
                "--lambda-min", "0.001", "--alpha-tol", "0.05", "--qmc-points", "8"),
    ],
}


def flatten(value, prefix=""):
    """{"a": {"b": 1}, "c": [1, 2]} -> {"a.b": 1, "c": [1, 2]}: objects joined with '.', arrays whole."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: value}


def slr(*args):
    result = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"slr-sweep {' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def main():
    failures = []
    declared = json.loads(slr("outputs", "--format", "json"))
    listed = {(model, name) for model, methods in declared.items() for name in methods}
    if listed != set(RUNS):
        failures.append(f"the runs cover {sorted(RUNS)}, the listed methods are {sorted(listed)}: "
                        "add cheap runs of a new method here")
    for (model, name), runs in sorted(RUNS.items()):
        entry = declared.get(model, {}).get(name)
        if entry is None:
            continue
        outputs = {o["name"]: o for o in entry["outputs"]}
        if len(outputs) != len(entry["outputs"]):
            failures.append(f"{model} {name}: an output is declared twice")
        parameters = set(entry["parameters"])
        emitted = set()
        for args in runs:
            started = time.monotonic()
            out = json.loads(slr("point", *args, "--seed", "1"))
            seconds = time.monotonic() - started
            if seconds > 10:
                failures.append(f"{model} {name}: `point {' '.join(args)}` took {seconds:.1f} s (keep runs cheap)")
            if out["status"] == "failed":
                failures.append(f"{model} {name}: `point {' '.join(args)}` failed: {out.get('message')}")
            for key, value in flatten(out).items():
                top = key.split(".")[0]
                if top in parameters or top in BOOKKEEPING:
                    # An output may share a parameter's name (erm: D, init; bayes-jump: scan): the
                    # JSON then holds one key for both, and its presence is all that shows.
                    if key in outputs:
                        emitted.add(key)
                    continue
                # json_output.cpp writes the seven order parameters of every SLR point, null where
                # the method has none.
                if model == "slr" and key.startswith("order_parameters.") and value is None \
                        and key not in outputs:
                    continue
                emitted.add(key)
                if key not in outputs:
                    failures.append(f"{model} {name}: emits '{key}', which is not declared in its outputs "
                                    f"(src/methods/*.cpp, method_descriptor::outputs)")
        for key, output in outputs.items():
            if not output["condition"] and key not in emitted:
                failures.append(f"{model} {name}: declares '{key}' (no condition) but no run emitted it: "
                                "a stale declaration, or it needs a condition")
            if not output["meaning"]:
                failures.append(f"{model} {name}: '{key}' has no meaning")
        print(f"{model} {name}: {len(outputs)} declared, {len(emitted)} emitted by {len(runs)} run(s)")
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print("ok: every emitted key is declared and every unconditional declaration is emitted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
