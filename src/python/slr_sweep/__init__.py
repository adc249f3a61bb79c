"""Python access to slr-sweep archives: ``load`` the points table and draw the paper's figures.

Importable from the source tree (``PYTHONPATH=src/python``); needs numpy and h5py (Debian
python3-numpy, python3-h5py), matplotlib for the figures (python3-matplotlib) and uses pandas
when it is installed (python3-pandas; optional).

    import slr_sweep
    points = slr_sweep.load("results.h5")          # pandas.DataFrame (or a dict of numpy columns)
    slr_sweep.plot_figure("results.h5", "population", "figs/")
    slr_sweep.plot_figure(["fig3_theory.h5", "fig3_erm.h5"], "finite-alpha", "figs/")
    ds = slr_sweep.to_xarray("results.h5", where={"method": "erm"})   # needs xarray
    eig = slr_sweep.arrays("tied.h5", point_id)["eigenvalues"]         # arrays of a row's extra_json
"""
# Imports are deferred to the calls so that `python3 -m slr_sweep.plot` can report a missing
# numpy/h5py/matplotlib with a clear message instead of a traceback.


def load(path, point_ids=None, as_dict=False):
    """The points of an archive: a pandas.DataFrame if pandas is importable (and not as_dict),
    else a dict of numpy columns (see archive.load)."""
    from .archive import load as _load

    return _load(path, point_ids=point_ids, as_dict=as_dict)


def __getattr__(name):
    # The warning class is importable without importing numpy/h5py at package import time.
    if name in ("SnapshotBehindWarning", "DamagedRowWarning"):
        from . import archive

        return getattr(archive, name)
    raise AttributeError(name)


def snapshot_lag(path):
    """How far an archive's .h5 snapshot is behind its journal (a running or killed sweep):
    {"snapshot_unix", "journal_bytes_in_snapshot", "journal_bytes", "bytes_behind"}. load and
    load_columns warn (SnapshotBehindWarning) when bytes_behind > 0; `slr-sweep query` and `status`
    read the journal's newer points."""
    from .archive import snapshot_lag as _snapshot_lag

    return _snapshot_lag(path)


def load_columns(path, point_ids=None):
    """The /points table as a dict {column: numpy array}; path may be a list of archives
    (rows concatenated)."""
    from .archive import load_columns as _load_columns

    return _load_columns(path, point_ids)


def parameter_columns(path):
    """The names of an archive's parameter columns (schema 2: the /points attribute
    parameter_columns; schema 1: task, nu, L, L_pmf, delta, activation, erf_offset, alpha, r_k, r_v
    and the method options of the options text); path may be a list of archives."""
    from .archive import parameter_columns as _parameter_columns

    return _parameter_columns(path)


def to_xarray(archive, variables=None, where=None):
    """The points of an archive (or a list of archives) as an xarray.Dataset with one dimension per
    varying parameter (zipped parameters share one), result columns and status as data variables
    (see xarray.to_xarray). Needs xarray."""
    from .xarray import to_xarray as _to_xarray

    return _to_xarray(archive, variables=variables, where=where)


def runs(path):
    """The /runs table as a dict of numpy columns."""
    from .archive import runs as _runs

    return _runs(path)


def attributes(path):
    """Root attributes (provenance, job text, fingerprint) as a dict."""
    from .archive import attributes as _attributes

    return _attributes(path)


def provenance(path):
    """Tool version, git revision, compiler, libraries, the job and every run of an archive."""
    from .archive import provenance as _provenance

    return _provenance(path)


def trajectory(path, point_id):
    """The gradient-flow trajectory of one ERM point (option trajectory = 1) as numpy arrays:
    t, train_loss, train_loss_regularised, rel_grad and the order parameters."""
    from .archive import trajectory as _trajectory

    return _trajectory(path, point_id)


def arrays(path, point_id):
    """The arrays of one point's extra_json as a dict of numpy arrays: every list-valued key (e.g.
    tied-attention fixed-point: eig_quantiles, eig_grid, eig_density, eig_support; erm: eigenvalues),
    nested objects flattened with dots ("eigenvalue_histogram.edges", "eigenvalue_histogram.counts").
    Raises KeyError if there is no such point."""
    from .archive import arrays as _arrays

    return _arrays(path, point_id)


def spectrum(path, point_id, singular_values=False, root=False):
    """The eigenvalue spectrum of the estimator at one tied-attention point: the theory's quantiles,
    density grid and atom at 0 (fixed-point) or the eigenvalues of the trained matrix (erm), as a dict
    with kind "theory" or "erm" (see archive.spectrum); singular_values=True: the law of |λ|;
    root=True: the law of √|λ| (the paper's singular values σ(W)/(r d)^{1/4} of the factorised student)."""
    from .archive import spectrum as _spectrum

    return _spectrum(path, point_id, singular_values=singular_values, root=root)


def figure_names():
    """The names figure, plot_figure and `slr-sweep plot --figure` accept (besides "all")."""
    from .figures import FIGURES

    return list(FIGURES)


def parse_options(text):
    """'at=m_kk=1,q_kk=1;samples=20000' -> {'at': 'm_kk=1,q_kk=1', 'samples': '20000'}."""
    from .archive import parse_options as _parse_options

    return _parse_options(text)


def figure(path, name, style="screen", point_ids=None, xscale="auto", series=None):
    """One figure (a name of figure_names(), e.g. "population", "finite-alpha", "trajectory",
    "tied-spectra") of an archive, or of a list of archives drawn together (Fig 3: theory and ERM
    archives), as a matplotlib Figure to adjust, show or save. style: a name of figures.STYLES
    ("screen"; "paper" one column of a two-column article, 3.4 in wide; "paper-wide" 7 in); xscale:
    auto, log or linear (alpha axes); series: a parameter whose values split each activation's curves.
    Raises figures.NoData when the archive has no rows the figure can use."""
    from . import figures

    return figures.make(load_columns(path, point_ids=point_ids), name, style, xscale, series)


def plot_figure(path, figure, outdir, formats=("png", "svg"), point_ids=None, name=None, style="screen",
                xscale="auto", series=None):
    """Draws one figure into outdir as <name>.<format> (default: the paper's figure stem, e.g.
    fig3_finite_alpha); returns the written file paths. Options as for figure(). Needs matplotlib."""
    from . import figures

    return figures.draw(load_columns(path, point_ids=point_ids), figure, outdir, formats, name=name, style=style,
                        xscale=xscale, series=series)


__all__ = ["load", "load_columns", "snapshot_lag", "SnapshotBehindWarning", "DamagedRowWarning", "parameter_columns", "to_xarray",
           "parse_options", "runs", "attributes", "provenance", "trajectory", "arrays", "spectrum", "figure_names", "figure", "plot_figure"]
