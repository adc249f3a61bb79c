#!/usr/bin/env python3
"""Crash and signal test of `slr-sweep run` / `resume` (run by CTest).

A sweep of 300 cheap points of the testing method "synthetic" runs on 3 ranks:
  reference  once, uninterrupted;
  kill       N times: SIGKILL the whole process group (mpirun and all ranks) at a random moment
             after the sweep started, check the archive opens with h5py, check that the resume
             finds at least every point the killed run had acknowledged (its last progress line),
             sometimes kill the resume too, resume to completion;
  term       SIGTERM to every rank (what Slurm's scancel/srun do) at a random moment: exit code 3
             within the grace period, then resume;
  worker     SIGTERM to one worker rank only: forwarded to the coordinator, exit code 3;
  usr1       SIGUSR1 to mpirun (Slurm's early warning, forwarded by mpirun): exit code 3;
  abandon    points longer than the grace period: SIGTERM, exit 3 after about the grace period.
Every final archive must hold every point exactly once with the values of the reference run
(all result columns except the timing wall_s).
"""
import argparse
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

JOB = """name = "kill-test"
seed = 5
[grid]
alpha = {{linspace = [1, 100, 100]}}
r_k = [0.0, 0.5, 1.0]
r_v = 0.5

[[method]]
name = "synthetic"
cost-us = {cost_us}
fail-if = "alpha=3"
"""
POINTS = 300
TIMING_COLUMNS = {"wall_s", "completed_unix", "run_index"}


