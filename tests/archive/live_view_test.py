"""Script test: a sweep is visible while it runs and after a SIGKILL, before its .h5 snapshot has
caught up (the snapshot is rewritten every 30 s by default). One process runs Bayes-risk points of
~0.1-1 s. While the journal holds points newer than the snapshot, `status --json`, `query` (which
says so on stderr) and the Python reader (slr_sweep.load_columns, runs) read them and agree on what
has been computed, status gives a rate and the last run is "running"; a `status --watch` started
before the sweep waits for the archive and then prints a report per interval. After a SIGKILL the
same holds with the run "interrupted", and after `recover` the snapshot alone holds the same rows.
usage: live_view_test.py SOURCE_DIR   (env SLR_SWEEP: the binary; needs numpy and h5py)"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

source_dir = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(source_dir, "src", "python"))
import slr_sweep  # noqa: E402

binary = os.environ["SLR_SWEEP"]
JOB = """name = "live"
seed = 11
[grid]
task = ["spiked", "max"]
nu = {linspace = [0.5, 8, 40]}
[[method]]
name = "bayes"
samples = 400000
"""  # 80 points of ~0.1-1 s: a minute or more on one process, far longer than the test watches


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def status(path):
    out = subprocess.run([binary, "status", path, "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def query_ids(path):
    run = subprocess.run([binary, "query", path, "--format", "jsonl", "--columns", "point_id"], capture_output=True,
                         text=True, check=True)
    return {json.loads(line)["point_id"] for line in run.stdout.splitlines() if line.strip()}, run.stderr


def python_rows(path):
    """slr_sweep.load_columns's point ids, the snapshot's own row count, and any warning raised."""
    import h5py

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        columns = slr_sweep.load_columns(path)
    with h5py.File(path, "r") as f:
        in_snapshot = len(f["points"])
    return columns, in_snapshot, [str(w.message) for w in caught]


def last_run(path):
    return str(slr_sweep.runs(path)["exit_reason"][-1])


with tempfile.TemporaryDirectory() as tmp:
    job = os.path.join(tmp, "live.toml")
    with open(job, "w") as f:
        f.write(JOB)
    path = os.path.join(tmp, "live.h5")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # A watch started before the sweep (as beside `mpirun … run` in a batch script) waits for it.
    watch = subprocess.Popen([binary, "status", path, "--watch", "0.5", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    if watch.poll() is not None:
        fail(f"status --watch exited ({watch.returncode}) before the archive existed: {watch.stderr.read()!r}")
    sweep = subprocess.Popen([binary, "run", job, "-o", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env)
    try:
        deadline = time.time() + 25  # well inside the first 30 s between snapshots
        seen = 0
        while time.time() < deadline:
            time.sleep(0.5)
            if os.path.exists(path + ".journal") and os.path.exists(path):
                try:
                    seen = status(path)["points_done"]
                except (subprocess.CalledProcessError, json.JSONDecodeError, KeyError):
                    continue
                if seen >= 4:
                    break
        if seen < 4:
            fail(f"the sweep showed {seen} finished points in 25 s")
        # While it runs: query shows at least what status counted, and says where the rows come from.
        ids, note = query_ids(path)
        if len(ids) < seen:
            fail(f"running: query shows {len(ids)} points, status counted {seen}")
        if "newer than the .h5 snapshot" not in note or "a sweep is running" not in note:
            fail(f"running: query's note does not say it read the journal: {note!r}")
        columns, in_snapshot, caught = python_rows(path)
        if in_snapshot >= len(ids):
            fail(f"running: the snapshot already holds {in_snapshot} rows; the test did not see a lagging snapshot")
        if len(columns["point_id"]) < seen or caught:
            fail(f"running: slr_sweep.load_columns gives {len(columns['point_id'])} rows of {seen} done "
                 f"(snapshot {in_snapshot}), warnings {caught}")
        if last_run(path) != "running":
            fail(f"running: slr_sweep.runs says the last run is {last_run(path)!r}")
        live = status(path)
        if live.get("rate_points_per_s") in (None, 0):
            fail(f"running: status --json gives no rate with {seen} points done: {live.get('rate_points_per_s')}")
    finally:
        sweep.send_signal(signal.SIGKILL)
        sweep.wait()
        watch.send_signal(signal.SIGINT)
        watched, waited = watch.communicate(timeout=30)
    reports = [json.loads(line) for line in watched.splitlines() if line.strip()]
    if "waiting for" not in waited or len(reports) < 2 or reports[-1]["points_done"] < reports[0]["points_done"]:
        fail(f"status --watch before the sweep: stderr {waited!r}, {len(reports)} reports")
    if watch.returncode != 0:
        fail(f"status --watch ended by SIGINT with exit {watch.returncode}")

    # After the SIGKILL: the journal holds every acknowledged point; query and status agree.
    done = status(path)["points_done"]
    ids, note = query_ids(path)
    if len(ids) != done:
        fail(f"after SIGKILL: query shows {len(ids)} points, status counts {done}")
    if "recover" not in note:
        fail(f"after SIGKILL: query's note does not name recover: {note!r}")
    columns, in_snapshot, caught = python_rows(path)
    if len(columns["point_id"]) != done or caught or set(int(i) for i in columns["point_id"]) != ids:
        fail(f"after SIGKILL: slr_sweep.load_columns gives {len(columns['point_id'])} rows, status {done}, "
             f"warnings {caught}")
    if last_run(path) != "interrupted":
        fail(f"after SIGKILL: slr_sweep.runs says the last run is {last_run(path)!r}")
    order = np.argsort(columns["point_id"])
    before = {name: column[order] for name, column in columns.items()}
    subprocess.run([binary, "recover", path], capture_output=True, check=True)
    columns, in_snapshot, caught = python_rows(path)
    if in_snapshot != done or caught:
        fail(f"after recover: the snapshot holds {in_snapshot} rows of {done} (warnings {caught})")
    order = np.argsort(columns["point_id"])
    for name, column in before.items():
        after = columns[name][order]
        same = (np.array_equal(after, column, equal_nan=True) if column.dtype.kind == "f"
                else np.array_equal(after.astype(str), column.astype(str)))
        if not same:
            fail(f"after recover: column {name} differs from what load_columns read from the journal")
    print(f"ok: {seen} points seen while running ({in_snapshot} rows in the final snapshot), {done} after SIGKILL, "
          f"query = status = Python = recovered snapshot; status --watch waited, then {len(reports)} reports")
