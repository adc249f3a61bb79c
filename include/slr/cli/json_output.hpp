#pragma once
// JSON rendering of a point and its result (the `point` command's output contract).
#include <string>

#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::cli {

/// One JSON object: the point's parameters (method, task, nu ("inf" for ∞), L or L_pmf, delta,
/// activation, erf_offset for erf, alpha/r_k/r_v for finite-α methods, every method option,
/// seed), then every result column the method set (dotted names nested; the seven
/// order_parameters always, null where not set), status and, if any, message.
[[nodiscard]] std::string to_json(const grid::point& point, const grid::result_record& record);

} // namespace slr::cli
