#pragma once
// What the scheduler hands to one worker: usually one point; for `continuation = "alpha"` a
// chain of points solved in order, each warm-started from the previous result.
#include <optional>
#include <vector>

#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::grid {

struct work_unit {
  std::vector<point> points; ///< ≥ 1; solved in this order on one worker
  /// The record the first point is warm-started from: a stored point of its chain when a chain
  /// is resumed or extended (the scheduler fills it in); none: the first point starts cold.
  std::optional<result_record> warm_start{};
};

} // namespace slr::grid
