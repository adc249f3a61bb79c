#!/usr/bin/python3
"""Fault injection through the CLI, against an uninterrupted run of the same job.

  flips N        N random single-bit flips in a complete journal (the first two in a frame of each
                 kind: header, job, schema, run and point records; then anywhere), the .h5 kept
                 or removed: `status` reports damage between intact
                 records; `resume` refuses (exit 2) and leaves both files byte-identical;
                 `recover --salvage` keeps every intact record (counted here by an independent
                 parse of the frames and their CRC-32C) and the damaged file byte for byte; a
                 flip in the job record with an intact .h5 recovers the job; a `resume` then
                 completes and the archive equals the uninterrupted run.
  truncations M  M random truncations of the journal, the .h5 kept (its rows are merged back) or
                 removed: `resume` completes and the archive equals the uninterrupted run.
  zeroed-tail    the last 4 KiB of a journal zeroed, or its last records' bits flipped (.h5 kept or
                 removed): damage at the end, not a torn write: `status` says DAMAGED, `resume`
                 refuses with both files unchanged, `recover --salvage` names what was lost (ids
                 or counts) and merges back what the .h5 holds; `resume` completes to the
                 uninterrupted archive.
  h5-alone       for a job with every SLR method and one with every tied-attention method: the
                 .h5 copied without its journal resumes (twice) to an archive whose rows equal
                 the original's, and so does a journal cut anywhere beside its .h5; a bit flipped in a stored point id (or anywhere in the .h5 with
                 the journal cut) never becomes a point: such rows are named and left out, the
                 point counts never pass 100 %, and a resume gives the uninterrupted archive.
  salvage-kill   SIGKILL at random instants of `recover --salvage`: a second salvage or a resume
                 always completes, and the archive equals the uninterrupted run.
  refusals       `export -o` onto its input (also through a symlink) and `query -o` onto the
                 journal are refused with exit 2; a 10^15-point product is refused with exit 2
                 before expansion; a refused `resume --extend` leaves every file byte-identical.
  full-disk      a run onto a nearly full 2 MiB tmpfs exits 1 with a one-line message and no
                 crash, leaves no temporary file, and resumes to an equal archive once space is
                 free (skipped, saying so, where mounting is not permitted).
  sigint         SIGINT to mpirun during a sweep: the ranks save, the .h5 is up to date with the
                 journal, and `resume` completes to an equal archive. mpirun's own exit code is
                 reported (Open MPI's mpirun exits 1 after SIGINT; the ranks exit 3).

  h5-flips-journal  random single-bit flips of a .h5 (anywhere, and in its last 2 KiB: heaps,
                 texts, attributes) beside its intact journal: no command dies by a signal or
                 fails (status and query read the journal when the .h5 cannot be read safely),
                 recover/resume rebuild it, the archive equals the uninterrupted run.
  text-edits     texts of rows and text attributes edited in a .h5 alone or beside a cut journal:
                 never accepted (the row is refused, named and recomputed; a damaged attribute
                 refuses a .h5 alone with exit 2 and nothing changed).
  early-signals  SIGUSR1 to mpirun 0.1-0.5 s (--signal-delays) after start: exit 3 (0 or 2 where the run finished
                 or created nothing), never a death by the signal; resume completes.

usage: fault_injection.py [--flips N] [--truncations M] [--h5-flips K] [--kills J]
                          [--h5-flips-journal F] [--text-edits E] [--seed S]
       (env SLR_SWEEP = the slr-sweep binary; SLR_MPIEXEC, SLR_MPIEXEC_PREFLAGS for the sigint case)
"""
import argparse
import hashlib
import os
import random
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

SLR = os.path.abspath(os.environ["SLR_SWEEP"])  # mpirun below runs in another directory
JOB = """name = "faults"
seed = 77
[grid]
task = ["spiked", "max"]
nu = {linspace = [0.5, 6, 16]}
repeats = 2
[[method]]
name = "bayes"
samples = 300
"""  # 64 points, milliseconds each
# Points of ~0.1 s (24 on 2 ranks: ~1.5 s): a sweep that is still starting or running when a signal
# comes 0.1-0.5 s after its start (never one already finished, whose mpirun is tearing down).
SLOW_JOB = """name = "faults-slow"
seed = 78
[grid]
nu = {linspace = [0.5, 8, 24]}
[[method]]
name = "bayes"
samples = 300000
"""
# A job with every method of the SLR model, and one with every method of tied attention: every
# kind of row (ERM's D beside the D asked for, trajectories, chains) goes through .h5 -> journal.
EVERY_SLR_METHOD = """name = "faults-every-slr-method"
seed = 79
[grid]
task = "spiked"
nu = 1.0
L = 3
activation = ["softmax", "linear"]
[[method]]
name = "population"
samples = 2000
[[method]]
name = "population"
samples = 2000
start = "swapped"
[[method]]
name = "bayes"
samples = 2000
grid = { activation = "softmax" }
[[method]]
name = "bayes-jump"
samples = 2000
alpha-min = 0.5
alpha-max = 4
grid = { activation = "softmax" }
[[method]]
name = "fixed-point"
samples = 400
continuation = "alpha"
grid = { alpha = [1.0, 2.0], r_k = 1.0, r_v = 1.0 }
[[method]]
name = "state-evolution"
samples = 400
grid = { activation = "softmax", alpha = [1.0, 2.0] }
[[method]]
name = "erm"
D = 60
grid = { alpha = 2.0, r_k = 1.0, r_v = 1.0 }
[[method]]
name = "erm"
D = 60
optimizer = "gradient-flow"
horizon = 4
trajectory = "1"
grid = { alpha = 2.0, r_k = 1.0, r_v = 1.0 }
"""
EVERY_TIED_METHOD = """name = "faults-every-tied-method"
seed = 80
model = "tied-attention"
[grid]
T = 2
k0 = 0.5
k = 1.0
lambda = 0.01
delta = 0.5
[[method]]
name = "fixed-point"
qmc-points = 8
alpha = [0.5, 1.0]
[[method]]
name = "recovery-threshold"
[[method]]
name = "erm"
alpha = [0.5, 1.0]
d = 16
test-samples = 2000
grid = { repeats = 2 }
"""
JOB_PATH = None  # the job file of JOB, written by main()

