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
import warnings

import numpy as np

from . import journal as _journal

try:  # optional: a DataFrame when pandas is there, a dict of numpy columns otherwise
    import pandas as _pandas
except ImportError:  # pragma: no cover - depends on the installation
    _pandas = None


class SnapshotBehindWarning(UserWarning):
    """The .h5 is a snapshot older than its journal (a sweep is running, or stopped before its
    last snapshot) and the journal's newer records could not be read into the rows returned (a
    schema-1 archive). ``slr-sweep query``/``status``/``export`` include them, and ``slr-sweep
    recover ARCHIVE`` (once no sweep runs) writes them into the .h5."""


def snapshot_lag(path):
    """How far the .h5 snapshot is behind its journal: {"snapshot_unix", "journal_bytes_in_snapshot",
    "journal_bytes", "bytes_behind", "newer_point_records"} (bytes_behind 0: up to date, or no
    journal beside it; newer_point_records counts the journal's intact point records the snapshot
    does not hold, a point computed twice counted twice). load, load_columns and runs read those
    records."""
    import h5py

    with h5py.File(path, "r") as f:
        built_from = int(f.attrs.get("journal_bytes", 0))
        when = float(f.attrs.get("snapshot_unix", float("nan")))
    size = _journal.journal_size(path)
    size = built_from if size is None else size
    newer = _journal.newer_records(path, built_from)["points"] if size > built_from else []
    return {"snapshot_unix": when, "journal_bytes_in_snapshot": built_from, "journal_bytes": size,
            "bytes_behind": max(0, size - built_from), "newer_point_records": len(newer)}


_FIXED_NUMBERS = {"point_id": np.uint64, "repeat": np.uint32, "seed": np.uint64, "run_index": np.uint32,
                  "completed_unix": np.float64}
_FIXED_TEXT = ("method", "status", "message", "extra_json")
_RESULT_SUFFIX = "_result"


def _without_result_suffixes(name):
    while len(name) > len(_RESULT_SUFFIX) and name.endswith(_RESULT_SUFFIX):
        name = name[:-len(_RESULT_SUFFIX)]
    return name


def _merge_newer(columns, layout, records):
    """The snapshot's columns with the journal's newer point records: a point recorded again
    replaces its row (the last record wins, as in ``slr-sweep recover``), a new point is appended
    (in journal order). Parameters and results the snapshot has no column for get one (results as
    the snapshot writer names them: a result named like a parameter gets the suffix _result)."""
    latest = {}
    for record in records:
        latest.pop(record["point_id"], None)
        latest[record["point_id"]] = record
    if not latest:
        return columns, layout
    n_old = len(columns["point_id"])
    row_of = {int(i): k for k, i in enumerate(columns["point_id"])}
    placed, appended = [], []
    for pid, record in latest.items():
        if pid in row_of:
            placed.append((row_of[pid], record))
        else:
            appended.append(record)
    n = n_old + len(appended)
    targets = [(k, r) for k, r in placed] + [(n_old + j, r) for j, r in enumerate(appended)]
    parameters = list(layout["parameter_columns"])
    for record in latest.values():
        parameters += [name for name in record["parameters"] if name not in parameters]
    is_parameter = set(parameters)

    def result_name(name):
        return name + _RESULT_SUFFIX if _without_result_suffixes(name) in is_parameter else name

    cells = []  # (row, {column: value}) for every row written
    results = list(layout["result_columns"])
    for row, record in targets:
        cell = {name: record[name] for name in list(_FIXED_NUMBERS) + list(_FIXED_TEXT)}
        cell.update(record["parameters"])
        for name, value in record["values"].items():
            column = result_name(name)
            cell[column] = value
            if column not in results:
                results.append(column)
        cells.append((row, cell))
    replaced = {row for row, _ in placed}
    out = {}
    for name in dict.fromkeys(list(columns) + parameters + results):
        old = columns.get(name)
        given = [(row, cell[name]) for row, cell in cells if name in cell]
        is_text = (old is not None and old.dtype.kind == "O") or any(isinstance(v, str) for _, v in given)
        if name in _FIXED_NUMBERS and not is_text:
            dtype, missing = _FIXED_NUMBERS[name], 0
        elif is_text:
            dtype, missing = object, ""
        else:
            every_row = {row for row, _ in given} | (set(range(n_old)) - replaced if old is not None else set())
            integers = (old is None or old.dtype.kind in "iu") and all(isinstance(v, int) for _, v in given)
            dtype, missing = (np.int64, 0) if integers and len(every_row) == n else (np.float64, np.nan)
        column = np.full(n, missing, dtype=dtype)
        if old is not None:
            column[:n_old] = old.astype(dtype) if dtype is not object else [str(v) for v in old]
            for row in replaced:
                column[row] = missing
        for row, value in given:
            column[row] = str(value) if dtype is object else value
        out[name] = column
    layout = dict(layout, parameter_columns=parameters, result_columns=results)
    return out, layout