class Sweep:
    """One mpirun of slr-sweep in its own session (so the whole group can be killed)."""

    def __init__(self, args, command, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        full = shlex.split(args.mpiexec) + ["-n", str(args.ranks)] + [args.slr_sweep] + command
        self.process = subprocess.Popen(full, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.started = time.monotonic()

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_for(self, pattern, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.text()):
                return True
            if self.process.poll() is not None:
                if re.search(pattern, self.text()):
                    return True
                raise AssertionError(f"exited with {self.process.returncode} before {pattern!r}:\n{self.text()}")
            time.sleep(0.01)
        raise AssertionError(f"timeout waiting for {pattern!r}:\n{self.text()}")

    def session_processes(self):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[3]) == self.process.pid:  # session id (field 6 of stat)
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
                    pids.append((int(entry), cmdline))
            except (OSError, IndexError, ValueError):
                pass
        return pids

    def kill_all(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:  # the sweep had already ended
            pass
        for pid, _ in self.session_processes():  # stragglers that left the process group
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.process.wait()
        self.log.close()

    def signal_ranks(self, signal_number):
        ranks = [pid for pid, cmd in self.session_processes() if "slr-sweep" in cmd and "mpirun" not in cmd
                 and pid != self.process.pid]
        for pid in ranks:
            os.kill(pid, signal_number)
        return len(ranks)

    def signal_rank(self, rank, signal_number):
        for pid, cmd in self.session_processes():
            if "slr-sweep" not in cmd or "mpirun" in cmd:
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environment = f.read().split(b"\0")
            except OSError:
                continue
            if f"OMPI_COMM_WORLD_RANK={rank}".encode() in environment:
                os.kill(pid, signal_number)
                return True
        raise AssertionError(f"rank {rank} not found")

    def finish(self, timeout=120):
        code = self.process.wait(timeout=timeout)
        self.log.close()
        return code


def load(path):
    """point_id → row (numpy void) of /points; asserts ids are unique."""
    with h5py.File(path, "r") as f:
        points = f["/points"][:]
    ids = points["point_id"]
    assert len(np.unique(ids)) == len(ids), f"{path}: a point appears twice"
    return {int(row["point_id"]): row for row in points}


def same(a, b):
    for name in a.dtype.names:
        if name in TIMING_COLUMNS:
            continue
        x, y = a[name], b[name]
        if isinstance(x, (float, np.floating)):
            if not (x == y or (np.isnan(x) and np.isnan(y))):
                return f"{name}: {x!r} != {y!r}"
        elif x != y:
            return f"{name}: {x!r} != {y!r}"
    return None


def check_complete(path, reference):
    rows = load(path)
    assert len(rows) == POINTS, f"{path}: {len(rows)} points, expected {POINTS}"
    for point_id, row in rows.items():
        assert point_id in reference, f"{path}: unknown point {point_id}"
        difference = same(row, reference[point_id])
        assert difference is None, f"{path}: point {point_id}: {difference}"


def acknowledged(text):
    """Points the sweep had reported done (its last progress line)."""
    counts = [int(m) for m in re.findall(r"(\d+)/%d points" % POINTS, text)]
    return max(counts) if counts else 0


def already_done(text):
    match = re.search(r"\((\d+) already done\)", text)
    assert match, text
    return int(match.group(1))


def resume_to_completion(args, archive, work, name):
    sweep = Sweep(args, ["resume", archive, "--progress-interval", "0.05"], os.path.join(work, name + ".log"))
    code = sweep.finish()
    assert code == 0, f"resume exited with {code}:\n{sweep.text()}"
    return sweep


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slr-sweep", default=os.environ.get("SLR_SWEEP"), help="path of the slr-sweep binary")
    parser.add_argument("--mpiexec", default="mpirun --oversubscribe", help="MPI launcher and its flags")
    parser.add_argument("--ranks", type=int, default=3)
    parser.add_argument("--kills", type=int, default=10, help="SIGKILL repetitions")
    parser.add_argument("--terms", type=int, default=2, help="SIGTERM repetitions")
    # 300 points × 8 ms on 2 workers: at least 1.2 s of wall time (busy work is wall-clock
    # based), so a signal sent within 0.3 s of the first progress line always finds points running.
    parser.add_argument("--cost-us", type=int, default=8000, help="busy work per point")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the kill moments")
    args = parser.parse_args()
    assert args.slr_sweep, "give --slr-sweep or set SLR_SWEEP"
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"kill moments from seed {seed}", flush=True)

    with tempfile.TemporaryDirectory(prefix="slr-kill-") as work:
        job = os.path.join(work, "job.toml")
        with open(job, "w") as f:
            f.write(JOB.format(cost_us=args.cost_us))
        reference_path = os.path.join(work, "reference.h5")
        sweep = Sweep(args, ["run", job, "-o", reference_path, "--progress-interval", "0.05"],
                      os.path.join(work, "reference.log"))
        assert sweep.finish() == 0, sweep.text()
        duration = time.monotonic() - sweep.started
        reference = load(reference_path)
        assert len(reference) == POINTS
        statuses = {row["status"] for row in reference.values()}
        assert statuses == {b"ok", b"failed"}, statuses
        print(f"reference run: {POINTS} points in {duration:.2f} s", flush=True)

        for rep in range(args.kills):
            archive = os.path.join(work, f"kill{rep}.h5")
            sweep = Sweep(args, ["run", job, "-o", archive, "--progress-interval", "0.02"],
                          os.path.join(work, f"kill{rep}.log"))
            sweep.wait_for(r"sweep 'kill-test'")
            time.sleep(rng.uniform(0, 0.8 * duration))
            finished_first = sweep.process.poll() is not None
            sweep.kill_all()
            acked = acknowledged(sweep.text())
            if os.path.exists(archive):
                load(archive)  # the snapshot opens and has no duplicate
            killed_resumes = 0
            if rng.random() < 0.4:  # kill the resume as well
                again = Sweep(args, ["resume", archive, "--progress-interval", "0.02"],
                              os.path.join(work, f"kill{rep}-again.log"))
                again.wait_for(r"sweep 'kill-test'")
                assert already_done(again.text()) >= acked, again.text()
                time.sleep(rng.uniform(0, duration / 2))
                again.kill_all()
                acked = max(acked, acknowledged(again.text()))
                load(archive)
                killed_resumes = 1
            resumed = resume_to_completion(args, archive, work, f"kill{rep}-resume")
            found = already_done(resumed.text())
            assert found >= acked, f"acknowledged {acked} points but the resume found {found}:\n{sweep.text()}"
            check_complete(archive, reference)
            print(f"kill {rep}: acknowledged {acked}, resume found {found} done"
                  f"{' (resume killed too)' if killed_resumes else ''}{' (run had finished)' if finished_first else ''}"
                  f" -> complete and identical", flush=True)

        def interrupted_run(name, cost_us, grace, deliver):
            job_path = os.path.join(work, f"{name}.toml")
            with open(job_path, "w") as f:
                f.write(JOB.format(cost_us=cost_us))
            archive = os.path.join(work, f"{name}.h5")
            sweep = Sweep(args, ["run", job_path, "-o", archive, "--grace", str(grace), "--progress-interval", "0.05"],
                          os.path.join(work, f"{name}.log"))
            sweep.wait_for(r"\d+/%d points" % POINTS)  # points are running
            time.sleep(rng.uniform(0, 0.3))
            assert sweep.process.poll() is None, f"{name}: the sweep ended before the signal:\n{sweep.text()}"
            sent = time.monotonic()
            deliver(sweep)
            code = sweep.finish()
            drain = time.monotonic() - sent
            return sweep, code, drain, archive, job_path

        for rep in range(args.terms):
            grace = 5.0
            sweep, code, drain, archive, _ = interrupted_run(f"term{rep}", args.cost_us, grace,
                                                             lambda s: s.signal_ranks(signal.SIGTERM))
            assert code == 3, f"SIGTERM: exit code {code}, expected 3:\n{sweep.text()}"
            assert drain <= grace, f"SIGTERM: drained in {drain:.2f} s > grace {grace} s"
            assert "SIGTERM received" in sweep.text()
            load(archive)
            resume_to_completion(args, archive, work, f"term{rep}-resume")
            check_complete(archive, reference)
            print(f"term {rep}: exit 3 after {drain:.2f} s (grace {grace} s) -> resumed, complete and identical",
                  flush=True)

        # A signal that reaches one worker only (e.g. `kill` of one rank) is forwarded to the coordinator.
        sweep, code, drain, archive, _ = interrupted_run("worker", args.cost_us, 5.0,
                                                         lambda s: s.signal_rank(args.ranks - 1, signal.SIGTERM))
        assert code == 3, f"SIGTERM to one worker: exit code {code}, expected 3:\n{sweep.text()}"
        assert drain <= 5.0, f"SIGTERM to one worker: drained in {drain:.2f} s"
        resume_to_completion(args, archive, work, "worker-resume")
        check_complete(archive, reference)
        print(f"worker-only SIGTERM: exit 3 after {drain:.2f} s -> resumed, complete and identical", flush=True)

        sweep, code, drain, archive, _ = interrupted_run("usr1", args.cost_us, 5.0,
                                                         lambda s: os.kill(s.process.pid, signal.SIGUSR1))
        assert code == 3, f"SIGUSR1 to mpirun: exit code {code}, expected 3:\n{sweep.text()}"
        assert drain <= 5.0, f"SIGUSR1: drained in {drain:.2f} s"
        resume_to_completion(args, archive, work, "usr1-resume")
        check_complete(archive, reference)
        print(f"usr1: exit 3 after {drain:.2f} s -> resumed, complete and identical", flush=True)

        # Points far longer than the grace period: in-flight points are abandoned at its end.
        grace = 0.5
        sweep, code, drain, archive, job_path = interrupted_run("abandon", 3_000_000, grace,
                                                                lambda s: s.signal_ranks(signal.SIGTERM))
        assert code == 3, f"abandon: exit code {code}:\n{sweep.text()}"
        # grace, then writing the run's end and the snapshot and MPI_Finalize, on cores still
        # busy with the abandoned solver threads (they end with the processes)
        assert drain <= grace + 2.5, f"abandon: exit after {drain:.2f} s with grace {grace} s"
        rows = load(archive)
        assert len(rows) < POINTS
        print(f"abandon: exit 3 after {drain:.2f} s (grace {grace} s), {len(rows)} points kept", flush=True)
    print("all kill/signal checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
