#!/usr/bin/python3
"""Bad input through the CLI: each bad job file makes `slr-sweep plan` exit with 2 and a one-line
error naming the file, the field and the reason; `status`/`recover` on missing or foreign files
exit with 2; nothing is created or modified in the directory.

usage: bad_input.py   (env SLR_SWEEP = the slr-sweep binary)
"""
import json
import os
import subprocess
import sys
import tempfile

slr_sweep = os.environ["SLR_SWEEP"]
HEAD = 'name = "bad"\nseed = 1\n'
METHOD = '\n[[method]]\nname = "bayes"\n'
CASES = [  # (label, text, substrings the error must contain)
    ("syntax", 'name = "x\nseed = 1\n', ["TOML syntax error", ":1:"]),
    ("unknown key", HEAD + "sede = 3\n" + METHOD, ["sede", "unknown key"]),
    ("wrong type", 'name = "bad"\nseed = "abc"\n' + METHOD, ["seed", "expected an integer"]),
    ("empty axis", HEAD + "[grid]\nnu = []\n" + METHOD, ["grid.nu", "empty axis"]),
    ("logspace n = 0", HEAD + "[grid]\nnu = {logspace = [-1, 1, 0]}\n" + METHOD, ["grid.nu.logspace", ">= 1"]),
    ("unknown activation", HEAD + '[grid]\nactivation = "softmx"\n' + METHOD, ["grid.activation", "softmx"]),
    ("unknown method", HEAD + '[[method]]\nname = "populaton"\n', ["method[1].name", "unknown method"]),
    ("bad option value", HEAD + METHOD + "samples = 5\n", ["method[1].samples", "out of range"]),
    ("negative alpha", HEAD + "[grid]\nalpha = -1\n" + METHOD, ["grid.alpha", "must be > 0"]),
    ("negative nu", HEAD + "[grid]\nnu = [1, -4]\n" + METHOD, ["grid.nu[2]", "must be >= 0"]),
    ("inf with spiked", HEAD + '[grid]\nnu = "inf"\n' + METHOD, ["grid.nu", "inf"]),
    ("zip mismatch", HEAD + '[grid]\nnu = [1, 2]\ndelta = [0]\nzip = [["nu", "delta"]]\n' + METHOD,
     ["grid.zip", "equal lengths"]),
    ("L pmf", HEAD + "[grid]\nL = {1 = 0.5, 3 = 0.6}\n" + METHOD, ["grid.L"]),
    ("no method", HEAD, ["method", "at least one"]),
    ("at not a number", HEAD + '[[method]]\nname = "population"\nat = "m_kk=abc"\n', ["at", "m_kk=abc"]),
    ("at with trailing text", HEAD + '[[method]]\nname = "population"\nat = "m_kk=0.5abc"\n', ["at", "m_kk=0.5abc"]),
]


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def snapshot(directory):
    return {name: os.stat(os.path.join(directory, name)).st_mtime_ns for name in os.listdir(directory)}


