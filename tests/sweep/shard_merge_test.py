"""Script test: a job run whole and as three shards (`run --shard i/3`, on 1 and on 2 ranks), the
shards merged (`merge`): the merged archive holds the same points, ids, seeds and results as the
whole run (bit for bit; the run's own measurements - wall times, memory, *_seconds - aside). No
continuation chain is split between shards, and the shards do not overlap. `merge` refuses, with
exit 2 and no output: an archive of another job, two copies of a point that differ, a damaged
input, an existing output. SIGKILL at random instants of a merge leaves every input byte for byte
unchanged and the output absent or an archive that `resume` completes to the merged archive.
`plan --shard` prints the shard's points and the shards' balance.
usage: shard_merge_test.py SOURCE_DIR   (env SLR_SWEEP: the binary; SLR_MPIEXEC and
SLR_MPIEXEC_PREFLAGS for the 2-rank runs; needs numpy and h5py)"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

source_dir = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(source_dir, "src", "python"))
import slr_sweep  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_cli import ENV, MEASUREMENTS, SLR, check, digest, run, without_measurements  # noqa: E402
# Population minima, Bayes risks, a replica fixed point chained along alpha (two chains of three
# points: a shard must take each whole) and synthetic points.
JOB = """name = "shards"
seed = 77
[grid]
task = ["spiked", "max"]
nu = [1.0, 4.0]
L = 3
activation = ["softmax", "linear"]
[[method]]
name = "population"
samples = 3000
[[method]]
name = "bayes"
samples = 5000
grid = { activation = "softmax" }
[[method]]
name = "fixed-point"
samples = 1500
continuation = "alpha"
grid = { task = "spiked", nu = 1.0, activation = "softmax", alpha = [1, 2, 4], r_k = [0.1, 1.0], r_v = 0.1 }
[[method]]
name = "synthetic"
grid = { task = "spiked", nu = {linspace = [0.1, 9, 12]}, alpha = 1, r_k = 0.1, r_v = 0.1 }
"""
# Many cheap points, so that a merge lasts long enough to be killed inside.
BIG_JOB = """name = "big"
seed = 5
[grid]
task = ["spiked", "max"]
nu = {linspace = [0.1, 9, 1500]}
alpha = 1
r_k = 0.1
r_v = 0.1
[[method]]
name = "synthetic"
"""


def same_archive(a, b, what):
    """Every column of the two archives' points equal, row by row in point-id order (floats bit for bit)."""
    x = slr_sweep.load(a).sort_values("point_id").reset_index(drop=True)
    y = slr_sweep.load(b).sort_values("point_id").reset_index(drop=True)
    check(list(x["point_id"]) == list(y["point_id"]), f"{what}: the same {len(x)} point ids")
    check(set(x.columns) == set(y.columns), f"{what}: the same columns")
    differing = []
    for column in x.columns:
        if column in MEASUREMENTS:
            continue
        u, v = x[column].to_numpy(), y[column].to_numpy()
        if column == "extra_json":
            same = [without_measurements(p) for p in u] == [without_measurements(q) for q in v]
        elif u.dtype.kind == "f":
            same = np.array_equal(u.view(np.uint64), v.view(np.uint64)) or np.array_equal(u, v, equal_nan=True)
        else:
            same = bool((u == v).all())
        if not same:
            differing.append(column)
    check(not differing, f"{what}: every result, seed, status and parameter identical (differing: {differing})")


def chains(job):
    """The continuation chains of a job as lists of point ids (from `plan --list`)."""
    out = []
    for line in run("plan", job, "--list").stdout.splitlines():
        m = re.match(r"^([0-9a-f]{16}) .* chain-(start|next) ", line)
        if m and m.group(2) == "start":
            out.append([m.group(1)])
        elif m:
            out[-1].append(m.group(1))
    return out


