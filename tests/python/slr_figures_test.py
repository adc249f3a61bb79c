#!/usr/bin/python3
"""Script test: the SLR figures (Figs 2-5 and the gradient-flow trajectories) on column tables
built here, so that every drawn value can be compared with the value it must be:
  * population: ok values filled (also at nu = infinity), not-ok ones hollow; softmax said to attain
    the Bayes risk; the panels side by side on screen, in one column in the print styles;
  * finite-alpha: at each alpha the r with the smallest mean test risk; where that r is not ok the
    curve breaks there and the point is hollow (never the next r); the other r's not-ok points are
    not drawn; --series r_k gives one curve per r_k, each its own colour, and clips the y range a
    little above the risk of f = 0; --xscale log/linear;
  * mismatched: the ℶ line runs only over distinct/runaway points and is not joined across a
    collapsed stretch, each activation with its own dash pattern and an error bar at every point;
    nu = infinity is a column labelled ∞, its ℶ marker named in the legend;
  * order-parameters: a fixed point whose test risk is far outside the runs' range is drawn as off
    the ERM branch;
  * trajectory: the median over runs at each recorded time;
  * styles: paper 3.4 in wide, paper-wide 7 in, one legend below the panels and none inside.
usage: slr_figures_test.py REPOSITORY"""
import json
import os
import sys

import numpy as np

