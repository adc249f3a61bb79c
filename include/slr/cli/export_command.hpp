#pragma once
// `slr-sweep export results.h5 --format {csv,grid} -o OUT [--where …] [--status …] [--axes …]
//  [--columns …]`: the points as CSV (all columns), or as an HDF5 grid with one N-dimensional
// dataset per observable over the axes that vary and the axes as dimension scales
// (slr/archive/grid_export.hpp).
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `export` subcommand (see add_query_command for the contract of the result).
[[nodiscard]] std::function<int()> add_export_command(CLI::App& app);

} // namespace slr::cli
