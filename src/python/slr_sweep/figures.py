"""The figures of an archive (archive.load_columns): the SLR paper's Figs 2-5 and the tied-attention
figures (arXiv 2509.24914). FIGURES is the one table of figure names (slr-sweep plot forwards the
name to plot.py, which checks it against FIGURES).

Method names and columns (grid::result_columns, dots -> underscores):
  population       risk, risk_stderr, bayes_risk (option at=... : a fixed, "mismatched" student)
  bayes            risk (the Bayes risk)
  fixed-point      test_risk, order_parameters_*           (RS fixed point, docs/theory.md §4)
  state-evolution  test_risk                               (Bayes-optimal, docs/theory.md §5)
  bayes-jump       alpha_jump (± alpha_jump_stderr), alpha_below/above, test_risk_below/above
  erm              test_risk, test_risk_stderr, order_parameters_*   (simulations)
Where a regularisation grid (r_k, r_v) is present, finite-alpha curves show, at each alpha, the r
with the smallest mean test risk (the paper tunes r by grid search).
Tied attention (model tied-attention; rows with a parametrisation, see _tied_rows):
  fixed-point         test_clean, test_noisy, rank_fraction, atom_at_0; extra_json eig_grid/eig_density
  erm                 test_clean(_stderr), test_noisy(_stderr), rank_rel_1e3; extra_json eigenvalues
                      (or eigenvalue_histogram)
  recovery-threshold  alpha_rec (and alpha_interp)
  tied-tokens-temperature: fixed-point/erm test_noisy, train_loss, mse_s per (T, beta, beta0);
                      recovery-threshold alpha_rec per T
  tied-training-error: fixed-point/erm train_loss, test_clean, q per (parametrisation, lambda);
                      recovery-threshold alpha_interp (± alpha_interp_uncertainty), alpha_rec
"""
import math
import os

import numpy as np

from .archive import parse_options

# Figure name -> the stem of its files (e.g. fig3_finite_alpha); filled by @_figure below, in the
# order the functions are defined.
FIGURES = {}
DRAW = {}


def _figure(name, stem):
    """Declares a figure function under its name (slr-sweep plot --figure NAME) and file stem."""
    def register(function):
        FIGURES[name] = stem
        DRAW[name] = function
        return function
    return register


ACTIVATION_ORDER = ["softmax", "linear", "erf", "softplus-kernel"]
# One colour per activation in every SLR figure; linear attention red, as in the paper's captions.
# Red and green (erf) meet in Fig 2's max-SLR panel, where line style and marker also tell them apart.
COLOURS = {"softmax": "tab:blue", "linear": "tab:red", "erf": "tab:green", "softplus-kernel": "tab:purple"}
# Each activation's line style and marker (Fig 2; the marker also in Fig 3), so that curves that
# coincide stay visible.
ACTIVATION_STYLE = {"softmax": ("-", "o"), "linear": ("-", "s"), "erf": ("-.", "^"), "softplus-kernel": (":", "D")}
# Fig 2: activations drawn as a wide light line underneath, because another curve lies on them:
# softmax attains the Bayes risk (docs/theory.md §3), and erf lies within 0.003 of linear in max-SLR.
UNDERLAID = ("softmax", "linear")
# Fig 5: the dash pattern of each activation's ℶ (its E is solid), no two alike.
MISMATCHED_DASHES = {"softmax": (0, (6, 2)), "linear": (0, (2.5, 1.5)), "erf": (0, (6, 1.5, 1.5, 1.5)),
                     "softplus-kernel": (0, (3, 1.2, 1, 1.2, 1, 1.2))}
ORDER_PARAMETERS = ["m_kk", "m_kv", "m_vk", "m_vv", "R_kk", "R_kv", "R_vv"]
LABELS = {"m_kk": r"$m_{kk^*}$", "m_kv": r"$m_{kv^*}$", "m_vk": r"$m_{vk^*}$", "m_vv": r"$m_{vv^*}$",
          "R_kk": r"$R_{kk}$", "R_kv": r"$R_{kv}$", "R_vv": r"$R_{vv}$"}


# Figure styles. "screen": each panel 4.6 x 3.6 in. "paper" and "paper-wide": the whole figure is
# one column (3.4 in) or the full text width (7 in) of a two-column article, with 8 pt text; the
# panels share that width (at most `columns` side by side, more rows below), and legends go below
# the panels so that the data areas keep the width.
STYLES = {
    "screen": {"panel": (4.6, 3.6), "rc": {"font.size": 10, "legend.fontsize": 7, "lines.linewidth": 1.5,
                                           "savefig.dpi": 150}},
    "paper": {"panel": (3.4, 2.5), "width": 3.4, "columns": 1,
              "rc": {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 6.5,
                     "xtick.labelsize": 7, "ytick.labelsize": 7, "lines.linewidth": 1.1, "lines.markersize": 3.5,
                     "savefig.dpi": 300}},
    "paper-wide": {"panel": (3.5, 2.6), "width": 7.0, "columns": 4,
                   "rc": {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 6.5,
                          "xtick.labelsize": 7, "ytick.labelsize": 7, "lines.linewidth": 1.1,
                          "lines.markersize": 3.5, "savefig.dpi": 300}},
}
_PANEL = {"style": "screen"}
# Options of `slr-sweep plot` that every figure reads (set by make()): xscale of the alpha axes
# (auto: log when the values span more than a factor 20), and a parameter whose values split each
# activation's curves into series (None: one series per activation, the paper's figures).
XSCALES = ("auto", "log", "linear")
_OPTIONS = {"xscale": "auto", "series": None}
# Line styles and markers cycled over series that share a colour (e.g. several erf offsets).
LINESTYLES = ["-", "--", "-.", (0, (6, 2, 1, 2, 1, 2))]  # dotted is kept for limits and references
MARKERS = ["o", "s", "^", "D", "v", "P"]
# The Bayes reference: black, thin and dashed, drawn on top, so that a curve equal to it (softmax
# attains the Bayes risk) shows through its gaps.
BAYES = {"color": "k", "ls": (0, (3, 3)), "lw": 1.1, "zorder": 5}


class NoData(ValueError):
    """The archive (after filters) has no rows this figure can use."""


# ---------------------------------------------------------------- helpers on dict-of-columns

def _n(cols):
    return len(cols["point_id"])


def _col(cols, name):
    if name in cols:
        return np.asarray(cols[name], dtype=float)
    return np.full(_n(cols), np.nan)


def _mask_method(cols, *methods):
    return np.isin(cols["method"].astype(str), methods)


def _option_text(cols, key, default):
    """A method option of every row as text: from the schema-1 ``options`` text where a row has one,
    else from the typed column of that name (schema 2), else default ("" and NaN count as absent,
    except that a schema-1 "key=" keeps its empty value)."""
    options = cols.get("options")
    column = cols.get(key)
    out = []
    for i in range(_n(cols)):
        if options is not None and options[i]:
            out.append(parse_options(options[i]).get(key, default))
            continue
        value = None if column is None else column[i]
        if value is None or (isinstance(value, str) and value == "") or \
                (isinstance(value, (float, np.floating)) and math.isnan(value)):
            out.append(default)
        else:
            out.append(str(value))
    return np.array(out, dtype=object)


def _at_option(cols):
    return _option_text(cols, "at", "")


def _same(a, b):
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _unique(values):
    out = []
    for v in values:
        v = v.item() if hasattr(v, "item") else v
        if not any(_same(v, u) for u in out):
            out.append(v)
    return sorted(out, key=lambda x: (isinstance(x, float) and math.isnan(x), x))


def _equal_mask(column, value):
    column = np.asarray(column)
    if isinstance(value, float) and math.isnan(value):
        return np.isnan(column.astype(float))
    return column == value


def _activations(cols, mask):
    present = _unique(cols["activation"][mask])
    return [a for a in ACTIVATION_ORDER if a in present] + [a for a in present if a not in ACTIVATION_ORDER]


def _settings(cols, mask, keys):
    rows = [tuple(cols[k][i].item() if hasattr(cols[k][i], "item") else cols[k][i] for k in keys)
            for i in np.flatnonzero(mask)]
    out = []
    for r in rows:
        if not any(all(_same(a, b) for a, b in zip(r, u)) for u in out):
            out.append(r)
    return sorted(out, key=lambda t: tuple(_order_key(x) for x in t))


def _order_key(x):
    """Panels in the paper's order: tasks spiked then max, numbers (also numeric text such as a
    length "10") by value, NaN last, other text alphabetically."""
    rank = {"spiked": 0, "max": 1}
    if isinstance(x, str):
        if x in rank:
            return (0, rank[x], "")
        try:
            return (0, float(x), "")
        except ValueError:
            return (1, 0.0, x)
    if isinstance(x, float) and math.isnan(x):
        return (2, 0.0, "")
    return (0, float(x), "")


def _setting_mask(cols, keys, setting):
    mask = np.ones(_n(cols), dtype=bool)
    for k, v in zip(keys, setting):
        mask &= _equal_mask(cols[k], v)
    return mask


def _setting_title(keys, setting):
    parts = []
    for k, v in zip(keys, setting):
        if k == "task":
            parts.append(f"{v}-SLR")
        elif k == "L_pmf":
            parts.append(f"L={v}")
        elif k == "delta":
            parts.append(f"Δ={v:g}")
        elif k == "nu":
            parts.append("ν=∞" if v == float("inf") else f"ν={v:g}")
        elif k == "alpha":
            parts.append(f"α={v:g}")
        elif k in ("r_k", "r_v"):
            parts.append(f"{k}={v:g}")
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def _mean_by(x, y, extra=None):
    """Mean/std/min/max/count of y per distinct x (NaN y ignored); x sorted."""
    xs = [v for v in _unique(x) if not (isinstance(v, float) and math.isnan(v))]
    stats = []
    for v in xs:
        values = y[_equal_mask(x, v)]
        values = values[~np.isnan(values)]
        if values.size == 0:
            continue
        std = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
        stats.append((v, float(values.mean()), std, float(values.min()), float(values.max()), values.size))
    return stats


def _tuned(cols, mask, value="test_risk"):
    """Per alpha: the (r_k, r_v) with the smallest mean `value` over repeats, among every cell of
    `mask` with a finite value whatever its status. Returns a list of (alpha, mean, std, min, max,
    count, r_k, r_v, ok), ok meaning every row of the winning cell has status ok, and whether several
    r were compared. A winner that is not ok is reported as such, never replaced by the next r."""
    alpha, rk, rv, y = _col(cols, "alpha"), _col(cols, "r_k"), _col(cols, "r_v"), _col(cols, value)
    ok = _ok(cols)
    out, several = [], False
    for a in _unique(alpha[mask]):
        if isinstance(a, float) and math.isnan(a):
            continue
        at_alpha = mask & _equal_mask(alpha, a)
        best = None
        regs = _settings({"r_k": rk, "r_v": rv, "point_id": cols["point_id"]}, at_alpha, ("r_k", "r_v"))
        several = several or len(regs) > 1
        for r in regs:
            m = at_alpha & _equal_mask(rk, r[0]) & _equal_mask(rv, r[1])
            values = y[m]
            values = values[np.isfinite(values)]
            if values.size == 0:
                continue
            mean = float(values.mean())
            std = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
            if best is None or mean < best[1]:
                best = (a, mean, std, float(values.min()), float(values.max()), values.size, r[0], r[1],
                        bool(ok[m].all()))
        if best is not None:
            out.append(best)
    return out, several


def _ok_segments(points):
    """The runs of consecutive ok entries of a tuned curve (a curve breaks where its winner is not ok)."""
    segments, current = [], []
    for p in points:
        if p[8]:
            current.append(p)
        elif current:
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    return segments


def _ok(cols):
    """Rows whose status is ok (archives without a status column: every row)."""
    if "status" not in cols:
        return np.ones(_n(cols), dtype=bool)
    return np.asarray(cols["status"]).astype(str) == "ok"


def _hollow_not_ok(ax, cols, mask, x_name, y_name, colour):
    """Draws the rows of `mask` whose status is not ok as hollow markers (they are left out of
    the curves); returns how many were drawn."""
    bad = mask & ~_ok(cols)
    _hollow(ax, _col(cols, x_name)[bad], _col(cols, y_name)[bad], colour)
    return int(bad.sum())


def _count(values):
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _hollow(ax, x, y, colour, marker="o"):
    """Hollow markers that do not set the axis limits (a diverged point far off the curves is clipped)."""
    from matplotlib.lines import Line2D

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.any():
        # Added as an artist, not plotted, so that it does not set the axis limits.
        ax.add_artist(Line2D(x[keep], y[keep], ls="none", marker=marker, ms=6, mfc="none", mec=colour, mew=1.2))


