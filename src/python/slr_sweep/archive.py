"""Reading an slr-sweep archive (the HDF5 snapshot written by ``slr-sweep run``).

The archive's ``/points`` table is a 1-D compound dataset, one row per finished point. Two layouts
exist (root attribute ``schema_version``):

* schema 1: the grid parameters (method, task, nu, L, L_pmf, delta, activation, erf_offset, alpha,
  r_k, r_v), an ``options`` text column "key=value;...", repeat, seed, point_id, status/message, and
  the result columns of ``grid::result_columns`` with dots replaced by underscores (risk, test_risk,
  order_parameters_m_kk, ...), followed by columns that only one method produces (e.g.
  alpha_jump). The readers below give every method option of the ``options`` text as a typed column
  of its own (``samples``, ``max-iter``, ``D``, ``init``, ...).
* schema 2: point_id, repeat, seed, method, then one typed column per declared parameter (int64,
  float64 or text; model parameters and method options alike), status, message, run_index,
  completed_unix, the result columns and extra_json. ``/points`` names its parameter and result
  columns in the attributes ``parameter_columns`` and ``result_columns`` (comma-separated) and may
  describe the parameters in ``parameter_descriptions`` (JSON {name: {"long_name", "units"}}).

NaN (numbers) or "" (text) means "not a parameter / not produced by this point's method".
"""
import json

import numpy as np

try:  # optional: a DataFrame when pandas is there, a dict of numpy columns otherwise
    import pandas as _pandas
except ImportError:  # pragma: no cover - depends on the installation
    _pandas = None


def _decode(column):
    if column.dtype.kind == "S":
        return np.array([b.decode("utf-8", "replace").rstrip("\x00") for b in column], dtype=object)
    if column.dtype.kind == "O":
        return np.array([b.decode("utf-8", "replace") if isinstance(b, bytes) else b for b in column], dtype=object)
    return column


def _read_table(path, name):
    import h5py

    with h5py.File(path, "r") as f:
        if name not in f:
            raise ValueError(f"{path}: no /{name} table (not an slr-sweep archive?)")
        data = f[name][:]
    return {field: _decode(data[field]) for field in data.dtype.names}


# The parameter columns of a schema-1 /points table, in table order (method options follow, expanded
# from the ``options`` text).
SCHEMA1_PARAMETERS = ("task", "nu", "L", "L_pmf", "delta", "activation", "erf_offset", "alpha", "r_k", "r_v")


def _attribute_text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):  # a one-element array or an array of strings
        return ",".join(_attribute_text(v) for v in value.ravel())
    return str(value)


def _names(text):
    return [name.strip() for name in text.split(",") if name.strip()]


def _between(fields, first, last):
    """The fields strictly between two named fields (to the end if last is missing)."""
    if first not in fields:
        return []
    start = fields.index(first) + 1
    stop = fields.index(last) if last in fields[start:] else len(fields)
    return fields[start:stop]


def _read_points(path):
    """(columns, layout) of one archive's /points table: columns as read (text decoded to str), layout
    {"schema_version", "parameter_columns", "result_columns", "parameter_descriptions"}; schema-1
    option names are not in parameter_columns yet (see _option_keys)."""
    import h5py

    with h5py.File(path, "r") as f:
        if "points" not in f:
            raise ValueError(f"{path}: no /points table (not an slr-sweep archive?)")
        table = f["points"]
        data = table[:]
        version = f.attrs.get("schema_version", None)
        attrs = {k: _attribute_text(v) for k, v in table.attrs.items()}
    fields = list(data.dtype.names)
    columns = {field: _decode(data[field]) for field in fields}
    version = int(np.asarray(version).ravel()[0]) if version is not None else (2 if "parameter_columns" in attrs else 1)
    if version >= 2 or "parameter_columns" in attrs:
        if "parameter_columns" in attrs:
            parameters = _names(attrs["parameter_columns"])
        else:  # positional: between method and status
            parameters = _between(fields, "method", "status")
        if "result_columns" in attrs:
            results = _names(attrs["result_columns"])
        else:
            results = _between(fields, "completed_unix", "extra_json")
        descriptions = {}
        if attrs.get("parameter_descriptions", "").strip():
            try:
                descriptions = json.loads(attrs["parameter_descriptions"])
            except ValueError:
                descriptions = {}
            if not isinstance(descriptions, dict):
                descriptions = {}
    else:
        parameters = [name for name in SCHEMA1_PARAMETERS if name in columns]
        results = _between(fields, "completed_unix", "extra_json")
        descriptions = {}
    layout = {"schema_version": version,
              "parameter_columns": [name for name in parameters if name in columns],
              "result_columns": [name for name in results if name in columns and name not in parameters],
              "parameter_descriptions": descriptions}
    return columns, layout


