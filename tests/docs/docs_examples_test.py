#!/usr/bin/python3
"""Every example in README.md, docs/*.md and jobs/README.md runs.

Fenced blocks are executed in order, per file, in one scratch directory:
  sh      every line is a shell command (continuation lines joined), run with bash; exit 0 expected
  python  the block runs with /usr/bin/python3 (PYTHONPATH = the package's sources)
  toml    a job file: written to disk and accepted by `slr-sweep plan`
  (none)  a transcript: lines starting with "$ " are run and their JSON output must have the same
          keys and, for numbers, the same values within 1e-3 (relative); other blocks are text
A block preceded by <!-- docs-test: skip REASON --> is not run (the README's install-and-build and
test commands, which CI runs itself; command synopses).

The scratch directory has the archives the examples name (results.h5, fig3.h5, fig3_erm.h5,
fig3_theory.h5, smoke.h5), made here by small sweeps, a copy of the package sources (src/python)
and a jobs/ folder in which the full-size figure jobs are replaced by small jobs of the same kind
(same methods, a few points), so that `slr-sweep run jobs/fig3_theory.toml …` runs verbatim in
seconds; jobs/smoke.toml is the real one.

usage: docs_examples_test.py <repository>   (env SLR_SWEEP; SLR_MPIEXEC for mpirun)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(sys.argv[1])
SLR = os.environ["SLR_SWEEP"]
FILES = ["README.md"] + sorted(os.path.relpath(os.path.join(REPO, "docs", f), REPO)
                               for f in os.listdir(os.path.join(REPO, "docs")) if f.endswith(".md")) + ["jobs/README.md"]

# The grid of the small jobs: two activations, two alpha, two (r_k, r_v).
TINY_GRID = """[grid]
activation = ["softmax", "linear"]
alpha = [1.0, 2.0]
r_k = [0.1, 1.0]
r_v = [0.1, 1.0]
zip = [["r_k", "r_v"]]
"""
TINY_THEORY = """name = "fig3_theory"
seed = 7
""" + TINY_GRID + """[[method]]
name = "fixed-point"
samples = 500
max-iter = 60
[[method]]
name = "state-evolution"
samples = 500
grid = { activation = "softmax", r_k = 0.0, r_v = 0.0, zip = [] }
[[method]]
name = "population"
samples = 2000
[[method]]
name = "bayes"
samples = 2000
grid = { activation = "softmax" }
"""
TINY_ERM = """name = "fig3_erm"
seed = 8
""" + TINY_GRID + """repeats = 2
[[method]]
name = "erm"
D = 40
test-samples = 500
"""

# results.h5 of the examples: theory and simulations of one small grid.
TINY_RESULTS = TINY_THEORY.replace('name = "fig3_theory"', 'name = "results"') + """[[method]]
name = "erm"
D = 40
test-samples = 500
"""

failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def blocks(path):
    """(language, text, directive, line) of every fenced block of a Markdown file."""
    out, lines = [], open(path).read().splitlines()
    i, directive = 0, None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*<!--\s*docs-test:\s*(.*?)\s*-->", line)
        if m:
            directive = m.group(1)
        elif line.startswith("```"):
            language, start, body = line[3:].strip(), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((language, "\n".join(body), directive, start))
            directive = None
        elif line.strip():
            directive = None if not line.lstrip().startswith("<!--") else directive
        i += 1
    return out


def shell_commands(text):
    joined, current = [], ""
    for line in text.splitlines():
        current += line.rstrip("\\").rstrip() + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            if current.strip() and not current.strip().startswith("#"):
                joined.append(current.strip())
            current = ""
    return joined


def run(command, cwd, env, timeout=600):
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def same_json(expected, actual, where):
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(expected) != set(actual):
            fail(f"{where}: keys differ: {sorted(expected)} vs {sorted(actual) if isinstance(actual, dict) else actual}")
            return
        for k, v in expected.items():
            if k != "wall_s":
                same_json(v, actual.get(k), f"{where}.{k}")
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if not isinstance(actual, (int, float)) or abs(actual - expected) > 1e-3 * max(1.0, abs(expected)):
            fail(f"{where}: {actual} vs documented {expected}")
    elif expected != actual:
        fail(f"{where}: {actual!r} vs documented {expected!r}")


def main():
    work = tempfile.mkdtemp(prefix="slr-docs-")
    try:
        bin_dir = os.path.join(work, ".bin")
        os.makedirs(bin_dir)
        os.symlink(SLR, os.path.join(bin_dir, "slr-sweep"))
        env = dict(os.environ)
        env["PATH"] = bin_dir + os.pathsep + env["PATH"]
        env["PYTHONPATH"] = os.path.join(work, "src", "python")
        env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"  # `mpirun -n 8` on a small machine
        env["MPLBACKEND"] = "Agg"
        shutil.copytree(os.path.join(REPO, "src", "python"), os.path.join(work, "src", "python"),
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        shutil.copytree(os.path.join(REPO, "jobs"), os.path.join(work, "jobs"))
        for name, text in (("fig3_theory.toml", TINY_THEORY), ("fig3_erm.toml", TINY_ERM)):
            with open(os.path.join(work, "jobs", name), "w") as f:
                f.write(text)
        with open(os.path.join(work, "fig3_more.toml"), "w") as f:  # README: resume --extend fig3_more.toml
            f.write(TINY_THEORY.replace("alpha = [1.0, 2.0]", "alpha = [1.0, 2.0, 4.0]"))
        # The archives the examples read.
        for job, archive in (("jobs/fig3_theory.toml", "fig3_theory.h5"), ("jobs/fig3_erm.toml", "fig3_erm.h5"),
                             ("jobs/smoke.toml", "smoke.h5")):
            result = run(f"slr-sweep run {job} -o {archive}", work, env)
            if result.returncode != 0:
                fail(f"fixture {archive}: {result.stderr}")
                return
        with open(os.path.join(work, "results.toml"), "w") as f:
            f.write(TINY_RESULTS)
        results = run("slr-sweep run results.toml -o results.h5", work, env)
        if results.returncode != 0:
            fail(f"fixture results.h5: {results.stderr}")
            return
        executed = skipped = 0
        for relative in FILES:
            for language, text, directive, line in blocks(os.path.join(REPO, relative)):
                where = f"{relative}:{line}"
                if directive and directive.startswith("skip"):
                    skipped += 1
                    print(f"skip {where}: {directive[4:].strip()}")
                    continue
                if language == "sh":
                    for command in shell_commands(text):
                        # Commands that create an archive the scratch folder already has write anew.
                        m = re.search(r"\brun\s+\S+\s+-o\s+(\S+\.h5)", command)
                        if m:
                            for suffix in ("", ".journal"):
                                path = os.path.join(work, m.group(1) + suffix)
                                if os.path.exists(path):
                                    os.remove(path)
                        result = run(command, work, env)
                        executed += 1
                        if result.returncode != 0:
                            fail(f"{where}: `{command}` exited {result.returncode}: {result.stderr.strip()[-500:]}")
                elif language == "python":
                    result = subprocess.run(["/usr/bin/python3", "-c", text], cwd=work, env=env, capture_output=True,
                                            text=True, timeout=600)
                    executed += 1
                    if result.returncode != 0:
                        fail(f"{where}: python block: {result.stderr.strip()[-800:]}")
                elif language == "toml":
                    path = os.path.join(work, f"example-{os.path.basename(relative)}-{line}.toml")
                    with open(path, "w") as f:
                        f.write(text + "\n")
                    result = run(f"slr-sweep plan {path}", work, env)
                    executed += 1
                    if result.returncode != 0:
                        fail(f"{where}: the job example does not validate: {result.stderr.strip()}")
                elif language == "" and text.lstrip().startswith("$ "):
                    lines = text.strip().splitlines()
                    command = lines[0][2:]
                    documented = json.loads(" ".join(l.strip() for l in lines[1:]))
                    result = run(command, work, env)
                    executed += 1
                    if result.returncode != 0:
                        fail(f"{where}: `{command}` exited {result.returncode}: {result.stderr}")
                    else:
                        same_json(documented, json.loads(result.stdout), where)
                else:
                    fail(f"{where}: a code block ({language or 'no language'}) the test cannot run; mark it "
                         "<!-- docs-test: skip REASON --> or give it a language")
        print(f"docs examples: {executed} commands/blocks executed, {skipped} blocks skipped by directive")
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("PASS")
