#include "slr/archive/rows.hpp"

#include <chrono>
#include <cmath>

namespace slr::archive {

std::string archive_column_name(std::string_view result_column) {
  std::string name(result_column);
  for (auto& c : name)
    if (c == '.') c = '_';
  return name;
}

std::string options_text(const grid::point& point) {
  std::string text;
  for (const auto& [key, value] : point.options) {
    if (!text.empty()) text += ';';
    text += key + "=" + value;
  }
  return text;
}

point_row make_point_row(const grid::point& p, std::uint32_t repeat, std::uint64_t point_id,
                         const grid::result_record& record) {
  point_row row;
  row.point_id = point_id;
  row.repeat = repeat;
  row.seed = p.seed;
  row.method = p.method;
  row.task = p.problem.task.name();
  row.nu = p.problem.task.nu();
  row.L = p.problem.lengths.is_fixed() ? static_cast<std::int64_t>(p.problem.lengths.support().front().length) : -1;
  row.L_pmf = p.problem.lengths.to_string();
  row.delta = p.problem.delta;
  row.activation = p.problem.activation.kind_name();
  row.erf_offset = p.problem.activation.kind == model::activation_kind::erf ? p.problem.activation.erf_offset
                                                                             : std::nan("");
  row.alpha = p.alpha;
  row.r_k = p.r_k;
  row.r_v = p.r_v;
  row.options = options_text(p);
  row.status = std::string(grid::status_name(record.status));
  row.message = record.message;
  row.extra_json = record.extra_json;
  row.completed_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  row.value_names.reserve(grid::result_columns.size() + record.method_values.size());
  for (const auto& column : grid::result_columns) row.value_names.push_back(archive_column_name(column));
  row.values.assign(record.values.begin(), record.values.end());
  for (const auto& [name, value] : record.method_values) {
    row.value_names.push_back(name);
    row.values.push_back(value);
  }
  return row;
}

} // namespace slr::archive
