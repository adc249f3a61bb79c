#!/usr/bin/python3
"""Script test: the committed figures are what the current code draws from the committed archives.

Runs jobs/figures/regenerate.sh on jobs/figures/data (--full, drawing into a temporary folder instead
of jobs/figures) and compares every figure it draws with the committed file of the same path:
  * PNG: pixel-identical (the decoded RGBA arrays are equal). The bytes are also compared and a
    difference reported, but only pixels fail the test: the PNG encoder's zlib may compress the same
    pixels differently on another machine.
  * SVG and PDF: byte-identical (the plotting code fixes their metadata: no date, no hash salt).
At least one figure of each kind must be redrawn: an SLR population figure (Fig 5), an SLR
finite-alpha figure (Fig 3) and a tied-attention figure, so that a change of any plotting family
that moves a pixel fails here. A figure whose archives are not committed is skipped by
regenerate.sh (exit 1) and listed here.
usage: figures_redraw_test.py REPOSITORY   (env SLR_SWEEP = the slr-sweep binary)"""
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import numpy as np  # noqa: E402

REPO = os.path.abspath(sys.argv[1])
FIGURES = os.path.join(REPO, "jobs", "figures")
# One figure of each plotting family that must be redrawn from the committed archives.
REQUIRED = ["fig5_mismatched.png", "fig3_finite_alpha.png", "fig3_finite_alpha.svg",
            "tied/tied_fig1-tied-learning-curve.png", "tied/tied_fig1-tied-learning-curve.svg"]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(["bash", os.path.join(FIGURES, "regenerate.sh"),
                              os.path.join(FIGURES, "data"), "--full", "--out", out],
                             cwd=REPO, capture_output=True, text=True, env=dict(os.environ))
        skipped = [line for line in run.stderr.splitlines() if "skipped" in line and "regenerate" in line]
        if run.returncode not in (0, 1):
            sys.exit(f"regenerate.sh failed (exit {run.returncode}):\n{run.stderr}")
        drawn = sorted(os.path.relpath(os.path.join(root, name), out)
                       for root, _, names in os.walk(out) for name in names)
        for rel in REQUIRED:
            if rel not in drawn:
                failures.append(f"{rel}: not redrawn from jobs/figures/data")
        for rel in drawn:
            new, old = os.path.join(out, rel), os.path.join(FIGURES, rel)
            if not os.path.exists(old):
                failures.append(f"{rel}: drawn, but not committed under jobs/figures")
                continue
            with open(new, "rb") as a, open(old, "rb") as b:
                same_bytes = a.read() == b.read()
            if rel.endswith(".png"):
                pa, pb = matplotlib.image.imread(new), matplotlib.image.imread(old)
                if pa.shape != pb.shape:
                    failures.append(f"{rel}: size {pa.shape[1]}x{pa.shape[0]} px, committed "
                                    f"{pb.shape[1]}x{pb.shape[0]} px")
                elif not np.array_equal(pa, pb):
                    rows, cols = np.nonzero(np.any(pa != pb, axis=-1))
                    failures.append(f"{rel}: {rows.size} pixels differ from the committed image "
                                    f"(rows {rows.min()}-{rows.max()}, columns {cols.min()}-{cols.max()})")
                elif not same_bytes:
                    print(f"note: {rel}: same pixels, different PNG bytes (encoder)")
            elif not same_bytes:
                failures.append(f"{rel}: bytes differ from the committed file")
        print(f"redrew {len(drawn)} files from jobs/figures/data; "
              f"{len(drawn) - len(failures)} identical to the committed ones")
        for line in skipped:
            print("note: " + line)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        print("If the change of the figure is intended, redraw with "
              "`bash jobs/figures/regenerate.sh jobs/figures/data --full` and commit the images.")
        sys.exit(1)


if __name__ == "__main__":
    main()