REPO = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(REPO, "src", "python"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from slr_sweep import figures  # noqa: E402

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def table(rows):
    """A column table (archive.load_columns' form) from a list of dicts; absent numbers are NaN."""
    keys = sorted({k for r in rows for k in r})
    text = {"method", "status", "activation", "task", "extra_json", "start", "at", "options", "L_pmf"}
    cols = {}
    for k in keys:
        if k in text:
            cols[k] = np.array([str(r.get(k, "")) for r in rows], dtype=object)
        else:
            cols[k] = np.array([float(r.get(k, np.nan)) for r in rows])
    cols["point_id"] = np.arange(len(rows), dtype=np.uint64)
    return cols


BASE = {"task": "spiked", "nu": 1.0, "L_pmf": "3", "delta": 0.0}


def lines_labelled(ax, text):
    return [l for l in ax.get_lines() if l.get_label().lstrip("_") == text]


# ---------------------------------------------------------------- finite-alpha: best r, not ok
alphas = [0.5, 1.0, 2.0, 4.0]
# r = 1 wins at every alpha except alpha = 2, where r = 0.1 has the smaller risk but did not converge;
# r = 0.01 diverged at alpha = 4 (not the winner: must not be drawn).
risk = {1.0: [0.95, 0.90, 0.80, 0.70], 0.1: [0.97, 0.93, 0.75, 0.72], 0.01: [0.99, 0.96, 0.90, 11.7]}
rows = []
for r, values in risk.items():
    for a, v in zip(alphas, values):
        status = "not_converged" if (r == 0.1 and a == 2.0) else "diverged" if (r == 0.01 and a == 4.0) else "ok"
        rows.append(dict(BASE, method="fixed-point", activation="softmax", alpha=a, r_k=r, r_v=r, test_risk=v,
                         status=status))
cols = table(rows)
fig = figures.make(cols, "finite-alpha")
ax = fig.axes[0]
segments = lines_labelled(ax, "softmax: fixed point")
check(len(segments) == 2, f"the tuned curve breaks at the not-ok winner: {len(segments)} segment(s)")
if len(segments) == 2:
    check(list(segments[0].get_xdata()) == [0.5, 1.0] and list(segments[0].get_ydata()) == [0.95, 0.90],
          f"first segment {segments[0].get_xydata().tolist()}")
    check(list(segments[1].get_xdata()) == [4.0] and list(segments[1].get_ydata()) == [0.70],
          f"second segment {segments[1].get_xydata().tolist()}")
hollow = [a for a in ax.artists if isinstance(a, Line2D)] + \
    [a for a in ax.get_children() if isinstance(a, Line2D) and a.get_marker() == "o" and a.get_mfc() == "none"]
points = {tuple(p) for h in hollow for p in h.get_xydata().tolist()}
check((2.0, 0.75) in points, f"the not-ok winner at alpha = 2 is hollow: {points}")
check((4.0, 11.7) not in points, f"a not-ok r that is not the winner is not drawn: {points}")
check(all(ax.get_legend() is None for ax in fig.axes) and getattr(fig, "legends", []),
      "one legend for the figure, none inside a panel")
check(ax.get_xscale() == "linear", f"alpha 0.5 … 4 spans less than 20: linear axis ({ax.get_xscale()})")
check(figures.make(cols, "finite-alpha", xscale="log").axes[0].get_xscale() == "log", "--xscale log")
fig = figures.make(cols, "finite-alpha", series="r_k")
labels = {l.get_label().lstrip("_") for l in fig.axes[0].get_lines()}
check({"softmax, r_k=0.01: fixed point", "softmax, r_k=0.1: fixed point", "softmax, r_k=1: fixed point"} <= labels,
      f"--series r_k: one curve per r_k: {sorted(labels)}")
colours = {l.get_label().lstrip("_"): to_hex(l.get_color()) for l in fig.axes[0].get_lines()
           if l.get_label().lstrip("_").endswith(": fixed point")}
check(len(set(colours.values())) == len(colours) == 3, f"--series r_k: a colour per r_k: {colours}")
# An interpolation peak with status ok (r = 0.01, alpha = 2: 3.0) lies above the clipped y range.
peak = table([dict(BASE, method="fixed-point", activation="linear", alpha=a, r_k=r, r_v=r, status="ok",
                   test_risk=3.0 if (r == 0.01 and a == 2.0) else v)
              for r, values in ((1.0, [0.95, 0.90, 0.80, 0.70]), (0.01, [0.99, 1.2, 0.9, 0.8]))
              for a, v in zip(alphas, values)])
fig = figures.make(peak, "finite-alpha", series="r_k")
top = fig.axes[0].get_ylim()[1]
check(0.99 <= top < 1.2, f"--series r_k: the y range holds the values up to 1.1 × f = 0's risk ({top:.3g})")
legend = [t.get_text() for t in fig.legends[0].get_texts()]
check(any("2 values above it" in t for t in legend), f"--series r_k: the 2 values above the y range counted: {legend}")

# ---------------------------------------------------------------- styles
for style, width in (("paper", 3.4), ("paper-wide", 7.0)):
    fig = figures.make(cols, "finite-alpha", style=style)
    check(abs(fig.get_size_inches()[0] - width) < 1e-9, f"style {style}: width {fig.get_size_inches()[0]} in")
    box = fig.axes[0].get_position()
    check(box.width * width > 0.55 * width, f"style {style}: the data area is {box.width * width:.2f} in wide")
    legend_top = fig.legends[0].get_window_extent(fig.canvas.get_renderer()).y1 / fig.bbox.height
    check(legend_top <= box.y0, f"style {style}: the legend ({legend_top:.3f}) is below the panel ({box.y0:.3f})")

# ---------------------------------------------------------------- population: markers, Bayes, stacking
rows = []
for task in ("spiked", "max"):
    for nu in ([0.5, 1.0, 2.0] + ([float("inf")] if task == "max" else [])):
        bayes = 0.6 / (1 + nu) if np.isfinite(nu) else 0.0
        for act, excess in (("softmax", 0.0), ("linear", 0.2)):
            status = "unbounded" if (act == "softmax" and np.isinf(nu)) else "ok"
            rows.append(dict(BASE, task=task, nu=nu, method="population", activation=act, risk=bayes + excess,
                             risk_stderr=1e-4, status=status))
        rows.append(dict(BASE, task=task, nu=nu, method="bayes", activation="softmax", risk=bayes, status="ok"))
cols = table(rows)
fig = figures.make(cols, "population")
ax = fig.axes[1]
x_inf = float(ax.get_xticks()[-1])
at_inf = [l for l in ax.get_lines() + [a for a in ax.artists if isinstance(a, Line2D)]
          if len(l.get_xdata()) == 1 and float(l.get_xdata()[0]) == x_inf and l.get_marker() not in ("_", "None")]
fill = {round(float(l.get_ydata()[0]), 6): l.get_mfc() for l in at_inf}
check(fill.get(0.2) not in (None, "none") and fill.get(0.0) == "none",
      f"nu = infinity: the ok linear value filled, the unbounded softmax value hollow: {fill}")
labels = [t.get_text() for t in fig.legends[0].get_texts()]
check(any(t.startswith("softmax") and "Bayes" in t for t in labels), f"softmax said to attain the Bayes risk: {labels}")
boxes = [a.get_position() for a in fig.axes[:2]]
check(boxes[0].x0 < boxes[1].x0 and abs(boxes[0].y0 - boxes[1].y0) < 1e-9, "screen: the two panels side by side")
for style in ("paper", "paper-wide"):
    boxes = [a.get_position() for a in figures.make(cols, "population", style=style).axes[:2]]
    check(abs(boxes[0].x0 - boxes[1].x0) < 1e-9 and boxes[0].y0 > boxes[1].y1,
          f"style {style}: the panels stacked in one column")

# ---------------------------------------------------------------- mismatched: ℶ segments, nu = infinity
nus = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, float("inf")]
outcomes = ["collapsed", "not-converged", "distinct", "distinct", "runaway", "collapsed", "distinct", "runaway"]
rows = []
for nu, outcome in zip(nus, outcomes):
    e = 0.5 / (1 + nu) if np.isfinite(nu) else 0.1
    rows.append(dict(BASE, task="max", nu=nu, method="population", activation="linear", risk=e, status="ok",
                     extra_json=json.dumps({"outcome": "matched"})))
    b = e if outcome == "collapsed" else e + 0.2
    rows.append(dict(BASE, task="max", nu=nu, method="population", activation="linear", risk=b, start="swapped",
                     risk_stderr=0.01, status="ok", extra_json=json.dumps({"outcome": outcome})))
    rows.append(dict(BASE, task="max", nu=nu, method="bayes", activation="softmax", risk=0.3 / (1 + nu)
                     if np.isfinite(nu) else 0.0, status="ok"))
