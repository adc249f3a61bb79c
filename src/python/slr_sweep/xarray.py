"""The points of an archive as an ``xarray.Dataset`` with one dimension per varying parameter.

    import slr_sweep
    ds = slr_sweep.to_xarray("results.h5", where={"method": "erm"})
    ds.test_risk.sel(activation="softmax", alpha=2.0)

Needs xarray (Debian python3-xarray; python3-h5netcdf to write the Dataset with ``to_netcdf``).
"""
import numpy as np

from .archive import load_with_layout


# Refuse Datasets of more values than this (cells x variables): a selection over several methods
# whose options differ spans the product of all their options, mostly empty.
MAX_VALUES = 2 ** 28


def _is_missing(values):
    """Per entry: NaN (numbers) or "" (text)."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind == "O":
        return np.array([v is None or v == "" or (isinstance(v, float) and v != v) for v in values], dtype=bool)
    return np.zeros(len(values), dtype=bool)


def _factorize(values):
    """(codes, uniques): uniques sorted ascending (text alphabetically, NaN last), codes index them."""
    if values.dtype.kind == "O":
        texts = np.array(["" if v is None else str(v) for v in values], dtype=object)
        uniques = np.array(sorted(set(texts)), dtype=object)
        position = {u: i for i, u in enumerate(uniques)}
        return np.array([position[t] for t in texts], dtype=np.int64), uniques
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        finite = np.unique(values[~nan])
        uniques = np.concatenate([finite, [np.nan]]) if nan.any() else finite
        codes = np.searchsorted(finite, values)
        codes[nan] = len(finite)
        return codes.astype(np.int64), uniques
    uniques, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64), uniques


def _partition(codes):
    """The codes renumbered by first occurrence: equal for two columns exactly when their values are
    in one-to-one correspondence over the rows."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse]


def _select(frame, where):
    if where is None:
        return frame
    if callable(where):
        mask = where(frame)
    elif isinstance(where, dict):
        mask = np.ones(len(frame), dtype=bool)
        for column, value in where.items():
            if column not in frame.columns:
                raise KeyError(f"where: no column {column!r} in the archive")
            values = frame[column].to_numpy()
            if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
                mask &= np.isin(values, list(value))
            elif isinstance(value, float) and value != value:
                mask &= _is_missing(values) if values.dtype.kind in "fO" else False
            else:
                mask &= values == value
    else:
        raise TypeError("where: a dict {column: value} or a callable on the DataFrame")
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (len(frame),):
        raise ValueError(f"where: the mask has shape {mask.shape}, the points {len(frame)} rows")
    return frame[mask].reset_index(drop=True)


def _coordinate_attrs(name, descriptions):
    d = descriptions.get(name)
    if not isinstance(d, dict):
        return {}
    attrs = {}
    if "long_name" in d:
        attrs["long_name"] = str(d["long_name"])
    if "units" in d:
        attrs["units"] = str(d["units"])
    return attrs


def _scalar(value):
    return value.item() if hasattr(value, "item") else value


