"""Shared by the sweep script tests: running slr-sweep (env SLR_SWEEP; SLR_MPIEXEC and
SLR_MPIEXEC_PREFLAGS for several ranks), reporting checks, and comparing archives the way `merge`
does (the run's own measurements aside: grid::measurement_columns, extra_json keys ending in
_seconds, and the columns a run sets for itself)."""
import hashlib
import json
import os
import shlex
import subprocess
import sys

SLR = os.environ["SLR_SWEEP"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# Columns that differ between two runs of the same points.
MEASUREMENTS = {"wall_s", "grad_time_s", "peak_rss_mb", "run_index", "completed_unix", "text_crc32c"}


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)
    print("ok:", message)


def launcher(ranks):
    mpiexec = os.environ.get("SLR_MPIEXEC")
    if ranks == 1 or not mpiexec:
        return []
    return [mpiexec, *shlex.split(os.environ.get("SLR_MPIEXEC_PREFLAGS", "")), "-n", str(ranks)]


def run(*args, ranks=1, expect=0):
    """slr-sweep ARGS on `ranks` ranks; fails the test unless it exits with `expect`."""
    done = subprocess.run([*launcher(ranks), SLR, *args], capture_output=True, text=True, env=ENV)
    if done.returncode != expect:
        fail(f"slr-sweep {' '.join(args)}: exit {done.returncode}, expected {expect}\n{done.stdout}\n{done.stderr}")
    return done


def without_measurements(text):
    """extra_json without the run's own measurements (keys ending in _seconds), as merge compares it."""
    if not text:
        return text

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not k.endswith("_seconds")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(json.loads(text)), sort_keys=True)


def digest(path):
    """SHA-256 of an archive's .h5 and journal (those that exist)."""
    out = {}
    for p in (path, path + ".journal"):
        if os.path.exists(p):
            with open(p, "rb") as f:
                out[p] = hashlib.sha256(f.read()).hexdigest()
    return out
