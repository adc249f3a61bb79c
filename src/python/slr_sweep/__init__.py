"""Python access to slr-sweep archives: ``load`` the points table and draw the paper's figures.

Importable from the source tree (``PYTHONPATH=src/python``); needs numpy and h5py (Debian
python3-numpy, python3-h5py), matplotlib for the figures (python3-matplotlib) and uses pandas
when it is installed (python3-pandas; optional).

    import slr_sweep
    points = slr_sweep.load("results.h5")          # pandas.DataFrame (or a dict of numpy columns)
    slr_sweep.plot_figure("results.h5", "population", "figs/")
"""
from .archive import load, load_columns, parse_options, runs, attributes  # noqa: F401


def plot_figure(path, figure, outdir, formats=("png", "svg"), point_ids=None):
    """Draws one figure ("population", "finite-alpha", "order-parameters", "mismatched") of an
    archive into outdir; returns the written file paths. Needs matplotlib."""
    from . import figures

    return figures.draw(load_columns(path, point_ids=point_ids), figure, outdir, formats)


__all__ = ["load", "load_columns", "parse_options", "runs", "attributes", "plot_figure"]