def to_xarray(archive, variables=None, where=None):
    """The points of an archive (a path, or a list of archives concatenated) as an xarray.Dataset.

    where: optional filter applied first, a dict {column: value} (a list/tuple/set of values keeps
    any of them) or a callable taking the points DataFrame (slr_sweep.load) and returning a boolean
    mask.

    Dimensions: one per parameter column that varies over the selected points, plus ``method`` and
    ``repeat`` where they vary (order: method, the parameters in column order, repeat). Parameters
    whose values are in one-to-one correspondence over the selection (zipped lists such as alpha and
    D, or r_k and r_v) share one dimension named after the first of them in column order, with one
    coordinate per member along it (``ds.sel(alpha=2.0)``; ``ds.D`` is a coordinate on ``alpha``).
    Parameters constant over the selection are scalar coordinates; parameters that are NaN / "" for
    every selected point are left out. Index coordinates are sorted ascending (text alphabetically,
    NaN last) and carry ``long_name`` / ``units`` from the archive's parameter descriptions.

    Data variables: the result columns with at least one value in the selection (or the columns
    named in ``variables``) and ``status`` (text, "" where there is no point). Cells without a point
    are NaN; where two points fall into one cell the one completed last (completed_unix) is kept.
    """
    import pandas as pd
    import xarray as xr

    columns, layout = load_with_layout(archive)
    frame = _select(pd.DataFrame(columns), where)
    if len(frame) == 0:
        raise ValueError("to_xarray: no points selected")
    n = len(frame)
    descriptions = layout["parameter_descriptions"]

    # Candidates for dimensions, in order; which vary, which are constant, which are absent.
    candidates = []
    if "method" in frame.columns:
        candidates.append("method")
    candidates += [c for c in layout["parameter_columns"] if c in frame.columns and c not in ("method", "repeat")]
    varying, constant = [], []
    factorized = {}
    for name in candidates:
        values = frame[name].to_numpy()
        if name != "method" and _is_missing(values).all():
            continue
        codes, uniques = _factorize(values)
        if len(uniques) > 1:
            varying.append(name)
            factorized[name] = (codes, uniques)
        else:
            constant.append(name)

    # Zipped groups: columns whose values determine each other (same row partition).
    groups = []
    by_partition = {}
    for name in varying:
        key = _partition(factorized[name][0]).tobytes()
        if key in by_partition:
            by_partition[key].append(name)
        else:
            by_partition[key] = [name]
            groups.append(by_partition[key])

    dims, shape, cell_index, coords = [], [], [], {}
    for group in groups:
        dim = group[0]
        codes, uniques = factorized[dim]
        first_row = np.unique(codes, return_index=True)[1]  # a row of each index value
        dims.append(dim)
        shape.append(len(uniques))
        cell_index.append(codes)
        for member in group:
            values = frame[member].to_numpy()[first_row]
            if values.dtype.kind == "O":
                values = np.array([str(v) for v in values], dtype=object)
            coords[member] = ((dim,), values, _coordinate_attrs(member, descriptions))
    if "repeat" in frame.columns:
        codes, uniques = _factorize(frame["repeat"].to_numpy())
        if len(uniques) > 1:
            dims.append("repeat")
            shape.append(len(uniques))
            cell_index.append(codes)
            coords["repeat"] = (("repeat",), uniques, {"long_name": "repeat of the point (independent seed)"})
        else:
            constant.append("repeat")
    for name in constant:
        coords[name] = ((), _scalar(frame[name].to_numpy()[0]), _coordinate_attrs(name, descriptions))

    cells = 1
    for length in shape:
        cells *= length
    if cells > MAX_VALUES:
        raise ValueError(f"to_xarray: {n} points span {cells} cells ({' x '.join(map(str, shape))} over "
                         f"{', '.join(dims)}); select fewer points (where=..., e.g. one method)")

    # One row per cell: rows in order of completion, so the last written is the latest.
    completed = frame["completed_unix"].to_numpy(dtype=float) if "completed_unix" in frame.columns else np.zeros(n)
    order = np.argsort(np.where(np.isnan(completed), -np.inf, completed), kind="stable")
    flat = np.ravel_multi_index(tuple(index[order] for index in cell_index), tuple(shape)) if dims \
        else np.zeros(n, dtype=np.int64)
    size = cells
    row_of_cell = np.full(size, -1, dtype=np.int64)
    cells_hit, last = np.unique(flat[::-1], return_index=True)  # the last row of each cell in `order`
    row_of_cell[cells_hit] = order[len(order) - 1 - last]
    filled = row_of_cell >= 0
    rows = row_of_cell[filled]

    if variables is None:
        names = [c for c in layout["result_columns"]
                 if c in frame.columns and frame[c].dtype.kind == "f" and not np.isnan(frame[c].to_numpy()).all()]
    else:
        names = [variables] if isinstance(variables, str) else list(variables)
        missing = [c for c in names if c not in frame.columns]
        if missing:
            raise KeyError(f"variables: no column {', '.join(map(repr, missing))} in the archive")
    if "status" in frame.columns and "status" not in names:
        names.append("status")
    names = [name for name in names if name not in coords]  # a parameter asked for is a coordinate already

    if size * max(len(names), 1) > MAX_VALUES:
        raise ValueError(f"to_xarray: {len(rows)} points span {size} cells ({' x '.join(map(str, shape))} over "
                         f"{', '.join(dims)}); select fewer points (where=..., e.g. one method) or fewer variables")

    data_vars = {}
    for name in names:
        values = frame[name].to_numpy()
        if values.dtype.kind == "O":
            cells = np.full(size, "", dtype=object)
            cells[filled] = [str(v) for v in values[rows]]
        elif values.dtype.kind in "iub" and filled.all():
            cells = values[rows]
        else:
            cells = np.full(size, np.nan)
            cells[filled] = values[rows].astype(float)
        data_vars[name] = (tuple(dims), cells.reshape(shape) if dims else cells[0])

    paths = list(archive) if isinstance(archive, (list, tuple)) else [archive]
    attrs = {"source": ", ".join(str(p) for p in paths), "schema_version": int(layout["schema_version"]),
             "points": int(len(rows))}
    ds = xr.Dataset(data_vars=data_vars, coords=coords, attrs=attrs)
    return ds
