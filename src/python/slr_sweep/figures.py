"""The paper's Figs 2-5 from the columns of an archive (archive.load_columns).

Method names and columns (grid::result_columns, dots -> underscores):
  population       risk, risk_stderr, bayes_risk (option at=... : a fixed, "mismatched" student)
  bayes            risk (the Bayes risk)
  fixed-point      test_risk, order_parameters_*           (RS fixed point, docs/theory.md §4)
  state-evolution  test_risk                               (Bayes-optimal, docs/theory.md §5)
  bayes-jump       alpha_jump, alpha_below/above, test_risk_below/above   (its jump in alpha)
  erm              test_risk, test_risk_stderr, order_parameters_*   (simulations)
Where a regularisation grid (r_k, r_v) is present, finite-alpha curves show, at each alpha, the r
with the smallest mean test risk (the paper tunes r by grid search).
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


def _grid(n, width=None, height=None):
    import matplotlib.pyplot as plt

    base_w, base_h = _PANEL["size"]
    width = base_w if width is None else width * base_w / 4.6
    height = base_h if height is None else height * base_h / 3.6
    columns = min(n, 3)
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
    fp, erm = _mask_method(cols, "fixed-point"), _mask_method(cols, "erm")
    se = _mask_method(cols, "state-evolution")
    if not (fp | erm | se).any():
        raise NoData("figure finite-alpha: no rows of method fixed-point, erm or state-evolution")
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


DRAW = {"population": population, "finite-alpha": finite_alpha, "order-parameters": order_parameters,
        "mismatched": mismatched}


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