def _merge_layouts(layouts):
    def union(key):
        out = []
        for layout in layouts:
            out += [name for name in layout[key] if name not in out]
        return out

    descriptions = {}
    for layout in layouts:
        for name, d in layout["parameter_descriptions"].items():
            descriptions.setdefault(name, d)
    return {"schema_version": max(layout["schema_version"] for layout in layouts),
            "parameter_columns": union("parameter_columns"),
            "result_columns": union("result_columns"),
            "parameter_descriptions": descriptions}


def _concatenate(parts):
    """Rows of several archives' /points tables, one after the other. Columns missing from an
    archive (another schema version) are NaN (numbers) or "" (text) there."""
    names = []
    for part in parts:
        names += [k for k in part if k not in names]
    out = {}
    for name in names:
        like = next(part[name] for part in parts if name in part)
        pieces = []
        for part in parts:
            n = len(part["point_id"])
            if name in part:
                pieces.append(part[name])
            elif like.dtype.kind == "O":
                pieces.append(np.full(n, "", dtype=object))
            else:
                pieces.append(np.full(n, np.nan))
        out[name] = np.concatenate(pieces)
    return out


def load_with_layout(path, point_ids=None):
    """(columns, layout): the /points table as load_columns gives it, and what its columns are:
    {"schema_version": int, "parameter_columns": [names], "result_columns": [names],
    "parameter_descriptions": {name: {"long_name": str, "units": str}}}. For a list of archives
    the column lists are the union in order (schema_version the largest)."""
    paths = list(path) if isinstance(path, (list, tuple)) else [path]
    if not paths:
        raise ValueError("no archive given")
    read = [_read_points(p) for p in paths]
    layouts = []
    for columns, layout in read:
        if layout["schema_version"] < 2 and "options" in columns:
            options = _option_keys(columns["options"])
            layout["parameter_columns"] += [k for k in options if k not in layout["parameter_columns"]]
            layout["result_columns"] = [k for k in layout["result_columns"] if k not in options]
        layouts.append(layout)
    columns = read[0][0] if len(read) == 1 else _concatenate([part for part, _ in read])
    if point_ids is not None:
        keep = np.isin(columns["point_id"], np.fromiter((int(i) for i in point_ids), dtype=np.uint64))
        columns = {k: v[keep] for k, v in columns.items()}
    return _expand_options(columns), _merge_layouts(layouts)


def load_columns(path, point_ids=None):
    """The /points table as a dict {column: numpy array} (text columns as object arrays of str;
    numbers as stored: int64 parameters stay int64, float64 where a value is missing).
    path: an archive, or a list of archives whose rows are concatenated (e.g. the theory and the
    ERM archive of one figure). point_ids: optional iterable of point ids to keep (others are
    dropped). Schema-1 archives also get a typed column per method option (see _expand_options)."""
    return load_with_layout(path, point_ids)[0]


def parameter_columns(path):
    """The names of the parameter columns of an archive (or of a list of archives, in order): schema 2
    from /points' attribute ``parameter_columns``; schema 1 task, nu, L, L_pmf, delta, activation,
    erf_offset, alpha, r_k, r_v and then the method options found in the ``options`` text. ``method``
    and ``repeat`` are not parameter columns."""
    return list(load_with_layout(path)[1]["parameter_columns"])


def _option_keys(options_column):
    keys = []
    for text in options_column:
        keys += [k for k in parse_options(text) if k not in keys]
    return keys