def _not_ok_handle(ax):
    """The legend handle of hollow not-ok markers (not drawn in any panel)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], ls="none", marker="o", ms=6, mfc="none", mec="0.3")


def _legend_not_ok(ax, count):
    """A legend entry saying what hollow markers are, when there are any."""
    if count:
        ax.plot([], [], "o", ms=6, mfc="none", mec="0.3",
                label=f"status not ok ({count}; left out of curves, clipped when off scale)")


def _nanmean(values):
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def _readable_y(ax, minimum_span=0.05):
    """No offset notation, and a visible span when all values (nearly) coincide."""
    ax.ticklabel_format(axis="y", useOffset=False)
    low, high = ax.get_ylim()
    if high - low < 1e-3:
        centre = 0.5 * (low + high)
        ax.set_ylim(centre - minimum_span, centre + minimum_span)


def _log_if_wide(ax, axis, values):
    values = np.asarray([v for v in values if np.isfinite(v)])
    if values.size and values.min() > 0 and values.max() / values.min() > 20:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")


def _alpha_scale(ax, values):
    """The alpha axis: --xscale log or linear, else log when the values span more than a factor 20;
    log ticks read 0.1, 1, 10 rather than powers of ten."""
    from matplotlib.ticker import FuncFormatter

    if _OPTIONS["xscale"] == "auto":
        _log_if_wide(ax, "x", values)
    elif _OPTIONS["xscale"] == "log":
        ax.set_xscale("log")
    if ax.get_xscale() == "log":
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _grid(n, width=None, height=None, columns=None):
    """n panels. width, height: a panel's size in the screen style (default 4.6 x 3.6 in); in the
    paper styles the figure has the style's width, and the panels share it with the same aspect
    (at most the style's number of columns side by side)."""
    import matplotlib.pyplot as plt

    style = STYLES[_PANEL["style"]]
    base_w, base_h = STYLES["screen"]["panel"]
    width = base_w if width is None else width
    height = base_h if height is None else height
    columns = min(n, 3) if columns is None else max(1, min(n, columns))
    if "width" in style:
        columns = max(1, min(columns, style["columns"]))
        panel_w = style["width"] / columns
        panel_h = min(max(panel_w * height / width, 1.7), 2.8)
        if panel_w * height / width > 2.8:  # a wide panel shape kept readable: cap its height
            panel_h = 2.8
        width, height = panel_w, panel_h
    rows = (n + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _shared_legend(fig, axes, extra=()):
    """One legend for the whole figure, below the panels: the entries of every panel once (by
    label, in order of appearance), then `extra` (handle, label) pairs. The panels' own legends go."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if not label.startswith("_"):
                seen.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    for handle, label in extra:
        seen.setdefault(label, handle)
    if seen:
        fig._slr_legend = (list(seen.values()), list(seen.keys()))


def _layout(fig):
    """tight_layout, with the shared legend (if any) in a band below the panels: the figure grows
    by the legend's height, so that the data areas keep their size; as many legend columns as fit."""
    entries = getattr(fig, "_slr_legend", None)
    if entries is None:
        fig.tight_layout()
        return
    width, height = fig.get_size_inches()
    renderer = fig.canvas.get_renderer()
    columns = len(entries[0])
    while True:
        legend = fig.legend(*entries, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=columns, frameon=False,
                            handlelength=2.2, columnspacing=1.2)
        box = legend.get_window_extent(renderer)
        if box.width <= fig.bbox.width * 0.98 or columns == 1:
            break
        legend.remove()
        columns -= 1
    band = box.height / fig.dpi + 0.05
    fig.set_size_inches(width, height + band)
    fig.tight_layout(rect=(0, band / (height + band), 1, 1))


def _infinite_column(ax, finite, has_inf):
    """A log nu axis over the finite values, and nu = infinity as a column of its own at the right,
    behind a break, with the tick label ∞. Returns the x position of infinity (None without it)."""
    from matplotlib.ticker import FixedLocator, LogLocator, NullFormatter

    finite = np.asarray([v for v in finite if np.isfinite(v) and v > 0])
    ax.set_xscale("log")
    if finite.size == 0:
        return None
    low, high = finite.min(), finite.max()
    decades = max(np.log10(high / low), 1.0)
    major = [10.0 ** e for e in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
             if low / 1.01 <= 10.0 ** e <= high * 1.01]
    minor = [t for t in LogLocator(subs=np.arange(2, 10)).tick_values(low, high) if low <= t <= high]
    if not has_inf:
        ax.xaxis.set_major_locator(FixedLocator(major))
        ax.set_xticklabels([f"{m:g}" for m in major])
        return None
    x_inf = high * 10 ** (0.22 * decades)
    x_break = high * 10 ** (0.11 * decades)
    ax.set_xlim(low / 10 ** (0.04 * decades), x_inf * 10 ** (0.06 * decades))
    ax.xaxis.set_major_locator(FixedLocator(major + [x_inf]))
    ax.set_xticklabels([f"{m:g}" for m in major] + ["∞"])
    ax.xaxis.set_minor_locator(FixedLocator(minor))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.axvspan(x_break / 10 ** (0.012 * decades), x_break * 10 ** (0.012 * decades), color="0.85", lw=0, zorder=0)
    return x_inf


def _line_and_infinity_tick(ax, stats, x_inf, tick_zorder, **line):
    """A curve over the finite nu of `stats` (_mean_by rows), drawn with the matplotlib keywords
    `line`, and its nu = infinity value as a tick of the same colour in the infinity column (x_inf;
    none without it). Returns the colour used."""
    colour = line.get("color")
    fin = [st for st in stats if np.isfinite(st[0])]
    if fin:
        drawn, = ax.plot([st[0] for st in fin], [st[1] for st in fin], **line)
        colour = drawn.get_color()
    inf = [st for st in stats if np.isinf(st[0])]
    if inf and x_inf is not None:
        ax.plot([x_inf], [inf[0][1]], "_", ms=9, mew=1.6, color=colour, zorder=tick_zorder)
    return colour


def _save(fig, outdir, stem, formats):
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    paths = []
    for fmt in formats:
        path = os.path.join(outdir, f"{stem}.{fmt}")
        # Reproducible files: no dates, and SVG ids hashed from a fixed salt (not a random one).
        metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else None
        with plt.rc_context({"svg.hashsalt": "slr-sweep"}):
            fig.savefig(path, metadata=metadata)  # resolution: the style's savefig.dpi
        paths.append(path)
    plt.close(fig)
    return paths


# ---------------------------------------------------------------- Fig 2: population risk vs nu

def _series(cols, mask):
    """The series of --series within the rows of `mask`: [(label suffix, rows, index)], one entry
    ("", mask, 0) without it."""
    name = _OPTIONS["series"]
    if name is None:
        return [("", mask, 0)]
    column = np.asarray(cols[name])
    values = _unique(column[mask])
    # Rows without the parameter (NaN: another method's rows, e.g. the alpha -> infinity limit
    # has no r) belong to no series unless no row has it.
    finite = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    out = []
    for i, value in enumerate(finite or values):
        text = f"{value:g}" if isinstance(value, float) else str(value)
        out.append((f", {name}={text}", mask & _equal_mask(column, value), i))
    return out


def _activation_style(act, index=0):
    ls, marker = ACTIVATION_STYLE.get(act, ("-", "o"))
    if index:
        ls, marker = LINESTYLES[index % len(LINESTYLES)], MARKERS[index % len(MARKERS)]
    return ls, marker


def _tint(colour, amount):
    """colour mixed with white by the fraction amount (with black where amount < 0)."""
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(colour))
    return tuple(rgb + abs(amount) * ((1.0 if amount > 0 else 0.0) - rgb))


def _population_curve(ax, x, y, err, y_inf, x_inf, act, index, label):
    """One series of Fig 2 (status ok): a line with filled markers over the finite nu (x, y) with a
    ±2 standard error band (err), and its nu = infinity value y_inf (None: none) as a filled marker
    at x_inf. The first series of an UNDERLAID activation is a wide light line under the others."""
    import matplotlib as mpl

    ls, marker = _activation_style(act, index)
    colour = COLOURS.get(act)
    under = act in UNDERLAID and index == 0 and colour is not None
    if under:
        style = dict(ls="-", lw=3.5 * mpl.rcParams["lines.linewidth"], color=_tint(colour, 0.55), zorder=1.8)
    else:
        style = dict(ls=ls, color=colour, zorder=2)
    if len(x):
        line, = ax.plot(x, y, marker=marker, ms=3, mfc=colour, mec=colour, label=label, **style)
        colour = colour or line.get_color()
        if np.isfinite(err).any():
            ax.fill_between(x, y - 2 * err, y + 2 * err, color=colour, alpha=0.2, lw=0)
    if y_inf is not None and x_inf is not None:
        ax.plot([x_inf], [y_inf], marker=marker, ms=6.5 if under else 5, color=colour, ls="none",
                zorder=style["zorder"] + 1)
    return colour


@_figure("population", "fig2_population")
def population(cols):
    """Fig 2: the minimal population risk per activation against nu, the Bayes risk dashed black
    on top (softmax attains it: a wide light line underneath); nu = infinity as its own column at
    the right; one panel per (task, L, Delta), stacked in one column in the print styles as in the
    paper. Filled markers: status ok; hollow: not ok, left out of the curves."""
    is_pop = _mask_method(cols, "population") & (_at_option(cols) == "")
    is_bayes = _mask_method(cols, "bayes")
    if not (is_pop | is_bayes).any():
        raise NoData("figure population: no rows of method population (without `at`) or bayes")
    keys = ("task", "L_pmf", "delta")
    settings = _settings(cols, is_pop | is_bayes, keys)
    fig, axes = _grid(len(settings), columns=1 if "width" in STYLES[_PANEL["style"]] else 2)
    nu, risk, stderr = _col(cols, "nu"), _col(cols, "risk"), _col(cols, "risk_stderr")
    ok = _ok(cols)
    not_ok = []
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        x_inf = _infinite_column(ax, nu[(is_pop | is_bayes) & here], bool((np.isinf(nu) & here).any()))
        for act in _activations(cols, is_pop & here):
            offsets = _unique(_col(cols, "erf_offset")[is_pop & here & (cols["activation"] == act)])
            for j, offset in enumerate(offsets):
                base = is_pop & here & (cols["activation"] == act) & _equal_mask(_col(cols, "erf_offset"), offset)
                for suffix, every, k in _series(cols, base):
                    m = every & ok
                    label = (act if math.isnan(offset) else f"{act} (c={offset:g})") + suffix
                    if act == "softmax":
                        label += " (attains the Bayes risk)"
                    stats = _mean_by(nu[m], risk[m])
                    fin = [st for st in stats if np.isfinite(st[0])]
                    inf = [st[1] for st in stats if np.isinf(st[0])]
                    colour = _population_curve(
                        ax, np.array([st[0] for st in fin]), np.array([st[1] for st in fin]),
                        np.array([_nanmean(stderr[m & _equal_mask(nu, st[0])]) for st in fin]),
                        inf[0] if inf else None, x_inf, act, j + k, label)
                    bad = every & ~ok
                    if bad.any():
                        _hollow(ax, np.where(np.isinf(nu[bad]), np.nan if x_inf is None else x_inf, nu[bad]),
                                risk[bad], colour or "0.3", marker=_activation_style(act, j + k)[1])
                        not_ok.extend(np.asarray(cols["status"])[bad].astype(str))
        # The Bayes risk: method bayes, else the bayes_risk column of the population rows.
        source, values = (is_bayes & here, risk) if (is_bayes & here).any() else (is_pop & here, _col(cols, "bayes_risk"))
        _line_and_infinity_tick(ax, _mean_by(nu[source], values[source]), x_inf, 1, label="Bayes risk", **BAYES)
        ax.set_xlabel("ν")
        ax.set_ylabel("population risk")
        ax.set_title(_setting_title(keys, setting))
        ax.grid(alpha=0.3)
    extra = []
    if not_ok:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(_count(not_ok).items()))
        extra.append((_not_ok_handle(axes[0]), f"status not ok ({counts}): hollow, left out of the curves"))
    _shared_legend(fig, axes, extra)
    return fig


# ---------------------------------------------------------------- Fig 3: test risk vs alpha

def _bayes_jump(cols, mask):
    """(alpha_jump, alpha_below, risk_below, alpha_above, risk_above, alpha_jump_stderr) of the first
    located jump (method bayes-jump, jump_found = 1) among the rows of `mask`, or None; the standard
    error is NaN where the archive has none (searches without batches, older archives)."""
    rows = np.flatnonzero(mask & _mask_method(cols, "bayes-jump") & (_col(cols, "jump_found") == 1))
    if rows.size == 0:
        return None
    i = rows[0]
    values = tuple(float(_col(cols, name)[i]) for name in
                   ("alpha_jump", "alpha_below", "test_risk_below", "alpha_above", "test_risk_above"))
    if not all(np.isfinite(values)):
        return None
    return values + (float(_col(cols, "alpha_jump_stderr")[i]),)


def _series_look(act, k, count):
    """Colour and marker of the k-th of `count` series of an activation (--series): its colour from
    light (first value) to dark (last), one marker per value, the same for every activation;
    without --series the activation's own colour and marker."""
    colour = COLOURS.get(act)
    if _OPTIONS["series"] is None:
        return colour, _activation_style(act)[1]
    if colour is not None and count > 1:
        colour = _tint(colour, 0.45 - 0.8 * k / (count - 1))
    return colour, MARKERS[k % len(MARKERS)]


# With --series, the y range of a finite-alpha panel stops at this multiple of the risk of the
# trivial predictor f = 0 (1 + Δ², docs/theory.md §1): weakly regularised curves run far above it
# through their interpolation peak and would flatten the curves that predict better than f = 0.
OFF_SCALE = 1.1


def _clip_y(ax, drawn, references, top):
    """With --series: when a drawn value (value, low, high) exceeds `top`, the y range of ax becomes
    that of the references (Bayes curves, limits) and of the drawn values up to top, with a margin;
    returns how many drawn values lie above it (0 and the range untouched otherwise)."""
    above = sum(value > top for value, _, _ in drawn)
    if _OPTIONS["series"] is None or not above:
        return 0
    kept = np.array(references + [b for value, low, high in drawn if value <= top for b in (low, high)], dtype=float)
    low, high = np.nanmin(kept), np.nanmax(kept)
    pad = 0.05 * (high - low) if high > low else 0.05
    ax.set_ylim(low - pad, high + pad)
    return above


