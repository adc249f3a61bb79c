"""The figures of an archive (archive.load_columns): the SLR paper's Figs 2-5 and the tied-attention
figures (arXiv 2509.24914). FIGURES is the one table of figure names (slr-sweep plot forwards the
name to plot.py, which checks it against FIGURES).

Method names and columns (grid::result_columns, dots -> underscores):
  population       risk, risk_stderr, bayes_risk (option at=... : a fixed, "mismatched" student)
  bayes            risk (the Bayes risk)
  fixed-point      test_risk, order_parameters_*           (RS fixed point, docs/theory.md §4)
  state-evolution  test_risk                               (Bayes-optimal, docs/theory.md §5)
  bayes-jump       alpha_jump, alpha_below/above, test_risk_below/above   (its jump in alpha)
  erm              test_risk, test_risk_stderr, order_parameters_*   (simulations)
Where a regularisation grid (r_k, r_v) is present, finite-alpha curves show, at each alpha, the r
with the smallest mean test risk (the paper tunes r by grid search).
Tied attention (model tied-attention; rows with a parametrisation, see _tied_rows):
  fixed-point         test_clean, test_noisy, rank_fraction, atom_at_0; extra_json eig_grid/eig_density
  erm                 test_clean(_stderr), test_noisy(_stderr), rank_rel_1e3; extra_json eigenvalues
                      (or eigenvalue_histogram)
  recovery-threshold  alpha_rec (and alpha_interp)
"""
import math
import os

import numpy as np

from .archive import parse_options

FIGURES = {
    "population": "fig2_population",
    "finite-alpha": "fig3_finite_alpha",
    "order-parameters": "fig4_order_parameters",
    "mismatched": "fig5_mismatched",
    "tied-learning-curve": "tied_learning_curve",
    "tied-spectra": "tied_spectra",
    "tied-rank": "tied_rank",
    "tied-factorised-vs-direct": "tied_factorised_vs_direct",
}
ACTIVATION_ORDER = ["softmax", "linear", "erf", "softplus-kernel"]
COLOURS = {"softmax": "tab:blue", "linear": "tab:orange", "erf": "tab:green", "softplus-kernel": "tab:purple"}
ORDER_PARAMETERS = ["m_kk", "m_kv", "m_vk", "m_vv", "R_kk", "R_kv", "R_vv"]
LABELS = {"m_kk": r"$m_{kk^*}$", "m_kv": r"$m_{kv^*}$", "m_vk": r"$m_{vk^*}$", "m_vv": r"$m_{vv^*}$",
          "R_kk": r"$R_{kk}$", "R_kv": r"$R_{kv}$", "R_vv": r"$R_{vv}$"}


# Figure styles: panel size in inches and the matplotlib settings that go with it. "paper" fits
# one panel in a column of a two-column article (3.4 in) with 8 pt text.
STYLES = {
    "screen": {"panel": (4.6, 3.6), "rc": {"font.size": 10, "legend.fontsize": 7, "lines.linewidth": 1.5,
                                           "savefig.dpi": 150}},
    "paper": {"panel": (3.4, 2.6), "rc": {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8,
                                          "legend.fontsize": 6, "xtick.labelsize": 7, "ytick.labelsize": 7,
                                          "lines.linewidth": 1.2, "lines.markersize": 4, "savefig.dpi": 300}},
}
_PANEL = {"size": STYLES["screen"]["panel"]}
# Line styles and markers cycled over series that share a colour (e.g. several erf offsets).
LINESTYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P"]
# The Bayes reference: black, dashed, drawn first (behind), so that a curve equal to it (softmax
# attains the Bayes risk) stays visible on top of it.
BAYES = {"color": "k", "ls": "--", "lw": 1.6, "zorder": 1}


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
            parts.append(f"ν={v:g}")
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
    """Per alpha: the (r_k, r_v) with the smallest mean `value` over repeats. Returns a list of
    (alpha, mean, std, min, max, count, r_k, r_v) and whether several r were compared."""
    alpha, rk, rv, y = _col(cols, "alpha"), _col(cols, "r_k"), _col(cols, "r_v"), _col(cols, value)
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
            values = values[~np.isnan(values)]
            if values.size == 0:
                continue
            mean = float(values.mean())
            std = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
            if best is None or mean < best[1]:
                best = (a, mean, std, float(values.min()), float(values.max()), values.size, r[0], r[1])
        if best is not None:
            out.append(best)
    return out, several