def _with_journal(path, columns, layout, journal_bytes):
    """The snapshot's rows brought up to the archive's journal (see slr_sweep/journal.py)."""
    size = _journal.journal_size(path)
    if size is None or size <= journal_bytes:
        return columns, layout
    if layout["schema_version"] < 2:
        warnings.warn(f"{path}: the .h5 snapshot is behind its journal by {size - journal_bytes} bytes of records "
                      "that this reader cannot merge into a schema-1 table: these rows miss the newer points; "
                      f"`slr-sweep query`/`export` include them, `slr-sweep recover {path}` (with no sweep running) "
                      "writes them into the .h5", SnapshotBehindWarning, stacklevel=5)
        return columns, layout
    return _merge_newer(columns, layout, _journal.newer_records(path, journal_bytes)["points"])


class DamagedRowWarning(UserWarning):
    """Rows of a .h5 whose texts (message, extra_json, text parameters) fail their CRC-32C
    checksum (column ``text_crc32c``) were left out: bit rot or an edit in HDF5's global heap,
    which no other checksum covers. ``slr-sweep recover`` takes those points from the journal
    (``resume`` recomputes them when no journal holds them)."""


TEXT_CRC_COLUMN = "text_crc32c"


def row_text_crc32c(row):
    """The checksum a row of /points or /runs (a numpy structured record) keeps in its column
    ``text_crc32c``: CRC-32C of, for each text column in table order, its name, a NUL, its text
    (UTF-8, as stored), a NUL. A program that edits a text of a row recomputes it with this."""
    payload = bytearray()
    for f in row.dtype.names:
        kind = row.dtype[f].kind
        if kind not in "SO":
            continue
        value = row[f]
        if value is None:
            value = b""
        elif isinstance(value, str):
            value = value.encode("utf-8")
        else:
            value = bytes(value).rstrip(b"\x00") if kind == "S" else bytes(value)
        payload += f.encode("utf-8") + b"\x00" + value + b"\x00"
    return _journal.crc32c(payload)


