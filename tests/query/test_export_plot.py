"""Script test: export (CSV and HDF5 grid read back by h5py), query from the CLI, plot, and the
Python reader, on an archive with known contents (tests/query/synthetic_archive.cpp).
usage: test_export_plot.py MAKE_SYNTHETIC_ARCHIVE PYTHON_SOURCE_DIR   (env SLR_SWEEP = slr-sweep)"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

make_archive, python_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, python_dir)
import slr_sweep  # noqa: E402

sweep = os.environ["SLR_SWEEP"]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(*args, expect=0):
    result = subprocess.run([sweep, *args], capture_output=True, text=True)
    check(result.returncode == expect,
          f"{' '.join(args)}: exit {result.returncode}, expected {expect}; stderr: {result.stderr.strip()}")
    return result


def fixed_point_risk(activation, alpha, r):  # as in synthetic_archive.cpp
    base = 0.48 if activation == "softmax" else 0.6
    best_r = 1.0 if alpha < 2 else 0.1
    return base + 0.5 / (1 + alpha) + 0.1 * abs(math.log10(r) - math.log10(best_r))


with tempfile.TemporaryDirectory() as tmp:
    archive = os.path.join(tmp, "synthetic.h5")
    subprocess.run([make_archive, archive], check=True)
    total = 20 + 5 + 6 + 10 + 15 + 4 + 12

    # --- the Python reader
    cols = slr_sweep.load(archive, as_dict=True)
    check(len(cols["point_id"]) == total, f"load: {len(cols['point_id'])} rows, expected {total}")
    check(set(cols["method"]) == {"population", "bayes", "fixed-point", "state-evolution", "erm"}, "load: methods")
    # Method options as typed columns of their own (text as str, numbers as float64, absent = NaN / "").
    at = [a for a, m in zip(cols["at"], cols["method"]) if m == "population" and a]
    check(at and all(isinstance(a, str) and a.startswith("m_kk=") for a in at), "option 'at' as a str column")
    d = cols["D"][cols["method"] == "erm"]
    check(d.dtype == np.float64 and np.all(d == 200), f"option D of the ERM rows: {d}")
    table = slr_sweep.load(archive)  # DataFrame when pandas is installed
    check(len(table["point_id"]) == total, "load (default container)")
    try:
        import pandas
    except ImportError:
        pass
    else:
        check(isinstance(table, pandas.DataFrame), "load returns a DataFrame when pandas is installed")
        erm = table[(table.method == "erm") & (table.activation == "softmax") & (table.alpha == 4.0)]
        check(len(erm) == 3 and abs(erm.test_risk.mean() - fixed_point_risk("softmax", 4.0, 0.1)) < 1e-12,
              "DataFrame selection")

    # --- export --format grid, read back with h5py. r_k and r_v are zipped (r_k = r_v): one
    # dimension r_k with the coordinate r_v (before dimensions followed functional dependence, r_v
    # was a fourth axis and the r_k != r_v half of the grid was NaN).
    grid = os.path.join(tmp, "grid.h5")
    run("export", archive, "--format", "grid", "-o", grid, "--where", "method=fixed-point")
    with h5py.File(grid, "r") as f:
        risk = f["test_risk"]
        check(risk.shape == (2, 4, 2), f"grid shape {risk.shape}")
        names = [risk.dims[i].label for i in range(risk.ndim)]
        check(names == ["activation", "alpha", "r_k"], f"dimension labels {names}")
        scales = [risk.dims[i][0].name for i in range(risk.ndim)]
        check(scales == ["/activation", "/alpha", "/r_k"], f"dimension scales {scales}")
        activation = [a.decode() if isinstance(a, bytes) else a for a in f["activation"][:]]
        check(activation == ["linear", "softmax"], f"activation coordinate {activation}")
        check(list(f["alpha"][:]) == [0.5, 1.0, 2.0, 4.0], f"alpha coordinate {list(f['alpha'][:])}")
        check(list(f["r_k"][:]) == [0.1, 1.0], "r_k coordinate")
        check(list(f["r_v"][:]) == [0.1, 1.0] and f["r_v"].dims[0][0].name == "/r_k", "r_v: a coordinate along r_k")
        check(risk.attrs.get("coordinates") == "r_v", f"CF coordinates attribute {risk.attrs.get('coordinates')!r}")
        check(f["alpha"].attrs.get("long_name") == "alpha", "long_name (the name: the synthetic archive has no "
              "parameter descriptions)")
        values = risk[:]
        expected = np.full((2, 4, 2), np.nan)
        for i, act in enumerate(activation):
            for j, alpha in enumerate(f["alpha"][:]):
                for k, r in enumerate(f["r_k"][:]):
                    if not (act == "linear" and alpha == 4.0 and r == 0.1):
                        expected[i, j, k] = fixed_point_risk(act, alpha, r)
        check(np.array_equal(np.isnan(values), np.isnan(expected)), "NaN pattern of the grid")
        check(np.allclose(values[~np.isnan(values)], expected[~np.isnan(expected)], rtol=0, atol=1e-15),
              "grid values")
        check(int(np.isnan(values).sum()) == 1, f"{int(np.isnan(values).sum())} NaN cells, expected 1 (the hole)")
        text = [s.decode() if isinstance(s, bytes) else s for s in (f["status"][1, 3, 0], f["status"][0, 3, 0])]
        check(text == ["ok", ""], f"status variable {text} (softmax and the linear hole at alpha = 4, r = 0.1)")
        check(f.attrs["task"] in ("spiked", b"spiked"), "constant parameters as attributes")
        check("D" not in f.attrs and "at" not in f.attrs, "parameters missing on every row are left out")
        check("order_parameters_m_kk" in f and "risk" not in f, "observables: result columns with values only")
        with h5py.File(archive, "r") as source:
            check(f.attrs["job_fingerprint"] == source.attrs["job_fingerprint"], "provenance: job fingerprint")

    # A whole archive of several methods: the options of one method (D of ERM, NaN elsewhere) are
    # coordinates of `method`, not dimensions of their own.
    mixed = os.path.join(tmp, "mixed.h5")
    run("export", archive, "--format", "grid", "-o", mixed)
    with h5py.File(mixed, "r") as f:
        names = [f["test_risk"].dims[i].label for i in range(f["test_risk"].ndim)]
        check(names == ["method", "task", "nu", "activation", "alpha", "r_k", "at", "repeat"],
              f"mixed archive: dimensions {names}")
        check(f["D"].dims[0][0].name == "/method", "mixed archive: D is a coordinate along method")
        methods = [m.decode() if isinstance(m, bytes) else m for m in f["method"][:]]
        d = dict(zip(methods, f["D"][:]))
        check(d["erm"] == 200 and all(np.isnan(v) for m, v in d.items() if m != "erm"), f"D along method: {d}")
        check(f["test_risk"].attrs.get("coordinates") == "r_v D", f"coordinates {f['test_risk'].attrs.get('coordinates')!r}")

    # xarray reads the named dimensions (only where python3-xarray and python3-h5netcdf are installed)
    try:
        import xarray
        import h5netcdf  # noqa: F401
    except ImportError:
        xarray = None
        print("note: xarray/h5netcdf not installed; skipping the xarray check")
    else:
        with xarray.open_dataset(grid, engine="h5netcdf") as ds:
            check(ds["test_risk"].dims == ("activation", "alpha", "r_k"), f"xarray dims {ds['test_risk'].dims}")
            check(ds["r_v"].dims == ("r_k",) and "r_v" in ds.coords, "xarray: r_v a coordinate along r_k")
            value = float(ds["test_risk"].sel(activation="softmax", alpha=4.0, r_k=0.1))
            check(abs(value - fixed_point_risk("softmax", 4.0, 0.1)) < 1e-15, f"xarray value {value}")

    # A full rectangular job run for real: activation x (alpha, D) zipped x (r_k, r_v) zipped x 2
    # repeats of ERM. Dimensions activation, alpha, r_k, repeat; D along alpha, r_v along r_k; every
    # cell filled; long_name from the archive's parameter descriptions.
    rect_job = os.path.join(tmp, "rectangular.toml")
    with open(rect_job, "w") as f:
        f.write('name = "rectangular"\nseed = 3\n[grid]\ntask = "spiked"\nnu = 1.0\nL = 3\n'
                'activation = ["softmax", "linear"]\nalpha = [1.0, 2.0]\nr_k = [0.1, 1.0]\nr_v = [0.2, 2.0]\n'
                'repeats = 2\n[[method]]\nname = "erm"\nD = [20, 30]\ntest-samples = 200\n'
                'grid = { zip = [["alpha", "D"], ["r_k", "r_v"]] }\n')
    rectangular, rect_grid = os.path.join(tmp, "rectangular.h5"), os.path.join(tmp, "rectangular_grid.h5")
    run("run", rect_job, "-o", rectangular)
    run("export", rectangular, "--format", "grid", "-o", rect_grid)
    with h5py.File(rectangular, "r") as source:
        descriptions = json.loads(source["points"].attrs["parameter_descriptions"])
    rect_rows = slr_sweep.load(rectangular, as_dict=True)
    check(len(rect_rows["point_id"]) == 16, f"rectangular job: {len(rect_rows['point_id'])} points")
    with h5py.File(rect_grid, "r") as f:
        risk = f["test_risk"]
        names = [risk.dims[i].label for i in range(risk.ndim)]
        check(names == ["activation", "alpha", "r_k", "repeat"], f"rectangular: dimensions {names}")
        check(risk.shape == (2, 2, 2, 2), f"rectangular: shape {risk.shape}")
        check(list(f["D"][:]) == [20.0, 30.0] and f["D"].dims[0][0].name == "/alpha", "rectangular: D along alpha")
        check(list(f["r_v"][:]) == [0.2, 2.0] and f["r_v"].dims[0][0].name == "/r_k", "rectangular: r_v along r_k")
        check(risk.attrs.get("coordinates") == "r_v D", f"rectangular: coordinates {risk.attrs.get('coordinates')!r}")
        for name in ("activation", "alpha", "r_k", "D", "r_v"):
            check(f[name].attrs.get("long_name") == descriptions[name]["long_name"] != "",
                  f"rectangular: long_name of {name}: {f[name].attrs.get('long_name')!r}")
        check(f["repeat"].attrs.get("long_name") == "repeat", "rectangular: long_name of repeat")
        for name, dataset in f.items():
            if dataset.ndim == 4 and dataset.dtype.kind == "f":
                check(not np.isnan(dataset[:]).any(), f"rectangular: NaN cells in {name}")
        check(all((s.decode() if isinstance(s, bytes) else s) == "ok" for s in f["status"][:].ravel()),
              "rectangular: every cell has its point")
        # Each point's value in its cell.
        index = {name: [v.decode() if isinstance(v, bytes) else v for v in f[name][:]]
                 for name in ("activation", "alpha", "r_k", "repeat")}
        grid_values = risk[:]
        for i in range(16):
            cell = (index["activation"].index(rect_rows["activation"][i]), index["alpha"].index(rect_rows["alpha"][i]),
                    index["r_k"].index(rect_rows["r_k"][i]), index["repeat"].index(rect_rows["repeat"][i]))
            check(grid_values[cell] == rect_rows["test_risk"][i], f"rectangular: cell {cell} holds {grid_values[cell]}, "
                  f"point {i} has test_risk {rect_rows['test_risk'][i]}")
            check(f["D"][cell[1]] == rect_rows["D"][i] and f["r_v"][cell[2]] == rect_rows["r_v"][i],
                  f"rectangular: coordinates of point {i}")
    if xarray is not None:
        with xarray.open_dataset(rect_grid, engine="h5netcdf") as ds:
            check(set(ds.dims) == {"activation", "alpha", "r_k", "repeat"}, f"xarray: dims {dict(ds.dims)}")
            check(ds["D"].dims == ("alpha",) and ds["r_v"].dims == ("r_k",), "xarray: D along alpha, r_v along r_k")
            check(set(ds.coords) == {"activation", "alpha", "r_k", "repeat", "D", "r_v"}, f"xarray coords {list(ds.coords)}")
            at_2 = ds.sel(alpha=2.0)
            check(float(at_2["D"]) == 30.0 and at_2["test_risk"].dims == ("activation", "r_k", "repeat"),
                  "xarray: sel(alpha=2) carries D = 30")
            check(ds["alpha"].attrs.get("long_name") == descriptions["alpha"]["long_name"], "xarray: long_name of alpha")
            check(ds["D"].attrs.get("long_name") == descriptions["D"]["long_name"], "xarray: long_name of D")
            first = {k: rect_rows[k][0] for k in ("activation", "alpha", "r_k", "repeat")}
            check(float(ds["test_risk"].sel(**first)) == rect_rows["test_risk"][0], "xarray: value of the first point")

    # --- export --format csv: every column, one row per point
    out_csv = os.path.join(tmp, "points.csv")
    run("export", archive, "--format", "csv", "-o", out_csv)
    with open(out_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == total, f"csv rows {len(rows)}")
    check("order_parameters_q_vv" in rows[0] and "D" in rows[0] and "options" not in rows[0], "csv columns (every parameter its own)")

    # --- query from the CLI
    result = run("query", archive, "--where", "method=fixed-point,status=ok", "--min-over", "r_k,r_v",
                 "--columns", "activation,alpha,test_risk,r_k,r_v", "--format", "csv")
    best = list(csv.DictReader(io.StringIO(result.stdout)))
    check(len(best) == 8, f"query --min-over rows {len(best)}")
    for row in best:
        alpha, r = float(row["alpha"]), float(row["r_k"])
        check(r == (1.0 if alpha < 2 else 0.1) or (row["activation"] == "linear" and alpha == 4.0),
              f"min-over winner {row}")
        check(abs(float(row["test_risk"]) - fixed_point_risk(row["activation"], alpha, r)) < 1e-12, f"risk {row}")
    result = run("query", archive, "--where", "method=erm", "--group-by", "activation,alpha",
                 "--columns", "test_risk", "--format", "jsonl")
    groups = [json.loads(line) for line in result.stdout.splitlines()]
    check(len(groups) == 4 and all(g["count"] == 3 for g in groups), f"group-by {groups}")
    for g in groups:
        check(abs(g["test_risk_mean"] - fixed_point_risk(g["activation"], g["alpha"], 0.1)) < 1e-12, f"mean {g}")
        check(abs(g["test_risk_std"] - 0.01) < 1e-12, f"std {g}")
    # Bad input: exit 2, one line naming the argument.
    for args, name in [(["query", archive, "--where", "colour=red"], "--where"),
                       (["query", archive, "--format", "xml"], "--format"),
                       (["query", archive, "--status", "fine"], "--status"),
                       (["query", os.path.join(tmp, "missing.h5")], "missing.h5"),
                       (["export", archive, "--format", "netcdf", "-o", grid], "--format"),
                       (["plot", archive, "--figure", "fig9", "-o", tmp], "--figure")]:
        result = run(*args, expect=2)
        lines = result.stderr.strip().splitlines()
        check(len(lines) == 1 and name in lines[0], f"{args}: error message {result.stderr!r}")

    # A filter that keeps no row: export refuses (exit 2), says why, and writes nothing.
    empty_csv = os.path.join(tmp, "empty.csv")
    for fmt in ("csv", "grid"):
        result = run("export", archive, "--format", fmt, "-o", empty_csv, "--where", "alpha>1e9", expect=2)
        check("matches no row" in result.stderr and "no point to export" in result.stderr,
              f"empty {fmt} export: {result.stderr!r}")
        check(not os.path.exists(empty_csv), f"empty {fmt} export wrote {empty_csv}")

    # --- plot: every figure, PNG and SVG
    figures = os.path.join(tmp, "figures")
    job = slr_sweep.attributes(archive)["job_name"]
    for figure in ["population", "finite-alpha", "order-parameters", "mismatched"]:
        stem = f"{job}-{figure}"  # output names follow the job
        run("plot", archive, "--figure", figure, "-o", figures)
        png, svg = os.path.join(figures, stem + ".png"), os.path.join(figures, stem + ".svg")
        check(os.path.exists(png) and os.path.getsize(png) > 1000, f"{png} missing or empty")
        check(os.path.exists(svg) and os.path.getsize(svg) > 1000, f"{svg} missing or empty")
        if os.path.exists(png):
            with open(png, "rb") as f:
                check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")
        if os.path.exists(svg):
            with open(svg) as f:
                check("<svg" in f.read(), f"{svg} is not an SVG")
    # --name and --style: a two-column-paper figure under a chosen name.
    run("plot", archive, "--figure", "population", "-o", figures, "--name", "fig2", "--style", "paper",
        "--formats", "png")
    check(os.path.exists(os.path.join(figures, "fig2.png")), "plot --name")
    # From Python: a matplotlib Figure to adjust, not files.
    import matplotlib

    matplotlib.use("Agg")
    fig = slr_sweep.figure(archive, "finite-alpha", style="paper")
    check(isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) >= 1, f"slr_sweep.figure returned {fig!r}")
    check(all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes if ax.get_visible() and ax.has_data()),
          "every panel has axis labels")
    # A filter that leaves no data for the figure is bad input.
    run("plot", archive, "--figure", "mismatched", "-o", figures, "--where", "method=erm", expect=2)

    # --- several archives drawn together (Fig 3: theory archive + ERM archive). The second
    # archive is the synthetic one with every nu set to 7 (a value the first does not have).
    second = os.path.join(tmp, "second.h5")
    subprocess.run([make_archive, second], check=True)
    with h5py.File(second, "r+") as f:
        rows = f["points"][:]
        rows["nu"] = 7.0
        f["points"][...] = rows
    both = slr_sweep.load_columns([archive, second])
    check(len(both["point_id"]) == 2 * total, f"load_columns of two archives: {len(both['point_id'])} rows")
    check(int(np.sum(both["nu"] == 7.0)) == total, "load_columns of two archives: rows of the second")
    check(len(slr_sweep.load([archive, second], as_dict=True)["point_id"]) == 2 * total, "load of two archives")
    # The filter applies to every archive: nu=7 selects rows of the second archive only.
    run("plot", archive, "--figure", "population", "-o", figures, "--where", "nu=7", expect=2)
    joint = os.path.join(tmp, "joint")
    run("plot", archive, second, "--figure", "population", "-o", joint, "--where", "nu=7")
    check(os.path.exists(os.path.join(joint, f"{job}-population.png")), "plot of two archives with a filter")
    run("plot", archive, second, "--figure", "finite-alpha", "-o", joint)
    check(os.path.exists(os.path.join(joint, f"{job}-finite-alpha.svg")), "plot of two archives")
    result = run("plot", archive, os.path.join(tmp, "absent.h5"), "--figure", "population", "-o", joint, expect=2)
    check("absent.h5" in result.stderr and len(result.stderr.strip().splitlines()) == 1,
          f"plot with a missing second archive: {result.stderr!r}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
