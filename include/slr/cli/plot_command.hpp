#pragma once
// `slr-sweep plot results.h5 --figure <name>|all -o OUTDIR [--where …] [--status …]`: the papers'
// figures as PNG and SVG (names: slr_sweep.figures.FIGURES, the one list), drawn by the Python
// helper src/python/slr_sweep (matplotlib), run as `python3 -m slr_sweep.plot`.
// Interpreter: $SLR_PYTHON, else the one found at configure time (SLR_PYTHON_EXECUTABLE).
// Package directory: $SLR_SWEEP_PYTHONPATH, else <prefix>/share/slr-sweep/python next to an
// installed binary, else the source tree's src/python (baked in at configure time).
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `plot` subcommand (see add_query_command for the contract of the result).
[[nodiscard]] std::function<int()> add_plot_command(CLI::App& app);

} // namespace slr::cli
