#include "slr/query/filter.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "slr/grid/result_record.hpp"

namespace slr::query {
namespace {

std::string trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const auto end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

// Finds the operator of one condition: the first of = ! < > after a non-empty column name.
bool split_condition(std::string_view text, std::string& column, comparison& op, std::string& value) {
  const auto pos = text.find_first_of("=!<>");
  if (pos == std::string_view::npos || pos == 0) return false;
  column = trim(text.substr(0, pos));
  if (column.empty()) return false;
  const auto rest = text.substr(pos);
  std::size_t length = 1;
  if (rest.starts_with("<=")) op = comparison::less_equal, length = 2;
  else if (rest.starts_with(">=")) op = comparison::greater_equal, length = 2;
  else if (rest.starts_with("!=")) op = comparison::not_equal, length = 2;
  else if (rest.starts_with("==")) op = comparison::equal, length = 2;
  else if (rest.starts_with("=")) op = comparison::equal;
  else if (rest.starts_with("<")) op = comparison::less;
  else if (rest.starts_with(">")) op = comparison::greater;
  else return false; // a lone '!'
  value = trim(rest.substr(length));
  return true;
}

bool looks_like_condition(std::string_view text) {
  std::string column, value;
  comparison op{};
  if (!split_condition(text, column, op, value)) return false;
  // A column name is an identifier; "3:0.75" (continuation of an L_pmf value) is not.
  return std::all_of(column.begin(), column.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }) &&
         !std::isdigit(static_cast<unsigned char>(column.front()));
}

bool numbers_equal(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true; // also ±inf
  if (std::isinf(a) || std::isinf(b)) return false;
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

template <class T>
bool compare_ordered(const T& a, comparison op, const T& b) {
  switch (op) {
  case comparison::less: return a < b;
  case comparison::less_equal: return a <= b;
  case comparison::greater: return a > b;
  case comparison::greater_equal: return a >= b;
  default: return false;
  }
}

} // namespace

bool parse_number(std::string_view text, double& value) {
  if (text == "inf" || text == "+inf" || text == "infinity") return value = std::numeric_limits<double>::infinity(), true;
  if (text == "-inf" || text == "-infinity") return value = -std::numeric_limits<double>::infinity(), true;
  if (text == "nan") return value = std::numeric_limits<double>::quiet_NaN(), true;
  if (text.starts_with('+')) text.remove_prefix(1);
  if (text.empty()) return false;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size() && std::isfinite(value);
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto item = trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

std::vector<condition> parse_where(std::string_view expression) {
  // Split on commas, re-joining pieces that do not start a new condition (values with commas).
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (true) {
    const auto comma = expression.find(',', start);
    const auto piece = expression.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (pieces.empty() || looks_like_condition(piece)) pieces.emplace_back(piece);
    else pieces.back().append(",").append(piece);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::vector<condition> conditions;
  for (const auto& piece : pieces) {
    const auto text = trim(piece);
    if (text.empty()) {
      if (pieces.size() == 1) break; // an empty expression: no conditions
      throw std::invalid_argument("--where: empty condition in '" + std::string(expression) + "'");
    }
    condition c;
    c.text = text;
    std::string value;
    if (!split_condition(text, c.column, c.op, value))
      throw std::invalid_argument("--where: '" + text + "' is not a condition (expected column OP value, OP one of = != < <= > >=)");
    if (value.empty()) throw std::invalid_argument("--where: '" + text + "' has no value");
    if (c.op == comparison::equal || c.op == comparison::not_equal) {
      std::size_t s = 0;
      while (true) {
        const auto bar = value.find('|', s);
        const auto alternative = trim(std::string_view(value).substr(s, bar == std::string::npos ? std::string::npos : bar - s));
        if (alternative.empty()) throw std::invalid_argument("--where: '" + text + "' has an empty alternative");
        c.values.push_back(alternative);
        if (bar == std::string::npos) break;
        s = bar + 1;
      }
    } else {
      c.values.push_back(value);
    }
    conditions.push_back(std::move(c));
  }
  return conditions;
}

std::vector<std::size_t> matching_rows(const table& points, const std::vector<condition>& conditions) {
  std::vector<bool> keep(points.rows(), true);
  for (const auto& c : conditions) {
    const auto& col = points.at(c.column, "--where");
    const bool equality = c.op == comparison::equal || c.op == comparison::not_equal;
    if (col.kind == column_kind::number) {
      std::vector<double> targets;
      for (const auto& v : c.values) {
        double x = 0;
        if (!parse_number(v, x))
          throw std::invalid_argument("--where: '" + c.text + "': column " + c.column + " is numeric and '" + v +
                                      "' is not a number");
        if (!equality && std::isnan(x))
          throw std::invalid_argument("--where: '" + c.text + "': nan can only be compared with = or !=");
        targets.push_back(x);
      }
      for (std::size_t r = 0; r < keep.size(); ++r) {
        if (!keep[r]) continue;
        const double x = col.numbers[r];
        if (equality) {
          const bool any = std::any_of(targets.begin(), targets.end(), [&](double t) { return numbers_equal(x, t); });
          keep[r] = c.op == comparison::equal ? any : !any;
        } else {
          // Ordering with a tolerance: a value "equal" to the bound counts as equal.
          const double t = targets.front();
          const bool eq = numbers_equal(x, t);
          keep[r] = !std::isnan(x) && (eq ? (c.op == comparison::less_equal || c.op == comparison::greater_equal)
                                           : compare_ordered(x, c.op, t));
        }
      }
    } else if (col.kind == column_kind::integer) {
      std::vector<std::uint64_t> targets;
      for (const auto& v : c.values) {
        std::uint64_t x = 0;
        const auto result = std::from_chars(v.data(), v.data() + v.size(), x);
        if (result.ec != std::errc() || result.ptr != v.data() + v.size())
          throw std::invalid_argument("--where: '" + c.text + "': column " + c.column + " holds integers and '" + v +
                                      "' is not a non-negative integer");
        targets.push_back(x);
      }
      for (std::size_t r = 0; r < keep.size(); ++r) {
        if (!keep[r]) continue;
        const auto x = col.integers[r];
        if (equality) {
          const bool any = std::find(targets.begin(), targets.end(), x) != targets.end();
          keep[r] = c.op == comparison::equal ? any : !any;
        } else {
          keep[r] = compare_ordered(x, c.op, targets.front());
        }
      }
    } else {
      for (std::size_t r = 0; r < keep.size(); ++r) {
        if (!keep[r]) continue;
        const auto& x = col.texts[r];
        if (equality) {
          const bool any = std::find(c.values.begin(), c.values.end(), x) != c.values.end();
          keep[r] = c.op == comparison::equal ? any : !any;
        } else {
          keep[r] = compare_ordered(x, c.op, c.values.front());
        }
      }
    }
  }
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < keep.size(); ++r)
    if (keep[r]) rows.push_back(r);
  return rows;
}

table filter(const table& points, std::string_view where) {
  const auto conditions = parse_where(where);
  if (conditions.empty()) return points;
  return points.take(matching_rows(points, conditions));
}

table filter_status(const table& points, const std::vector<std::string>& statuses) {
  if (statuses.empty()) return points;
  for (const auto& s : statuses) {
    try {
      (void)grid::parse_status(s);
    } catch (const std::invalid_argument&) {
      std::string known; // the status names, from grid::status_name
      for (int i = 0; i <= static_cast<int>(grid::status::unphysical); ++i)
        known += (known.empty() ? "" : ", ") + std::string(grid::status_name(static_cast<grid::status>(i)));
      throw std::invalid_argument("--status: unknown status '" + s + "' (expected " + known + ")");
    }
  }
  const auto& status = points.at("status", "--status");
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < points.rows(); ++r)
    if (std::find(statuses.begin(), statuses.end(), status.texts[r]) != statuses.end()) rows.push_back(r);
  return points.take(rows);
}

namespace {
// The distinct cell texts of the first `rows` cells of a column, in order of first appearance: at
// most `limit`, then how many more.
std::string distinct_values(const column& col, std::size_t rows, std::size_t limit = 12) {
  std::vector<std::string> seen;
  for (std::size_t r = 0; r < rows; ++r) {
    auto text = col.cell_text(r);
    if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(std::move(text));
  }
  std::string out;
  for (std::size_t i = 0; i < std::min(limit, seen.size()); ++i) out += (out.empty() ? "" : ", ") + seen[i];
  if (seen.size() > limit) out += " and " + std::to_string(seen.size() - limit) + " more";
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "|") + item;
  return out;
}
} // namespace

std::string explain_no_match(const table& points, std::string_view where, const std::vector<std::string>& statuses) {
  if (points.rows() == 0) return "";
  const auto conditions = parse_where(where);
  const auto kept = conditions.empty() ? points : points.take(matching_rows(points, conditions));
  if (filter_status(kept, statuses).rows() > 0) return "";
  for (const auto& c : conditions)
    if (matching_rows(points, {c}).empty()) {
      const auto& col = points.at(c.column, "--where");
      return "--where: '" + c.text + "' matches no row (" + c.column + " holds " + distinct_values(col, points.rows()) +
             ")";
    }
  if (!statuses.empty() && filter_status(points, statuses).rows() == 0)
    return "--status: no row has status " + joined(statuses) + " (statuses present: " +
           distinct_values(points.at("status", "--status"), points.rows()) + ")";
  if (!statuses.empty() && kept.rows() > 0)
    return "--where and --status each match rows, but none together (statuses of the rows --where keeps: " +
           distinct_values(kept.at("status", "--status"), kept.rows()) + ")";
  return "--where: each condition matches rows, but no row meets all of '" + std::string(where) + "'";
}

} // namespace slr::query