with tempfile.TemporaryDirectory() as tmp:
    for index, (label, text, needles) in enumerate(CASES):
        job = os.path.join(tmp, f"bad{index}.toml")
        with open(job, "w") as f:
            f.write(text)
        before = snapshot(tmp)
        result = subprocess.run([slr_sweep, "plan", job], capture_output=True, text=True, cwd=tmp)
        if result.returncode != 2:
            fail(f"{label}: exit code {result.returncode}, expected 2; stderr: {result.stderr}")
        message = result.stderr.strip()
        if "\n" in message or job not in message:
            fail(f"{label}: expected a one-line error naming {job}: {message!r}")
        for needle in needles:
            if needle not in message:
                fail(f"{label}: {needle!r} not in {message!r}")
        if snapshot(tmp) != before:
            fail(f"{label}: files changed in the directory")
        print(f"{label}: {message}")

    # Missing and foreign archives.
    foreign = os.path.join(tmp, "foreign.h5")
    with open(foreign, "w") as f:
        f.write("not an archive")
    before = snapshot(tmp)
    for command in (["status", os.path.join(tmp, "missing.h5")], ["recover", os.path.join(tmp, "missing.h5")],
                    ["status", foreign], ["plan", os.path.join(tmp, "missing.toml")]):
        result = subprocess.run([slr_sweep] + command, capture_output=True, text=True, cwd=tmp)
        if result.returncode != 2:
            fail(f"{command}: exit code {result.returncode}, expected 2; stderr: {result.stderr}")
        if command[1] not in result.stderr:
            fail(f"{command}: the error does not name the file: {result.stderr!r}")
        print(" ".join(command[:1]), "->", result.stderr.strip())
    # Bad values on the command line: exit 2, one line naming the flag.
    for command, needle in ((["point", "--method", "population", "--at", "m_kk=0.5abc"], "m_kk=0.5abc"),
                            (["point", "--method", "bayes", "--seed", "-1"], "--seed"),
                            (["point", "--method", "bayes", "--seed", "18446744073709551616"], "--seed"),
                            (["statsu", "x.h5"], "unknown subcommand 'statsu'"),
                            (["run", tmp, "-o", os.path.join(tmp, "x.h5")], "is a directory"),
                            (["status", tmp], "is a directory"),
                            (["point", "--method", "bayes", "--nu", "0x10"], "'0x10' is not a number"),
                            (["point", "--method", "bayes", "--nu", " 1"], "is not a number"),
                            (["point", "--method", "bayes", "--nu", "nan"], "is not a number"),
                            (["plan", "/dev/zero"], "larger than 16 MiB"),
                            (["upgrade", os.path.join(tmp, "missing.h5")], "missing.h5"),
                            (["recover", foreign], "foreign.h5")):
        result = subprocess.run([slr_sweep] + command, capture_output=True, text=True, cwd=tmp)
        if result.returncode != 2 or needle not in result.stderr:
            fail(f"{command}: exit {result.returncode}, expected 2 with {needle!r}; stderr: {result.stderr!r}")
        print(" ".join(command[:2]), "->", result.stderr.strip())
    # A refused figure name leaves no output folder behind.
    result = subprocess.run([slr_sweep, "plot", foreign, "--figure", "nope", "-o", os.path.join(tmp, "figs")],
                            capture_output=True, text=True, cwd=tmp)
    if result.returncode != 2 or os.path.exists(os.path.join(tmp, "figs")):
        fail(f"plot onto a bad input: exit {result.returncode}, figs/ exists: {os.path.exists(os.path.join(tmp, 'figs'))}")
    # -0 and 0 are one value: one point identity. Help ranges say whether inf is accepted.
    ids = []
    with tempfile.TemporaryDirectory() as zero:
        for index, nu in enumerate(("0.0", "-0.0", "0", "-0")):
            job = os.path.join(zero, f"zero{index}.toml")
            with open(job, "w") as f:
                f.write(HEAD + f"[grid]\nnu = {nu}\n" + METHOD + "samples = 100\n")
            archive = os.path.join(zero, f"zero{index}.h5")
            result = subprocess.run([slr_sweep, "run", job, "-o", archive], capture_output=True, text=True)
            if result.returncode != 0:
                fail(f"nu = {nu}: exit {result.returncode}: {result.stderr}")
            result = subprocess.run([slr_sweep, "status", archive, "--json"], capture_output=True, text=True)
            ids.append(json.loads(result.stdout)["fingerprint"])
    if len(set(ids)) != 1:
        fail(f"nu = 0.0, -0.0, 0, -0 give different jobs (fingerprints {ids})")
    help_text = subprocess.run([slr_sweep, "point", "--help"], capture_output=True, text=True).stdout
    for needle in ("--r-k TEXT", "--nu TEXT"):
        line = next(l for l in help_text.splitlines() if needle in l)
        if needle == "--r-k TEXT" and "[0, inf)" not in line:
            fail(f"the range of r_k (inf refused) is not shown as [0, inf): {line}")
        if needle == "--nu TEXT" and "[0, inf]" not in line:
            fail(f"the range of nu (inf accepted) is not shown as [0, inf]: {line}")
    if snapshot(tmp) != before:
        fail("status/recover/plan created or modified files")
    with open(foreign) as f:
        if f.read() != "not an archive":
            fail("the foreign file was modified")
print("ok")