def _expand_options(columns):
    """Every method option of the ``options`` text column ("key=value;...") as a column of its own,
    named as the option (``samples``, ``max-iter``, ``D``, ...): float64 where every value given is a
    number (NaN in rows without the option), else str ("" in rows without it). Where a column of that
    name exists already (ERM's result ``D``: the dimension asked for and the one simulated; or a
    schema-2 archive's typed parameter when archives are concatenated), its missing entries (NaN, or
    "" for text) are filled from the option."""
    if "options" not in columns:
        return columns
    parsed = [parse_options(text) for text in columns["options"]]
    keys = []
    for options in parsed:
        keys += [k for k in options if k not in keys]
    out = dict(columns)
    for key in keys:
        values = [options.get(key) for options in parsed]
        try:
            typed = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        except ValueError:
            typed = np.array(["" if v is None else v for v in values], dtype=object)
        if key not in out:
            out[key] = typed
        elif out[key].dtype.kind == "f" and typed.dtype.kind == "f":
            out[key] = np.where(np.isnan(out[key]), typed, out[key])
        elif out[key].dtype.kind == "O":
            given = np.array([v is not None for v in values])
            fill = given & (out[key] == "")
            if fill.any():
                column = out[key].copy()
                column[fill] = [str(v) for v, f in zip(values, fill) if f]
                out[key] = column
    return out


def load(path, point_ids=None, as_dict=False):
    """The points of an archive (or of a list of archives, concatenated): a pandas.DataFrame if
    pandas is importable (and not as_dict), else a dict of numpy columns. Opens the file
    read-only; safe while a sweep is running."""
    columns = load_columns(path, point_ids)
    if _pandas is not None and not as_dict:
        return _pandas.DataFrame(columns)
    return columns


def runs(path):
    """The /runs table (one row per run/resume) as a dict of numpy columns."""
    return _read_table(path, "runs")


def attributes(path):
    """Root attributes (provenance, job text, fingerprint) as a dict."""
    import h5py

    with h5py.File(path, "r") as f:
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def parse_options(text):
    """'at=m_kk=1,q_kk=1;samples=20000' -> {'at': 'm_kk=1,q_kk=1', 'samples': '20000'}."""
    options = {}
    for item in str(text).split(";"):
        if item:
            key, _, value = item.partition("=")
            options[key] = value
    return options


def provenance(path):
    """Where the numbers come from: tool version, git revision, compiler, library versions, the job
    (name, fingerprint, text) and every run (start, end, ranks, host, command, exit reason)."""
    attrs = attributes(path)
    out = {k: attrs.get(k) for k in ("tool_version", "git_revision", "compiler", "schema_version", "job_name",
                                      "job_fingerprint", "job_text", "snapshot_unix")}
    out["libraries"] = {k[len("version_"):]: v for k, v in attrs.items() if k.startswith("version_")}
    table = runs(path)
    out["runs"] = [{name: (table[name][i].item() if hasattr(table[name][i], "item") else table[name][i])
                    for name in table} for i in range(len(table.get("run_index", [])))]
    return out


def trajectory(path, point_id):
    """The gradient-flow trajectory of one ERM point (run with option trajectory = 1): a dict of numpy
    arrays t, train_loss, train_loss_regularised, rel_grad and the order parameters m_kk … q_vv, one
    entry per recorded time. Raises KeyError if the point has no trajectory."""
    import json

    import numpy as np

    cols = load_columns(path, [int(point_id)])
    if len(cols["point_id"]) == 0:
        raise KeyError(f"no point {point_id} in {path}")
    extra = json.loads(cols["extra_json"][0] or "{}")
    if "trajectory" not in extra:
        raise KeyError(f"point {point_id} has no trajectory (ERM with optimizer = gradient-flow and trajectory = 1)")
    steps = extra["trajectory"]
    out = {k: np.array([s[k] for s in steps], dtype=float)
           for k in ("t", "train_loss", "train_loss_regularised", "rel_grad")}
    for name in steps[0]["order_parameters"] if steps else []:
        out[name] = np.array([s["order_parameters"][name] for s in steps], dtype=float)
    return out



# ---------------------------------------------------------------- per-point arrays (extra_json)

