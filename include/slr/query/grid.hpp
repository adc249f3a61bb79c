#pragma once
// From a points table to a rectilinear grid (the data of `export --format grid`): the axes are
// the parameter columns that vary (or those named), each with its sorted distinct values (NaN
// last); every result column with a value becomes an N-D variable, NaN where a grid point has no
// row; `status` becomes a text variable ("" where missing). Parameters that do not vary are kept
// as root attributes "<name>" = value.
#include <cstddef>
#include <string>
#include <vector>

#include "slr/archive/grid_export.hpp"
#include "slr/query/table.hpp"

namespace slr::query {

struct grid_options {
  std::vector<std::string> axes;      ///< empty: every parameter column that varies (L_pmf instead of L if a pmf occurs)
  std::vector<std::string> variables; ///< empty: every result column with at least one value
};

struct grid_build {
  archive::grid_dataset data;
  std::size_t duplicate_rows = 0; ///< rows that fell on an occupied cell (the latest completed one is kept)
};

/// Throws std::invalid_argument "--axes: …" if an axis is unknown or if a parameter column that
/// is not an axis varies (its rows would collide), "--columns: …" for an unknown or text variable,
/// "--axes: …" if the grid would exceed 5e7 cells, and "export: …" for an empty table.
[[nodiscard]] grid_build make_grid(const table& points, const grid_options& options);

} // namespace slr::query