@_figure("finite-alpha", "fig3_finite_alpha")
def finite_alpha(cols):
    """Fig 3: test risk against alpha. Per activation the replica fixed point (lines) and ERM
    (markers, mean and standard deviation over seeds), each at the r with the smallest mean test
    risk at that alpha (the paper tunes r by grid search); where that r is not ok the curve breaks
    and the point is hollow. The Bayes-optimal state evolution in black, broken at its located jump;
    alpha -> infinity limits dashed. One panel per (task, nu, L, Delta). With --series, one shade and
    marker per series, and the y range clipped a little above the risk of f = 0 (_clip_y)."""
    slr = ~_tied_rows(cols)  # the tied-attention model's fixed-point/erm rows have figures of their own
    fp, erm = _mask_method(cols, "fixed-point") & slr, _mask_method(cols, "erm") & slr
    se = _mask_method(cols, "state-evolution")
    if not (fp | erm | se).any():
        raise NoData("figure finite-alpha: no rows of method fixed-point, erm or state-evolution (of the "
                     "single-location regression model)")
    pop = _mask_method(cols, "population") & (_at_option(cols) == "")
    bayes = _mask_method(cols, "bayes")
    keys = ("task", "nu", "L_pmf", "delta")
    settings = _settings(cols, fp | erm | se, keys)
    fig, axes = _grid(len(settings), width=5.2, height=4.0, columns=2)
    risk = _col(cols, "risk")
    ok = _ok(cols)
    alpha_all = _col(cols, "alpha")
    stderr = _col(cols, "test_risk_stderr")
    not_ok = 0
    tuned_any = False
    off_scale = 0  # with --series: drawn values above the clipped y range
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        alphas = []
        drawn, references = [], []  # (value, low, high) of the fixed points and ERM; Bayes curves, limits
        for act in _activations(cols, (fp | erm) & here):
            base_colour = COLOURS.get(act)
            limit_rows = pop & here & (cols["activation"] == act)
            limit = _mean_by(np.zeros(_n(cols))[limit_rows], risk[limit_rows])
            if limit:
                ax.axhline(limit[0][1], color=base_colour, ls=(0, (1, 2)), lw=1.4, zorder=2, label=f"{act}: α → ∞")
                references.append(limit[0][1])
            series = _series(cols, here & (cols["activation"] == act))
            for suffix, every, k in series:
                colour, marker = _series_look(act, k, len(series))
                ls = LINESTYLES[k % len(LINESTYLES)]  # solid, unless --series splits the curves
                curve, several = _tuned(cols, fp & every)
                tuned_any |= several
                label = f"{act}{suffix}: fixed point"
                for segment in _ok_segments(curve):
                    line, = ax.plot([c[0] for c in segment], [c[1] for c in segment], ls=ls, color=colour,
                                    label=label)
                    colour, label = line.get_color(), "_" + label
                bad = [c for c in curve if not c[8]]
                if bad:
                    _hollow(ax, [c[0] for c in bad], [c[1] for c in bad], colour or "0.3")
                    not_ok += len(bad)
                alphas.extend(c[0] for c in curve)
                points, several = _tuned(cols, erm & every)
                tuned_any |= several
                drawn.extend((c[1], c[1], c[1]) for c in curve if c[8])
                if points:
                    err = []
                    for p in points:
                        if np.isfinite(p[2]):
                            err.append(p[2])
                        else:  # one run: its own standard error, if the method reported one
                            m = erm & every & _equal_mask(alpha_all, p[0]) & _equal_mask(_col(cols, "r_k"), p[6])
                            err.append(float(np.nanmean(stderr[m])) if np.isfinite(stderr[m]).any() else 0.0)
                    good = [i for i, p in enumerate(points) if p[8]]
                    drawn.extend((points[i][1], points[i][1] - err[i], points[i][1] + err[i]) for i in good)
                    if good:
                        bars = ax.errorbar([points[i][0] for i in good], [points[i][1] for i in good],
                                           yerr=[err[i] for i in good], fmt=marker, ms=4, capsize=3, color=colour,
                                           label=f"{act}{suffix}: ERM")
                        colour = bars.lines[0].get_color()
                    bad = [p for p in points if not p[8]]
                    if bad:
                        _hollow(ax, [p[0] for p in bad], [p[1] for p in bad], colour or "0.3", marker=marker)
                        not_ok += len(bad)
                    alphas.extend(p[0] for p in points)

        bad_se = se & here & ~ok
        if bad_se.any():
            _hollow(ax, alpha_all[bad_se], _col(cols, "test_risk")[bad_se], "k")
            not_ok += int(bad_se.sum())
        curve = _mean_by(alpha_all[se & here & ok], _col(cols, "test_risk")[se & here & ok])
        jump = _bayes_jump(cols, here & ok)
        if curve:
            x, y = [c[0] for c in curve], [c[1] for c in curve]
            if jump is None:
                ax.plot(x, y, "k-", lw=2, zorder=1, label="Bayes-optimal")
            else:  # the curve broken at the located jump, the bracket's ends joining its two pieces
                a_jump, a_lo, r_lo, a_hi, r_hi, _ = jump
                lo = [(a, r) for a, r in zip(x, y) if a < a_lo] + [(a_lo, r_lo)]
                hi = [(a_hi, r_hi)] + [(a, r) for a, r in zip(x, y) if a > a_hi]
                ax.plot(*zip(*lo), "k-", lw=2, zorder=1, label="Bayes-optimal")
                ax.plot(*zip(*hi), "k-", lw=2, zorder=1)
            alphas.extend(x)
            references.extend(y)
        if jump is not None:
            a_jump, a_lo, r_lo, a_hi, r_hi, a_err = jump
            ax.plot([a_jump, a_jump], [r_hi, r_lo], "k:", lw=1.2, zorder=1, label="Bayes-optimal: jump")
            text = f"α = {a_jump:.4g}"
            if np.isfinite(a_err):  # its Monte Carlo uncertainty (one standard error), not the bisection bracket
                ax.axvspan(a_jump - a_err, a_jump + a_err, color="0.85", lw=0, zorder=0)  # named by the annotation
                text = f"α = {a_jump:.3f} ± {a_err:.3f}"
            ax.annotate(text, (a_jump, 0.5 * (r_hi + r_lo)), xytext=(4, 0),
                        textcoords="offset points", fontsize="small", va="center")
        limit_source = (bayes & here, risk) if (bayes & here).any() else (pop & here, _col(cols, "bayes_risk"))
        limit = _mean_by(np.zeros(_n(cols))[limit_source[0]], limit_source[1][limit_source[0]])
        if limit:
            ax.axhline(limit[0][1], color="k", ls="--", lw=1, zorder=1, label="Bayes risk (α → ∞)")
            references.append(limit[0][1])
        off_scale += _clip_y(ax, drawn, references, OFF_SCALE * (1 + setting[3] ** 2))
        _alpha_scale(ax, alphas)
        ax.set_xlabel("α = N/D")
        ax.set_ylabel("test risk")
        ax.set_title(_setting_title(keys, setting))
        ax.grid(alpha=0.3)
    extra = []
    if tuned_any:
        extra.append((axes[0].plot([], [], " ")[0], "lines, markers: best r at each α"))
    if not_ok:
        extra.append((_not_ok_handle(axes[0]), f"{'best r ' if tuned_any else ''}not ok ({not_ok}): "
                                               "hollow, curve broken"))
    if off_scale:
        extra.append((axes[0].plot([], [], " ")[0], f"y range up to {OFF_SCALE:g}× the risk of f = 0: "
                                                    f"{off_scale} values above it"))
    _shared_legend(fig, axes, extra)
    return fig


# ---------------------------------------------------------------- Fig 4: order parameters

def order_parameter_values(cols):
    """The seven plotted quantities per row: m_kk, m_kv, m_vk, m_vv and R = Q - M^T M
    (docs/theory.md §0; M rows = teacher, columns = student)."""
    g = {k: _col(cols, "order_parameters_" + k) for k in ("m_kk", "m_kv", "m_vk", "m_vv", "q_kk", "q_kv", "q_vv")}
    return {
        "m_kk": g["m_kk"], "m_kv": g["m_kv"], "m_vk": g["m_vk"], "m_vv": g["m_vv"],
        "R_kk": g["q_kk"] - g["m_kk"] ** 2 - g["m_kv"] ** 2,
        "R_kv": g["q_kv"] - g["m_kk"] * g["m_vk"] - g["m_kv"] * g["m_vv"],
        "R_vv": g["q_vv"] - g["m_vk"] ** 2 - g["m_vv"] ** 2,
    }


@_figure("order-parameters", "fig4_order_parameters")
def order_parameters(cols):
    erm, fp = _mask_method(cols, "erm"), _mask_method(cols, "fixed-point")
    values = order_parameter_values(cols)
    has = np.isfinite(values["m_kk"])
    if not ((erm | fp) & has).any():
        raise NoData("figure order-parameters: no erm or fixed-point rows with order parameters")
    # The settings are those of the simulations (gradient-flow runs); the fixed point is drawn
    # where it matches one (same task, nu, L, delta, r, activation). Without ERM rows: the theory.
    keys = ("task", "nu", "L_pmf", "delta", "r_k", "r_v")
    source = erm & has if (erm & has).any() else fp & has
    settings = _settings(cols, source, keys)
    alpha = _col(cols, "alpha")
    several_alpha = len(_unique(alpha[source])) > 1
    styles = ["-", "--", "-.", ":"]
    handles = {}

    def remember(artist, label):
        handles.setdefault(label, artist)

    # Quantities that vanish on every plotted row (m_kv*, m_vk*, R_kv on the diagonal manifold)
    # get no panel of their own; the legend says so.
    plotted = (erm | fp) & has
    shown = [n for n in ORDER_PARAMETERS if np.nanmax(np.abs(values[n][plotted]), initial=0.0) > 1e-12]
    zero = [n for n in ORDER_PARAMETERS if n not in shown]
    if several_alpha:
        # One panel per quantity, x = alpha; colour = activation, line style and marker = setting.
        fig, axes = _grid(len(shown) + 1, width=4.0, height=3.2)
        legend_ax = axes.pop()
        for ax, name in zip(axes, shown):
            for i, setting in enumerate(settings):
                here = _setting_mask(cols, keys, setting) & has
                suffix = "" if len(settings) == 1 else f" [{_setting_title(keys, setting)}]"
                for act in _activations(cols, (erm | fp) & here):
                    this = here & (cols["activation"] == act)
                    colour = COLOURS.get(act, "tab:gray")
                    stats = _mean_by(alpha[erm & this], values[name][erm & this])
                    if stats:
                        x = np.array([s[0] for s in stats])
                        y = np.array([s[1] for s in stats])
                        lo, hi = y - np.array([s[3] for s in stats]), np.array([s[4] for s in stats]) - y
                        remember(ax.errorbar(x, y, yerr=[lo, hi], fmt=MARKERS[i % len(MARKERS)], ms=4, capsize=3,
                                             color=colour),
                                 f"{act}: ERM (mean, min–max){suffix}")
                    theory = _mean_by(alpha[fp & this], values[name][fp & this])
                    if theory:
                        line, = ax.plot([s[0] for s in theory], [s[1] for s in theory], styles[i % len(styles)],
                                        color=colour)
                        remember(line, f"{act}: fixed point{suffix}")
            _alpha_scale(ax, alpha[(erm | fp) & has])
            _readable_y(ax)
            ax.set_xlabel("α")
            ax.set_ylabel(LABELS[name])
            ax.set_title(LABELS[name])
            ax.grid(alpha=0.3)
        legend_ax.axis("off")
        if zero:
            handles[", ".join(LABELS[n] for n in zero) + " ≡ 0 (not drawn)"] = legend_ax.plot([], [], " ")[0]
        legend_ax.legend(list(handles.values()), list(handles.keys()), loc="center")
    else:
        # One panel per setting: the seven quantities side by side, mean with min-max bars. The
        # settings differing only in r side by side, one row per (task, nu, L, Delta).
        regs = _settings(cols, source, ("r_k", "r_v"))
        columns = len(regs) if len(settings) % max(len(regs), 1) == 0 else None
        fig, axes = _grid(len(settings), width=6.0, height=3.4, columns=columns)
        positions = np.arange(len(ORDER_PARAMETERS))
        test = _col(cols, "test_risk")
        off_branch = 0
        for ax, setting in zip(axes, settings):
            here = _setting_mask(cols, keys, setting) & has
            acts = _activations(cols, source & here)
            width = 0.8 / max(len(acts), 1)
            not_ok = []
            for j, act in enumerate(acts):
                this = here & (cols["activation"] == act)
                shift = positions - 0.4 + width * (j + 0.5)
                colour = COLOURS.get(act, "tab:gray")
                runs = int((erm & this).sum())
                if runs:
                    mean = np.array([_nanmean(values[n][erm & this]) for n in ORDER_PARAMETERS])
                    lo = mean - np.array([np.nanmin(values[n][erm & this]) for n in ORDER_PARAMETERS])
                    hi = np.array([np.nanmax(values[n][erm & this]) for n in ORDER_PARAMETERS]) - mean
                    # equal values: mean - min may be -1 ulp
                    ax.errorbar(shift, mean, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], fmt="o", ms=4, capsize=3,
                                color=colour,
                                label=f"{act}: ERM (mean, min–max over runs)")
                theory_rows = fp & this & _equal_mask(alpha, _unique(alpha[source & this])[0])
                if theory_rows.any():
                    theory = np.array([_nanmean(values[n][theory_rows]) for n in ORDER_PARAMETERS])
                    bad = sorted(set(np.asarray(cols["status"])[theory_rows].astype(str)) - {"ok"}) \
                        if "status" in cols else []
                    fp_test = _nanmean(test[theory_rows])
                    erm_test = test[erm & this]
                    erm_test = erm_test[np.isfinite(erm_test)]
                    # Off the ERM branch: a fixed point whose test risk lies outside the runs' range and
                    # more than 1.5 times (or below 1/1.5 of) their mean: a replica state that gradient
                    # flow does not reach (docs/theory.md §6), though it passes the solver's checks.
                    off = (not bad and erm_test.size > 1 and np.isfinite(fp_test)
                           and not (erm_test.min() <= fp_test <= erm_test.max())
                           and max(fp_test / erm_test.mean(), erm_test.mean() / fp_test) > 1.5)
                    if bad:  # a fixed point that is not ok: drawn after the panel's ok content (below)
                        not_ok.append((shift, theory, colour, f"{act}: fixed point, status {', '.join(bad)}"))
                    elif off:
                        off_branch += 1
                        ax.plot(shift, theory, "x", ms=5, mew=1.0, color=colour,
                                label=f"{act}: fixed point off the ERM branch")
                        ax.annotate(f"{act} FP test risk {fp_test:.3g}\nERM {erm_test.mean():.3g}",
                                    (0.02, 0.97 - 0.17 * j), xycoords="axes fraction", va="top", fontsize="x-small",
                                    color=colour)
                    else:
                        ax.plot(shift, theory, "_", ms=12, mew=2, color=colour, label=f"{act}: fixed point")
            ax.axhline(0, color="0.6", lw=0.8)
            _not_ok_ticks(ax, not_ok)
            ax.set_ylabel("value after training")
            ax.set_xticks(positions)
            ax.set_xticklabels([LABELS[n] for n in ORDER_PARAMETERS])
            a = _unique(alpha[source & here])
            runs = int((erm & here).sum() / max(len(acts), 1))
            ax.set_title(_setting_title(keys, setting) + (f", α={a[0]:g}" if a and np.isfinite(a[0]) else "")
                         + (f", {runs} runs" if runs else ""))
            ax.grid(alpha=0.3, axis="y")
        extra = []
        if off_branch:
            extra.append((axes[0].plot([], [], " ")[0], "off the ERM branch: fixed-point test risk outside the runs' "
                                                        "range and > 1.5× their mean"))
        _shared_legend(fig, axes, extra)
    return fig


