"""Script test: the Python reader on archive schema 2 (typed parameter columns, written here with h5py
as the C++ side lays them out) and on the frozen schema-1 archive: load / load_columns /
parameter_columns give typed columns with text as str, and to_xarray lays the points out as the C++
grid export does (a parameter determined by a dimension is a coordinate along it: zipped lists, the
options of one method along method, L along L_pmf; takeover and re-placement; first-seen parameter
order), the values in the right cells, NaN for a missing point, the latest of two points in one cell,
long_name/units from the parameter descriptions, and the same dims, coordinates and test_risk as
`slr-sweep export --format grid` on an archive the binary writes (SLR_SWEEP, else
SOURCE_DIR/build/bin/slr-sweep; SKIPPED without one).
usage: schema2_test.py SOURCE_DIR   (needs numpy, h5py, pandas, xarray; h5netcdf for the netCDF check)"""
import json
import math
import os
import sys
import tempfile

source_dir = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(source_dir, "src", "python"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import slr_sweep  # noqa: E402

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


# ------------------------------------------------------------------ a synthetic schema-2 archive

VSTR = h5py.string_dtype("utf-8")
PARAMETERS = [("task", "S8"), ("nu", "f8"), ("L", "i8"), ("L_pmf", VSTR), ("delta", "f8"), ("activation", VSTR),
              ("erf_offset", "f8"), ("alpha", "f8"), ("r_k", "f8"), ("r_v", "f8"), ("D", "f8"), ("max-iter", "i8"),
              ("init", VSTR), ("tol", "f8")]
RESULTS = ["risk", "test_risk", "order_parameters_m_kk", "alpha_jump"]
DTYPE = np.dtype([("point_id", "u8"), ("repeat", "u4"), ("seed", "u8"), ("method", "S16")] + PARAMETERS +
                 [("status", "S8"), ("message", VSTR), ("run_index", "u4"), ("completed_unix", "f8")] +
                 [(name, "f8") for name in RESULTS] + [("extra_json", VSTR)])
DESCRIPTIONS = {"alpha": {"long_name": "sample ratio α = n/d", "units": ""},
                "D": {"long_name": "model dimension", "units": ""},
                "r_k": {"long_name": "key regularisation", "units": ""},
                "activation": {"long_name": "attention activation", "units": ""},
                "tol": {"long_name": "tolerance", "units": "1"},
                "nu": {"long_name": "noise ν", "units": "nats"}}

ACTIVATIONS = ["softmax", "linear"]           # written out of order: the coordinate is sorted
ALPHA_D = [(2.0, 400.0), (0.5, 100.0), (1.0, 200.0)]  # zipped lists
RK_RV = [(1.0, 0.2), (0.1, 0.3)]              # zipped; r_v decreases where r_k increases
NAN = float("nan")


def erm_risk(activation, alpha, r_k, repeat):
    return 1000.0 * ACTIVATIONS.index(activation) + 10.0 * alpha + r_k + 0.5 * repeat


def row(point_id, method, activation, alpha, D, r_k, r_v, repeat, completed, risk=None):
    erm = method == "erm"
    value = erm_risk(activation, alpha, r_k, repeat) if risk is None else risk
    return (point_id, repeat, 7 * point_id + 1, method.encode(),
            b"spiked", 1.0, 3, "3", 0.0, activation, NAN, alpha, r_k, r_v, D, 1000 if erm else 500,
            "informed" if erm else "", 1e-6,
            b"ok", "", 0, completed, value, value + 0.25 if erm else NAN, -value, NAN,
            json.dumps({"point": point_id}))


def erm_rows():
    rows, point_id = [], 1
    for activation in ACTIVATIONS:
        for alpha, D in ALPHA_D:
            for r_k, r_v in RK_RV:
                for repeat in (0, 1):
                    rows.append(row(point_id, "erm", activation, alpha, D, r_k, r_v, repeat, 1.7e9 + point_id))
                    point_id += 1
    return rows


def state_evolution_rows():
    # Another method: no D, no init (NaN / ""), its own max-iter, one repeat.
    return [row(100 + i, "state-evolution", "softmax", alpha, NAN, 0.1, 0.3, 0, 1.7e9 + 100 + i, risk=5.0 + alpha)
            for i, (alpha, _) in enumerate(ALPHA_D)]


def write_archive(path, rows, descriptions=True):
    with h5py.File(path, "w") as f:
        f.attrs["schema_version"] = np.int64(2)
        points = f.create_dataset("points", data=np.array(rows, dtype=DTYPE), maxshape=(None,), chunks=True)
        points.attrs["parameter_columns"] = ",".join(name for name, _ in PARAMETERS)
        points.attrs["result_columns"] = ",".join(RESULTS)
        if descriptions:
            points.attrs["parameter_descriptions"] = json.dumps(DESCRIPTIONS)


def write_points(path, method, parameters, risk, repeat=None):
    """A schema-2 archive of the given columns: method (list of str), parameters [(name, dtype,
    values)] in column order, risk (list of float); point_id, seed and completed_unix count up."""
    n = len(method)
    repeat = [0] * n if repeat is None else repeat
    dtype = np.dtype([("point_id", "u8"), ("repeat", "u4"), ("seed", "u8"), ("method", VSTR)] +
                     [(name, kind) for name, kind, _ in parameters] +
                     [("status", VSTR), ("message", VSTR), ("run_index", "u4"), ("completed_unix", "f8"),
                      ("risk", "f8"), ("extra_json", VSTR)])
    rows = [(i + 1, repeat[i], 7 * i + 1, method[i]) + tuple(values[i] for _, _, values in parameters) +
            ("ok", "", 0, 1.7e9 + i, risk[i], "{}") for i in range(n)]
    with h5py.File(path, "w") as f:
        f.attrs["schema_version"] = np.int64(2)
        points = f.create_dataset("points", data=np.array(rows, dtype=dtype), maxshape=(None,), chunks=True)
        points.attrs["parameter_columns"] = ",".join(name for name, _, _ in parameters)
        points.attrs["result_columns"] = "risk"


def values_of(da):
    """A coordinate's values as a list with NaN as None (comparable with ==)."""
    return [None if is_nan(v) else v for v in da.values.tolist()]


def is_nan(x):
    return isinstance(x, float) and math.isnan(x)


with tempfile.TemporaryDirectory() as tmp:
    full = os.path.join(tmp, "full.h5")
    write_archive(full, erm_rows() + state_evolution_rows())
    n_erm = len(erm_rows())
    check(n_erm == 24, f"synthetic grid has {n_erm} erm rows")

    # ---- load / load_columns / parameter_columns
    cols = slr_sweep.load_columns(full)
    check(len(cols["point_id"]) == 27, f"load_columns: {len(cols['point_id'])} rows")
    expected_kinds = {"point_id": "u", "repeat": "u", "seed": "u", "method": "O", "task": "O", "nu": "f", "L": "i",
                      "L_pmf": "O", "activation": "O", "alpha": "f", "D": "f", "max-iter": "i", "init": "O",
                      "status": "O", "message": "O", "run_index": "u", "completed_unix": "f", "risk": "f",
                      "extra_json": "O"}
    for name, kind in expected_kinds.items():
        check(cols[name].dtype.kind == kind, f"load_columns: {name} has dtype {cols[name].dtype}, expected kind {kind}")
    check(cols["L"].dtype == np.int64 and cols["max-iter"].dtype == np.int64, "load_columns: int64 parameters")
    for name in ("method", "task", "L_pmf", "activation", "init", "status", "message", "extra_json"):
        check(all(type(v) is str for v in cols[name]), f"load_columns: {name} not all str: {cols[name][:3]}")
    check("options" not in cols, "load_columns: schema 2 has no options column")
    check(list(cols["method"][:2]) == ["erm", "erm"] and cols["method"][-1] == "state-evolution",
          f"load_columns: method {cols['method']}")
    check(list(cols["init"][[0, 26]]) == ["informed", ""], f"load_columns: init {cols['init']}")
    check(list(cols["max-iter"][[0, 26]]) == [1000, 500], f"load_columns: max-iter {cols['max-iter']}")
    check(cols["D"][0] == 400.0 and math.isnan(cols["D"][26]), f"load_columns: D {cols['D']}")
    check(cols["task"][0] == "spiked" and cols["L_pmf"][0] == "3", "load_columns: fixed and vlen text values")
    check(json.loads(cols["extra_json"][3]) == {"point": 4}, f"load_columns: extra_json {cols['extra_json'][3]}")
    frame = slr_sweep.load(full)
    check(str(frame["L"].dtype) == "int64" and str(frame["max-iter"].dtype) == "int64", "load: int64 in the DataFrame")
    check(frame["activation"].map(type).eq(str).all(), "load: activation as str in the DataFrame")
    check(len(slr_sweep.load(full, point_ids=[1, 2, 100])) == 3, "load: point_ids")
    check(slr_sweep.parameter_columns(full) == [name for name, _ in PARAMETERS],
          f"parameter_columns: {slr_sweep.parameter_columns(full)}")

    # ---- to_xarray on the rectangular erm grid
    ds = slr_sweep.to_xarray(full, where={"method": "erm"})
    check(ds["risk"].dims == ("activation", "alpha", "r_k", "repeat"), f"to_xarray: dims {ds['risk'].dims}")
    check(dict(ds.sizes) == {"activation": 2, "alpha": 3, "r_k": 2, "repeat": 2}, f"to_xarray: sizes {dict(ds.sizes)}")
    check(ds["D"].dims == ("alpha",) and ds["r_v"].dims == ("r_k",),
          f"to_xarray: D on {ds['D'].dims}, r_v on {ds['r_v'].dims}")
    check(list(ds["activation"].values) == ["linear", "softmax"], f"to_xarray: activation {ds['activation'].values}")
    check(list(ds["alpha"].values) == [0.5, 1.0, 2.0], f"to_xarray: alpha {ds['alpha'].values}")
    check(list(ds["D"].values) == [100.0, 200.0, 400.0], f"to_xarray: D {ds['D'].values}")
    check(list(ds["r_k"].values) == [0.1, 1.0] and list(ds["r_v"].values) == [0.3, 0.2],
          f"to_xarray: r_k {ds['r_k'].values}, r_v {ds['r_v'].values}")
    check(list(ds["repeat"].values) == [0, 1], f"to_xarray: repeat {ds['repeat'].values}")
    check(float(ds["D"].sel(alpha=2.0)) == 400.0, "to_xarray: ds.D.sel(alpha=2.0)")
    check(set(ds.data_vars) == {"risk", "test_risk", "order_parameters_m_kk", "status"},
          f"to_xarray: data variables {sorted(ds.data_vars)}")
    check(not np.isnan(ds["risk"].values).any(), "to_xarray: NaN cell in the rectangular grid")
    check(all(s == "ok" for s in ds["status"].values.ravel()), f"to_xarray: status {ds['status'].values.ravel()}")
    # Constant parameters as scalar coordinates, all-NaN ones dropped.
    scalars = {"method": "erm", "task": "spiked", "nu": 1.0, "L": 3, "L_pmf": "3", "delta": 0.0,
               "max-iter": 1000, "init": "informed", "tol": 1e-6}
    for name, value in scalars.items():
        check(name in ds.coords and ds[name].dims == () and ds[name].item() == value,
              f"to_xarray: scalar coordinate {name} = {ds[name].values if name in ds.coords else None}")
    check(isinstance(ds["L"].item(), int), f"to_xarray: L as integer, got {type(ds['L'].item())}")
    check("erf_offset" not in ds.variables and "alpha_jump" not in ds.variables, "to_xarray: all-NaN columns dropped")
    # The values in the right cells.
    for r in erm_rows():
        point_id, repeat, activation, alpha, r_k = r[0], r[1], r[9], r[11], r[12]
        cell = ds.sel(activation=activation, alpha=alpha, r_k=r_k, repeat=repeat)
        check(float(cell["risk"]) == erm_risk(activation, alpha, r_k, repeat),
              f"to_xarray: risk of point {point_id} is {float(cell['risk'])}")
        check(float(cell["test_risk"]) == erm_risk(activation, alpha, r_k, repeat) + 0.25,
              f"to_xarray: test_risk of point {point_id}")
    check(float(ds["risk"].isel(activation=1, alpha=0, r_k=1, repeat=1)) == 6.5,  # softmax, 0.5, 1.0, 1
          "to_xarray: risk at isel(softmax, alpha 0.5, r_k 1.0, repeat 1)")
    check(float(ds["risk"].isel(activation=0, alpha=2, r_k=0, repeat=0)) == 1020.1,  # linear, 2.0, 0.1, 0
          "to_xarray: risk at isel(linear, alpha 2.0, r_k 0.1, repeat 0)")
    # Coordinate descriptions.
    for name in ("alpha", "D", "r_k", "activation", "tol", "nu"):
        check(ds[name].attrs.get("long_name") == DESCRIPTIONS[name]["long_name"] and
              ds[name].attrs.get("units") == DESCRIPTIONS[name]["units"],
              f"to_xarray: attributes of {name}: {ds[name].attrs}")
    check("long_name" not in ds["r_v"].attrs, f"to_xarray: r_v has no description: {ds['r_v'].attrs}")
    # The same selection through a callable; variables chosen.
    same = slr_sweep.to_xarray(full, variables=["test_risk"], where=lambda df: df["method"] == "erm")
    check(set(same.data_vars) == {"test_risk", "status"}, f"to_xarray variables: {sorted(same.data_vars)}")
    check(np.array_equal(same["test_risk"].values, ds["test_risk"].values), "to_xarray: callable where")
    # Written as netCDF (h5netcdf) and read back.
    try:
        import h5netcdf  # noqa: F401
        import xarray as xr

        ds.to_netcdf(os.path.join(tmp, "grid.nc"), engine="h5netcdf")
        with xr.open_dataset(os.path.join(tmp, "grid.nc"), engine="h5netcdf") as back:
            check(back["risk"].dims == ds["risk"].dims and np.array_equal(back["risk"].values, ds["risk"].values),
                  "to_netcdf: risk read back")
            check(list(back["D"].values) == [100.0, 200.0, 400.0], "to_netcdf: D read back")
    except ImportError:
        print("note: h5netcdf not installed; skipping the netCDF check")

    # ---- both methods: method varies; max-iter and init follow the method, D still follows alpha
    # (state-evolution has no D: a missing value does not count against the dependence)
    both = slr_sweep.to_xarray(full)
    check(both["risk"].dims == ("method", "activation", "alpha", "r_k", "repeat"),
          f"to_xarray both methods: dims {both['risk'].dims}")
    check(list(both["method"].values) == ["erm", "state-evolution"], f"both: method {both['method'].values}")
    check(both["max-iter"].dims == ("method",) and list(both["max-iter"].values) == [1000, 500],
          f"both: max-iter {both['max-iter'].dims} {both['max-iter'].values}")
    check(both["init"].dims == ("method",) and list(both["init"].values) == ["informed", ""],
          f"both: init {both['init'].values}")
    check(both["D"].dims == ("alpha",) and list(both["D"].values) == [100.0, 200.0, 400.0],
          f"both: D {both['D'].dims} {both['D'].values}")
    check(both["r_v"].dims == ("r_k",) and list(both["r_v"].values) == [0.3, 0.2], f"both: r_v {both['r_v'].values}")
    # ("method" is also a keyword of .sel: select the dimension with a dict)
    se = both["risk"].sel({"method": "state-evolution", "activation": "softmax", "r_k": 0.1, "repeat": 0})
    check(se.dims == ("alpha",) and list(se.values) == [5.5, 6.0, 7.0], f"both: state-evolution risk {se.values}")
    check(int(np.isfinite(both["risk"].values).sum()) == 27, "both: every point in one cell")
    # The same rows with state-evolution first: the C++ table takes the parameters in first-seen
    # order (D and init after max-iter); the dimensions do not change here.
    se_first = os.path.join(tmp, "se_first.h5")
    write_archive(se_first, state_evolution_rows() + erm_rows())
    b2 = slr_sweep.to_xarray(se_first)
    check(b2["risk"].dims == both["risk"].dims and np.array_equal(b2["risk"].values, both["risk"].values, equal_nan=True),
          f"both, state-evolution first: dims {b2['risk'].dims}")

    # ---- a missing point: its cell is NaN, status ""
    missing = os.path.join(tmp, "missing.h5")
    rows = erm_rows()
    dropped = rows.pop(5)  # softmax, alpha 0.5, r_k 1.0, repeat 1
    write_archive(missing, rows)
    dm = slr_sweep.to_xarray(missing)
    check(dm["risk"].dims == ("activation", "alpha", "r_k", "repeat"), f"missing: dims {dm['risk'].dims}")
    cell = dict(activation=dropped[9], alpha=dropped[11], r_k=dropped[12], repeat=dropped[1])
    check(math.isnan(float(dm["risk"].sel(**cell))), f"missing: cell {cell} is {float(dm['risk'].sel(**cell))}")
    check(dm["status"].sel(**cell).item() == "", "missing: status of the missing cell")
    check(int(np.isnan(dm["risk"].values).sum()) == 1, "missing: exactly one NaN cell")
    check(float(dm["risk"].sel(activation="softmax", alpha=0.5, r_k=1.0, repeat=0)) == 6.0,
          "missing: the neighbouring cell keeps its value")

    # ---- two points in one cell: the later completed_unix wins, whatever the table order
    duplicated = os.path.join(tmp, "duplicated.h5")
    rows = erm_rows()
    first = rows[0]  # softmax, alpha 2.0, r_k 1.0, repeat 0, completed 1.7e9 + 1
    newer = row(901, "erm", first[9], first[11], first[14], first[12], first[13], first[1], 1.8e9, risk=-1.0)
    older = row(902, "erm", first[9], first[11], first[14], first[12], first[13], first[1], 1.6e9, risk=-2.0)
    write_archive(duplicated, rows[:3] + [newer] + rows[3:] + [older], descriptions=False)
    dd = slr_sweep.to_xarray(duplicated)
    cell = dict(activation=first[9], alpha=first[11], r_k=first[12], repeat=first[1])
    check(dict(dd.sizes) == {"activation": 2, "alpha": 3, "r_k": 2, "repeat": 2}, f"duplicated: sizes {dict(dd.sizes)}")
    check(float(dd["risk"].sel(**cell)) == -1.0, f"duplicated: kept risk {float(dd['risk'].sel(**cell))}")
    check(float(dd["order_parameters_m_kk"].sel(**cell)) == 1.0, "duplicated: kept the row's other columns")
    check("long_name" not in dd["alpha"].attrs, "duplicated: no descriptions, no attributes")
    check(int(np.isfinite(dd["risk"].values).sum()) == 24, "duplicated: 24 filled cells")

    # ---- an option of one method only (NaN for the other): a coordinate along method, not a dimension
    options = os.path.join(tmp, "options.h5")
    methods, alphas, samples, Ds, risks = [], [], [], [], []
    for method in ("erm", "bayes"):
        for alpha, D in ((0.5, 100.0), (1.0, 200.0), (2.0, 400.0)):
            methods.append(method)
            alphas.append(alpha)
            samples.append(20000.0 if method == "bayes" else NAN)
            Ds.append(D if method == "erm" else NAN)
            risks.append((1.0 if method == "bayes" else 2.0) * alpha)
    write_points(options, methods, [("alpha", "f8", alphas), ("D", "f8", Ds), ("samples", "f8", samples)], risks)
    do = slr_sweep.to_xarray(options)
    shaped = check(do["risk"].dims == ("method", "alpha"), f"option of one method: dims {do['risk'].dims}")
    check(list(do["method"].values) == ["bayes", "erm"], f"option of one method: method {do['method'].values}")
    check("samples" not in do.dims and do["samples"].dims == ("method",) and values_of(do["samples"]) == [20000.0, None],
          f"option of one method: samples {do['samples'].dims} {do['samples'].values}")
    check(do["D"].dims == ("alpha",) and values_of(do["D"]) == [100.0, 200.0, 400.0],
          f"option of one method: D {do['D'].dims} {do['D'].values}")
    check(shaped and float(do["risk"].sel({"method": "erm", "alpha": 2.0})) == 4.0 and
          float(do["risk"].sel({"method": "bayes", "alpha": 0.5})) == 0.5, "option of one method: risk cells")
    check(not np.isnan(do["risk"].values).any(), "option of one method: a NaN cell")
    db = slr_sweep.to_xarray(options, where={"method": "bayes"})
    check(db["risk"].dims == ("alpha",) and db["samples"].dims == () and db["samples"].item() == 20000.0
          and "D" not in db.variables, f"option of one method, bayes only: {db['risk'].dims}, samples {db['samples'].values}")

    # ---- a length pmf: L is NaN where a law is given, so L_pmf is the dimension and L its coordinate
    pmf = os.path.join(tmp, "pmf.h5")
    laws = [("3", 3.0), ("5", 5.0), ("1:0.25,3:0.75", NAN), ("2:0.5,4:0.5", NAN)]
    rows_L, rows_law, rows_alpha, risks = [], [], [], []
    for i, (law, L) in enumerate(laws):
        for alpha in (1.0, 2.0):
            rows_L.append(L)
            rows_law.append(law)
            rows_alpha.append(alpha)
            risks.append(10.0 * i + alpha)
    write_points(pmf, ["erm"] * len(risks), [("L", "f8", rows_L), ("L_pmf", VSTR, rows_law), ("alpha", "f8", rows_alpha)],
                 risks)
    dp = slr_sweep.to_xarray(pmf)
    shaped = check(dp["risk"].dims == ("L_pmf", "alpha"), f"pmf: dims {dp['risk'].dims}")
    check("L" not in dp.dims and dp["L"].dims == ("L_pmf",), f"pmf: L on {dp['L'].dims}")
    check(list(dp["L_pmf"].values) == ["1:0.25,3:0.75", "2:0.5,4:0.5", "3", "5"], f"pmf: L_pmf {dp['L_pmf'].values}")
    check(values_of(dp["L"]) == [None, None, 3.0, 5.0], f"pmf: L {dp['L'].values}")
    check(shaped and float(dp["risk"].sel(L_pmf="2:0.5,4:0.5", alpha=2.0)) == 32.0 and
          float(dp["risk"].sel(L_pmf="5", alpha=1.0)) == 11.0, "pmf: risk cells")
    check(not np.isnan(dp["risk"].values).any(), "pmf: a NaN cell")
    # Only fixed lengths: L and L_pmf correspond one to one; L (first in column order) is the dimension.
    dl = slr_sweep.to_xarray(pmf, where=lambda df: ~np.isnan(df["L"]))
    check(dl["risk"].dims == ("L", "alpha") and dl["L_pmf"].dims == ("L",) and list(dl["L_pmf"].values) == ["3", "5"],
          f"pmf, fixed lengths only: dims {dl['risk'].dims}")

    # ---- a demoted dimension's coordinate that the new dimension does not determine is placed anew:
    # d (dimension, coordinate e) is taken over by c; e is not a function of c, so it becomes a dimension.
    anew = os.path.join(tmp, "anew.h5")
    write_points(anew, ["erm"] * 4, [("d", "f8", [1.0, NAN, 2.0, 1.0]), ("e", "f8", [10.0, 20.0, 30.0, 10.0]),
                                     ("c", VSTR, ["A", "A", "B", "C"])], [0.0, 1.0, 2.0, 3.0])
    da = slr_sweep.to_xarray(anew)
    check(da["risk"].dims == ("c", "e"), f"placed anew: dims {da['risk'].dims}")
    check(da["d"].dims == ("c",) and values_of(da["d"]) == [1.0, 2.0, 1.0], f"placed anew: d {da['d'].dims} {da['d'].values}")
    check(np.array_equal(da["risk"].values, [[0.0, 1.0, NAN], [NAN, NAN, 2.0], [3.0, NAN, NAN]], equal_nan=True),
          f"placed anew: risk {da['risk'].values}")

    # ---- parameter order as the C++ points table has it: first seen over the rows. erf_offset (before
    # alpha in parameter_columns) is missing in the first row, so alpha comes first.
    seen = os.path.join(tmp, "seen.h5")
    acts, offsets, alphas = [], [], []
    for activation, offset in (("softmax", NAN), ("erf", 0.0), ("erf", 0.5), ("gelu", 0.0), ("gelu", 0.5)):
        for alpha in (1.0, 2.0):
            acts.append(activation)
            offsets.append(offset)
            alphas.append(alpha)
    risks = [float(i) for i in range(len(acts))]
    write_points(seen, ["erm"] * len(acts), [("activation", VSTR, acts), ("erf_offset", "f8", offsets),
                                             ("alpha", "f8", alphas)], risks)
    dn = slr_sweep.to_xarray(seen)
    check(dn["risk"].dims == ("activation", "alpha", "erf_offset"), f"first-seen order: dims {dn['risk'].dims}")
    check(values_of(dn["erf_offset"]) == [0.0, 0.5, None], f"first-seen order: erf_offset {dn['erf_offset'].values}")
    # With an erf row first, the order is parameter_columns'.
    write_points(seen, ["erm"] * len(acts), [("activation", VSTR, acts[::-1]), ("erf_offset", "f8", offsets[::-1]),
                                             ("alpha", "f8", alphas[::-1])], risks[::-1])
    dr = slr_sweep.to_xarray(seen)
    check(dr["risk"].dims == ("activation", "erf_offset", "alpha"), f"first-seen order, erf first: dims {dr['risk'].dims}")
    check(np.array_equal(dr["risk"].transpose(*dn["risk"].dims).values, dn["risk"].values, equal_nan=True),
          "first-seen order: the same cells either way")

    # ---- the frozen schema-1 archive
    schema1 = os.path.join(source_dir, "tests", "archive", "schema1", "smoke_schema1.h5")
    s1 = slr_sweep.load_columns(schema1)
    check(len(s1["point_id"]) == 52, f"schema 1: {len(s1['point_id'])} rows")
    for name in ("method", "task", "activation", "L_pmf", "status", "message", "options", "init", "optimizer"):
        check(all(type(v) is str for v in s1[name]), f"schema 1: {name} not all str")
    check(s1["L"].dtype == np.int64 and list(np.unique(s1["L"])) == [3], f"schema 1: L {s1['L'][:3]}")
    erm = s1["method"] == "erm"
    check(np.all(s1["D"][erm] == 200) and np.all(s1["init"][erm] == "informed"), "schema 1: options expanded")
    check(np.all(s1["samples"][s1["method"] == "bayes"] == 20000) and np.all(np.isnan(s1["samples"][erm])),
          "schema 1: samples option typed, NaN where absent")
    p1 = slr_sweep.parameter_columns(schema1)
    check(p1[:10] == ["task", "nu", "L", "L_pmf", "delta", "activation", "erf_offset", "alpha", "r_k", "r_v"],
          f"schema 1: parameter columns {p1[:10]}")
    check({"samples", "D", "init", "max-iter", "tol", "at"} <= set(p1) and "options" not in p1 and "method" not in p1,
          f"schema 1: option parameter columns {p1}")
    fp = s1["method"] == "fixed-point"
    d1 = slr_sweep.to_xarray(schema1, where={"method": "fixed-point"})
    check(d1["risk"].dims == ("activation", "alpha"), f"schema 1 to_xarray: dims {d1['risk'].dims}")
    check(list(d1["activation"].values) == ["linear", "softmax"] and list(d1["alpha"].values) == [0.5, 1.0, 2.0, 4.0],
          f"schema 1 to_xarray: coordinates {d1['activation'].values} {d1['alpha'].values}")
    check(d1["method"].item() == "fixed-point" and d1["samples"].item() == 2000.0 and d1["L"].item() == 3,
          "schema 1 to_xarray: scalar coordinates")
    check(not np.isnan(d1["risk"].values).any(), "schema 1 to_xarray: NaN cell")
    for i in np.flatnonzero(fp):
        value = float(d1["risk"].sel(activation=s1["activation"][i], alpha=s1["alpha"][i]))
        check(value == s1["risk"][i], f"schema 1 to_xarray: risk of point {s1['point_id'][i]}: {value}")
    d2 = slr_sweep.to_xarray(schema1, where={"method": "erm"})
    check(d2["test_risk"].dims == ("activation", "repeat") and d2["D"].item() == 200.0,
          f"schema 1 to_xarray erm: dims {d2['test_risk'].dims}")

    # ---- a list of archives of both schemas, concatenated
    mixed = slr_sweep.load_columns([full, schema1])
    check(len(mixed["point_id"]) == 27 + 52, f"mixed: {len(mixed['point_id'])} rows")
    check(all(type(v) is str for v in mixed["init"]) and list(mixed["init"][[0, 26]]) == ["informed", ""],
          "mixed: init as str")
    check(mixed["init"][27 + int(np.flatnonzero(erm)[0])] == "informed", "mixed: schema-1 init filled from options")
    check(mixed["max-iter"][0] == 1000 and mixed["max-iter"][27 + int(np.flatnonzero(erm)[0])] == 10000,
          f"mixed: max-iter {mixed['max-iter'][:3]}")
    check(slr_sweep.parameter_columns([full, schema1])[:len(PARAMETERS)] == [name for name, _ in PARAMETERS],
          "mixed: parameter columns")

# ------------------------------------------------------------------ agreement with the C++ grid export

binary = os.environ.get("SLR_SWEEP") or os.path.join(source_dir, "build", "bin", "slr-sweep")
JOB = """name = "x"
seed = 1
[grid]
activation = ["softmax", "linear"]
alpha = [1, 2]
D = [40, 30]
r_k = [0.1, 1]
r_v = [0.1, 1]
zip = [["alpha", "D"], ["r_k", "r_v"]]
repeats = 2
[[method]]
name = "erm"
test-samples = 200
"""
if not os.path.isfile(binary):
    print(f"SKIPPED: agreement with the C++ grid export (no binary at {binary}; set SLR_SWEEP)")
else:
    import subprocess

    import xarray as xr

    with tempfile.TemporaryDirectory() as tmp:
        job, archive, grid = (os.path.join(tmp, name) for name in ("job.toml", "a.h5", "g.h5"))
        with open(job, "w") as f:
            f.write(JOB)
        ran = subprocess.run([binary, "run", job, "-o", archive], capture_output=True, text=True)
        check(ran.returncode == 0, f"C++ export: slr-sweep run failed: {ran.stderr}")
        exported = subprocess.run([binary, "export", archive, "--format", "grid", "-o", grid], capture_output=True,
                                  text=True) if ran.returncode == 0 else ran
        check(exported.returncode == 0, f"C++ export: slr-sweep export failed: {exported.stderr}")
        if ran.returncode == 0 and exported.returncode == 0:
            mine = slr_sweep.to_xarray(archive)
            with xr.open_dataset(grid, engine="h5netcdf") as theirs:
                theirs = theirs.load()
            dims = mine["test_risk"].dims
            check(dims == theirs["test_risk"].dims, f"C++ export: dims {dims} vs {theirs['test_risk'].dims}")
            check(dims == ("activation", "alpha", "r_k", "repeat"), f"C++ export: dims {dims}")
            check(mine["test_risk"].shape == theirs["test_risk"].shape,
                  f"C++ export: shape {mine['test_risk'].shape} vs {theirs['test_risk'].shape}")
            check(dict(mine.sizes) == dict(theirs.sizes), f"C++ export: sizes {dict(mine.sizes)} vs {dict(theirs.sizes)}")

            def along(ds):
                """{dimension: {coordinate along it: values}} (the dimension's own values included)."""
                out = {}
                for name, coordinate in ds.coords.items():
                    if coordinate.ndim == 1:
                        out.setdefault(coordinate.dims[0], {})[name] = [
                            str(v) if isinstance(v, (str, bytes)) else (None if is_nan(float(v)) else float(v))
                            for v in coordinate.values.tolist()]
                return out

            mine_along, theirs_along = along(mine), along(theirs)
            check(mine_along == theirs_along, f"C++ export: coordinates {mine_along} vs {theirs_along}")
            check(set(mine_along.get("alpha", {})) == {"alpha", "D"} and set(mine_along.get("r_k", {})) == {"r_k", "r_v"},
                  f"C++ export: coordinates {mine_along}")
            check(np.array_equal(mine["test_risk"].values, theirs["test_risk"].values, equal_nan=True),
                  "C++ export: test_risk values differ")
            check(int(np.isfinite(mine["test_risk"].values).sum()) == 16, "C++ export: 16 points with a test_risk")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("schema2_test: all checks passed")