with tempfile.TemporaryDirectory() as tmp:
    job = os.path.join(tmp, "shards.toml")
    with open(job, "w") as f:
        f.write(JOB)
    whole = os.path.join(tmp, "whole.h5")
    run("run", job, "-o", whole, ranks=2)
    whole_ids = set(slr_sweep.load(whole)["point_id"])
    job_chains = chains(job)
    check(len(job_chains) == 2 and all(len(c) == 3 for c in job_chains), "the job has two chains of three points")

    # plan --shard: the shard's table and the balance line.
    plan = run("plan", job, "--shard", "1/3").stdout
    check(re.search(r"shard 1/3 of the job; the 3 shards: largest .*, mean .*\(largest/mean [0-9.]+\)", plan) is not None,
          "plan --shard prints the shards' balance")
    for bad in ("3/3", "1/0", "-1/3", "a/b", "1"):
        done = run("plan", job, "--shard", bad, expect=2)
        check("--shard" in done.stderr, f"plan --shard {bad}: exit 2 naming --shard")

    for ranks in (1, 2):
        parts = [os.path.join(tmp, f"r{ranks}_part{i}.h5") for i in range(3)]
        ids = []
        for i, part in enumerate(parts):
            run("run", job, "--shard", f"{i}/3", "-o", part, ranks=ranks)
            status = json.loads(run("status", part, "--json").stdout)
            check(status["shard"] == f"{i}/3" and status["points_done"] == status["points_total"],
                  f"{ranks} rank(s): shard {i}/3 complete, status names the shard")
            ids.append(set(slr_sweep.load(part)["point_id"]))
        check(sum(len(s) for s in ids) == len(whole_ids) and set().union(*ids) == whole_ids,
              f"{ranks} rank(s): the shards partition the job's {len(whole_ids)} points")
        for chain in job_chains:
            holders = [i for i, s in enumerate(ids) if any(int(p, 16) in s for p in chain)]
            check(len(holders) == 1 and all(int(p, 16) in ids[holders[0]] for p in chain),
                  f"{ranks} rank(s): chain {chain[0]} is whole in shard {holders}")
        merged = os.path.join(tmp, f"r{ranks}_merged.h5")
        before = {p: digest(p) for p in parts}
        done = run("merge", *parts, "-o", merged)
        check(f"{len(whole_ids)} of {len(whole_ids)} points" in done.stderr, f"{ranks} rank(s): merge reports every point")
        check(all(digest(p) == before[p] for p in parts), f"{ranks} rank(s): merge changed no input byte")
        same_archive(whole, merged, f"{ranks} rank(s): the merged shards = the unsharded run")
        status = json.loads(run("status", merged, "--json").stdout)
        check(status["shard"] is None and status["fingerprint"] == json.loads(run("status", whole, "--json").stdout)["fingerprint"],
              f"{ranks} rank(s): the merged archive holds the whole job")

    # Duplicates that agree are kept once; a partial input leaves points for resume.
    parts = [os.path.join(tmp, f"r1_part{i}.h5") for i in range(3)]
    dup = os.path.join(tmp, "dup.h5")
    done = run("merge", whole, parts[0], parts[2], "-o", dup)
    check("duplicate copies agreed" in done.stderr, "merge of the whole run and two shards: duplicates agree")
    same_archive(whole, dup, "whole + shards merged")
    partial = os.path.join(tmp, "partial.h5")
    done = run("merge", parts[1], "-o", partial)
    check("`slr-sweep resume" in done.stderr, "merge of one shard names the missing points and resume")
    run("resume", partial)
    same_archive(whole, partial, "one shard merged, then resumed")

    # Refusals: exit 2, the reason named, no output created.
    def refused(args, output, pattern, what):
        """exit 2 naming the reason; the output as it was (absent, or an existing archive unchanged)."""
        was = digest(output)
        done = run("merge", *args, "-o", output, expect=2)
        check(re.search(pattern, done.stderr) is not None and digest(output) == was,
              f"{what}: exit 2, output {'unchanged' if was else 'not created'} ({done.stderr.strip()[:200]})")

    other_job = os.path.join(tmp, "other.toml")
    with open(other_job, "w") as f:
        f.write(JOB.replace('seed = 77', 'seed = 78'))
    other = os.path.join(tmp, "other.h5")
    run("run", other_job, "--shard", "0/2", "-o", other)
    refused([parts[0], other], os.path.join(tmp, "x1.h5"), r"not the job of", "another job's archive")
    refused([parts[0]], dup, r"exists", "an existing output")
    # A conflicting copy: the same synthetic point recorded as a timeout in one archive, ok in another.
    slow_job = os.path.join(tmp, "slow.toml")
    with open(slow_job, "w") as f:
        f.write('name = "slow"\nseed = 3\n[grid]\nnu = [1.0, 2.0]\nalpha = 1\nr_k = 0.1\nr_v = 0.1\n[[method]]\nname = "synthetic"\ncost-us = 300000\n')
    fast, timed_out = os.path.join(tmp, "fast.h5"), os.path.join(tmp, "timeout.h5")
    run("run", slow_job, "-o", fast)
    run("run", slow_job, "-o", timed_out, "--point-timeout", "0.05")
    refused([fast, timed_out], os.path.join(tmp, "x2.h5"), r"point [0-9a-f]{16} differs between .*: status ok vs timeout",
            "two copies of a point that differ")
    # A damaged input: one byte flipped inside a record of its journal.
    damaged = os.path.join(tmp, "damaged.h5")
    run("merge", parts[2], "-o", damaged)
    with open(damaged + ".journal", "r+b") as f:
        size = f.seek(0, 2)
        f.seek(size // 2)
        byte = f.read(1)
        f.seek(size // 2)
        f.write(bytes([byte[0] ^ 0x40]))
    refused([parts[0], damaged], os.path.join(tmp, "x3.h5"), r"journal is damaged", "a damaged input")

    # SIGKILL during merge: inputs unchanged, the output absent or resumable to the full merge.
    big_job = os.path.join(tmp, "big.toml")
    with open(big_job, "w") as f:
        f.write(BIG_JOB)
    big_parts = [os.path.join(tmp, f"big{i}.h5") for i in range(2)]
    for i, part in enumerate(big_parts):
        run("run", big_job, "--shard", f"{i}/2", "-o", part, ranks=2)
    reference = os.path.join(tmp, "big_merged.h5")
    started = time.time()
    run("merge", *big_parts, "-o", reference)
    duration = time.time() - started
    before = {p: digest(p) for p in big_parts}
    rng = random.Random(11)
    outcomes = {"absent": 0, "resumed": 0, "complete": 0}
    # Reading and checking the inputs takes most of a merge; half of the kills come at a random
    # instant, half within 50 ms after the output's journal appears (while it is created,
    # journaled and snapshotted).
    for k in range(12):
        out = os.path.join(tmp, f"killed{k}.h5")
        proc = subprocess.Popen([SLR, "merge", *big_parts, "-o", out], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=ENV)
        if k % 2 == 0:
            time.sleep(rng.uniform(0.0, duration))
        else:
            while proc.poll() is None and not any(os.path.exists(out + ".journal" + t) for t in ("", ".tmp")):
                time.sleep(0.0005)
            time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        check(all(digest(p) == before[p] for p in big_parts), f"kill {k}: every input byte unchanged")
        if not os.path.exists(out) and not os.path.exists(out + ".journal"):
            outcomes["absent"] += 1
            continue
        if proc.returncode == 0:
            outcomes["complete"] += 1
        else:
            outcomes["resumed"] += 1
            run("resume", out)
        same_archive(reference, out, f"kill {k}: the output completed")
    print("kills during merge (merge alone took %.2f s):" % duration, outcomes)

print("all checks passed")
