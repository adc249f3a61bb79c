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