# Columns that legitimately differ between two runs of the same points, and timings in extra_json.
TIMING = re.compile(r'"(\w*(?:seconds|time_s|wall_s))":[-+0-9.eE]+')
# text_crc32c: the checksum of the row's texts, whose timings differ between runs (the texts
# themselves are compared below without them).
RUN_DEPENDENT = {"completed_unix", "run_index", "wall_s", "grad_time_s", "peak_rss_mb", "text_crc32c"}


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def run(*arguments, expect=None, env=None):
    result = subprocess.run([SLR, *arguments], capture_output=True, text=True, env=env)
    if expect is not None and result.returncode != expect:
        fail(f"slr-sweep {' '.join(arguments)}: exit {result.returncode}, expected {expect}\n"
             f"{result.stdout}\n{result.stderr}")
    return result


def digest(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def remove_archive(path):
    """Removes an archive's files: the .h5, its journal and anything written beside them."""
    folder, name = os.path.split(path)
    for entry in os.listdir(folder):
        if entry.startswith(name):
            os.remove(os.path.join(folder, entry))


def rows_of(path):
    with h5py.File(path, "r") as f:
        points = f["points"][()]
    return points[np.argsort(points["point_id"], kind="stable")]


def assert_equal_archives(path, reference, label):
    a, b = rows_of(path), rows_of(reference)
    if len(a) != len(b):
        fail(f"{label}: {len(a)} rows, the uninterrupted run has {len(b)}")
    for name in b.dtype.names:
        if name in RUN_DEPENDENT or re.search(r"(seconds|time_s|wall_s|rss_mb)$", name):
            continue
        x, y = a[name], b[name]
        if name == "extra_json":  # timings inside the method's JSON differ between runs too
            x, y = ([TIMING.sub(r'"\1":0', v.decode() if isinstance(v, bytes) else v) for v in c] for c in (x, y))
            x, y = np.array(x), np.array(y)
        if x.dtype.kind == "f":
            same = (x == y) | (np.isnan(x) & np.isnan(y))
        else:
            same = x == y
        if not np.all(same):
            fail(f"{label}: column {name} differs from the uninterrupted run")


# ---- an independent reader of the v2 frame layout ---------------------------------------------
def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for byte in data:
        c = CRC_TABLE[(c ^ byte) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


HEADER, JOB_RECORD, SCHEMA = 1, 2, 6


def frames(data):
    """[(begin, end, type)] of a journal written by this release (every frame intact)."""
    out, position = [], 0
    while position < len(data):
        magic, kind, length, payload_crc, header_crc = struct.unpack_from("<4sIIII", data, position)
        if magic != b"SLR2" or crc32c(data[position:position + 16]) != header_crc:
            fail(f"frame at {position} is not an intact v2 frame")
        end = position + 20 + length
        if crc32c(data[position + 20:end]) != payload_crc:
            fail(f"payload of the frame at {position} fails its CRC")
        out.append((position, end, kind))
        position = end
    return out


def entries(frame_list):
    """Records a reader replays as entries (not the header, not column schemas)."""
    return sum(1 for _, _, kind in frame_list if kind not in (HEADER, SCHEMA))


# ---- scenarios ----------------------------------------------------------------------------------
def flips(count, rng, work, reference):
    clean_journal = open(reference + ".journal", "rb").read()
    frame_list = frames(clean_journal)
    total = entries(frame_list)
    kinds = sorted({kind for _, _, kind in frame_list})
    salvaged_records = 0
    for trial in range(count):
        d = os.path.join(work, f"flip{trial}")
        os.makedirs(d)
        archive = os.path.join(d, "a.h5")
        keep_h5 = trial % 2 == 0
        # The first trials hit one frame of every kind (header, job, schema, run, point records),
        # each with the .h5 kept and removed, so that a short run covers every kind; then anywhere.
        if trial < 2 * len(kinds):
            begin, end, _ = rng.choice([f for f in frame_list if f[2] == kinds[trial // 2]])
            position = rng.randrange(begin, end)
        else:
            position = rng.randrange(0, len(clean_journal))
        damaged = bytearray(clean_journal)
        damaged[position] ^= 1 << rng.randrange(8)
        with open(archive + ".journal", "wb") as f:
            f.write(damaged)
        if keep_h5:
            shutil.copy(reference, archive)
        hit = next(i for i, (b, e, _) in enumerate(frame_list) if b <= position < e)
        kind = frame_list[hit][2]
        label = f"flip {trial} at byte {position} (record {hit}, type {kind}, .h5 {'kept' if keep_h5 else 'removed'})"
        status = run("status", archive, expect=0) if keep_h5 else None
        if status is not None and "DAMAGED" not in status.stdout:
            fail(f"{label}: status does not report the damage:\n{status.stdout}")
        before = (digest(archive), digest(archive + ".journal"))
        refused = run("resume", archive, expect=2)
        if "recover --salvage" not in refused.stderr:
            fail(f"{label}: resume's refusal does not name the way out:\n{refused.stderr}")
        if (digest(archive), digest(archive + ".journal")) != before:
            fail(f"{label}: a refused resume changed a file")
        if kind == JOB_RECORD and not keep_h5:
            salvage = run("recover", "--salvage", archive)
            if salvage.returncode != 2 or "job record" not in salvage.stderr or "--job" not in salvage.stderr:
                fail(f"{label}: salvage without a job record and without .h5: exit {salvage.returncode}\n"
                     f"{salvage.stdout}{salvage.stderr}")
            if digest(archive + ".journal") != before[1]:
                fail(f"{label}: a failed salvage changed the journal")
            # The job file given again: refused if it is another job, taken if it is this one.
            other = os.path.join(d, "other.toml")
            with open(other, "w") as f:
                f.write(JOB.replace("seed = 77", "seed = 78"))
            refused_job = run("recover", "--salvage", archive, "--job", other, expect=2)
            if "not points of that job" not in refused_job.stderr:
                fail(f"{label}: --job of another job: unclear refusal:\n{refused_job.stderr}")
            if digest(archive + ".journal") != before[1]:
                fail(f"{label}: a refused --job changed the journal")
            salvage = run("recover", "--salvage", archive, "--job", JOB_PATH, expect=0)
            if "taken from " + JOB_PATH not in salvage.stdout:
                fail(f"{label}: the job was not taken from the job file:\n{salvage.stdout}")
            run("resume", archive, expect=0)
            assert_equal_archives(archive, reference, label)
            shutil.rmtree(d)
            continue
        salvage = run("recover", "--salvage", archive, expect=0)
        kept = re.search(r"kept all (\d+) intact records", salvage.stdout)
        expected = total - (0 if kind in (HEADER, SCHEMA) else 1)
        if not kept or int(kept.group(1)) != expected:
            fail(f"{label}: salvage kept {kept.group(1) if kept else '?'} intact records, expected {expected}:\n"
                 f"{salvage.stdout}")
        salvaged_records += expected
        copies = [n for n in os.listdir(d) if n.startswith("a.h5.journal.damaged-")]
        if len(copies) != 1 or open(os.path.join(d, copies[0]), "rb").read() != bytes(damaged):
            fail(f"{label}: the damaged journal was not kept byte for byte ({copies})")
        if kind == JOB_RECORD and "taken from the .h5" not in salvage.stdout:
            fail(f"{label}: the job was not taken from the .h5:\n{salvage.stdout}")
        run("resume", archive, expect=0)
        assert_equal_archives(archive, reference, label)
        shutil.rmtree(d)
    print(f"flips: {count} trials, every intact record kept ({salvaged_records} salvaged in all), "
          "every resumed archive equal to the uninterrupted run")


def truncations(count, rng, work, reference):
    clean_journal = open(reference + ".journal", "rb").read()
    job_end = frames(clean_journal)[1][1]
    for trial in range(count):
        d = os.path.join(work, f"cut{trial}")
        os.makedirs(d)
        archive = os.path.join(d, "a.h5")
        keep_h5 = trial % 2 == 0
        cut = rng.randrange(job_end, len(clean_journal))
        with open(archive + ".journal", "wb") as f:
            f.write(clean_journal[:cut])
        if keep_h5:
            shutil.copy(reference, archive)
            status = run("status", archive, expect=0)
            if "fewer point records than this snapshot" not in status.stdout and cut < len(clean_journal) - 200:
                fail(f"truncation {trial} at {cut}: status does not say the journal lost rows:\n{status.stdout}")
        run("resume", archive, expect=0)
        assert_equal_archives(archive, reference, f"truncation {trial} at byte {cut}")
        shutil.rmtree(d)
    print(f"truncations: {count} trials, every resumed archive equal to the uninterrupted run")


def reference_run(directory, job_name, text):
    """Writes a job file into directory and runs it uninterrupted: (job path, reference archive)."""
    job_path = os.path.join(directory, job_name)
    with open(job_path, "w") as f:
        f.write(text)
    reference = os.path.join(directory, "reference.h5")
    run("run", job_path, "-o", reference, expect=0)
    return job_path, reference


def status_counts(archive):
    """(done, total) from `status --json`; done never above total."""
    import json
    result = run("status", archive, "--json", expect=0)
    report = json.loads(result.stdout)
    done, total = report.get("points_done"), report.get("points_total")
    if done is None or total is None or done > total:
        fail(f"status of {archive}: done {done} of {total}\n{result.stdout}")
    return done, total


def zeroed_tail(rng, work, reference):
    clean_journal = open(reference + ".journal", "rb").read()
    frame_list = frames(clean_journal)
    trials = 0
    for keep_h5 in (True, False):
        for how in ("zero-4k", "flip-last", "flip-last-two"):
            d = os.path.join(work, f"tail-{how}-{keep_h5}")
            os.makedirs(d)
            archive = os.path.join(d, "a.h5")
            damaged = bytearray(clean_journal)
            if how == "zero-4k":
                damaged[-4096:] = bytes(4096)
            else:
                for begin, end, _ in frame_list[-(1 if how == "flip-last" else 2):]:
                    damaged[rng.randrange(begin, end)] ^= 1 << rng.randrange(8)
            with open(archive + ".journal", "wb") as f:
                f.write(damaged)
            if keep_h5:
                shutil.copy(reference, archive)
                status = run("status", archive, expect=0)
                if "DAMAGED" not in status.stdout or "held no acknowledged point" in status.stdout:
                    fail(f"{how}: status does not report damage at the end:\n{status.stdout}")
            before = (digest(archive), digest(archive + ".journal"))
            refused = run("resume", archive, expect=2)
            if "recover --salvage" not in refused.stderr or "at the end of the file" not in refused.stderr:
                fail(f"{how}: resume's refusal does not name the damage and the way out:\n{refused.stderr}")
            if (digest(archive), digest(archive + ".journal")) != before:
                fail(f"{how}: a refused resume changed a file")
            salvage = run("recover", "--salvage", archive, expect=0)
            if "lost:" not in salvage.stdout or "are missing" not in salvage.stdout and not keep_h5:
                fail(f"{how}: salvage does not say what was lost:\n{salvage.stdout}")
            if keep_h5 and "merged back" not in salvage.stdout and how != "flip-last":
                fail(f"{how}: the points the .h5 held were not merged back:\n{salvage.stdout}")
            run("resume", archive, expect=0)
            assert_equal_archives(archive, reference, f"{how}, .h5 {'kept' if keep_h5 else 'removed'}")
            shutil.rmtree(d)
            trials += 1
    print(f"zeroed-tail: {trials} trials, damage at the end reported (never cut silently), "
          "every resumed archive equal to the uninterrupted run")


def flip_h5_point_id(path, row, bit):
    """Flips one bit of one stored point id, in place, as bit rot would."""
    with h5py.File(path, "r+") as f:
        points = f["points"]
        record = points[row]
        record["point_id"] = np.uint64(int(record["point_id"]) ^ (1 << bit))
        points[row] = record


def h5_alone(rng, work, count):
    outcomes = {}
    for label, text in (("slr", EVERY_SLR_METHOD), ("tied", EVERY_TIED_METHOD)):
        d = os.path.join(work, f"alone-{label}")
        os.makedirs(d)
        _, reference = reference_run(d, "job.toml", text)
        n = len(rows_of(reference))
        # 1. The .h5 alone resumes (twice: the second starts from the first's .h5 alone).
        archive = os.path.join(d, "copy.h5")
        shutil.copy(reference, archive)
        for round_ in range(2):
            if os.path.exists(archive + ".journal"):
                os.remove(archive + ".journal")
            result = run("resume", archive, expect=0)
            if "written from the .h5" not in result.stderr:
                fail(f"{label}: resume of a .h5 alone does not say it wrote the journal:\n{result.stderr}")
            assert_equal_archives(archive, reference, f"{label}: .h5 alone, round {round_}")
            status_counts(archive)
        # 2. The journal cut anywhere, the .h5 beside it: its rows come back, the archive is equal.
        clean = open(reference + ".journal", "rb").read()
        job_end = frames(clean)[1][1]
        for trial in range(count):
            cut = os.path.join(d, f"cut{trial}.h5")
            shutil.copy(reference, cut)
            with open(cut + ".journal", "wb") as f:
                f.write(clean[:rng.randrange(job_end, len(clean))])
            run("resume", cut, expect=0)
            assert_equal_archives(cut, reference, f"{label}: journal cut, .h5 kept (trial {trial})")
            outcomes["cut journal"] = outcomes.get("cut journal", 0) + 1
            os.remove(cut)
            os.remove(cut + ".journal")
        # 3. A bit flipped in stored point ids never becomes a point.
        for trial in range(count):
            flipped = os.path.join(d, f"flip{trial}.h5")
            shutil.copy(reference, flipped)
            row = rng.randrange(n)
            flip_h5_point_id(flipped, row, rng.randrange(64))
            if trial % 2 == 1:  # the journal cut short beside it (its .h5 rows come back) ...
                clean = open(reference + ".journal", "rb").read()
                with open(flipped + ".journal", "wb") as f:
                    f.write(clean[:frames(clean)[3][1]])
            result = run("resume", flipped, expect=0)   # ... or no journal at all
            if "not points of the job" not in result.stderr:
                fail(f"{label}: a flipped point id was not reported:\n{result.stderr}")
            done, total = status_counts(flipped)
            if done != total or done != n:
                fail(f"{label}: after a flipped id, {done} of {total} done (the job has {n})")
            assert_equal_archives(flipped, reference, f"{label}: flipped id in row {row}")
            outcomes["flipped id"] = outcomes.get("flipped id", 0) + 1
            os.remove(flipped)
            os.remove(flipped + ".journal")
        # 4. A bit flipped anywhere in the .h5 beside a journal cut short: never an invented point.
        raw = open(reference, "rb").read()
        ids = set(rows_of(reference)["point_id"].tolist())
        for trial in range(count):
            flipped = os.path.join(d, f"raw{trial}.h5")
            damaged = bytearray(raw)
            damaged[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
            with open(flipped, "wb") as f:
                f.write(damaged)
            clean = open(reference + ".journal", "rb").read()
            with open(flipped + ".journal", "wb") as f:
                f.write(clean[:frames(clean)[3][1]])
            journal_before = digest(flipped + ".journal")
            result = run("resume", flipped)
            # exit 0 (the flip missed what a read checks, or its rows were refused and recomputed),
            # 2 (a damaged .h5: named, nothing changed), or a crash inside HDF5 on metadata the old
            # file format does not checksum (before anything is written: the journal is unchanged).
            if result.returncode not in (0, 2) and result.returncode >= 0:
                fail(f"{label}: resume beside a .h5 with a flipped bit: exit {result.returncode}\n{result.stderr}")
            if result.returncode != 0 and digest(flipped + ".journal") != journal_before:
                fail(f"{label}: a resume that failed on a damaged .h5 changed the journal")
            key = f"raw flip: exit {result.returncode}" if result.returncode >= 0 else "raw flip: HDF5 crashed"
            outcomes[key] = outcomes.get(key, 0) + 1
            if result.returncode == 0:
                got = set(rows_of(flipped)["point_id"].tolist())
                if got != ids:
                    fail(f"{label}: a flipped bit in the .h5 changed the set of points ({len(got)} vs {len(ids)})")
                status_counts(flipped)
            remove_archive(flipped)
        shutil.rmtree(d)
    print(f"h5-alone: every-method jobs (SLR and tied) resumed from the .h5 alone to equal archives; "
          f"outcomes {outcomes}; no invented point, no count above 100 %")


_EVERY_METHOD_REFERENCE = {}


def every_method_reference(work):
    """The uninterrupted archive of EVERY_SLR_METHOD (run once, kept for the scenarios that use it)."""
    if work not in _EVERY_METHOD_REFERENCE:
        d = os.path.join(work, "every-method-reference")
        os.makedirs(d)
        _EVERY_METHOD_REFERENCE[work] = reference_run(d, "job.toml", EVERY_SLR_METHOD)[1]
    return _EVERY_METHOD_REFERENCE[work]


def h5_flips_beside_journal(rng, work, count):
    """Random single-bit flips of a .h5 beside its intact journal, half of them anywhere and half in
    the file's last 2 KiB (global heaps: texts and attributes). No command dies by a signal or
    fails: `status` and `query` read the journal where the .h5 cannot be read safely; `recover` (on
    every third trial) and `resume` rebuild it; the archive equals the uninterrupted run."""
    d = os.path.join(work, "h5-flips")
    os.makedirs(d)
    reference = every_method_reference(work)
    raw = open(reference, "rb").read()
    clean = open(reference + ".journal", "rb").read()
    outcomes = {}
    for trial in range(count):
        archive = os.path.join(d, f"f{trial}.h5")
        damaged = bytearray(raw)
        at = rng.randrange(max(0, len(raw) - 2048), len(raw)) if trial % 2 else rng.randrange(len(raw))
        damaged[at] ^= 1 << rng.randrange(8)
        with open(archive, "wb") as f:
            f.write(damaged)
        with open(archive + ".journal", "wb") as f:
            f.write(clean)
        label = f"flip of byte {at} (trial {trial})"
        for command in (["status", archive], ["query", archive, "--columns", "point_id,status"]):
            result = run(*command)
            if result.returncode != 0:
                how = f"signal {-result.returncode}" if result.returncode < 0 else f"exit {result.returncode}"
                fail(f"{label}: `{command[0]}` beside an intact journal: {how}\n{result.stdout}{result.stderr}")
        key = "unreadable .h5 (read from the journal)" if "from its journal instead" in result.stderr else "readable .h5"
        outcomes[key] = outcomes.get(key, 0) + 1
        if trial % 3 == 0:
            run("recover", archive, expect=0)
        run("resume", archive, expect=0)
        if open(archive + ".journal", "rb").read()[:len(clean)] != clean:
            fail(f"{label}: the journal's records changed")
        assert_equal_archives(archive, reference, label)
        remove_archive(archive)
    shutil.rmtree(d)
    print(f"h5-flips: {count} single-bit flips of a .h5 beside its intact journal ({(count + 1) // 2} in its last "
          f"2 KiB): no command died or failed, every resumed archive equal to the uninterrupted run; {outcomes}")


def h5_text_edits(rng, work, count):
    """A text of one row (extra_json, message or a text parameter) or a text attribute edited in
    a .h5 alone or beside a journal cut short: never accepted. An edited row is refused (named)
    and recomputed; an edited attribute makes the .h5 damaged: alone it is refused with exit 2
    and nothing changes, beside a cut journal the journal's points are kept and the rest
    recomputed. Either way the archive then equals the uninterrupted run."""
    d = os.path.join(work, "text-edits")
    os.makedirs(d)
    reference = every_method_reference(work)
    clean = open(reference + ".journal", "rb").read()
    outcomes = {}
    for trial in range(count):
        archive = os.path.join(d, f"e{trial}.h5")
        shutil.copy(reference, archive)
        beside_cut_journal = trial % 2 == 1
        if beside_cut_journal:
            with open(archive + ".journal", "wb") as f:
                f.write(clean[:frames(clean)[3][1]])
        what = ("extra_json", "message", "activation", "attribute")[trial // 2 % 4]
        with h5py.File(archive, "r+") as f:
            if what == "attribute":
                name = rng.choice(["job_name", "tool_version", "job_text"])
                text = f.attrs[name]
                text = text.decode() if isinstance(text, bytes) else str(text)
                f.attrs[name] = text + " "
                victim = None
            else:
                rows = f["points"][:]
                j = rng.randrange(len(rows))
                victim = int(rows["point_id"][j])
                old = rows[what][j]
                old = old.decode() if isinstance(old, bytes) else str(old)
                digits = [k for k, c in enumerate(old) if c.isdigit()]
                if digits:  # one digit changed, as an edit or bit rot would
                    k = rng.choice(digits)
                    new = old[:k] + str((int(old[k]) + 1) % 10) + old[k + 1:]
                else:
                    new = old + "x"
                rows[what][j] = new
                f["points"][...] = rows
        before = (digest(archive), digest(archive + ".journal"))
        label = f"{what} edited, .h5 {'beside a cut journal' if beside_cut_journal else 'alone'} (trial {trial})"
        result = run("resume", archive)
        if what == "attribute" and not beside_cut_journal:
            if result.returncode != 2 or "checksum" not in result.stderr:
                fail(f"{label}: resume exit {result.returncode}, not a refusal naming the checksum\n{result.stderr}")
            if (digest(archive), digest(archive + ".journal")) != before:
                fail(f"{label}: a refused resume changed a file")
            outcomes["refused (exit 2)"] = outcomes.get("refused (exit 2)", 0) + 1
        else:
            if result.returncode != 0:
                fail(f"{label}: resume exit {result.returncode}\n{result.stderr}")
            # Named where the .h5 was its only copy (beside a cut journal that still holds the
            # point, the journal's record is used and the .h5's row is not needed); never accepted:
            # the archive below must equal the uninterrupted run, edited text included.
            if victim is not None and not beside_cut_journal and point_text(victim) not in result.stderr:
                fail(f"{label}: the edited row {point_text(victim)} was not named\n{result.stderr}")
            assert_equal_archives(archive, reference, label)
            outcomes["row refused and recomputed" if victim is not None else "journal kept, rest recomputed"] = \
                outcomes.get("row refused and recomputed" if victim is not None else "journal kept, rest recomputed", 0) + 1
        remove_archive(archive)
    shutil.rmtree(d)
    print(f"text-edits: {count} edited texts in a .h5 alone or beside a cut journal, none accepted: {outcomes}")


def point_text(point_id):
    return format(point_id, "016x")


def early_signals(work, delays):
    """SIGUSR1 to mpirun within the first 0.5 s of a 2-rank run of SLOW_JOB (while the ranks start
    or run): the ranks catch it and the sweep ends with exit 3 (or 0 if it finished first, 2 before
    anything was created), never killed by the signal; `resume` then completes to the uninterrupted
    archive."""
    launcher = os.environ.get("SLR_MPIEXEC")
    if not launcher:
        print("early-signals: SKIPPED (no SLR_MPIEXEC)")
        return
    early = os.path.join(work, "early")
    os.makedirs(early)
    job_path, reference = reference_run(early, "slow.toml", SLOW_JOB)
    codes = {}
    for delay in delays:
        d = os.path.join(work, f"usr1-{delay}")
        os.makedirs(d)
        archive = os.path.join(d, "a.h5")
        command = [launcher, *shlex.split(os.environ.get("SLR_MPIEXEC_PREFLAGS", "")), "-n", "2", SLR, "run", job_path,
                   "-o", archive]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(delay)
        process.send_signal(signal.SIGUSR1)
        output, _ = process.communicate(timeout=120)
        codes[delay] = process.returncode
        if process.returncode not in (0, 2, 3):
            fail(f"SIGUSR1 to mpirun after {delay} s: exit {process.returncode}, not 3 (or 0/2)\n{output}")
        if process.returncode == 2 and os.path.exists(archive):
            fail(f"SIGUSR1 after {delay} s: exit 2 but an archive was created")
        if os.path.exists(archive):
            run("resume", archive, expect=0)
            assert_equal_archives(archive, reference, f"SIGUSR1 after {delay} s, then resume")
        shutil.rmtree(d)
    print(f"early-signals: SIGUSR1 to mpirun at {sorted(codes)} s: exit codes {codes}; every archive resumed equal")


def salvage_kill(rng, work, reference, count):
    clean_journal = open(reference + ".journal", "rb").read()
    frame_list = frames(clean_journal)
    middle = frame_list[len(frame_list) // 2]
    for trial in range(count):
        d = os.path.join(work, f"salvage-kill{trial}")
        os.makedirs(d)
        archive = os.path.join(d, "a.h5")
        damaged = bytearray(clean_journal)
        damaged[rng.randrange(middle[0], middle[1])] ^= 1 << rng.randrange(8)
        with open(archive + ".journal", "wb") as f:
            f.write(damaged)
        if trial % 2 == 0:
            shutil.copy(reference, archive)
        process = subprocess.Popen([SLR, "recover", "--salvage", archive], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.05))
        process.kill()
        process.wait()
        # Whatever instant it died at, the next salvage (or, if it had finished, a resume) completes.
        again = run("recover", "--salvage", archive)
        if again.returncode != 0:
            fail(f"salvage killed, then salvage again: exit {again.returncode}\n{again.stdout}{again.stderr}")
        run("resume", archive, expect=0)
        assert_equal_archives(archive, reference, f"salvage killed at trial {trial}")
        shutil.rmtree(d)
    print(f"salvage-kill: {count} kills of recover --salvage, every archive completed equal to the uninterrupted run")


def refusals(work, reference):
    d = os.path.join(work, "refusals")
    os.makedirs(d)
    archive = os.path.join(d, "a.h5")
    shutil.copy(reference, archive)
    shutil.copy(reference + ".journal", archive + ".journal")
    os.symlink("a.h5", os.path.join(d, "link.h5"))
    before = (digest(archive), digest(archive + ".journal"))
    for arguments in (["export", archive, "--format", "csv", "-o", archive],
                      ["export", archive, "--format", "grid", "-o", os.path.join(d, "link.h5"), "--force"],
                      ["query", archive, "-o", archive + ".journal", "--force"]):
        result = run(*arguments, expect=2)
        if "archive being read" not in result.stderr:
            fail(f"{arguments}: unclear refusal: {result.stderr}")
    out = os.path.join(d, "points.csv")
    run("export", archive, "--format", "csv", "-o", out, expect=0)
    if "--force" not in run("export", archive, "--format", "csv", "-o", out, expect=2).stderr:
        fail("an existing output file was not refused without --force")
    run("export", archive, "--format", "csv", "-o", out, "--force", expect=0)
    big = os.path.join(d, "big.toml")
    with open(big, "w") as f:
        f.write('name = "big"\nseed = 1\n[grid]\nnu = {linspace = [0.1, 10, 100000]}\n'
                'delta = {linspace = [0, 1, 100000]}\nL = {linspace = [1, 100000, 100000]}\n'
                '[[method]]\nname = "bayes"\n')
    start = time.monotonic()
    result = run("plan", big, expect=2)
    elapsed = time.monotonic() - start
    if "1000000000000000 points" not in result.stderr or "--max-points" not in result.stderr:
        fail(f"10^15-point job: unclear refusal: {result.stderr}")
    result = run("run", big, "-o", os.path.join(d, "big.h5"), expect=2)
    if os.path.exists(os.path.join(d, "big.h5")):
        fail("a refused run created its archive")
    narrower = os.path.join(d, "narrower.toml")
    with open(narrower, "w") as f:
        f.write(JOB.replace("nu = {linspace = [0.5, 6, 16]}", "nu = {linspace = [0.5, 6, 8]}"))
    result = run("resume", archive, "--extend", narrower, expect=2)
    if "refused" not in result.stderr:
        fail(f"narrower --extend: unclear refusal: {result.stderr}")
    if (digest(archive), digest(archive + ".journal")) != before:
        fail("a refused resume --extend changed a file")
    print(f"refusals: export/query onto the input refused; 10^15 points refused in {elapsed:.3f} s; "
          "refused --extend left both files byte-identical")


def full_disk(work, reference, job_path):
    mount_point = os.path.join(work, "tiny")
    os.makedirs(mount_point)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mount_point], capture_output=True)
    if mounted.returncode != 0:
        print("full-disk: SKIPPED (mounting a tmpfs is not permitted here: "
              f"{mounted.stderr.decode(errors='replace').strip()})")
        return
    try:
        filler = os.path.join(mount_point, "filler")
        # Leave room for the journal's first records only.
        subprocess.run(["fallocate", "-l", "2032k", filler], check=True)
        archive = os.path.join(mount_point, "a.h5")
        result = run("run", job_path, "-o", archive)
        if result.returncode != 1:
            fail(f"full disk: exit {result.returncode}, expected 1\n{result.stderr}")
        messages = [line for line in result.stderr.splitlines() if "error" in line or "fatal" in line]
        if len(messages) != 1 or "No space left on device" not in messages[0] or len(messages[0]) > 300:
            fail(f"full disk: expected one short line naming the reason:\n{result.stderr}")
        leftovers = [n for n in os.listdir(mount_point) if ".tmp" in n]
        if leftovers:
            fail(f"full disk: temporary files left behind: {leftovers}")
        retry = run("resume", archive)
        if retry.returncode != 1:
            fail(f"full disk, resume: exit {retry.returncode}, expected 1\n{retry.stderr}")
        os.remove(filler)
        run("resume", archive, expect=0)
        assert_equal_archives(archive, reference, "full disk then resume")
        launcher = os.environ.get("SLR_MPIEXEC")
        if launcher:  # on 2 ranks: the workers are stopped, not aborted (no MPI_ABORT banner)
            os.remove(archive)
            os.remove(archive + ".journal")
            subprocess.run(["fallocate", "-l", "2032k", filler], check=True)
            ranks = subprocess.run([launcher, *shlex.split(os.environ.get("SLR_MPIEXEC_PREFLAGS", "")), "-n", "2", SLR,
                                    "run", job_path, "-o", archive], capture_output=True, text=True, cwd=work)
            ours = [line for line in ranks.stderr.splitlines() if line.startswith("slr-sweep:") and
                    ("error" in line or "fatal" in line)]
            if ranks.returncode != 1 or "MPI_ABORT" in ranks.stderr or len(ours) != 1 or \
                    "No space left on device" not in ours[0]:
                fail(f"full disk on 2 ranks: exit {ranks.returncode}, expected 1 with one line and no MPI_ABORT:\n"
                     f"stderr: {ranks.stderr}\nstdout: {ranks.stdout}\nfiles: {os.listdir(mount_point)}")
            os.remove(filler)
            run("resume", archive, expect=0)
            assert_equal_archives(archive, reference, "full disk on 2 ranks then resume")
        print("full-disk: exit 1 with one line, no crash, no temporary file (and no MPI_ABORT on 2 ranks); "
              "resumed to an equal archive")
    finally:
        subprocess.run(["umount", mount_point])


def sigint(work):
    launcher = os.environ.get("SLR_MPIEXEC")
    if not launcher:
        print("sigint: SKIPPED (no SLR_MPIEXEC)")
        return
    d = os.path.join(work, "sigint")
    os.makedirs(d)
    job_path, reference = reference_run(d, "slow.toml", SLOW_JOB)
    archive = os.path.join(d, "a.h5")
    command = [launcher, *shlex.split(os.environ.get("SLR_MPIEXEC_PREFLAGS", "")), "-n", "2", SLR, "run", job_path,
               "-o", archive]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait for some journaled points
        if os.path.exists(archive + ".journal") and os.path.getsize(archive + ".journal") > 6000:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=120)
    status = run("status", archive, expect=0)
    if "up to date with the journal" not in status.stdout:
        fail(f"SIGINT to mpirun: the .h5 is not up to date with the journal:\n{status.stdout}\n{output}")
    done = re.search(r"points: (\d+) in the snapshot", status.stdout)
    run("resume", archive, expect=0)
    assert_equal_archives(archive, reference, "SIGINT to mpirun, then resume")
    print(f"sigint: mpirun exit {process.returncode} (the ranks drain and exit 3), "
          f"{done.group(1) if done else '?'} points in an up-to-date .h5; resumed to an equal archive")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flips", type=int, default=30)
    parser.add_argument("--truncations", type=int, default=10)
    parser.add_argument("--h5-flips", type=int, default=4)
    parser.add_argument("--kills", type=int, default=6)
    parser.add_argument("--h5-flips-journal", type=int, default=12)
    parser.add_argument("--text-edits", type=int, default=8)
    # A signal that reaches a rank before its process has loaded its libraries and entered main
    # still kills it (tens of ms after mpirun starts it, more on a loaded machine): the default
    # delays start once the ranks run; the long run adds 0.05 s.
    parser.add_argument("--signal-delays", default="0.1,0.2,0.3,0.4,0.5")
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args()
    global JOB_PATH
    rng = random.Random(args.seed)
    def timed(name, step, *step_args):
        start = time.monotonic()
        step(*step_args)
        print(f"  [{name}: {time.monotonic() - start:.1f} s]", flush=True)

    with tempfile.TemporaryDirectory(prefix="slr-faults-") as work:
        job_path, reference = reference_run(work, "job.toml", JOB)
        JOB_PATH = job_path
        timed("journal flips", flips, args.flips, rng, work, reference)
        timed("journal truncations", truncations, args.truncations, rng, work, reference)
        timed("zeroed tail", zeroed_tail, rng, work, reference)
        timed("h5 alone", h5_alone, rng, work, args.h5_flips)
        timed("h5 flips beside journal", h5_flips_beside_journal, rng, work, args.h5_flips_journal)
        timed("h5 text edits", h5_text_edits, rng, work, args.text_edits)
        timed("early signals", early_signals, work, [float(d) for d in args.signal_delays.split(",")])
        timed("salvage kill", salvage_kill, rng, work, reference, args.kills)
        timed("refusals", refusals, work, reference)
        timed("full disk", full_disk, work, reference, job_path)
        timed("sigint", sigint, work)
    print("PASS")


if __name__ == "__main__":
    main()