cols = table(rows)
fig = figures.make(cols, "mismatched")
ax = fig.axes[0]
dashed = lines_labelled(ax, "linear: ℶ (swapped start)")
check([list(l.get_xdata()) for l in dashed] == [[1.0, 3.0, 10.0], [100.0]],
      f"ℶ drawn over distinct/runaway stretches only: {[list(l.get_xdata()) for l in dashed]}")
# The Monte Carlo error of ℶ: a ±1 standard error band over each stretch of more than one point,
# an error bar on a lone point and on nu = infinity.
from matplotlib.collections import LineCollection, PolyCollection  # noqa: E402

bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
band_heights = sorted(round(float(np.ptp(p.vertices[:, 1])), 6) for c in bands for p in c.get_paths())
check(any(abs(h - (0.5 / (1 + 1.0) - 0.5 / (1 + 10.0) + 0.02)) < 1e-6 for h in band_heights),
      f"the stretch nu = 1..10 has a band of ±0.01 around ℶ: band heights {band_heights}")
bars = [c for c in ax.collections if isinstance(c, LineCollection)]
bar_lengths = sorted(round(float(np.ptp(seg[:, 1])), 6) for c in bars for seg in c.get_segments())
check(bar_lengths.count(0.02) >= 5, f"error bars of ±0.01 at every ℶ point (nu = 1, 3, 10, 100, ∞): {bar_lengths}")
check(any("ν = ∞" in t.get_text() and "ℶ" in t.get_text() for t in fig.legends[0].get_texts()),
      "the marker of ℶ at nu = infinity is named in the legend")
rows = [dict(BASE, nu=nu, method="population", activation=act, start=start, risk=0.5 + 0.1 * (start == "swapped"),
             risk_stderr=0.01, status="ok", extra_json=json.dumps({"outcome": "distinct" if start else "matched"}))
        for act in figures.ACTIVATION_ORDER for nu in (1.0, 2.0, 4.0) for start in ("", "swapped")]