def _not_ok_ticks(ax, not_ok):
    """Thin ticks at the fixed points whose status is not ok (`not_ok`: (x, values, colour, label)),
    added after the panel's ok content so that they do not set its y range: a value off that range
    (e.g. R_kk = 3.1 of a linear fixed point on another branch) is drawn at the edge as a triangle
    pointing off the panel, with its value written beside it."""
    from matplotlib.lines import Line2D

    if not not_ok:
        return
    ax.relim()
    ax.autoscale_view()
    low, high = ax.get_ylim()
    pad = 0.03 * (high - low)
    for x, values, colour, label in not_ok:
        x, values = np.asarray(x, dtype=float), np.asarray(values, dtype=float)
        inside = np.isfinite(values) & (values >= low) & (values <= high)
        ax.add_artist(Line2D(x[inside], values[inside], ls="none", marker="_", ms=12, mew=0.8, color=colour,
                             alpha=0.6, label=label))
        for xi, v in zip(x[~inside & np.isfinite(values)], values[~inside & np.isfinite(values)]):
            y = high - pad if v > high else low + pad
            ax.add_artist(Line2D([xi], [y], ls="none", marker="^" if v > high else "v", ms=5, color=colour,
                                 alpha=0.6))
            ax.annotate(f"{v:.3g}", (xi, y), xytext=(4, -3 if v > high else 3), textcoords="offset points",
                        fontsize="x-small", color=colour, va="top" if v > high else "bottom")
    ax.set_ylim(low, high)


# ---------------------------------------------------------------- gradient-flow trajectories

TRAJECTORY_QUANTITIES = ["m_kk", "m_vv", "R_kk", "R_vv", "train_loss", "train_loss_regularised"]


def _trajectories(cols, mask):
    """{row index: {quantity: array over recorded times, "t": times}} of the rows of `mask` whose
    extra_json holds a gradient-flow trajectory (ERM option trajectory = 1)."""
    import json

    out = {}
    for i in np.flatnonzero(mask):
        text = cols["extra_json"][i] if "extra_json" in cols else ""
        steps = (json.loads(text) if text else {}).get("trajectory")
        if not steps:
            continue
        g = {k: np.array([st["order_parameters"].get(k, np.nan) for st in steps], dtype=float)
             for k in ("m_kk", "m_kv", "m_vk", "m_vv", "q_kk", "q_kv", "q_vv")}
        out[i] = {"t": np.array([st["t"] for st in steps], dtype=float),
                  "m_kk": g["m_kk"], "m_vv": g["m_vv"],
                  "R_kk": g["q_kk"] - g["m_kk"] ** 2 - g["m_kv"] ** 2,
                  "R_vv": g["q_vv"] - g["m_vk"] ** 2 - g["m_vv"] ** 2,
                  "train_loss": np.array([st["train_loss"] for st in steps], dtype=float),
                  "train_loss_regularised": np.array([st["train_loss_regularised"] for st in steps], dtype=float)}
    return out


@_figure("trajectory", "fig4_trajectory")
def trajectory(cols):
    """Gradient flow in time: m_kk*, m_vv*, R_kk, R_vv and the training loss (without and with the
    penalty) against the flow time t (log axis), median over the runs of a setting with the min-max
    band; the replica fixed point at the same setting as a marker right of the curves (hollow when
    not ok). Colour = activation, line style and fixed-point marker = setting (r, task, nu, ...)."""
    erm, fp = _mask_method(cols, "erm"), _mask_method(cols, "fixed-point")
    paths = _trajectories(cols, erm)
    if not paths:
        raise NoData("figure trajectory: no erm rows with a recorded trajectory (optimizer = gradient-flow, "
                     "trajectory = 1)")
    has = np.zeros(_n(cols), dtype=bool)
    has[list(paths)] = True
    keys = [k for k in ("task", "nu", "L_pmf", "delta", "alpha", "D", "r_k", "r_v")
            if k in cols and len(_unique(np.asarray(cols[k])[has])) > 1]
    settings = _settings(cols, has, keys) if keys else [()]
    values = order_parameter_values(cols)
    names = {"m_kk": LABELS["m_kk"], "m_vv": LABELS["m_vv"], "R_kk": LABELS["R_kk"], "R_vv": LABELS["R_vv"],
             "train_loss": "training loss", "train_loss_regularised": "regularised training loss"}
    fig, axes = _grid(len(TRAJECTORY_QUANTITIES), width=4.0, height=3.0, columns=3)
    for i, setting in enumerate(settings):
        here = _setting_mask(cols, keys, setting) if keys else np.ones(_n(cols), dtype=bool)
        for act in _activations(cols, has & here):
            for suffix, rows_mask, k in _series(cols, has & here & (cols["activation"] == act)):
                rows = [r for r in np.flatnonzero(rows_mask)]
                if not rows:
                    continue
                colour = COLOURS.get(act, "tab:gray")
                ls = LINESTYLES[(i + k) % len(LINESTYLES)]
                label = act + suffix + (f" [{_setting_title(keys, setting)}]" if keys else "") + f" ({len(rows)} runs)"
                theory = fp & here & (cols["activation"] == act)
                theory_ok = bool(_ok(cols)[theory].all())
                fp_marker = MARKERS[(i + k) % len(MARKERS)]
                for ax, q in zip(axes, TRAJECTORY_QUANTITIES):
                    t = paths[rows[0]]["t"]
                    same = [paths[r][q] for r in rows if paths[r]["t"].shape == t.shape]
                    stack = np.vstack(same)
                    keep = t > 0
                    ax.fill_between(t[keep], np.nanmin(stack, axis=0)[keep], np.nanmax(stack, axis=0)[keep],
                                    color=colour, alpha=0.15, lw=0)
                    ax.plot(t[keep], np.nanmedian(stack, axis=0)[keep], ls=ls, color=colour, label=label)
                    if q in values and theory.any():
                        ax.plot([1.8 * t.max()], [_nanmean(values[q][theory])], fp_marker, ms=6, color=colour,
                                mfc=colour if theory_ok else "none", ls="none",
                                label=f"{act}" + (f" [{_setting_title(keys, setting)}]" if keys else "")
                                + ": fixed point" + ("" if theory_ok else " (not ok)"))
    for ax, q in zip(axes, TRAJECTORY_QUANTITIES):
        ax.set_xscale("log")
        ax.set_xlabel("flow time t")
        ax.set_ylabel(names[q])
        ax.grid(alpha=0.3)
        if q == "train_loss_regularised":
            _log_if_wide(ax, "y", np.concatenate([p[q] for p in paths.values()]))
    _shared_legend(fig, axes, [(axes[0].plot([], [], " ")[0], "lines: median over runs; band: min–max")])
    return fig


# ---------------------------------------------------------------- Fig 5: minimal vs mismatched

def _student_label(at):
    """'m_kk=2,q_kk=4,m_vv=1,q_vv=1' -> 'k = 2 k*, v = v*' when it is of that form."""
    values = {}
    for item in at.split(","):
        k, _, v = item.partition("=")
        try:
            values[k.strip()] = float(v)
        except ValueError:
            return at
    c, mv = values.get("m_kk", 0.0), values.get("m_vv", 0.0)
    others = {k: v for k, v in values.items() if k not in ("m_kk", "q_kk", "m_vv", "q_vv")}
    if not any(others.values()) and math.isclose(values.get("q_kk", 0.0), c * c) and \
            math.isclose(values.get("q_vv", 0.0), mv * mv):
        v_text = "v*" if mv == 1 else f"{mv:g} v*"
        return f"k = {c:g} k*, v = {v_text}"
    return at


def _start_option(cols):
    return _option_text(cols, "start", "matched")


def _outcome(cols):
    import json

    out = []
    for text in cols.get("extra_json", [""] * _n(cols)):
        try:
            out.append(json.loads(text).get("outcome", "") if text else "")
        except ValueError:
            out.append("")
    return np.array(out, dtype=object)


# How the swapped descent ended (extra_json "outcome", docs/theory.md §3b): marker, legend text.
OUTCOMES = {"collapsed": ("o", "ℶ collapsed onto E (the flow reached the matched minimum)"),
            "runaway": ("x", "ℶ runaway (|k| → ∞; the limit's risk)"),
            "not-converged": ("v", "ℶ not converged (no minimum reached)")}
# Shading of a ±1 Monte Carlo standard error band (risk_stderr) around a curve.
BAND_ALPHA = 0.2


def _mismatched_minimum(cols, swapped):
    """Fig 5 of the paper: per activation E, the minimal population risk (solid), and ℶ, the
    minimum reached by the gradient flow from the swapped start (dashed, a pattern of its own per
    activation, drawn only over the nu where the flow found a distinct minimum or ran away, never
    joined across a stretch where it collapsed onto E); each with its ±1 Monte Carlo standard error
    (risk_stderr) as a band, and ℶ also with an error bar at every point, which stays visible where
    the band is as narrow as the line; collapsed points hollow circles on E, runaway crosses; nu =
    infinity as a column of its own (E a tick, ℶ a hollow square); the Bayes risk dashed black; one
    panel per (task, L, Delta)."""
    pop = _mask_method(cols, "population") & (_at_option(cols) == "")
    matched = pop & ~swapped
    bayes = _mask_method(cols, "bayes")
    keys = ("task", "L_pmf", "delta")
    settings = _settings(cols, swapped, keys)
    fig, axes = _grid(len(settings), columns=2)
    nu, risk, outcome = _col(cols, "nu"), _col(cols, "risk"), _outcome(cols)
    stderr = _col(cols, "risk_stderr")
    beth_at_infinity = False
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        x_inf = _infinite_column(ax, nu[(pop | bayes) & here], bool((np.isinf(nu) & here & (pop | bayes)).any()))
        xs = lambda v: np.where(np.isinf(v), x_inf if x_inf is not None else np.nan, v)
        for act in _activations(cols, (matched | swapped) & here):
            colour = COLOURS.get(act)
            this = here & (cols["activation"] == act)
            zorder = 3 if act == "softmax" else 2
            # Softmax's E is the Bayes risk: a wide light line under the Bayes dashes, as in Fig 2.
            width = {"lw": 3.2, "alpha": 0.45} if act == "softmax" else {}
            colour = _line_and_infinity_tick(ax, _mean_by(nu[matched & this], risk[matched & this]), x_inf, zorder,
                                             ls="-", color=colour, zorder=zorder, **width,
                                             label=f"{act}: E (minimum)" + (" = Bayes risk" if act == "softmax" else ""))
            e_rows = np.flatnonzero(matched & this & np.isfinite(nu))
            e_rows = e_rows[np.argsort(nu[e_rows], kind="stable")]
            if e_rows.size:
                ax.fill_between(nu[e_rows], risk[e_rows] - stderr[e_rows], risk[e_rows] + stderr[e_rows],
                                color=colour, alpha=BAND_ALPHA, lw=0, zorder=zorder - 0.5)
            # ℶ: the swapped points ordered by nu; dashed over runs of distinct/runaway points.
            rows = np.flatnonzero(swapped & this)
            rows = rows[np.argsort(nu[rows], kind="stable")]
            label = f"{act}: ℶ (swapped start)"
            run = []
            for r in list(rows) + [None]:
                if r is not None and outcome[r] in ("distinct", "runaway") and np.isfinite(nu[r]):
                    run.append(r)
                    continue
                if run:
                    ax.plot(nu[run], risk[run], ls=MISMATCHED_DASHES.get(act, "--"), color=colour,
                            marker="." if len(run) == 1 else None, label=label, zorder=zorder)
                    ax.errorbar(nu[run], risk[run], yerr=stderr[run], fmt="none", ecolor=colour, elinewidth=1,
                                capsize=2, zorder=zorder)
                    if len(run) > 1:
                        ax.fill_between(nu[run], risk[run] - stderr[run], risk[run] + stderr[run], color=colour,
                                        alpha=BAND_ALPHA, lw=0, zorder=zorder - 0.5)
                    label = "_" + label
                    run = []
            inf_rows = [r for r in rows if np.isinf(nu[r]) and outcome[r] in ("distinct", "runaway")]
            if inf_rows and x_inf is not None:
                ax.errorbar([x_inf] * len(inf_rows), risk[inf_rows], yerr=stderr[inf_rows], fmt="s", ms=4, mfc="none",
                            color=colour, elinewidth=1, capsize=2, zorder=zorder)
                beth_at_infinity = True
            for kind, (marker, _) in OUTCOMES.items():
                m = swapped & this & (outcome == kind)
                if m.any():
                    ax.plot(xs(nu[m]), risk[m], marker, ms=5, mfc="none", mec=colour, color=colour, ls="none",
                            zorder=zorder + 1)
        b = bayes & here
        _line_and_infinity_tick(ax, _mean_by(nu[b], risk[b]), x_inf, 1, label="Bayes risk", **BAYES)
        for kind, (marker, text) in OUTCOMES.items():
            if (swapped & here & (outcome == kind)).any():
                ax.plot([], [], marker, mfc="none", mec="0.3", color="0.3", ls="none", label=text)
        ax.set_xlabel("ν")
        ax.set_ylabel("population risk")
        ax.set_title(_setting_title(keys, setting))
        ax.grid(alpha=0.3)
    extra = []
    if beth_at_infinity:
        extra.append((axes[0].errorbar([], [], yerr=[], fmt="s", ms=4, mfc="none", color="0.3", elinewidth=1,
                                       capsize=2), "ν = ∞: ℶ a hollow square (± 1 s.e.), E a tick"))
    _shared_legend(fig, axes, extra)
    return fig


