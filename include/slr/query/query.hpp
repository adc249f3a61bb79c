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

/// What min-over minimises in a row: the column `objective` if given (after --group-by its `_mean`),
/// else `test_risk` if finite, else `risk` (after --group-by: test_risk_mean, else risk_mean).
struct min_over_result {
  table rows;                        ///< one row per combination of the remaining keys (sorted by them)
  std::vector<std::string> keys;     ///< the remaining keys
  std::size_t groups_without_risk = 0; ///< combinations where no row had a finite objective (left out)
};
/// `over`: the keys minimised over (e.g. r_k, r_v). `keys`: all key columns of `points`; the
/// combinations are those of keys \ over. The winner keeps its `over` columns ("which r won").
/// `objective`: the numeric column to minimise (empty = the risk, as above). Throws
/// std::invalid_argument for an `over` that is not a key, or an objective the table lacks.
[[nodiscard]] min_over_result min_over(const table& points, const std::vector<std::string>& over,
                                       const std::vector<std::string>& keys, const std::string& objective = {});

struct query_options {
  std::string where;                   ///< --where expression (filter.hpp)
  std::vector<std::string> statuses;   ///< --status
  std::vector<std::string> columns;    ///< --columns: empty = compact default, {"all"} = every column
  std::vector<std::string> min_over;   ///< --min-over
  std::string minimise;                ///< --minimise: the column --min-over minimises (empty = the risk)
  std::vector<std::string> group_by;   ///< --group-by keys
  std::vector<std::string> statistics; ///< --stats (with --group-by)
  /// Default columns for a machine format (csv, jsonl): every parameter column, constant or not,
  /// and every result column with a value, so that filtered output still says what it is.
  bool every_parameter = false;
  /// Default columns of the table: every result column with a value (--wide); otherwise only
  /// the headline results (risk, test_risk and their errors, train_loss, bayes_risk, alpha_jump).
  bool wide = false;
};

struct query_result {
  table rows;
  std::size_t groups_without_risk = 0; ///< from min-over
};

/// The whole pipeline. Default columns: method, the parameter columns that vary (all of them with
/// every_parameter), status, and the result columns with at least one value (the headline ones
/// only, unless wide or every_parameter); the columns named in --min-over are added to the
/// default ones. With --group-by, every output column; with --columns, exactly those.
[[nodiscard]] query_result run_query(const table& points, const query_options& options);

} // namespace slr::query