panel = figures.make(table(rows), "mismatched").axes[0]
dashes = {act: str(l.get_linestyle()) + str(getattr(l, "_dash_pattern", "")) for act in figures.ACTIVATION_ORDER
          for l in lines_labelled(panel, f"{act}: ℶ (swapped start)")}
check(len(set(dashes.values())) == len(figures.ACTIVATION_ORDER), f"ℶ: a dash pattern per activation: {dashes}")
triangles = [l for l in ax.get_lines() if l.get_marker() == "v" and len(l.get_xdata())]
check(len(triangles) == 1 and list(triangles[0].get_xdata()) == [0.3],
      f"the not-converged descent drawn as a triangle: {[list(l.get_xdata()) for l in triangles]}")
labels = [t.get_text() for t in ax.get_xticklabels()]
check(labels and labels[-1] == "∞", f"nu = infinity has its own labelled column: {labels}")
check(all(np.isfinite(np.asarray(l.get_xdata(), dtype=float)).all() for l in ax.get_lines() if len(l.get_xdata())),
      "every plotted x is finite (infinity drawn at its column)")

# ---------------------------------------------------------------- order-parameters: off the ERM branch
rows = []
rng = np.random.default_rng(1)
for act, fp_test in (("softmax", 0.70), ("linear", 14.8)):
    for i in range(20):
        rows.append(dict(BASE, method="erm", activation=act, alpha=4.0, r_k=0.1, r_v=0.1, status="ok",
                         test_risk=1.5 + 0.05 * rng.standard_normal() if act == "linear" else 0.70 + 0.01 * i / 20,
                         order_parameters_m_kk=0.4, order_parameters_m_vv=0.3, order_parameters_q_kk=1.2,
                         order_parameters_q_vv=0.2, order_parameters_m_kv=0.0, order_parameters_m_vk=0.0,
                         order_parameters_q_kv=0.0))
    rows.append(dict(BASE, method="fixed-point", activation=act, alpha=4.0, r_k=0.1, r_v=0.1, status="ok",
                     test_risk=fp_test, order_parameters_m_kk=0.04, order_parameters_m_vv=0.1,
                     order_parameters_q_kk=3.5, order_parameters_q_vv=0.5, order_parameters_m_kv=0.0,
                     order_parameters_m_vk=0.0, order_parameters_q_kv=0.0))
fig = figures.make(table(rows), "order-parameters")
labels = {l.get_label() for l in fig.axes[0].get_lines()}
check("linear: fixed point off the ERM branch" in labels, f"linear fixed point flagged off-branch: {labels}")
check("softmax: fixed point" in labels, f"softmax fixed point inside the runs' range drawn as valid: {labels}")

# ---------------------------------------------------------------- trajectory: median over runs
times = [0.01, 0.1, 1.0, 10.0]
rows = []
paths = []
for i in range(5):
    m_kk = [1.0 - 0.1 * i * t / 10 for t in times]
    paths.append(m_kk)
    steps = [{"t": t, "train_loss": 1.0 / (1 + t), "train_loss_regularised": 1.1 / (1 + t), "rel_grad": 0.0,
              "order_parameters": {"m_kk": m, "m_kv": 0.0, "m_vk": 0.0, "m_vv": 0.5, "q_kk": m * m + 0.1,
                                   "q_kv": 0.0, "q_vv": 0.3}} for t, m in zip(times, m_kk)]
    rows.append(dict(BASE, method="erm", activation="softmax", alpha=4.0, r_k=1.0, r_v=1.0, status="ok",
                     extra_json=json.dumps({"trajectory": steps})))
fig = figures.make(table(rows), "trajectory")
median = [l for l in fig.axes[0].get_lines() if l.get_label().startswith("softmax (5 runs)")]
check(len(median) == 1 and np.allclose(median[0].get_ydata(), np.median(np.array(paths), axis=0)),
      f"trajectory: the median of m_kk over the runs ({[l.get_label() for l in fig.axes[0].get_lines()]})")
check(fig.axes[0].get_xscale() == "log" and fig.axes[0].get_xlabel() == "flow time t", "trajectory: log time axis")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