def _point_extra(path, point_id):
    """(row, extra) of one point: row {column: value} of /points, extra the parsed extra_json
    object ({} when empty). Raises KeyError if the archive has no such point."""
    cols = load_columns(path, [int(point_id)])
    if len(cols["point_id"]) == 0:
        raise KeyError(f"no point {point_id} in {path}")
    row = {name: (column[0].item() if hasattr(column[0], "item") else column[0]) for name, column in cols.items()}
    text = row.get("extra_json", "") or ""
    try:
        extra = json.loads(text) if text else {}
    except ValueError as e:
        raise ValueError(f"point {point_id}: extra_json is not JSON: {e}") from None
    if not isinstance(extra, dict):
        raise ValueError(f"point {point_id}: extra_json is not a JSON object")
    return row, extra


def _as_array(values):
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return np.asarray(values, dtype=object)


def extra_arrays(extra, prefix=""):
    """The list-valued entries of a parsed extra_json object as numpy arrays (see arrays)."""
    out = {}
    for key, value in extra.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(extra_arrays(value, name + "."))
        elif isinstance(value, list):
            if value and all(isinstance(v, dict) for v in value):
                # a list of records (e.g. a trajectory): one array per field, "name.field"
                fields = []
                for record in value:
                    fields += [k for k in _flat_record(record) if k not in fields]
                flat = [_flat_record(record) for record in value]
                for field in fields:
                    out[f"{name}.{field}"] = _as_array([r.get(field, np.nan) for r in flat])
            else:
                out[name] = _as_array(value)
    return out


def _flat_record(record, prefix=""):
    out = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(_flat_record(value, f"{prefix}{key}."))
        elif not isinstance(value, list):
            out[f"{prefix}{key}"] = value
    return out


def arrays(path, point_id):
    """The arrays of one point (its extra_json), as a dict of numpy arrays: every list-valued key
    (float64 where the entries are numbers; lists of pairs as 2-D arrays, e.g. eig_support of shape
    (intervals, 2)); nested objects flattened with dots ("eigenvalue_histogram.edges",
    "eigenvalue_histogram.counts"); lists of records as one array per field ("trajectory.t",
    "trajectory.order_parameters.m_kk"). Scalars of extra_json are left out. path may be a list of
    archives. Raises KeyError if there is no such point."""
    return extra_arrays(_point_extra(path, point_id)[1])


QUANTILE_LEVELS = np.linspace(0.0, 1.0, 101)
# ERM eigenvalues with |λ| <= ZERO_RELATIVE * max|λ| count as zeros (the atom at 0; as rank_rel_1e3).
ZERO_RELATIVE = 1e-3


def _fold_density(grid, density):
    """The density of |λ| from that of λ on an equispaced grid: ρ(s) + ρ(−s) on [0, max|λ|]."""
    grid, density = np.asarray(grid, dtype=float), np.asarray(density, dtype=float)
    if grid.size == 0 or grid.min() >= 0:
        return grid, density
    s = np.linspace(0.0, float(np.abs(grid).max()), max(grid.size, 2))
    folded = np.interp(s, grid, density, left=0.0, right=0.0) + np.interp(-s, grid, density, left=0.0, right=0.0)
    return s, folded


def _quantiles_of(grid, density, atom, levels=QUANTILE_LEVELS):
    """Quantiles of the law atom·δ_0 + density (grid ≥ 0 when atom > 0), the continuous part's mass
    rescaled to 1 − atom."""
    grid, density = np.asarray(grid, dtype=float), np.asarray(density, dtype=float)
    cumulative = np.concatenate([[0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(grid))])
    if cumulative[-1] <= 0:
        return np.zeros_like(levels)
    cdf = atom + (1.0 - atom) * cumulative / cumulative[-1]
    out = np.interp(levels, cdf, grid)
    if atom > 0:
        out[levels <= atom] = 0.0
    return out