# Colours of fixed students: none is an activation's (COLOURS), so that no student reads as one.
STUDENT_COLOURS = ["tab:brown", "tab:olive", "tab:cyan", "tab:pink", "tab:gray"]


@_figure("mismatched", "fig5_mismatched")
def mismatched(cols):
    swapped = _mask_method(cols, "population") & (_start_option(cols) == "swapped")
    if swapped.any():
        return _mismatched_minimum(cols, swapped)
    pop = _mask_method(cols, "population")
    at = _at_option(cols)
    fixed = pop & (at != "")
    if not fixed.any():
        raise NoData("figure mismatched: no rows of method population with start = swapped (the mismatched "
                     "minimum) or with the `at` option (fixed students)")
    minimal = pop & (at == "")
    bayes = _mask_method(cols, "bayes")
    keys = ("task", "L_pmf", "delta", "activation")
    settings = _settings(cols, fixed, keys)
    fig, axes = _grid(len(settings), columns=2)
    nu, risk = _col(cols, "nu"), _col(cols, "risk")
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        xs = []
        stats = _mean_by(nu[minimal & here], risk[minimal & here])
        stats = [s for s in stats if np.isfinite(s[0])]
        if stats:
            ax.plot([s[0] for s in stats], [s[1] for s in stats], "-", lw=2, color=COLOURS.get(setting[3]),
                    label=f"{setting[3]}: minimal")
            xs.extend(s[0] for s in stats)
        styles = ["--", "-.", ":", (0, (5, 1, 1, 1))]
        for i, student in enumerate(_unique(at[fixed & here])):
            m = fixed & here & (at == student)
            stats = [s for s in _mean_by(nu[m], risk[m]) if np.isfinite(s[0])]
            if stats:
                ax.plot([s[0] for s in stats], [s[1] for s in stats], linestyle=styles[i % len(styles)], marker=".",
                        color=STUDENT_COLOURS[i % len(STUDENT_COLOURS)], label=_student_label(student))
                xs.extend(s[0] for s in stats)
        bayes_here = bayes & _setting_mask(cols, keys[:3], setting[:3])
        source, values = (bayes_here, risk) if bayes_here.any() else (minimal & here, _col(cols, "bayes_risk"))
        stats = [s for s in _mean_by(nu[source], values[source]) if np.isfinite(s[0])]
        if stats:
            ax.plot([s[0] for s in stats], [s[1] for s in stats], label="Bayes", **BAYES)
        _log_if_wide(ax, "x", xs)
        ax.set_xlabel("ν")
        ax.set_ylabel("population risk")
        ax.set_title(_setting_title(keys[:3], setting[:3]))
        ax.grid(alpha=0.3)
    _shared_legend(fig, axes)
    return fig


# ---------------------------------------------------------------- tied attention (arXiv 2509.24914)
#
# Rows of the model tied-attention (jobs with model = "tied-attention"): methods fixed-point (RS
# theory, d -> infinity; spectrum in extra_json), erm (finite d; eigenvalues in extra_json) and
# recovery-threshold (alpha_rec, alpha_interp). One panel (or row of panels) per setting of the
# model parameters below; colour = parametrisation, line style = student width k, marker = d.

TIED_KEYS = ("T", "k0", "lambda", "delta", "beta", "beta0")
PARAMETRISATION_ORDER = ["factorised", "psd-nuclear", "direct"]
PARAMETRISATION_COLOURS = {"factorised": "tab:blue", "psd-nuclear": "tab:green", "direct": "tab:red"}
# Further student widths k of one parametrisation (the largest k takes the colour above).
WIDTH_COLOURS = {"factorised": ["tab:purple", "tab:cyan"], "psd-nuclear": ["tab:olive", "tab:brown"],
                 "direct": ["tab:orange", "tab:pink"]}


def _width_colour(parametrisation, index_from_largest):
    """The colour of the index-th largest student width k of a parametrisation."""
    if index_from_largest == 0:
        return PARAMETRISATION_COLOURS.get(parametrisation, "tab:gray")
    others = WIDTH_COLOURS.get(parametrisation, ["0.4", "0.6"])
    return others[(index_from_largest - 1) % len(others)]
# At most this many alpha panels per setting in tied-spectra (the paper shows four).
SPECTRA_PANELS = 4


def _tied_rows(cols):
    """Rows of the tied-attention model: those with a parametrisation, and recovery-threshold rows."""
    column = cols.get("parametrisation")
    if column is None:
        return np.zeros(_n(cols), dtype=bool)
    named = np.array([isinstance(v, str) and v != "" for v in column], dtype=bool)
    return named | _mask_method(cols, "recovery-threshold")


def _tied_view(cols):
    """cols with the tied parameter columns present (NaN / "" where an archive lacks them)."""
    view = dict(cols)
    for key in TIED_KEYS + ("k", "d", "alpha"):
        if key not in view:
            view[key] = np.full(_n(cols), np.nan)
        else:
            view[key] = np.asarray(view[key], dtype=float)
    if "parametrisation" not in view:
        view["parametrisation"] = np.full(_n(cols), "", dtype=object)
    return view


def _parametrisations(cols, mask):
    present = [p for p in _unique(cols["parametrisation"][mask]) if p]
    return [p for p in PARAMETRISATION_ORDER if p in present] + [p for p in present if p not in PARAMETRISATION_ORDER]


def _finite_unique(values):
    return [v for v in _unique(np.asarray(values, dtype=float)) if np.isfinite(v)]


def _tied_title(setting):
    symbols = {"T": "T", "k0": "k₀", "lambda": "λ", "delta": "Δ", "beta": "β", "beta0": "β₀"}
    parts = []
    for key, value in zip(TIED_KEYS, setting):
        if isinstance(value, float) and math.isnan(value):
            continue
        if key in ("beta", "beta0") and value == 1:
            continue
        parts.append(f"{symbols[key]}={value:g}")
    return ", ".join(parts)


def _setting_rows(view, setting, strict=True, keys=TIED_KEYS):
    """Rows at a setting of `keys` (TIED_KEYS, or FAMILY_KEYS); strict=False also accepts NaN in a row
    (a parameter its method does not use, e.g. lambda of recovery-threshold)."""
    mask = np.ones(_n(view), dtype=bool)
    for key, value in zip(keys, setting):
        column = view[key]
        match = _equal_mask(column, value)
        if not strict:
            match |= np.isnan(column)
        mask &= match
    return mask


def _tied_settings(view, mask):
    return _settings(view, mask, TIED_KEYS)


def _extras(cols):
    """The parsed extra_json of every row ({} where empty or not JSON)."""
    import json

    out = []
    for text in cols.get("extra_json", [""] * _n(cols)):
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        out.append(value if isinstance(value, dict) else {})
    return out


def _errors(view, rows, stats, stderr_name):
    """Error bar per alpha of `stats` (from _mean_by over `rows`): the s.d. over the repeats (the
    spread of single runs, as the paper draws it); with one run, its own standard error (column
    stderr_name) if it has one, else 0."""
    alpha = view["alpha"]
    stderr = _col(view, stderr_name) if stderr_name else np.full(_n(view), np.nan)
    out = []
    for a, _, std, _, _, count in stats:
        if count > 1 and np.isfinite(std):
            out.append(std)
        else:
            own = stderr[rows & _equal_mask(alpha, a)]
            out.append(float(np.nanmean(own)) if np.isfinite(own).any() else 0.0)
    return np.array(out)


def _tied_series(ax, view, here, theory_y, erm_y, erm_stderr=None, parametrisations=None):
    """Theory lines (fixed-point, theory_y vs alpha) per (parametrisation, k) and ERM markers (erm_y,
    mean ± s.d. over the seeds per alpha) per (parametrisation, k, d) of the rows `here`. Returns the
    alphas drawn and how many rows were drawn hollow (status not ok)."""
    fp = here & _mask_method(view, "fixed-point") & np.isfinite(_col(view, theory_y))
    erm = here & _mask_method(view, "erm") & np.isfinite(_col(view, erm_y))
    ok = _ok(view)
    alpha, k, d = view["alpha"], view["k"], view["d"]
    ks = _unique(k[fp | erm])
    ds = _finite_unique(d[erm])
    several_k = len(ks) > 1
    alphas, not_ok = [], 0
    for p in parametrisations or _parametrisations(view, fp | erm):
        of_p = view["parametrisation"] == p
        for i, kk in enumerate(ks):
            # Widths in one colour each (the largest takes the parametrisation's); the first curve is
            # drawn wide and light, later ones thin and dashed on top, so curves that coincide (a
            # width cap that is not reached) both stay visible.
            colour = _width_colour(p, len(ks) - 1 - i) if several_k else PARAMETRISATION_COLOURS.get(p, "tab:gray")
            k_text = "" if not several_k or (isinstance(kk, float) and math.isnan(kk)) else f", k={kk:g}"
            every = fp & of_p & _equal_mask(k, kk)
            if every.any():
                not_ok += _hollow_not_ok(ax, view, every, "alpha", theory_y, colour)
                stats = _mean_by(alpha[every & ok], _col(view, theory_y)[every & ok])
                if stats:
                    x, y = [s[0] for s in stats], [s[1] for s in stats]
                    style = {"lw": 3.2, "alpha": 0.55} if several_k and i == 0 else \
                        {"lw": 1.3, "ls": "--" if several_k else "-"}
                    line, = ax.plot(x, y, color=colour, label=f"{p}{k_text}: theory", **style)
                    line.set_gid(f"theory:{p}:k={kk:g}")
                    alphas.extend(x)
            for j, dd in enumerate(ds):
                every = erm & of_p & _equal_mask(k, kk) & _equal_mask(d, dd)
                if not every.any():
                    continue
                not_ok += _hollow_not_ok(ax, view, every, "alpha", erm_y, colour)
                rows = every & ok
                stats = _mean_by(alpha[rows], _col(view, erm_y)[rows])
                if not stats:
                    continue
                x, y = [s[0] for s in stats], [s[1] for s in stats]
                seeds = max(s[5] for s in stats)
                runs = f"({seeds} seeds, mean ± s.d.)" if seeds > 1 else "(1 seed, ± its standard error)"
                # A marker per (k, d), so the widths' markers stay apart where their values coincide.
                bars = ax.errorbar(x, y, yerr=_errors(view, rows, stats, erm_stderr),
                                   fmt=MARKERS[(j + (len(ks) - 1 - i)) % len(MARKERS)],
                                   ms=4, capsize=3, color=colour, label=f"{p}{k_text}: ERM d={dd:g} {runs}", zorder=3)
                bars.lines[0].set_gid(f"erm:{p}:k={kk:g}:d={dd:g}")
                alphas.extend(x)
    return alphas, not_ok


def _thresholds(ax, view, setting, curves=None):
    """Vertical dotted lines at the recovery threshold(s) (method recovery-threshold) of a setting, and
    dash-dotted ones at the interpolation threshold where it was computed; returns their alphas.
    curves: the rows the panel draws; a threshold is drawn only for a parametrisation among them (a
    direct model's threshold means nothing on a figure of the factorised one)."""
    rows = _mask_method(view, "recovery-threshold") & _ok(view) & _setting_rows(view, setting, strict=False)
    if curves is not None:
        rows &= np.isin(view["parametrisation"], _parametrisations(view, curves))
    rows = np.flatnonzero(rows)
    order = {p: j for j, p in enumerate(PARAMETRISATION_ORDER)}
    rows = sorted(rows, key=lambda i: (order.get(view["parametrisation"][i], len(order)), view["parametrisation"][i]))
    drawn, out = set(), []
    for i in rows:
        p = view["parametrisation"][i] or "?"
        colour = PARAMETRISATION_COLOURS.get(p, "0.3")
        for name, ls, text in (("alpha_rec", ":", "recovery threshold α_rec (Δ = 0, conic)"),
                               ("alpha_interp", "-.", "interpolation threshold α_interp (RS, λ → 0+)")):
            value = float(_col(view, name)[i])
            if not np.isfinite(value) or (p, name, value) in drawn:
                continue
            drawn.add((p, name, value))
            line = ax.axvline(value, color=colour, ls=ls, lw=1.2, zorder=1, label=f"{text} = {value:.4g} ({p})")
            line.set_gid(f"{name}:{p}")
            out.append(value)
    return out


def _tied_log_axes(ax, alphas, log_y=True):
    if any(a > 0 for a in alphas):
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both" if log_y else "major")


@_figure("tied-learning-curve", "tied_learning_curve")
def tied_learning_curve(cols):
    """test_clean (left) and test_noisy (right) vs alpha: theory lines per (k, parametrisation), ERM
    markers (mean ± s.d. over the seeds), recovery thresholds dotted; one row of panels per setting."""
    view = _tied_view(cols)
    tied = _tied_rows(view)
    curves = tied & _mask_method(view, "fixed-point", "erm") & \
        (np.isfinite(_col(view, "test_clean")) | np.isfinite(_col(view, "test_noisy")))
    if not curves.any():
        raise NoData("figure tied-learning-curve: no tied-attention rows of method fixed-point or erm with test errors")
    settings = _tied_settings(view, curves)
    fig, axes = _grid(2 * len(settings), width=6.2, height=3.8, columns=2)
    for row, setting in enumerate(settings):
        here = tied & _setting_rows(view, setting)
        for column, (name, label) in enumerate((("test_clean", "test error (clean labels)"),
                                                ("test_noisy", "test error (noisy labels)"))):
            ax = axes[2 * row + column]
            alphas, not_ok = _tied_series(ax, view, here, name, name, name + "_stderr")
            alphas += _thresholds(ax, view, setting, here & curves)
            _legend_not_ok(ax, not_ok)
            _tied_log_axes(ax, alphas)
            ax.set_xlabel("α = n/d²")
            ax.set_ylabel(label)
            ax.set_title(_tied_title(setting))
    _shared_legend(fig, axes)
    return fig


