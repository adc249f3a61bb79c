#pragma once
// The operations of `slr-sweep query` on a points table, applied in this order:
//   filter (--where, --status) → group-by (statistics over the rows of each group, e.g. over
//   seeds/repeats) → min-over (per combination of the remaining keys, the row with the smallest
//   test risk) → column selection.
// Every function throws std::invalid_argument "--<argument>: reason" for bad input.
#include <cstddef>
#include <string>
#include <vector>

#include "slr/query/table.hpp"

namespace slr::query {

/// Statistics of --group-by, computed per column over the group's non-NaN values:
/// mean, std (sample standard deviation, n−1; NaN for fewer than 2 values), min, max, count
/// (non-NaN values). Output columns are "<column>_<statistic>", after the keys and "count"
/// (rows in the group).
[[nodiscard]] const std::vector<std::string>& statistic_names();

struct group_by_options {
  std::vector<std::string> keys;       ///< grouping columns; "parameters" = every parameter column except repeat
  std::vector<std::string> values;     ///< numeric columns to aggregate; empty = result columns with a value
  std::vector<std::string> statistics; ///< subset of statistic_names(); empty = mean, std, min, max
};
/// One row per distinct key combination, sorted by the keys.
[[nodiscard]] table group_by(const table& points, const group_by_options& options);

/// The risk min-over minimises in a row: `test_risk` if finite, else `risk` (after --group-by:
/// test_risk_mean, else risk_mean). Names the columns it looked for.
struct min_over_result {
  table rows;                        ///< one row per combination of the remaining keys (sorted by them)
  std::vector<std::string> keys;     ///< the remaining keys
  std::size_t groups_without_risk = 0; ///< combinations where no row had a finite risk (left out)
};
/// `over`: the keys minimised over (e.g. r_k, r_v). `keys`: all key columns of `points`; the
/// combinations are those of keys \ over. The winner keeps its `over` columns ("which r won").
[[nodiscard]] min_over_result min_over(const table& points, const std::vector<std::string>& over,
                                       const std::vector<std::string>& keys);

struct query_options {
  std::string where;                   ///< --where expression (filter.hpp)
  std::vector<std::string> statuses;   ///< --status
  std::vector<std::string> columns;    ///< --columns: empty = compact default, {"all"} = every column
  std::vector<std::string> min_over;   ///< --min-over
  std::vector<std::string> group_by;   ///< --group-by keys
  std::vector<std::string> statistics; ///< --stats (with --group-by)
};

struct query_result {
  table rows;
  std::size_t groups_without_risk = 0; ///< from min-over
};

/// The whole pipeline. Compact default columns: method, the parameter columns that vary, status,
/// and the result columns with at least one value; with --group-by, every output column.
/// Columns named in --min-over are always kept.
[[nodiscard]] query_result run_query(const table& points, const query_options& options);

} // namespace slr::query