def _fold_histogram(edges, counts):
    """Counts of |λ| from a histogram of λ (each bin's count placed at |its centre|)."""
    edges, counts = np.asarray(edges, dtype=float), np.asarray(counts, dtype=float)
    if edges.min() >= 0:
        return edges, counts
    centres = np.abs(0.5 * (edges[1:] + edges[:-1]))
    new_edges = np.linspace(0.0, float(np.abs(edges).max()), counts.size + 1)
    new_counts, _ = np.histogram(centres, bins=new_edges, weights=counts)
    return new_edges, new_counts


def spectrum_of(row, extra, singular_values=False):
    """The spectrum of one point from its row and parsed extra_json (see spectrum)."""
    method = str(row.get("method", ""))
    if "eig_density" in extra or "eig_quantiles" in extra:
        grid = np.asarray(extra.get("eig_grid", []), dtype=float)
        density = np.asarray(extra.get("eig_density", []), dtype=float)
        quantiles = np.asarray(extra.get("eig_quantiles", []), dtype=float)
        atom = float(row.get("atom_at_0", np.nan))
        if not np.isfinite(atom):
            atom = 0.0
        support = np.asarray(extra.get("eig_support", []), dtype=float).reshape(-1, 2)
        if singular_values and grid.size and grid.min() < 0:
            grid, density = _fold_density(grid, density)
            quantiles = _quantiles_of(grid, density, atom)
            pieces = [(0.0 if lo < 0 < hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi))) for lo, hi in support]
            support = np.asarray(sorted(pieces), dtype=float).reshape(-1, 2)
        return {"kind": "theory", "method": method, "levels": QUANTILE_LEVELS.copy(), "quantiles": quantiles,
                "grid": grid, "density": density, "support": support, "atom_at_0": atom,
                "singular_values": bool(singular_values)}
    if "eigenvalues" in extra:
        values = np.sort(np.asarray(extra["eigenvalues"], dtype=float))
        top = float(np.abs(values).max()) if values.size else 0.0
        zeros = int(np.sum(np.abs(values) <= ZERO_RELATIVE * top)) if top > 0 else values.size
        if singular_values:
            values = np.sort(np.abs(values))
        return {"kind": "erm", "method": method, "eigenvalues": values, "d": int(values.size),
                "atom_at_0": zeros / values.size if values.size else float("nan"),
                "singular_values": bool(singular_values)}
    if "eigenvalue_histogram" in extra:
        histogram = extra["eigenvalue_histogram"]
        edges = np.asarray(histogram.get("edges", []), dtype=float)
        counts = np.asarray(histogram.get("counts", []), dtype=float)
        if singular_values and edges.size:
            edges, counts = _fold_histogram(edges, counts)
        rank = float(row.get("rank_rel_1e3", np.nan))
        return {"kind": "erm", "method": method, "edges": edges, "counts": counts, "d": int(round(counts.sum())),
                "atom_at_0": 1.0 - rank if np.isfinite(rank) else float("nan"),
                "singular_values": bool(singular_values)}
    raise KeyError(f"point {row.get('point_id')} (method {method}) has no spectrum in its extra_json "
                   "(tied-attention fixed-point: eig_*; erm: eigenvalues or eigenvalue_histogram)")


def spectrum(path, point_id, singular_values=False):
    """The eigenvalue spectrum of the estimator Ŝ at one tied-attention point, as a dict:

    * fixed-point (theory, d → ∞): kind "theory", levels (0, 0.01, …, 1), quantiles (101, the atom at
      0 included), grid and density (200 points; the density of the continuous part, integrating
      to 1 − atom_at_0), support (intervals × 2), atom_at_0;
    * erm (finite d): kind "erm", eigenvalues (all d, ascending) — or, for d > 400, edges and
      counts of a 100-bin histogram —, d, and atom_at_0 (the fraction with |λ| <= 1e-3 max|λ|, as
      the column rank_rel_1e3: atom_at_0 = 1 − rank_rel_1e3).

    singular_values=True gives the law of |λ| (the singular values of Ŝ, as the paper plots them;
    the same for the PSD factorised estimator): the density folded onto [0, max|λ|] and quantiles
    recomputed from it, |eigenvalues| sorted, the histogram re-binned. Raises KeyError if there is
    no such point or it has no spectrum."""
    row, extra = _point_extra(path, point_id)
    return spectrum_of(row, extra, singular_values)