def _erm_spectrum_group(view, extras, rows):
    """Pooled |eigenvalues| of ERM runs: (nonzero values, weights (counts), zeros, total, runs)."""
    from .archive import spectrum_of

    values, weights, zeros, total = [], [], 0.0, 0.0
    for i in np.flatnonzero(rows):
        row = {"method": "erm", "point_id": view["point_id"][i], "rank_rel_1e3": _col(view, "rank_rel_1e3")[i]}
        s = spectrum_of(row, extras[i], singular_values=True, root=True)
        atom = s["atom_at_0"] if np.isfinite(s["atom_at_0"]) else 0.0
        if "eigenvalues" in s:
            eig = s["eigenvalues"]
            n_zero = int(round(atom * eig.size))
            values.append(eig[n_zero:])
            weights.append(np.ones(eig.size - n_zero))
            zeros += n_zero
            total += eig.size
        else:
            counts = s["counts"].astype(float).copy()
            n = counts.sum()
            remove = round(atom * n)
            zeros += remove
            for b in range(counts.size):  # the zeros lie in the lowest bin(s)
                taken = min(counts[b], remove)
                counts[b] -= taken
                remove -= taken
                if remove <= 0:
                    break
            values.append(0.5 * (s["edges"][1:] + s["edges"][:-1]))
            weights.append(counts)
            total += n
    values = np.concatenate(values) if values else np.zeros(0)
    weights = np.concatenate(weights) if weights else np.zeros(0)
    return values, weights, zeros, total, int(rows.sum())


def _pick(values, count):
    """At most `count` of the sorted values, evenly spread (first and last kept)."""
    if len(values) <= count:
        return list(values)
    return [values[int(round(i))] for i in np.linspace(0, len(values) - 1, count)]


@_figure("tied-spectra", "tied_spectra")
def tied_spectra(cols):
    """Spectra of Ŝ in the paper's units, √λ(Ŝ) = σ(W)/(r d)^{1/4} (the singular values of the factorised
    student's weights; √|λ| for direct), one panel per alpha of the ERM rows with eigenvalues (up to
    four, of the largest d): the ERM histogram of the nonzero values (normalised so that its area is the
    fraction of nonzero eigenvalues) with the theory density of the fixed-point row at the same alpha,
    parametrisation and k, and the target S* dashed; atoms at 0 as bars whose height is their mass on
    the density axis."""
    from matplotlib.lines import Line2D

    from .archive import ZERO_RELATIVE, spectrum_of

    view = _tied_view(cols)
    tied = _tied_rows(view) & _ok(view)
    extras = _extras(view)
    has = np.array([("eigenvalues" in e or "eigenvalue_histogram" in e) for e in extras], dtype=bool)
    erm = tied & _mask_method(view, "erm") & has & np.isfinite(view["alpha"])
    if not erm.any():
        raise NoData("figure tied-spectra: no tied-attention erm rows (status ok) with eigenvalues in extra_json")
    has_theory = np.array(["eig_density" in e for e in extras], dtype=bool)
    fp = tied & _mask_method(view, "fixed-point") & has_theory
    alpha, k, d = view["alpha"], view["k"], view["d"]
    panels = []
    for setting in _tied_settings(view, erm):
        here = erm & _setting_rows(view, setting)
        largest = max(_finite_unique(d[here]), default=float("nan"))
        at_largest = here & (_equal_mask(d, largest) if np.isfinite(largest) else np.ones(_n(view), dtype=bool))
        for a in _pick(_finite_unique(alpha[at_largest]), SPECTRA_PANELS):
            panels.append((setting, a, here & np.isclose(alpha, a, rtol=1e-9, atol=0)))
    fig, axes = _grid(len(panels), width=4.6, height=3.6, columns=2 if len(panels) == 4 else None)
    for ax, (setting, a, at) in zip(axes, panels):
        groups = _settings(view, at, ("parametrisation", "k"))
        several_k = len({g[1] for g in groups}) > 1
        prepared, upper = [], 0.0
        for p, kk in groups:
            rows = at & (view["parametrisation"] == p) & _equal_mask(k, kk)
            dd = max(_finite_unique(d[rows]), default=float("nan"))
            if np.isfinite(dd):
                rows &= _equal_mask(d, dd)
            values, weights, zeros, total, runs = _erm_spectrum_group(view, extras, rows)
            theory_rows = np.flatnonzero(fp & _setting_rows(view, setting) & (view["parametrisation"] == p) &
                                         _equal_mask(k, kk) & np.isclose(alpha, a, rtol=1e-9, atol=0))
            theory = None
            if theory_rows.size:
                i = theory_rows[0]
                theory = spectrum_of({"method": "fixed-point", "atom_at_0": _col(view, "atom_at_0")[i]},
                                     extras[i], singular_values=True, root=True)
                if theory["grid"].size:
                    upper = max(upper, float(theory["grid"].max()))
            if values.size:
                upper = max(upper, float(values.max()))
            prepared.append((p, kk, dd, values, weights, zeros, total, runs, theory))
        upper = upper if upper > 0 else 1.0
        nonzero = max((int(w.sum()) for _, _, _, _, w, _, _, _, _ in prepared), default=0)
        bins = int(np.clip(2 * math.sqrt(max(nonzero, 1)), 10, 50))
        edges = np.linspace(0.0, upper * (1 + 1e-9), bins + 1)
        width = edges[1] - edges[0]
        tallest = 0.0
        for p, kk, dd, values, weights, zeros, total, runs, theory in prepared:
            colour = PARAMETRISATION_COLOURS.get(p, "tab:gray")
            name = p + (f", k={kk:g}" if several_k else "")
            if total > 0:
                atom = zeros / total
                _, _, patches = ax.hist(values, bins=edges, weights=weights / (total * width), color=colour, alpha=0.35,
                                        label=f"{name}: ERM d={dd:g} ({runs} run{'s' if runs > 1 else ''})")
                for patch in patches:
                    patch.set_gid(f"erm-hist:{p}:k={kk:g}")
                if atom > 0:
                    # An atom of mass m is a bar of height m in the units of the density axis.
                    bar = Line2D([0, 0], [0, atom], color=colour, lw=7, alpha=0.5,
                                 solid_capstyle="butt", gid=f"erm-atom:{p}:k={kk:g}")
                    ax.add_artist(bar)
                    tallest = max(tallest, atom)
                    ax.annotate(f"{atom:.2f}", xy=(0, atom), xytext=(5, 0),
                                textcoords="offset points", va="center", fontsize="small", color=colour)
                    ax.plot([], [], color=colour, lw=7, alpha=0.5,
                            label=f"{name}: ERM atom at 0 = {atom:.3g} (|λ| ≤ {ZERO_RELATIVE:g} max)")
            if theory is not None:
                line, = ax.plot(theory["grid"], theory["density"], color=colour, lw=1.5,
                                label=f"{name}: theory (d → ∞)")
                line.set_gid(f"theory-density:{p}:k={kk:g}")
                if theory["atom_at_0"] > 0:
                    tick = Line2D([0], [theory["atom_at_0"]], ls="none", marker="_",
                                  ms=14, mew=2.2, color=colour, gid=f"theory-atom:{p}:k={kk:g}")
                    ax.add_artist(tick)
                    tallest = max(tallest, theory["atom_at_0"])
                    ax.plot([], [], ls="none", marker="_", ms=14, mew=2.2, color=colour,
                            label=f"{name}: theory atom at 0 = {theory['atom_at_0']:.3g}")
            else:
                ax.plot([], [], " ", label=f"{name}: no fixed-point row at α={a:g}")
        target = next((e for e in (extras[i] for i in np.flatnonzero(fp & _setting_rows(view, setting)))
                       if "target_density" in e), None)
        if target is not None:
            # The target S* (its law depends on k0 alone; archived by the fixed-point rows).
            t = spectrum_of({"method": "fixed-point", "atom_at_0": target.get("target_atom_at_0", 0.0)},
                            {"eig_grid": target["target_grid"], "eig_density": target["target_density"]},
                            singular_values=True, root=True)
            line, = ax.plot(t["grid"], t["density"], color="tab:red", ls="--", lw=1.2,
                            label=f"target S* (Marchenko–Pastur, k₀): atom at 0 = {t['atom_at_0']:.3g}")
            line.set_gid("target-density")
            if t["atom_at_0"] > 0:
                ax.plot([0], [t["atom_at_0"]], ls="none", marker="x", ms=7, color="tab:red", gid="target-atom")
                tallest = max(tallest, t["atom_at_0"])
        ax.set_xlim(left=-0.02 * upper)
        ax.set_ylim(bottom=0)
        if tallest > ax.get_ylim()[1]:
            ax.set_ylim(top=1.08 * tallest)
        ax.set_xlabel("√λ(Ŝ) = σ(W)/(r d)^¼" + (" (√|λ| for direct)" if any(g[0] == "direct" for g in groups) else ""))
        ax.set_ylabel("density of the nonzero values;\natoms at 0: bar height = mass")
        title = _tied_title(setting)
        ax.set_title(f"α={a:g}" + (f", {title}" if title else ""))
        ax.legend(loc="upper right")
        ax.grid(alpha=0.3)
    return fig


@_figure("tied-rank", "tied_rank")
def tied_rank(cols):
    """Rank fraction vs alpha: theory rank_fraction (fixed-point) lines, ERM rank_rel_1e3 markers (the
    fraction of eigenvalues with |λ| > 1e-3 max|λ|; mean ± s.d. over the seeds)."""
    view = _tied_view(cols)
    tied = _tied_rows(view)
    rows = tied & ((_mask_method(view, "fixed-point") & np.isfinite(_col(view, "rank_fraction"))) |
                   (_mask_method(view, "erm") & np.isfinite(_col(view, "rank_rel_1e3"))))
    if not rows.any():
        raise NoData("figure tied-rank: no tied-attention fixed-point rows with rank_fraction or erm rows with "
                     "rank_rel_1e3")
    settings = _tied_settings(view, rows)
    fig, axes = _grid(len(settings), width=7.4, height=3.8)
    for ax, setting in zip(axes, settings):
        here = tied & _setting_rows(view, setting)
        alphas, not_ok = _tied_series(ax, view, here, "rank_fraction", "rank_rel_1e3")
        alphas += _thresholds(ax, view, setting, here & rows)
        # Reference levels (docs/theory.md §T4): the target's rank k0; the large-alpha limit of the
        # estimator's rank at Δ > 0, (1 + k0)/2 (half of the target's smeared null space survives
        # the threshold); the width caps k < 1 of factorised students (rank ≤ k d).
        k0 = setting[TIED_KEYS.index("k0")]
        delta = setting[TIED_KEYS.index("delta")]
        if np.isfinite(k0):
            ax.axhline(k0, color="0.3", ls=":", lw=1.0, label=f"rank of the target S*: k₀ = {k0:g}", gid="rank-k0")
            if np.isfinite(delta) and delta > 0:
                ax.axhline((1 + k0) / 2, color="0.3", ls="--", lw=1.0,
                           label=f"large-α limit (1 + k₀)/2 = {(1 + k0) / 2:g} (Δ > 0)", gid="rank-limit")
        caps = [kk for kk in _finite_unique(view["k"][here & (view["parametrisation"] == "factorised")]) if kk < 1]
        for kk in caps:
            ax.axhline(kk, color=_width_colour("factorised", 1), ls=(0, (1, 1)), lw=1.4,
                       label=f"width cap k = {kk:g} (factorised: rank ≤ k d); not reached where the two k coincide",
                       gid=f"rank-cap:k={kk:g}")
        _legend_not_ok(ax, not_ok)
        _tied_log_axes(ax, alphas, log_y=False)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("α = n/d²")
        ax.set_ylabel("rank fraction of Ŝ (rank / d)")
        ax.set_title(_tied_title(setting))
    _shared_legend(fig, axes)
    return fig


# The penalty the paper compares both parametrisations at (arXiv 2509.24914, Fig. 1; docs/theory.md §T1).
PAPER_LAMBDA = 0.01
FAMILY_KEYS = tuple(k for k in TIED_KEYS if k != "lambda")


def _tuned_families(view, fp):
    """Settings of FAMILY_KEYS (every tied key but lambda) whose fixed-point rows hold both
    parametrisations, each at two or more penalties lambda: there the penalty can be tuned per model."""
    out = []
    for family in _settings(view, fp, FAMILY_KEYS):
        here = fp & _setting_rows(view, family, keys=FAMILY_KEYS)
        lambdas = [set(_finite_unique(view["lambda"][here & (view["parametrisation"] == p)]))
                   for p in ("factorised", "direct")]
        if len(lambdas[0]) > 1 and len(lambdas[1]) > 1:
            out.append(family)
    return out


def _tuned_theory(view, rows, parametrisation):
    """Per alpha, the fixed-point test_clean minimised over lambda (rows: ok fixed-point rows of one
    family): a dict alpha -> (test_clean, lambda)."""
    alpha, lam, y = view["alpha"], view["lambda"], _col(view, "test_clean")
    best = {}
    for i in np.flatnonzero(rows & (view["parametrisation"] == parametrisation) & np.isfinite(y)):
        a = float(alpha[i])
        if a not in best or y[i] < best[a][0]:
            best[a] = (float(y[i]), float(lam[i]))
    return dict(sorted(best.items()))


