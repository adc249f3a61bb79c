#pragma once
// From a finished sweep point to the archive's row: the point's typed parameters (as declared by
// its model and method), identity and seed beside its result record.
#include <string>

#include "slr/archive/rows.hpp"
#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"
#include "slr/job/expansion.hpp"

namespace slr::sweep {

/// The archive row of a finished sweep point (values = all grid::result_columns, then the
/// method's own values); completed_unix is now, run_index is left to the writer.
[[nodiscard]] archive::point_row make_point_row(const job::sweep_point& point, const grid::result_record& record);

/// Gives the archive the meaning and unit of every declared parameter (model and methods), which
/// every snapshot this process writes then records (archive::set_parameter_descriptions).
void describe_declared_parameters();

} // namespace slr::sweep
