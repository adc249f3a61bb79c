"""The points of an archive as an ``xarray.Dataset``, laid out as ``slr-sweep export --format grid`` does.

    import slr_sweep
    ds = slr_sweep.to_xarray("results.h5", where={"method": "erm"})
    ds.test_risk.sel(activation="softmax", alpha=2.0)

Needs xarray (Debian python3-xarray; python3-h5netcdf to write the Dataset with ``to_netcdf``).
"""
import numpy as np

from .archive import load_with_layout


# Refuse Datasets of more values than this (cells x variables): a selection over several methods
# whose options vary within each method spans the product of those options, mostly empty.
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


def _parameter_order(frame, names):
    """The parameter columns in the order the C++ side's points table has them (query/table.cpp,
    from_rows): the union of the rows' parameters in first-seen order, each row contributing the
    parameters it has (not NaN / "") in archive column order. Equal to ``names`` when the first row
    has every parameter; a column missing on every row comes last."""
    n = len(frame)
    first = {}
    for position, name in enumerate(names):
        present = np.flatnonzero(~_is_missing(frame[name].to_numpy()))
        first[name] = (int(present[0]) if len(present) else n, position)
    return sorted(names, key=first.__getitem__)


class _Dependence:
    """Functional dependence between the varying columns of the selection (grid.cpp, dependence):
    c is determined by d if over the rows of each value of d (missing counting as a value of its own)
    the non-missing values of c are at most one distinct value."""

    def __init__(self, frame, factorized):
        self._factorized = factorized
        self._missing = {name: _is_missing(frame[name].to_numpy()) for name in factorized}
        self._known = {}

    def determined_by(self, c, d):
        key = (c, d)
        if key not in self._known:
            present = ~self._missing[c]
            codes_c, uniques_c = self._factorized[c]
            codes_d = self._factorized[d][0][present]
            pairs = np.unique(codes_d * len(uniques_c) + codes_c[present])
            self._known[key] = len(np.unique(pairs // len(uniques_c))) == len(pairs)
        return self._known[key]


def _infer_dimensions(varying, dependence):
    """[(dimension, [its coordinates])] by the greedy rule of grid.cpp (infer_dimensions): each
    varying column in order becomes a coordinate of the first dimension that determines it, or else a
    new dimension, inserted where the first dimension it determines stood; the dimensions it
    determines are demoted to its coordinates with their own coordinates (those it does not determine
    are placed anew, without demoting). ``repeat`` is a dimension whenever it varies."""
    dims = []

    def place(c, may_demote):
        if c != "repeat":
            for name, coordinates in dims:
                if dependence.determined_by(c, name):
                    coordinates.append(c)
                    return
        added = (c, [])
        pending = []
        position = len(dims)
        if may_demote and c != "repeat":
            i = 0
            while i < len(dims):
                name, coordinates = dims[i]
                if name == "repeat" or not dependence.determined_by(name, c):
                    i += 1
                    continue
                position = min(position, i)
                added[1].append(name)
                for e in coordinates:
                    (added[1] if dependence.determined_by(e, c) else pending).append(e)
                del dims[i]
        dims.insert(position, added)
        for e in pending:
            place(e, False)

    for c in varying:
        place(c, True)
    return dims


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

    Dimensions and coordinates: as ``slr-sweep export --format grid`` chooses them (src/query/grid.cpp,
    make_grid), from functional dependence among the parameters that vary over the selection, taken in
    archive order (``method``, the parameters in the order of the archive's points table, ``repeat``).
    A missing value (NaN / "") means "not applicable"; a column c is determined by a column d if for
    each value of d (missing counting as a value of its own) the values c takes there, missing ones
    aside, are at most one. Each varying column in turn becomes a coordinate along the first
    dimension that determines it (for each value of the dimension its one value, NaN / "" where it does
    not apply), or else a new dimension, put where the first dimension it determines stood; the
    dimensions it determines become its coordinates, with their own coordinates (those it does not
    determine are placed anew). So zipped lists share a dimension (``ds.D`` is a coordinate on
    ``alpha``, ``ds.sel(alpha=2.0)``), the options of one method are coordinates along ``method``, and
    with a length pmf ``L_pmf`` is the dimension and ``L`` its coordinate. ``repeat`` is a dimension
    whenever it varies. Parameters constant over the selection are scalar coordinates; parameters that
    are NaN / "" for every selected point are left out. Index coordinates are sorted ascending (text
    alphabetically, NaN last) and carry ``long_name`` / ``units`` from the archive's parameter
    descriptions.

    Data variables: the result columns with at least one value in the selection (or the columns
    named in ``variables``) and ``status`` (text, "" where there is no point). Cells without a point
    are NaN; where two points fall into one cell the one completed last (completed_unix) is kept, of
    equals the later one in the table.
    """
    import pandas as pd
    import xarray as xr

    columns, layout = load_with_layout(archive)
    frame = pd.DataFrame(columns)
    # Candidates for dimensions in the order of the C++ grid export: method, the parameters (in the
    # order of the whole archive's points table, before the selection), repeat.
    parameters = [c for c in layout["parameter_columns"] if c in frame.columns and c not in ("method", "repeat")]
    candidates = (["method"] if "method" in frame.columns else []) + _parameter_order(frame, parameters) + \
        (["repeat"] if "repeat" in frame.columns else [])
    frame = _select(frame, where)
    if len(frame) == 0:
        raise ValueError("to_xarray: no points selected")
    n = len(frame)
    descriptions = layout["parameter_descriptions"]

    # Which vary (a missing value counting as a value), which are constant, which are absent.
    varying, constant = [], []
    factorized = {}
    for name in candidates:
        values = frame[name].to_numpy()
        if _is_missing(values).all():
            continue
        codes, uniques = _factorize(values)
        if len(uniques) > 1:
            varying.append(name)
            factorized[name] = (codes, uniques)
        else:
            constant.append(name)

    rank = {name: i for i, name in enumerate(candidates)}
    dims, shape, cell_index, coords, along = [], [], [], {}, {}
    for dim, coordinates in _infer_dimensions(varying, _Dependence(frame, factorized)):
        codes, uniques = factorized[dim]
        dims.append(dim)
        shape.append(len(uniques))
        cell_index.append(codes)
        attrs = _coordinate_attrs(dim, descriptions)
        if dim == "repeat" and not attrs:
            attrs = {"long_name": "repeat of the point (independent seed)"}
        if uniques.dtype.kind == "O":
            uniques = np.array([str(v) for v in uniques], dtype=object)
        coords[dim] = ((dim,), uniques, attrs)
        for name in coordinates:
            along[name] = (dim, codes, len(uniques))
    # Non-index coordinates (in parameter order, as the C++ export writes them): for each value of
    # their dimension the one value they take there, NaN / "" where they do not apply.
    for name in sorted(along, key=rank.__getitem__):
        dim, codes, length = along[name]
        values = frame[name].to_numpy()
        present = np.flatnonzero(~_is_missing(values))
        index, first = np.unique(codes[present], return_index=True)
        if values.dtype.kind == "O":
            out = np.full(length, "", dtype=object)
            out[index] = [str(v) for v in values[present[first]]]
        elif len(index) == length:
            out = np.empty(length, dtype=values.dtype)
            out[index] = values[present[first]]
        else:
            out = np.full(length, np.nan)
            out[index] = values[present[first]].astype(float)
        coords[name] = ((dim,), out, _coordinate_attrs(name, descriptions))
    for name in constant:
        attrs = _coordinate_attrs(name, descriptions)
        value = frame[name].to_numpy()[0]
        coords[name] = ((), str(value) if frame[name].dtype.kind == "O" else _scalar(value), attrs)

    cells = 1
    for length in shape:
        cells *= length
    if cells > MAX_VALUES:
        raise ValueError(f"to_xarray: {n} points span {cells} cells ({' x '.join(map(str, shape))} over "
                         f"{', '.join(dims)}); select fewer points (where=..., e.g. one method)")

    # One row per cell, as the C++ export picks it: going through the rows in table order, a row
    # takes its cell unless the cell's row so far completed later (completed_unix).
    completed = frame["completed_unix"].to_numpy(dtype=float) if "completed_unix" in frame.columns else np.zeros(n)
    flat = np.ravel_multi_index(tuple(cell_index), tuple(shape)) if dims else np.zeros(n, dtype=np.int64)
    size = cells
    row_of_cell = np.full(size, -1, dtype=np.int64)
    if np.isnan(completed).any():
        # (NaN compares false: such a row always takes its cell, and any later row takes it from it)
        for r in range(n):
            previous = row_of_cell[flat[r]]
            if previous < 0 or not completed[r] < completed[previous]:
                row_of_cell[flat[r]] = r
    else:
        # The same as the latest completed row of each cell, the last in table order among equals.
        order = np.argsort(completed, kind="stable")
        cells_hit, last = np.unique(flat[order][::-1], return_index=True)
        row_of_cell[cells_hit] = order[n - 1 - last]
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