def _erm_at(view, rows, parametrisation, lambdas):
    """ERM test_clean per alpha of one parametrisation at the penalty lambdas[alpha] (rows: ok ERM rows
    of one family and one d): a list of (alpha, mean, s.d., count), and how many alphas had ERM rows
    at another penalty only (not drawn)."""
    alpha, lam, y = view["alpha"], view["lambda"], _col(view, "test_clean")
    of_p = rows & (view["parametrisation"] == parametrisation) & np.isfinite(y)
    out, elsewhere = [], 0
    for a in _finite_unique(alpha[of_p]):
        at_a = of_p & _equal_mask(alpha, a)
        if a not in lambdas:
            continue
        chosen = at_a & np.isclose(lam, lambdas[a], rtol=1e-9, atol=0)
        values = y[chosen]
        if values.size == 0:
            elsewhere += 1
            continue
        sd = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
        out.append((a, float(values.mean()), sd, values.size))
    return out, elsewhere


def _gap_points(fact, direct):
    """Relative gap direct/factorised - 1 of ERM means at the alphas both have, with the standard
    error of the ratio of the two means (independent seeds): (alphas, gaps, errors)."""
    by_alpha = {a: (m, sd, n) for a, m, sd, n in fact}
    xs, gaps, errors = [], [], []
    for a, m, sd, n in direct:
        if a not in by_alpha:
            continue
        mf, sdf, nf = by_alpha[a]
        ratio = m / mf
        xs.append(a)
        gaps.append(ratio - 1)
        errors.append(ratio * math.hypot(sd / math.sqrt(n) / m, sdf / math.sqrt(nf) / mf))
    return xs, gaps, errors


def _factorised_vs_direct_tuned(axes, view, tied, family):
    """Four panels of one family with a lambda grid: (a) test_clean with lambda tuned per model, (b)
    at the paper's lambda, (c) the relative gap direct/factorised - 1 of both, (d) the tuned lambda."""
    fp = tied & _mask_method(view, "fixed-point") & _ok(view) & _setting_rows(view, family, keys=FAMILY_KEYS)
    erm_rows = tied & _mask_method(view, "erm") & _ok(view) & _setting_rows(view, family, keys=FAMILY_KEYS)
    lambdas_present = _finite_unique(view["lambda"][fp])
    equal = PAPER_LAMBDA if any(math.isclose(x, PAPER_LAMBDA) for x in lambdas_present) else \
        lambdas_present[len(lambdas_present) // 2]
    ax_tuned, ax_equal, ax_gap, ax_lambda = axes
    tuned, at_equal, erm_tuned, erm_equal = {}, {}, {}, {}
    ds = _finite_unique(view["d"][erm_rows])
    left_out = 0
    for p in ("factorised", "direct"):
        colour = PARAMETRISATION_COLOURS[p]
        tuned[p] = _tuned_theory(view, fp, p)
        at_equal[p] = _tuned_theory(view, fp & np.isclose(view["lambda"], equal), p)
        x = list(tuned[p])
        line, = ax_tuned.plot(x, [tuned[p][a][0] for a in x], color=colour, label=f"{p}: theory")
        line.set_gid(f"theory-tuned:{p}")
        line, = ax_equal.plot(list(at_equal[p]), [v[0] for v in at_equal[p].values()], color=colour)
        line.set_gid(f"theory-equal:{p}")
        line, = ax_lambda.step(x, [tuned[p][a][1] for a in x], where="mid", color=colour, marker=".",
                               **({"lw": 3.2, "alpha": 0.55} if p == "factorised" else {"lw": 1.3, "ls": "--"}),
                               label=f"{p}: λ minimising the theory's test error")
        line.set_gid(f"lambda-tuned:{p}")
        for j, dd in enumerate(ds):
            rows_d = erm_rows & _equal_mask(view["d"], dd)
            marker = MARKERS[j % len(MARKERS)]
            for ax, lambdas, store, gid in ((ax_tuned, {a: v[1] for a, v in tuned[p].items()}, erm_tuned, "tuned"),
                                            (ax_equal, {a: equal for a in tuned[p]}, erm_equal, "equal")):
                stats, elsewhere = _erm_at(view, rows_d, p, lambdas)
                if gid == "tuned":
                    left_out += elsewhere
                store[(p, dd)] = stats
                if not stats:
                    continue
                seeds = max(st[3] for st in stats)
                bars = ax.errorbar([st[0] for st in stats], [st[1] for st in stats], yerr=[st[2] for st in stats],
                                   fmt=marker, ms=4, capsize=3, color=colour, zorder=3,
                                   label=f"{p}: ERM d={dd:g} (mean ± s.d. of {seeds} seeds)")
                bars.lines[0].set_gid(f"erm-{gid}:{p}:d={dd:g}")
    # The relative gap: theory with lambda tuned (solid) and at the paper's lambda (dashed), ERM markers.
    for theory, ls, text, gid in ((tuned, "-", "λ tuned per model", "tuned"), (at_equal, "--", f"λ = {equal:g}", "equal")):
        common = [a for a in theory["direct"] if a in theory["factorised"]]
        line, = ax_gap.plot(common, [theory["direct"][a][0] / theory["factorised"][a][0] - 1 for a in common],
                            color="k" if gid == "tuned" else "0.55", ls=ls, label=f"direct/factorised − 1, theory, {text}")
        line.set_gid(f"gap-{gid}")
    for j, dd in enumerate(ds):
        # Filled markers in both (hollow ones mean "status not ok" in every figure): black for the
        # tuned penalties, grey squares for the paper's.
        for store, colour, marker, text, gid in ((erm_tuned, "k", MARKERS[j % len(MARKERS)], "λ tuned per model", "tuned"),
                                                 (erm_equal, "0.55", "s", f"λ = {equal:g}", "equal")):
            xs, gaps, errors = _gap_points(store.get(("factorised", dd), []), store.get(("direct", dd), []))
            if xs:
                bars = ax_gap.errorbar(xs, gaps, yerr=errors, fmt=marker, ms=5, color=colour, capsize=3, zorder=3,
                                       label=f"ERM d={dd:g}, {text} (± s.e. of the ratio of means)")
                bars.lines[0].set_gid(f"gap-erm-{gid}:d={dd:g}")
    ax_gap.axhline(0, color="0.5", lw=0.8)
    alphas = [a for p in tuned for a in tuned[p]]
    at = TIED_KEYS.index("lambda")  # the title of the family: its setting without a lambda
    title = _tied_title(tuple(family[:at]) + (float("nan"),) + tuple(family[at:]))
    for ax in (ax_tuned, ax_equal):
        _tied_log_axes(ax, alphas)
        ax.set_xlabel("α = n/d²")
        ax.set_ylabel("test error (clean labels)")
    ax_tuned.set_title(f"λ tuned per model ({len(lambdas_present)} values): {title}")
    ax_equal.set_title(f"both at λ = {equal:g}: {title}")
    _tied_log_axes(ax_gap, alphas, log_y=False)
    ax_gap.set_xlabel("α = n/d²")
    ax_gap.set_ylabel("relative gap: direct / factorised − 1")
    ax_gap.set_title("advantage of the factorised (nuclear-norm) bias")
    _tied_log_axes(ax_lambda, alphas)
    ax_lambda.set_xlabel("α = n/d²")
    ax_lambda.set_ylabel("tuned λ")
    ax_lambda.set_title(f"tuned λ on {{{', '.join(f'{x:g}' for x in lambdas_present)}}}" +
                        (f" ({left_out} ERM α at another λ only, not drawn)" if left_out else ""))


@_figure("tied-factorised-vs-direct", "tied_factorised_vs_direct")
def tied_factorised_vs_direct(cols):
    """test_clean of the factorised (and PSD-nuclear) and the direct student vs alpha on the same axes,
    theory lines and ERM markers; one panel per setting with both. Where the theory holds both models
    on a grid of penalties lambda, four panels instead: lambda tuned per model (the theory's argmin
    per alpha; ERM at that lambda), both at the paper's lambda, the relative gap, the tuned lambda."""
    view = _tied_view(cols)
    tied = _tied_rows(view)
    rows = tied & _mask_method(view, "fixed-point", "erm") & np.isfinite(_col(view, "test_clean"))
    present = set(_parametrisations(view, rows))
    if "direct" not in present or not present & {"factorised", "psd-nuclear"}:
        raise NoData("figure tied-factorised-vs-direct: needs tied-attention fixed-point or erm rows with test_clean "
                     f"of both parametrisation direct and factorised (found: {', '.join(sorted(present)) or 'none'})")
    families = _tuned_families(view, rows & _mask_method(view, "fixed-point") & _ok(view))
    in_family = np.zeros(_n(view), dtype=bool)
    for family in families:
        in_family |= _setting_rows(view, family, keys=FAMILY_KEYS)
    settings = [s for s in _tied_settings(view, rows & ~in_family)
                if len(_parametrisations(view, rows & ~in_family & _setting_rows(view, s))) > 1]
    if not settings and not families:
        raise NoData("figure tied-factorised-vs-direct: no setting has rows of both parametrisations")
    fig, axes = _grid(4 * len(families) + len(settings), width=7.4 if not families else 5.6, height=3.8,
                      columns=2 if families else None)
    for f, family in enumerate(families):
        _factorised_vs_direct_tuned(axes[4 * f:4 * f + 4], view, tied, family)
    for ax, setting in zip(axes[4 * len(families):], settings):
        here = tied & _setting_rows(view, setting)
        alphas, not_ok = _tied_series(ax, view, here, "test_clean", "test_clean", "test_clean_stderr")
        alphas += _thresholds(ax, view, setting)
        _legend_not_ok(ax, not_ok)
        _tied_log_axes(ax, alphas)
        ax.set_xlabel("α = n/d²")
        ax.set_ylabel("test error (clean labels)")
        ax.set_title("factorised vs direct: " + _tied_title(setting))
    _shared_legend(fig, axes)
    return fig


def make(cols, figure, style="screen", xscale="auto", series=None):
    """One figure (a key of FIGURES) as a matplotlib Figure, in a style of STYLES; xscale (one of
    XSCALES) for the alpha axes; series: a parameter whose values split each activation's curves
    (population, finite-alpha, trajectory). Raises NoData, or ValueError for an unknown name."""
    import matplotlib.pyplot as plt

    if figure not in DRAW:
        raise ValueError(f"unknown figure {figure!r} (expected {', '.join(DRAW)})")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (expected {', '.join(STYLES)})")
    if xscale not in XSCALES:
        raise ValueError(f"unknown xscale {xscale!r} (expected {', '.join(XSCALES)})")
    if _n(cols) == 0:
        raise NoData(f"figure {figure}: the archive has no points")
    if series is not None and series not in cols:
        raise ValueError(f"unknown series parameter {series!r} (the archive's columns: "
                         f"{', '.join(sorted(k for k in cols if not k.startswith('order_parameters')))})")
    _PANEL["style"] = style
    _OPTIONS.update(xscale=xscale, series=series)
    with plt.rc_context(STYLES[style]["rc"]):
        fig = DRAW[figure](cols)
        _layout(fig)
    return fig


def draw(cols, figure, outdir, formats=("png", "svg"), name=None, style="screen", xscale="auto", series=None):
    """Draws one figure (a key of FIGURES) into outdir as <name>.<format> (default name: the
    paper's figure stem, e.g. fig3_finite_alpha); returns the written paths. Raises NoData."""
    import matplotlib

    matplotlib.use("Agg")
    fig = make(cols, figure, style, xscale, series)
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLES[style]["rc"]):
        return _save(fig, outdir, name or FIGURES[figure], tuple(formats))


# Above this inverse temperature the replica-symmetric fixed point of tied attention is only
# semi-quantitative: prox minima compete in the channel (docs/theory.md §T7).
RS_RELIABLE_BETA = 1.0
TOKENS_QUANTITIES = (("test_noisy", "test error (noisy labels)"), ("train_loss", "training error ℒ(Ŝ)/n"),
                     ("mse_s", "mse_S = ‖Ŝ − S*‖²/d"))


def _temperature_label(T, beta, beta0):
    text = f"T={T:g}, β={beta:g}" + (f", β₀={beta0:g}" if beta0 != beta else "")
    if beta > RS_RELIABLE_BETA or beta0 > RS_RELIABLE_BETA:
        text += " (RS semi-quantitative)"
    return text


def _erm_spread(ax, view, erm, y_name, colour, label, gid, clip_log=False):
    """ERM markers of the rows `erm`, one series per d: mean ± s.d. over the seeds per alpha (the
    spread of single runs, as the paper draws it). clip_log: a lower bar that would reach below zero
    stops at a tenth of the mean (a log axis). Returns the alphas drawn and the rows drawn hollow."""
    alpha, d, ok, y = view["alpha"], view["d"], _ok(view), _col(view, y_name)
    alphas, not_ok = [], 0
    for j, dd in enumerate(_finite_unique(d[erm])):
        every = erm & _equal_mask(d, dd)
        not_ok += _hollow_not_ok(ax, view, every, "alpha", y_name, colour)
        stats = _mean_by(alpha[every & ok], y[every & ok])
        if not stats:
            continue
        x = [st[0] for st in stats]
        seeds = max(st[5] for st in stats)
        spread = np.array([st[2] if st[5] > 1 and np.isfinite(st[2]) else 0.0 for st in stats])
        means = np.array([st[1] for st in stats])
        lower = np.minimum(spread, 0.9 * means) if clip_log else spread
        runs = f"mean ± s.d. of {seeds} seeds" if seeds > 1 else "1 seed"
        bars = ax.errorbar(x, means, yerr=[lower, spread], fmt=MARKERS[j % len(MARKERS)], ms=4, capsize=3,
                           color=colour, label=f"{label}: ERM d={dd:g} ({runs})", zorder=3,
                           **({"mec": "k", "mew": 0.4} if clip_log else {}))
        bars.lines[0].set_gid(f"{gid}:d={dd:g}")
        alphas.extend(x)
    return alphas, not_ok


