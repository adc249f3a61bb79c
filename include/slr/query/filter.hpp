#pragma once
// Row filters of `slr-sweep query/export/plot`:
//   --where "activation=softmax,nu=1,alpha>=2"   conditions joined by commas (all must hold)
//   operators  =  !=  <  <=  >  >=   ("==" is accepted for "=")
//   values     numbers (1, 0.5, 1e-3, inf, -inf, nan), or text; "=" and "!=" accept alternatives
//              separated by '|' (activation=softmax|linear). A comma inside a value is kept when
//              the text after it is not a condition (L_pmf=1:0.25,3:0.75).
// Numbers compare with a relative tolerance of 1e-9 for = and != (grid values written as 0.1 and
// produced by logspace may differ in the last bits); nan matches only with = / != nan; a NaN cell
// fails every ordering comparison. Text compares exactly (= !=) or lexicographically (< …).
// --status ok,unbounded keeps rows whose status is one of the names (grid::status_name).
#include <string>
#include <string_view>
#include <vector>

#include "slr/query/table.hpp"

namespace slr::query {

enum class comparison { equal, not_equal, less, less_equal, greater, greater_equal };

struct condition {
  std::string column;
  comparison op = comparison::equal;
  std::vector<std::string> values; ///< ≥ 1; > 1 only for = and != (alternatives)
  std::string text;                ///< the condition as written, for messages
};

/// Parses a --where expression. Throws std::invalid_argument "--where: …" naming the condition.
[[nodiscard]] std::vector<condition> parse_where(std::string_view expression);

/// Rows of `points` satisfying every condition. Throws std::invalid_argument "--where: …" for an
/// unknown column or a value that is not a number for a numeric column.
[[nodiscard]] std::vector<std::size_t> matching_rows(const table& points, const std::vector<condition>& conditions);

/// parse_where + matching_rows + take.
[[nodiscard]] table filter(const table& points, std::string_view where);

/// Keeps rows whose status is in `statuses` (empty: all). Throws std::invalid_argument
/// "--status: unknown status 'x' (expected …)".
[[nodiscard]] table filter_status(const table& points, const std::vector<std::string>& statuses);

/// Why `where` and `statuses` keep no row of `points` (which has rows): the first condition that
/// matches no row on its own, with the values its column holds (at most 12, then a count); a
/// --status list that matches no row, with the statuses present; or that the conditions match
/// separately but not together. Empty when the filters do keep rows. Throws as filter() does.
[[nodiscard]] std::string explain_no_match(const table& points, std::string_view where,
                                           const std::vector<std::string>& statuses);

/// Splits "a,b,c" into its non-empty, whitespace-trimmed items.
[[nodiscard]] std::vector<std::string> split_list(std::string_view text);

/// Parses a number as written in a query ("inf", "-inf", "nan" allowed); false if it is not one.
[[nodiscard]] bool parse_number(std::string_view text, double& value);

} // namespace slr::query
