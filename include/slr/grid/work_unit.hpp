#pragma once
// What the scheduler hands to one worker: usually one point; for `continuation = "alpha"` a
// chain of points solved in order, each warm-started from the previous result.
#include <vector>

#include "slr/grid/point.hpp"

namespace slr::grid {

struct work_unit {
  std::vector<point> points; ///< ≥ 1; solved in this order on one worker
};

} // namespace slr::grid
