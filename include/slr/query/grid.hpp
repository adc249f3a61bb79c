#pragma once
// From a points table to a rectilinear grid (the data of `export --format grid`).
//
// Dimensions and coordinates. Without --axes they follow from functional dependence among the
// parameter columns that vary, taken in parameter order (method first, repeat last); a missing
// cell (NaN / "") means "not applicable". A column c is *determined by* a column d if for every
// value of d (missing counting as a value of its own) the non-missing values of c over those rows
// are at most one. Greedily, each varying column c
//   * becomes a coordinate of the first dimension d that determines it (a 1-D variable along d:
//     for each value of d its one value of c, NaN / "" where c does not apply), or else
//   * becomes a new dimension, and every dimension that c determines is demoted to a coordinate
//     of c, with its own coordinates (those c does not determine are placed anew).
// So zipped lists share a dimension (alpha with coordinate D, r_k with coordinate r_v), options of
// one method are coordinates of `method`, erf_offset is one of `activation`, L_pmf one of L (or,
// when a pmf occurs, L one of L_pmf). `repeat` is a dimension whenever it varies. With --axes the
// named columns are the dimensions (in that order); another varying parameter must be determined
// by one of them (it becomes its coordinate) or it is an error.
//
// Each dimension holds its sorted distinct values (numbers ascending, NaN last; text
// lexicographic); every result column with a value becomes an N-D variable, NaN where a grid point
// has no row; `status` becomes a text variable ("" where missing). Dimensions and coordinates get
// long_name / units from the archive's parameter descriptions. Parameters that do not vary are
// kept as root attributes "<name>" = value (those missing on every row are left out).
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "slr/archive/grid_export.hpp"
#include "slr/archive/rows.hpp"
#include "slr/query/table.hpp"

namespace slr::query {

struct grid_options {
  std::vector<std::string> axes;      ///< empty: dimensions from functional dependence (above)
  std::vector<std::string> variables; ///< empty: every result column with at least one value
  /// long_name / units of the parameters (the archive's parameter_descriptions); a parameter
  /// without one is described by its name.
  std::map<std::string, archive::parameter_description> descriptions;
};

struct grid_build {
  archive::grid_dataset data;
  std::size_t duplicate_rows = 0; ///< rows that fell on an occupied cell (the latest completed one is kept)
};

/// Throws std::invalid_argument "--axes: …" if an axis is unknown or if a parameter column that
/// is neither an axis nor determined by one varies (its rows would collide), "--columns: …" for an
/// unknown or text variable, "--axes: …" if the grid would exceed 5e7 cells, and "export: …" for
/// an empty table.
[[nodiscard]] grid_build make_grid(const table& points, const grid_options& options);

/// The archive attribute parameter_descriptions (JSON {name: {"long_name": …, "units": …}}) as a
/// map; "" , "{}", text that is not a JSON object and entries that are not objects give nothing.
[[nodiscard]] std::map<std::string, archive::parameter_description> parse_parameter_descriptions(std::string_view json);

} // namespace slr::query