def _checked_rows(path, data, table):
    """The rows of a structured array whose texts match their ``text_crc32c`` (the CRC-32C of
    column name, NUL, text, NUL over the text columns in table order), without that column; all
    rows as they are for archives written before the column existed. ``table`` names the table
    in messages; a /points row that fails is left out with a DamagedRowWarning, a /runs row makes
    the table unreadable (ValueError), as in slr-sweep."""
    fields = list(data.dtype.names)
    if TEXT_CRC_COLUMN not in fields:
        return data
    good = np.array([row_text_crc32c(row) == int(row[TEXT_CRC_COLUMN]) for row in data], dtype=bool)
    if not good.all():
        bad = [int(data["point_id"][i]) if "point_id" in fields else i for i in np.flatnonzero(~good)]
        if table != "points":
            raise ValueError(f"{path}: /{table} is damaged: rows {bad} fail their text checksum")
        warnings.warn(f"{path}: {len(bad)} row(s) of /points whose texts fail their CRC-32C checksum were left out "
                      f"(point ids {', '.join(format(b, '016x') for b in bad)}); `slr-sweep recover {path}` takes "
                      "them from the journal", DamagedRowWarning, stacklevel=4)
    kept = [f for f in fields if f != TEXT_CRC_COLUMN]
    return np.asarray(data[good][kept])


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
        data = _checked_rows(path, f[name][:], name)
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
        data = _checked_rows(path, table[:], "points")
        version = f.attrs.get("schema_version", None)
        journal_bytes = int(f.attrs.get("journal_bytes", 0))
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
    return _with_journal(path, columns, layout, journal_bytes)


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
    """The /runs table (one row per run/resume) as a dict of numpy columns: run_index, start_unix,
    end_unix (NaN while running or after a crash), ranks, host, command, exit_reason ("running"
    while a sweep holds the archive, "interrupted" for a run that ended without saying why),
    points_done. Brought up to the journal like load: a run begun or ended since the snapshot
    is there, and points_done counts the newer point records."""
    import h5py

    table = _read_table(path, "runs")
    with h5py.File(path, "r") as f:
        journal_bytes = int(f.attrs.get("journal_bytes", 0))
    size = _journal.journal_size(path)
    empty = {"points": [], "run_begins": [], "run_ends": [], "from": journal_bytes}
    newer = _journal.newer_records(path, journal_bytes) if size is not None and size > journal_bytes else empty
    rows = [{k: table[k][i] for k in table} for i in range(len(table["run_index"]))]
    for begin in newer["run_begins"]:
        if begin["run_index"] >= len(rows):  # a whole-journal read (see newer_records) sees old runs again
            rows.append(dict(begin, run_index=len(rows), end_unix=np.nan, exit_reason="interrupted", points_done=0))
    for end in newer["run_ends"]:
        if end["run_index"] < len(rows):
            rows[end["run_index"]].update(end_unix=end["end_unix"], exit_reason=end["exit_reason"])
    if newer["from"] != journal_bytes:  # the whole journal was read: it counts every run's points
        for row in rows:
            row["points_done"] = 0
    for point in newer["points"]:
        if point["run_index"] < len(rows):
            rows[point["run_index"]]["points_done"] += 1
    if rows:
        last = rows[-1]
        if np.isnan(last["end_unix"]) and last["exit_reason"] in ("running", "interrupted"):
            last["exit_reason"] = "running" if _journal.writer_pid(path) != 0 else "interrupted"
    out = {}
    for name, column in table.items():
        out[name] = np.array([row[name] for row in rows], dtype=column.dtype)
    return out


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


def spectrum_of(row, extra, singular_values=False, root=False):
    """The spectrum of one point from its row and parsed extra_json (see spectrum)."""
    if root:
        return _root(spectrum_of(row, extra, singular_values=True))
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


def _root(s):
    """A spectrum of |λ| mapped to √|λ|: values and quantiles by the square root, a density by
    ρ(√x)·2√x at the same points, histogram edges by the square root (counts unchanged); the atom at 0
    and every mass are unchanged."""
    out = dict(s)
    for key in ("grid", "quantiles", "support", "eigenvalues", "edges"):
        if key in out:
            out[key] = np.sqrt(np.maximum(np.asarray(out[key], dtype=float), 0.0))
    if "density" in out:
        out["density"] = 2 * out["grid"] * np.asarray(s["density"], dtype=float)
    out["root"] = True
    return out


def spectrum(path, point_id, singular_values=False, root=False):
    """The eigenvalue spectrum of the estimator Ŝ at one tied-attention point, as a dict:

    * fixed-point (theory, d → ∞): kind "theory", levels (0, 0.01, …, 1), quantiles (101, the atom at
      0 included), grid and density (200 points; the density of the continuous part, integrating
      to 1 − atom_at_0), support (intervals × 2), atom_at_0;
    * erm (finite d): kind "erm", eigenvalues (all d, ascending) — or, for d > 400, edges and
      counts of a 100-bin histogram —, d, and atom_at_0 (the fraction with |λ| <= 1e-3 max|λ|, as
      the column rank_rel_1e3: atom_at_0 = 1 − rank_rel_1e3).

    singular_values=True gives the law of |λ| (the singular values of Ŝ, as the paper plots them;
    the same for the PSD factorised estimator): the density folded onto [0, max|λ|] and quantiles
    recomputed from it, |eigenvalues| sorted, the histogram re-binned. root=True (implies
    singular_values) maps that law to √|λ|: for the factorised student √λ(Ŝ) = σ(W)/(r d)^{1/4}, the
    singular values of its weights, the units in which the paper draws its spectra (density
    ρ(√x)·2√x on the same points, atom at 0 unchanged). Raises KeyError if there is no such point or it
    has no spectrum."""
    row, extra = _point_extra(path, point_id)
    return spectrum_of(row, extra, singular_values, root)
