"""Reading an slr-sweep archive (the HDF5 snapshot written by ``slr-sweep run``).

The archive's ``/points`` table is a 1-D compound dataset, one row per finished point; columns
are the grid parameters (method, task, nu, L, L_pmf, delta, activation, erf_offset, alpha, r_k,
r_v, options, repeat, seed, point_id), status/message, and the result columns of
``grid::result_columns`` with dots replaced by underscores (risk, test_risk,
order_parameters_m_kk, ...), followed by columns that only one method produces (e.g. alpha_jump).
NaN means "not produced by this method". The readers below also give every method option of the
``options`` text as a typed column of its own (``samples``, ``max-iter``, ``D``, ``init``, ...).
"""
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


def load_columns(path, point_ids=None):
    """The /points table as a dict {column: numpy array} (text columns as object arrays of str).
    path: an archive, or a list of archives whose rows are concatenated (e.g. the theory and the
    ERM archive of one figure). point_ids: optional iterable of point ids to keep (others are
    dropped)."""
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("no archive given")
        columns = _concatenate([_read_table(p, "points") for p in path])
    else:
        columns = _read_table(path, "points")
    if point_ids is not None:
        keep = np.isin(columns["point_id"], np.fromiter((int(i) for i in point_ids), dtype=np.uint64))
        columns = {k: v[keep] for k, v in columns.items()}
    return _expand_options(columns)


def _expand_options(columns):
    """Every method option of the ``options`` text column ("key=value;...") as a column of its own,
    named as the option (``samples``, ``max-iter``, ``D``, ...): float64 where every value given is a
    number (NaN in rows without the option), else str ("" in rows without it). Where a result
    column has the option's name (ERM's ``D``: the dimension asked for and the one simulated), its
    NaN entries are filled from the option."""
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