def _ok(cols):
    """Rows whose status is ok (archives without a status column: every row)."""
    if "status" not in cols:
        return np.ones(_n(cols), dtype=bool)
    return np.asarray(cols["status"]).astype(str) == "ok"


def _hollow_not_ok(ax, cols, mask, x_name, y_name, colour):
    """Draws the rows of `mask` whose status is not ok as hollow markers (they are left out of
    the curves); returns how many were drawn."""
    from matplotlib.lines import Line2D

    bad = mask & ~_ok(cols)
    x, y = _col(cols, x_name)[bad], _col(cols, y_name)[bad]
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.any():
        # Added as an artist, not plotted: a diverged point far off the curves must not set the
        # axis limits (it is clipped; the legend counts it).
        ax.add_artist(Line2D(x[keep], y[keep], ls="none", marker="o", ms=6, mfc="none", mec=colour, mew=1.2))
    return int(bad.sum())


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


def _grid(n, width=None, height=None, columns=None):
    import matplotlib.pyplot as plt

    base_w, base_h = _PANEL["size"]
    width = base_w if width is None else width * base_w / 4.6
    height = base_h if height is None else height * base_h / 3.6
    columns = min(n, 3) if columns is None else max(1, min(n, columns))
    rows = (n + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _save(fig, outdir, stem, formats):
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    fig.tight_layout()
    paths = []
    for fmt in formats:
        path = os.path.join(outdir, f"{stem}.{fmt}")
        metadata = {"Date": None} if fmt == "svg" else None  # reproducible SVG
        fig.savefig(path, metadata=metadata)  # resolution: the style's savefig.dpi
        paths.append(path)
    plt.close(fig)
    return paths


# ---------------------------------------------------------------- Fig 2: population risk vs nu

def population(cols):
    is_pop = _mask_method(cols, "population") & (_at_option(cols) == "")
    is_bayes = _mask_method(cols, "bayes")
    if not (is_pop | is_bayes).any():
        raise NoData("figure population: no rows of method population (without `at`) or bayes")
    keys = ("task", "L_pmf", "delta")
    settings = _settings(cols, is_pop | is_bayes, keys)
    fig, axes = _grid(len(settings))
    nu, risk, stderr = _col(cols, "nu"), _col(cols, "risk"), _col(cols, "risk_stderr")
    ok = _ok(cols)
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        finite_nu = []
        not_ok = 0
        for act in _activations(cols, is_pop & here):
            for j, offset in enumerate(_unique(_col(cols, "erf_offset")[is_pop & here & (cols["activation"] == act)])):
                every = is_pop & here & (cols["activation"] == act) & _equal_mask(_col(cols, "erf_offset"), offset)
                m = every & ok
                label = act if math.isnan(offset) else f"{act} (c={offset:g})"
                colour = COLOURS.get(act)
                not_ok += _hollow_not_ok(ax, cols, every, "nu", "risk", colour or "0.3")
                stats = _mean_by(nu[m], risk[m])
                fin = [s for s in stats if np.isfinite(s[0])]
                if fin:
                    x = np.array([s[0] for s in fin])
                    y = np.array([s[1] for s in fin])
                    err = np.array([_nanmean(stderr[m & _equal_mask(nu, s[0])]) for s in fin])
                    line, = ax.plot(x, y, marker=MARKERS[j % len(MARKERS)], ls=LINESTYLES[j % len(LINESTYLES)], ms=3,
                                    color=colour, label=label, zorder=3 if act == "softmax" else 2)
                    if np.isfinite(err).any():
                        ax.fill_between(x, y - 2 * err, y + 2 * err, color=line.get_color(), alpha=0.2, lw=0)
                    colour = line.get_color()
                    finite_nu.extend(x)
                for s in stats:
                    if np.isinf(s[0]):
                        ax.axhline(s[1], color=colour, ls=":", lw=1.2, label=f"{label}, ν=∞")
        # The Bayes risk: method bayes, else the bayes_risk column of the population rows.
        source, values = (is_bayes & here, risk) if (is_bayes & here).any() else (is_pop & here, _col(cols, "bayes_risk"))
        stats = _mean_by(nu[source], values[source])
        fin = [s for s in stats if np.isfinite(s[0])]
        if fin:
            ax.plot([s[0] for s in fin], [s[1] for s in fin], label="Bayes", **BAYES)
            finite_nu.extend(s[0] for s in fin)
        for s in stats:
            if np.isinf(s[0]):
                ax.axhline(s[1], color="k", ls=":", lw=1.2, label="Bayes, ν=∞")
        _legend_not_ok(ax, not_ok)
        _log_if_wide(ax, "x", finite_nu)
        ax.set_xlabel("ν")
        ax.set_ylabel("population risk")
        ax.set_title(_setting_title(keys, setting))
        ax.legend()
        ax.grid(alpha=0.3)
    return fig


# ---------------------------------------------------------------- Fig 3: test risk vs alpha

def _bayes_jump(cols, mask):
    """(alpha_jump, alpha_below, risk_below, alpha_above, risk_above) of the first located jump
    (method bayes-jump, jump_found = 1) among the rows of `mask`, or None."""
    rows = np.flatnonzero(mask & _mask_method(cols, "bayes-jump") & (_col(cols, "jump_found") == 1))
    if rows.size == 0:
        return None
    i = rows[0]
    values = tuple(float(_col(cols, name)[i]) for name in
                   ("alpha_jump", "alpha_below", "test_risk_below", "alpha_above", "test_risk_above"))
    return values if all(np.isfinite(values)) else None


def finite_alpha(cols):
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
    fig, axes = _grid(len(settings), width=7.4, height=4.0)
    risk = _col(cols, "risk")
    ok = _ok(cols)
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        alphas = []
        tuned_any = False
        not_ok = 0
        for act in _activations(cols, (fp | erm) & here):
            colour = COLOURS.get(act)
            every = here & (cols["activation"] == act)
            not_ok += _hollow_not_ok(ax, cols, (fp | erm) & every, "alpha", "test_risk", colour or "0.3")
            this = every & ok
            curve, several = _tuned(cols, fp & this)
            tuned_any |= several
            if curve:
                line, = ax.plot([c[0] for c in curve], [c[1] for c in curve], "-", color=colour,
                                label=f"{act}: fixed point")
                colour = line.get_color()
                alphas.extend(c[0] for c in curve)
            points, several = _tuned(cols, erm & this)
            tuned_any |= several
            if points:
                stderr = _col(cols, "test_risk_stderr")
                err = []
                for p in points:
                    if np.isfinite(p[2]):
                        err.append(p[2])
                    else:  # one run: its own standard error, if the method reported one
                        m = erm & this & _equal_mask(_col(cols, "alpha"), p[0]) & _equal_mask(_col(cols, "r_k"), p[6])
                        err.append(float(np.nanmean(stderr[m])) if np.isfinite(stderr[m]).any() else 0.0)
                bars = ax.errorbar([p[0] for p in points], [p[1] for p in points], yerr=err, fmt="o", ms=4,
                                   capsize=3, color=colour, label=f"{act}: ERM")
                colour = bars.lines[0].get_color()
                alphas.extend(p[0] for p in points)
            limit = _mean_by(np.zeros(_n(cols))[pop & this], risk[pop & this])
            if limit:
                ax.axhline(limit[0][1], color=colour, ls=(0, (4, 3)), lw=1.4, zorder=2, label=f"{act}: α → ∞")
        not_ok += _hollow_not_ok(ax, cols, se & here, "alpha", "test_risk", "k")
        curve = _mean_by(_col(cols, "alpha")[se & here & ok], _col(cols, "test_risk")[se & here & ok])
        jump = _bayes_jump(cols, here & ok)
        if curve:
            x, y = [c[0] for c in curve], [c[1] for c in curve]
            if jump is None:
                ax.plot(x, y, "k-", lw=2, zorder=1, label="Bayes-optimal")
            else:  # the curve broken at the located jump, the bracket's ends joining its two pieces
                a_jump, a_lo, r_lo, a_hi, r_hi = jump
                lo = [(a, r) for a, r in zip(x, y) if a < a_lo] + [(a_lo, r_lo)]
                hi = [(a_hi, r_hi)] + [(a, r) for a, r in zip(x, y) if a > a_hi]
                ax.plot(*zip(*lo), "k-", lw=2, zorder=1, label="Bayes-optimal")
                ax.plot(*zip(*hi), "k-", lw=2, zorder=1)
            alphas.extend(x)
        if jump is not None:
            a_jump, a_lo, r_lo, a_hi, r_hi = jump
            ax.plot([a_jump, a_jump], [r_hi, r_lo], "k:", lw=1.2, zorder=1,
                    label=f"Bayes jump at α = {a_jump:.4g} ∈ [{a_lo:.4g}, {a_hi:.4g}]")
        limit_source = (bayes & here, risk) if (bayes & here).any() else (pop & here, _col(cols, "bayes_risk"))
        limit = _mean_by(np.zeros(_n(cols))[limit_source[0]], limit_source[1][limit_source[0]])
        if limit:
            ax.axhline(limit[0][1], color="k", ls="--", lw=1, zorder=1, label="Bayes, α → ∞")
        _legend_not_ok(ax, not_ok)
        _log_if_wide(ax, "x", alphas)
        ax.set_xlabel("α = N/D")
        ax.set_ylabel("test risk")
        ax.set_title(_setting_title(keys, setting) + (" (best r per α)" if tuned_any else ""))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        ax.grid(alpha=0.3)
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
            _log_if_wide(ax, "x", alpha[(erm | fp) & has])
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
        # One panel per setting: the seven quantities side by side, mean with min-max bars.
        fig, axes = _grid(len(settings), width=7.5, height=3.8)
        positions = np.arange(len(ORDER_PARAMETERS))
        for ax, setting in zip(axes, settings):
            handles = {}
            here = _setting_mask(cols, keys, setting) & has
            acts = _activations(cols, source & here)
            width = 0.8 / max(len(acts), 1)
            for j, act in enumerate(acts):
                this = here & (cols["activation"] == act)
                shift = positions - 0.4 + width * (j + 0.5)
                colour = COLOURS.get(act, "tab:gray")
                if (erm & this).any():
                    mean = np.array([_nanmean(values[n][erm & this]) for n in ORDER_PARAMETERS])
                    lo = mean - np.array([np.nanmin(values[n][erm & this]) for n in ORDER_PARAMETERS])
                    hi = np.array([np.nanmax(values[n][erm & this]) for n in ORDER_PARAMETERS]) - mean
                    runs = int((erm & this).sum())
                    remember(ax.errorbar(shift, mean, yerr=[lo, hi], fmt="o", ms=5, capsize=4, color=colour),
                             f"{act}: ERM, {runs} run(s) (mean, min–max)")
                theory_rows = fp & this & _equal_mask(alpha, _unique(alpha[source & this])[0])
                if theory_rows.any():
                    theory = np.array([_nanmean(values[n][theory_rows]) for n in ORDER_PARAMETERS])
                    bad = sorted(set(np.asarray(cols["status"])[theory_rows].astype(str)) - {"ok"}) \
                        if "status" in cols else []
                    if bad:  # a fixed point that is not ok: a thin dotted tick, its status in the legend
                        line, = ax.plot(shift, theory, "_", ms=14, mew=0.8, color=colour, alpha=0.6)
                        remember(line, f"{act}: fixed point, status {', '.join(bad)} (not ok)")
                    else:
                        line, = ax.plot(shift, theory, "_", ms=14, mew=2, color=colour)
                        remember(line, f"{act}: fixed point")
            ax.axhline(0, color="0.6", lw=0.8)
            ax.set_ylabel("value after training")
            ax.set_xticks(positions)
            ax.set_xticklabels([LABELS[n] for n in ORDER_PARAMETERS])
            a = _unique(alpha[source & here])
            ax.set_title(_setting_title(keys, setting) + (f", α={a[0]:g}" if a and np.isfinite(a[0]) else ""))
            ax.legend(list(handles.values()), list(handles.keys()), loc="upper left",
                      bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
            ax.grid(alpha=0.3, axis="y")
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


def _mismatched_minimum(cols, swapped):
    """Fig 5 of the paper: per activation E (solid) and ℶ from the swapped start (dashed); collapsed
    points hollow, runaway points as crosses; ν = ∞ at the right edge; Bayes black dashed; one panel
    per (task, L, Δ)."""
    pop = _mask_method(cols, "population") & (_at_option(cols) == "")
    matched = pop & ~swapped
    bayes = _mask_method(cols, "bayes")
    keys = ("task", "L_pmf", "delta")
    settings = _settings(cols, swapped, keys)
    fig, axes = _grid(len(settings))
    nu, risk, outcome = _col(cols, "nu"), _col(cols, "risk"), _outcome(cols)
    finite_nu = nu[np.isfinite(nu) & (pop | bayes)]
    x_inf = 2.5 * finite_nu.max() if finite_nu.size else 1.0
    xs = lambda v: np.where(np.isinf(v), x_inf, v)  # ν = ∞ drawn at the right edge
    for ax, setting in zip(axes, settings):
        here = _setting_mask(cols, keys, setting)
        for act in _activations(cols, (matched | swapped) & here):
            colour = COLOURS.get(act)
            this = here & (cols["activation"] == act)
            for mask, ls, label in ((matched & this, "-", f"{act}: E (minimum)"),
                                    (swapped & this, "--", f"{act}: ℶ (swapped start)")):
                stats = _mean_by(nu[mask], risk[mask])
                if not stats:
                    continue
                x = np.array([s[0] for s in stats])
                y = np.array([s[1] for s in stats])
                fin = np.isfinite(x)
                line, = ax.plot(x[fin], y[fin], ls=ls, color=colour, label=label, zorder=3 if act == "softmax" else 2)
                colour = line.get_color()
                if (~fin).any():
                    ax.plot([x_inf] * int((~fin).sum()), y[~fin], marker="o" if ls == "-" else "s", ls="none",
                            color=colour, ms=4)
            for kind, marker in (("collapsed", "o"), ("runaway", "x")):
                m = swapped & this & (outcome == kind)
                if m.any():
                    ax.plot(xs(nu[m]), risk[m], marker, ms=6, mfc="none", mec=colour, color=colour, ls="none")
        b = bayes & _setting_mask(cols, keys, setting)
        stats = _mean_by(nu[b], risk[b])
        if stats:
            x = np.array([s[0] for s in stats])
            ax.plot(x[np.isfinite(x)], [s[1] for s in stats if np.isfinite(s[0])], label="Bayes", **BAYES)
            if (~np.isfinite(x)).any():
                ax.plot([x_inf], [s[1] for s in stats if not np.isfinite(s[0])], "k_", ms=10)
        for kind, marker in (("collapsed", "o"), ("runaway", "x")):
            if (swapped & here & (outcome == kind)).any():
                ax.plot([], [], marker, mfc="none", mec="0.3", color="0.3", ls="none",
                        label=f"ℶ {kind}" + (" (= E)" if kind == "collapsed" else " (|k| → ∞, limit)"))
        ax.set_xscale("log")
        if (np.isinf(nu) & here).any():
            ax.axvline(x_inf / 1.6, color="0.8", lw=0.8)
            ax.text(x_inf, ax.get_ylim()[0], "ν=∞", ha="center", va="bottom", fontsize="small")
        ax.set_xlabel("ν")
        ax.set_ylabel("population risk")
        ax.set_title(_setting_title(keys, setting))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        ax.grid(alpha=0.3)
    return fig


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
    fig, axes = _grid(len(settings))
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
                        label=_student_label(student))
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
        ax.legend()
        ax.grid(alpha=0.3)
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


def _setting_rows(view, setting, strict=True):
    """Rows at a setting of TIED_KEYS; strict=False also accepts NaN in a row (a parameter its method
    does not use, e.g. lambda of recovery-threshold)."""
    mask = np.ones(_n(view), dtype=bool)
    for key, value in zip(TIED_KEYS, setting):
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
    """Error bar per alpha of `stats` (from _mean_by over `rows`): s.d./sqrt(seeds) over the repeats;
    with one run, its own standard error (column stderr_name) if it has one, else 0."""
    alpha = view["alpha"]
    stderr = _col(view, stderr_name) if stderr_name else np.full(_n(view), np.nan)
    out = []
    for a, _, std, _, _, count in stats:
        if count > 1 and np.isfinite(std):
            out.append(std / math.sqrt(count))
        else:
            own = stderr[rows & _equal_mask(alpha, a)]
            out.append(float(np.nanmean(own)) if np.isfinite(own).any() else 0.0)
    return np.array(out)


def _tied_series(ax, view, here, theory_y, erm_y, erm_stderr=None, parametrisations=None):
    """Theory lines (fixed-point, theory_y vs alpha) per (parametrisation, k) and ERM markers (erm_y,
    mean ± s.d./sqrt(seeds) per alpha) per (parametrisation, k, d) of the rows `here`. Returns the
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
        colour = PARAMETRISATION_COLOURS.get(p, "tab:gray")
        of_p = view["parametrisation"] == p
        for i, kk in enumerate(ks):
            k_text = "" if not several_k or (isinstance(kk, float) and math.isnan(kk)) else f", k={kk:g}"
            every = fp & of_p & _equal_mask(k, kk)
            if every.any():
                not_ok += _hollow_not_ok(ax, view, every, "alpha", theory_y, colour)
                stats = _mean_by(alpha[every & ok], _col(view, theory_y)[every & ok])
                if stats:
                    x, y = [s[0] for s in stats], [s[1] for s in stats]
                    line, = ax.plot(x, y, ls=LINESTYLES[i % len(LINESTYLES)], color=colour,
                                    label=f"{p}{k_text}: theory")
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
                runs = f"({seeds} seeds, mean ± s.d./√seeds)" if seeds > 1 else "(1 seed)"
                bars = ax.errorbar(x, y, yerr=_errors(view, rows, stats, erm_stderr), fmt=MARKERS[j % len(MARKERS)],
                                   ms=4, capsize=3, color=colour, label=f"{p}{k_text}: ERM d={dd:g} {runs}", zorder=3)
                bars.lines[0].set_gid(f"erm:{p}:k={kk:g}:d={dd:g}")
                alphas.extend(x)
    return alphas, not_ok


def _thresholds(ax, view, setting):
    """Vertical dotted lines at the recovery threshold(s) (method recovery-threshold) of a setting, and
    dash-dotted ones at the interpolation threshold where it was computed; returns their alphas."""
    rows = np.flatnonzero(_mask_method(view, "recovery-threshold") & _ok(view) &
                          _setting_rows(view, setting, strict=False))
    order = {p: j for j, p in enumerate(PARAMETRISATION_ORDER)}
    rows = sorted(rows, key=lambda i: (order.get(view["parametrisation"][i], len(order)), view["parametrisation"][i]))
    drawn, out = set(), []
    for i in rows:
        p = view["parametrisation"][i] or "?"
        colour = PARAMETRISATION_COLOURS.get(p, "0.3")
        for name, ls, text in (("alpha_rec", ":", "recovery threshold α_rec"),
                               ("alpha_interp", "-.", "interpolation threshold α_interp (RS)")):
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


def tied_learning_curve(cols):
    """test_clean (left) and test_noisy (right) vs alpha: theory lines per (k, parametrisation), ERM
    markers (mean ± s.d./sqrt(seeds)), recovery thresholds dotted; one row of panels per setting."""
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
            alphas += _thresholds(ax, view, setting)
            _legend_not_ok(ax, not_ok)
            _tied_log_axes(ax, alphas)
            ax.set_xlabel("α = n/d²")
            ax.set_ylabel(label)
            ax.set_title(_tied_title(setting))
            if column == 1:  # the same series in both panels: one legend, right of the row
                ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


def _erm_spectrum_group(view, extras, rows):
    """Pooled |eigenvalues| of ERM runs: (nonzero values, weights (counts), zeros, total, runs)."""
    from .archive import spectrum_of

    values, weights, zeros, total = [], [], 0.0, 0.0
    for i in np.flatnonzero(rows):
        row = {"method": "erm", "point_id": view["point_id"][i], "rank_rel_1e3": _col(view, "rank_rel_1e3")[i]}
        s = spectrum_of(row, extras[i], singular_values=True)
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


def tied_spectra(cols):
    """Spectra of Ŝ in singular-value units, one panel per alpha of the ERM rows with eigenvalues (up to
    four, of the largest d): the ERM histogram of the nonzero |λ| (normalised so that its area is the
    fraction of nonzero eigenvalues) with the theory density of the fixed-point row at the same alpha,
    parametrisation and k; the atom at 0 as a bar at x = 0 whose height is its mass (axes fraction)."""
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
                                     extras[i], singular_values=True)
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
                    bar = Line2D([0, 0], [0, atom], transform=ax.get_xaxis_transform(), color=colour, lw=7, alpha=0.5,
                                 solid_capstyle="butt", gid=f"erm-atom:{p}:k={kk:g}")
                    ax.add_artist(bar)
                    ax.annotate(f"{atom:.2f}", xy=(0, atom), xycoords=ax.get_xaxis_transform(), xytext=(5, 0),
                                textcoords="offset points", va="center", fontsize="small", color=colour)
                    ax.plot([], [], color=colour, lw=7, alpha=0.5,
                            label=f"{name}: ERM atom at 0 = {atom:.3g} (|λ| ≤ {ZERO_RELATIVE:g} max)")
            if theory is not None:
                line, = ax.plot(theory["grid"], theory["density"], color=colour, lw=1.5,
                                label=f"{name}: theory (d → ∞)")
                line.set_gid(f"theory-density:{p}:k={kk:g}")
                if theory["atom_at_0"] > 0:
                    tick = Line2D([0], [theory["atom_at_0"]], transform=ax.get_xaxis_transform(), ls="none", marker="_",
                                  ms=14, mew=2.2, color=colour, gid=f"theory-atom:{p}:k={kk:g}")
                    ax.add_artist(tick)
                    ax.plot([], [], ls="none", marker="_", ms=14, mew=2.2, color=colour,
                            label=f"{name}: theory atom at 0 = {theory['atom_at_0']:.3g}")
            else:
                ax.plot([], [], " ", label=f"{name}: no fixed-point row at α={a:g}")
        ax.set_xlim(left=-0.02 * upper)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("singular value of Ŝ (|eigenvalue|)")
        ax.set_ylabel("density (atom at 0: bar height = mass)")
        title = _tied_title(setting)
        ax.set_title(f"α={a:g}" + (f", {title}" if title else ""))
        ax.legend(loc="upper right")
        ax.grid(alpha=0.3)
    return fig


def tied_rank(cols):
    """Rank fraction vs alpha: theory rank_fraction (fixed-point) lines, ERM rank_rel_1e3 markers (the
    fraction of eigenvalues with |λ| > 1e-3 max|λ|; mean ± s.d./sqrt(seeds))."""
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
        alphas += _thresholds(ax, view, setting)
        _legend_not_ok(ax, not_ok)
        _tied_log_axes(ax, alphas, log_y=False)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("α = n/d²")
        ax.set_ylabel("rank fraction of Ŝ (rank / d)")
        ax.set_title(_tied_title(setting))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


def tied_factorised_vs_direct(cols):
    """test_clean of the factorised (and PSD-nuclear) and the direct student vs alpha on the same axes,
    theory lines and ERM markers; one panel per setting with both."""
    view = _tied_view(cols)
    tied = _tied_rows(view)
    rows = tied & _mask_method(view, "fixed-point", "erm") & np.isfinite(_col(view, "test_clean"))
    present = set(_parametrisations(view, rows))
    if "direct" not in present or not present & {"factorised", "psd-nuclear"}:
        raise NoData("figure tied-factorised-vs-direct: needs tied-attention fixed-point or erm rows with test_clean "
                     f"of both parametrisation direct and factorised (found: {', '.join(sorted(present)) or 'none'})")
    settings = [s for s in _tied_settings(view, rows)
                if len(_parametrisations(view, rows & _setting_rows(view, s))) > 1]
    if not settings:
        raise NoData("figure tied-factorised-vs-direct: no setting has rows of both parametrisations")
    fig, axes = _grid(len(settings), width=7.4, height=3.8)
    for ax, setting in zip(axes, settings):
        here = tied & _setting_rows(view, setting)
        alphas, not_ok = _tied_series(ax, view, here, "test_clean", "test_clean", "test_clean_stderr")
        alphas += _thresholds(ax, view, setting)
        _legend_not_ok(ax, not_ok)
        _tied_log_axes(ax, alphas)
        ax.set_xlabel("α = n/d²")
        ax.set_ylabel("test error (clean labels)")
        ax.set_title("factorised vs direct: " + _tied_title(setting))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


DRAW = {"population": population, "finite-alpha": finite_alpha, "order-parameters": order_parameters,
        "mismatched": mismatched, "tied-learning-curve": tied_learning_curve, "tied-spectra": tied_spectra,
        "tied-rank": tied_rank, "tied-factorised-vs-direct": tied_factorised_vs_direct}


def make(cols, figure, style="screen"):
    """One figure (a key of FIGURES) as a matplotlib Figure, in a style of STYLES. Raises NoData."""
    import matplotlib.pyplot as plt

    if figure not in DRAW:
        raise ValueError(f"unknown figure {figure!r} (expected {', '.join(DRAW)})")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (expected {', '.join(STYLES)})")
    if _n(cols) == 0:
        raise NoData(f"figure {figure}: the archive has no points")
    _PANEL["size"] = STYLES[style]["panel"]
    with plt.rc_context(STYLES[style]["rc"]):
        fig = DRAW[figure](cols)
        fig.tight_layout()
    return fig


def draw(cols, figure, outdir, formats=("png", "svg"), name=None, style="screen"):
    """Draws one figure (a key of FIGURES) into outdir as <name>.<format> (default name: the
    paper's figure stem, e.g. fig3_finite_alpha); returns the written paths. Raises NoData."""
    import matplotlib

    matplotlib.use("Agg")
    fig = make(cols, figure, style)
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLES[style]["rc"]):
        return _save(fig, outdir, name or FIGURES[figure], tuple(formats))
