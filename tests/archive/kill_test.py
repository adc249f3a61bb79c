#!/usr/bin/python3
"""SIGKILL at random instants while points are being archived (tests/archive/fill_archive, one
process; the MPI sweep has its own kill test). After each kill:
  * the .h5, if present, opens with h5py and its /points is readable (always a complete file);
  * `slr-sweep recover` succeeds and the archive holds every acknowledged point;
then the run is resumed; at the end the archive holds every point exactly once with the same
values as an uninterrupted run.

usage: kill_test.py FILL_ARCHIVE ITERATIONS SEED   (env SLR_SWEEP)
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

fill_tool, iterations, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
slr_sweep = os.environ["SLR_SWEEP"]
rng = random.Random(seed)

JOB = """name = "kill"
seed = 5
[grid]
task = ["spiked", "max"]
nu = {linspace = [0.5, 8, 50]}
delta = [0.0, 0.5, 1.0]
[[method]]
name = "bayes"
samples = 200
"""  # 300 cheap points


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def table(path):
    with h5py.File(path, "r") as f:
        points = f["/points"][:]
    return points


with tempfile.TemporaryDirectory() as tmp:
    job = os.path.join(tmp, "kill.toml")
    with open(job, "w") as f:
        f.write(JOB)
    reference_path = os.path.join(tmp, "reference.h5")
    subprocess.run([fill_tool, job, reference_path], check=True, stdout=subprocess.DEVNULL)
    reference = table(reference_path)
    if len(reference) != 300:
        fail(f"reference run has {len(reference)} points")

    path = os.path.join(tmp, "killed.h5")
    acknowledged = set()
    kills = 0
    for iteration in range(iterations):
        rebuild_every = rng.choice([1, 3, 10])
        proc = subprocess.Popen([fill_tool, job, path, "-1", str(rebuild_every)], stdout=subprocess.PIPE)
        delay = rng.uniform(0.02, 0.8)
        deadline = time.monotonic() + delay
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        buffer = b""

        def drain():
            global buffer
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    return
                if not chunk:
                    return
                buffer += chunk

        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.002)
            drain()
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        drain()
        proc.stdout.close()
        # Only complete lines count: a line cut by the kill was not acknowledged to us.
        for line in buffer.decode().splitlines(keepends=True):
            if not line.endswith("\n"):
                continue
            if line.startswith("ack "):
                acknowledged.add(int(line.split()[1]))
        # The snapshot on disk is always a complete HDF5 file.
        if os.path.exists(path):
            try:
                snapshot = table(path)
            except Exception as error:  # noqa: BLE001
                fail(f"iteration {iteration}: the .h5 does not open after SIGKILL: {error}")
        if os.path.exists(path + ".journal"):
            rec = subprocess.run([slr_sweep, "recover", path], capture_output=True, text=True)
            if rec.returncode != 0:
                fail(f"iteration {iteration}: recover failed: {rec.stderr}")
            ids = set(table(path)["point_id"].tolist())
            missing = acknowledged - ids
            if missing:
                fail(f"iteration {iteration}: {len(missing)} acknowledged points lost")
            print(f"iteration {iteration}: killed after {delay:.2f} s, rebuild every {rebuild_every}, "
                  f"{len(ids)} points in the archive, {len(acknowledged)} acknowledged")
        elif acknowledged:
            fail(f"iteration {iteration}: acknowledged points but no journal")

    subprocess.run([fill_tool, job, path], check=True, stdout=subprocess.DEVNULL)
    final = table(path)
    if len(final) != 300 or len(set(final["point_id"].tolist())) != 300:
        fail(f"final archive: {len(final)} rows")
    by_id = {int(r["point_id"]): r for r in reference}
    for row in final:
        ref = by_id[int(row["point_id"])]
        for column in ["seed", "risk", "bayes_risk", "risk_stderr", "nu", "delta"]:
            if not (row[column] == ref[column] or (np.isnan(row[column]) and np.isnan(ref[column]))):
                fail(f"column {column} differs from the uninterrupted run for point {row['point_id']}")
    print(f"ok: {kills} kills, every acknowledged point kept, final archive identical to an uninterrupted run")