def _tokens_temperature_row(axes, view, here, settings, colours):
    """One row of panels (TOKENS_QUANTITIES): per (T, beta, beta0) of `settings` the theory line and the
    ERM markers (mean ± s.d. over seeds) at each d, in the colour colours[setting]. Returns the alphas
    drawn and the hollow count."""
    alpha, d = view["alpha"], view["d"]
    ok = _ok(view)
    alphas, not_ok = [], 0
    for setting in settings:
        T, beta, beta0 = setting
        rows = here & _equal_mask(view["T"], T) & _equal_mask(view["beta"], beta) & _equal_mask(view["beta0"], beta0)
        colour = colours[setting]
        semi = beta > RS_RELIABLE_BETA or beta0 > RS_RELIABLE_BETA
        label = _temperature_label(T, beta, beta0)
        for ax, (name, _) in zip(axes, TOKENS_QUANTITIES):
            y = _col(view, name)
            fp = rows & _mask_method(view, "fixed-point") & np.isfinite(y)
            not_ok += _hollow_not_ok(ax, view, fp, "alpha", name, colour)
            stats = _mean_by(alpha[fp & ok], y[fp & ok])
            if stats:
                x = [st[0] for st in stats]
                line, = ax.plot(x, [st[1] for st in stats], color=colour, ls="--" if semi else "-",
                                label=f"{label}: theory")
                line.set_gid(f"theory:T={T:g}:beta={beta:g}:beta0={beta0:g}")
                alphas.extend(x)
            erm = rows & _mask_method(view, "erm") & np.isfinite(y)
            drawn, hollow = _erm_spread(ax, view, erm, name, colour, label, f"erm:T={T:g}:beta={beta:g}:beta0={beta0:g}")
            alphas.extend(drawn)
            not_ok += hollow
    return alphas, not_ok


@_figure("tied-tokens-temperature", "tied_tokens_temperature")
def tied_tokens_temperature(cols):
    """The token-count and temperature study of tied attention: test error, training error and mse_S
    vs alpha, theory lines and ERM markers (mean ± s.d. over seeds). Top row: every T at β = β₀ = 1,
    with the recovery threshold α_rec against T in a fourth panel; bottom row: every (β, β₀) at the
    smallest T. Curves with β or β₀ > 1 are dashed and labelled semi-quantitative: there the
    replica-symmetric prox has competing minima (docs/theory.md §T7)."""
    view = _tied_view(cols)
    tied = _tied_rows(view)
    curves = tied & _mask_method(view, "fixed-point", "erm") & np.isfinite(_col(view, "test_noisy"))
    if not curves.any():
        raise NoData("figure tied-tokens-temperature: no tied-attention rows of method fixed-point or erm")
    others = _settings(view, curves, ("k0", "lambda", "delta", "parametrisation", "k"))
    if len(others) > 1:
        raise NoData("figure tied-tokens-temperature: the rows have several settings of (k0, lambda, delta, "
                     f"parametrisation, k): {others}; select one with --where")
    triples = _settings(view, curves, ("T", "beta", "beta0"))
    by_tokens = [t for t in triples if t[1] == 1 and t[2] == 1]
    smallest_T = min(t[0] for t in triples)
    by_temperature = [t for t in triples if t[0] == smallest_T]
    rec = tied & _mask_method(view, "recovery-threshold") & np.isfinite(_col(view, "alpha_rec")) & _ok(view)
    rows = [r for r in (by_tokens, by_temperature) if r]
    fig, axes = _grid(4 * len(rows), width=4.4, height=3.4, columns=4)
    # One colour per (T, beta, beta0) in both rows (the legend is shared).
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive"]
    ordered = by_tokens + [t for t in by_temperature if t not in by_tokens]
    colours = {t: palette[i % len(palette)] for i, t in enumerate(ordered)}
    k0, lam, delta, param, k = others[0]
    for r, settings in enumerate(rows):
        row_axes = axes[4 * r:4 * r + 3]
        alphas, not_ok = _tokens_temperature_row(row_axes, view, curves, settings, colours)
        for ax, (_, label) in zip(row_axes, TOKENS_QUANTITIES):
            _legend_not_ok(ax, not_ok)
            _tied_log_axes(ax, alphas)
            ax.set_xlabel("α = n/d²")
            ax.set_ylabel(label)
            ax.set_title(("token count T, β = β₀ = 1" if settings is by_tokens else f"temperature, T = {smallest_T:g}")
                         + f"\nk₀={k0:g}, λ={lam:g}, Δ={delta:g}, {param}")
        extra = axes[4 * r + 3]
        if settings is by_tokens and rec.any():
            param_rows = rec & (view["parametrisation"] == param)
            stats = _mean_by(view["T"][param_rows], _col(view, "alpha_rec")[param_rows])
            if stats:
                x = [st[0] for st in stats]
                line, = extra.plot(x, [st[1] for st in stats], "o-", color="k", label=f"α_rec ({param})")
                line.set_gid("alpha_rec")
                # Thresholds scale as 1/(L − 1), L = T(T+1)/2 fields per sequence (docs/theory.md §T5):
                # the reference line through the smallest T.
                L = np.array([t * (t + 1) / 2 for t in x])
                ref = stats[0][1] * (L[0] - 1) / (L - 1)
                extra.plot(x, ref, ":", color="0.4", label="α_rec(T₀)·(L₀ − 1)/(L − 1), L = T(T+1)/2")
            extra.set_xlabel("tokens per sequence T")
            extra.set_ylabel("recovery threshold α_rec")
            extra.set_yscale("log")
            extra.set_title("recovery threshold vs T")
            extra.grid(alpha=0.3, which="both")
            extra.legend(loc="upper right")
            extra._slr_keep_legend = True
        elif settings is not by_tokens and any(t[1] > RS_RELIABLE_BETA or t[2] > RS_RELIABLE_BETA for t in settings):
            extra.axis("off")
            extra.text(0.02, 0.95, "Dashed: β or β₀ > 1. The replica-symmetric\nchannel has competing prox minima "
                       "there\n(column frac_two_minima): the theory is\nsemi-quantitative (docs/theory.md §T7).",
                       va="top", ha="left", fontsize=8, transform=extra.transAxes)
        else:
            extra.set_visible(False)
    _shared_legend(fig, [ax for ax in axes if not getattr(ax, "_slr_keep_legend", False)])
    return fig


TRAINING_QUANTITIES = (("train_loss", "training error (1/n) Σ_μ ‖σ(h(Ŝ; X_μ)) − Y_μ‖²"),
                       ("test_clean", "test error (clean labels)"),
                       ("q", "(1/d)‖Ŝ‖²_F"))


def _penalty_colours(lambdas):
    """One colour per penalty, darker for smaller λ (the interpolation peak sharpens as λ → 0+)."""
    import matplotlib

    ordered = sorted(lambdas, reverse=True)
    cmap = matplotlib.colormaps["viridis"]
    return {lam: cmap(0.85 * i / max(1, len(ordered) - 1)) for i, lam in enumerate(reversed(ordered))}


def _training_thresholds(ax, view, param, base, delta):
    """The thresholds of one parametrisation on a panel: the RS interpolation threshold at the panel's Δ
    (λ → 0+ extrapolation, its uncertainty shaded), the RS crossing at Δ = 0 (recovery), and the conic
    recovery threshold α_rec (Δ = 0). Returns the alphas drawn."""
    rows = _mask_method(view, "recovery-threshold") & _ok(view) & (view["parametrisation"] == param)
    for key, value in base.items():  # a parameter the method does not take (beta) is NaN: accepted
        rows &= _equal_mask(view[key], value) | np.isnan(view[key])
    out, drawn = [], set()
    extras = _extras(view)
    for i in np.flatnonzero(rows):
        row_delta = float(view["delta"][i])
        interp = float(_col(view, "alpha_interp")[i])
        spread = float(_col(view, "alpha_interp_uncertainty")[i])
        if np.isfinite(interp) and row_delta == delta and "interp" not in drawn:
            drawn.add("interp")
            crossings = [c[2] for c in extras[i].get("alpha_interp_crossings", []) if len(c) == 3]
            steps = np.diff(crossings)
            if len(steps) >= 2 and steps[-1] * steps[-2] < 0:
                # Crossings that move back and forth have not converged in λ: no λ → 0+ value is claimed.
                text = ", ".join(f"{c:.3f}" for c in crossings)
                line = ax.axvline(interp, color="0.35", ls="-.", lw=1.0, zorder=1,
                                  label=f"RS exponent crossings not converged in λ ({text}), last drawn ({param})")
                line.set_gid(f"alpha_interp:{param}")
                out.append(interp)
                continue
            line = ax.axvline(interp, color="k", ls="-.", lw=1.1, zorder=1,
                              label=f"α_interp (RS, λ → 0+, Δ={delta:g}) = {interp:.3f} ± {spread:.3f} ({param})")
            line.set_gid(f"alpha_interp:{param}")
            if np.isfinite(spread) and spread > 0:
                ax.axvspan(interp - spread, interp + spread, color="k", alpha=0.08, lw=0, zorder=0)
            out.append(interp)
        elif np.isfinite(interp) and row_delta == 0 and "rec_rs" not in drawn:
            drawn.add("rec_rs")
            line = ax.axvline(interp, color="0.45", ls="--", lw=1.0, zorder=1,
                              label=f"recovery threshold (RS, λ → 0+, Δ=0) = {interp:.3f} ± {spread:.3f} ({param})")
            line.set_gid(f"alpha_rec_rs:{param}")
            out.append(interp)
        rec = float(_col(view, "alpha_rec")[i])
        if np.isfinite(rec) and "rec" not in drawn:
            drawn.add("rec")
            line = ax.axvline(rec, color="0.45", ls=":", lw=1.2, zorder=1,
                              label=f"recovery threshold α_rec (conic, Δ=0) = {rec:.4g} ({param})")
            line.set_gid(f"alpha_rec:{param}")
            out.append(rec)
    return out


@_figure("tied-training-error", "tied_training_error")
def tied_training_error(cols):
    """Training error, test error and (1/d)‖Ŝ‖²_F of tied attention against alpha at several small
    penalties λ: one column per parametrisation, one row per quantity; colour = λ (darker = smaller),
    theory lines (fixed-point) and ERM markers (mean ± s.d. over seeds) at the same λ. Below the
    interpolation threshold α_interp the λ → 0+ training error vanishes (≈ λ-small in the plot); test
    error and ‖Ŝ‖ peak there. Vertical lines: α_interp of the replica-symmetric exponent
    (recovery-threshold with interpolation = rs, extrapolated to λ → 0+, uncertainty shaded), the RS
    recovery crossing at Δ = 0 and the conic α_rec (docs/theory.md §T5)."""
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    view = _tied_view(cols)
    tied = _tied_rows(view)
    curves = tied & _mask_method(view, "fixed-point", "erm") & np.isfinite(_col(view, "train_loss"))
    if not curves.any():
        raise NoData("figure tied-training-error: no tied-attention rows of method fixed-point or erm with train_loss")
    base_keys = ("T", "k0", "delta", "beta", "beta0")
    settings = _settings(view, curves, base_keys)
    if len(settings) > 1:
        raise NoData(f"figure tied-training-error: the curves have several settings of {base_keys}: {settings}; "
                     "select one with --where")
    base = dict(zip(base_keys, settings[0]))
    params = _parametrisations(view, curves)
    lambdas = _finite_unique(view["lambda"][curves])
    if len(lambdas) < 2:
        raise NoData("figure tied-training-error: the curves have one penalty lambda; the figure compares several "
                     "(the training error vanishes below alpha_interp only as lambda -> 0+)")
    colours = _penalty_colours(lambdas)
    fig, axes = _grid(len(TRAINING_QUANTITIES) * len(params), width=4.8, height=3.4, columns=len(params))
    alpha, ok = view["alpha"], _ok(view)
    for column, param in enumerate(params):
        of_p = curves & (view["parametrisation"] == param)
        for row, (name, label) in enumerate(TRAINING_QUANTITIES):
            ax = axes[row * len(params) + column]
            y = _col(view, name)
            alphas, not_ok = [], 0
            for lam in sorted(lambdas, reverse=True):
                colour = colours[lam]
                at = of_p & _equal_mask(view["lambda"], lam) & np.isfinite(y)
                fp = at & _mask_method(view, "fixed-point")
                not_ok += _hollow_not_ok(ax, view, fp, "alpha", name, colour)
                stats = _mean_by(alpha[fp & ok], y[fp & ok])
                if stats:
                    x = [st[0] for st in stats]
                    line, = ax.plot(x, [st[1] for st in stats], color=colour, label=f"λ={lam:g}: theory")
                    line.set_gid(f"theory:{param}:lambda={lam:g}")
                    alphas.extend(x)
                erm = at & _mask_method(view, "erm")
                drawn, hollow = _erm_spread(ax, view, erm, name, colour, f"λ={lam:g}", f"erm:{param}:lambda={lam:g}",
                                            clip_log=True)
                alphas.extend(drawn)
                not_ok += hollow
            alphas += _training_thresholds(ax, view, param, {k: v for k, v in base.items() if k != "delta"},
                                           base["delta"])
            _legend_not_ok(ax, not_ok)
            _tied_log_axes(ax, alphas)
            # Plain numbers on the alpha axis, at 1-2-3-5 steps (it spans a decade or two).
            lo, hi = min(alphas), max(alphas)
            ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                     for m in (1, 2, 3, 5) if lo <= m * 10.0 ** e <= hi]
            if len(ticks) >= 2:
                ax.set_xticks(ticks)
                ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
                ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("α = n/d²")
            ax.set_ylabel(label)
            title = ", ".join(f"{s}={v:g}" for s, v in (("T", base["T"]), ("k₀", base["k0"]), ("Δ", base["delta"])))
            if base["beta"] != 1 or base["beta0"] != 1:
                title += f", β={base['beta']:g}, β₀={base['beta0']:g}"
            ax.set_title(f"{param}: {title}")
    _shared_legend(fig, axes)
    return fig
