#include "slr/sweep/point_row.hpp"

#include <chrono>
#include <cmath>

namespace slr::sweep {

std::string options_text(const grid::point& point) {
  std::string text;
  for (const auto& [key, value] : point.options) {
    if (!text.empty()) text += ';';
    text += key + "=" + value;
  }
  return text;
}

archive::point_row make_point_row(const job::sweep_point& sp, const grid::result_record& record) {
  const auto& p = sp.point;
  archive::point_row row;
  row.point_id = sp.id;
  row.repeat = sp.repeat;
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
  row.value_names.reserve(grid::result_columns.size());
  for (const auto& column : grid::result_columns) row.value_names.push_back(archive::archive_column_name(column));
  row.values.assign(record.values.begin(), record.values.end());
  for (const auto& [name, value] : record.method_values) {
    row.value_names.push_back(name);
    row.values.push_back(value);
  }
  return row;
}

} // namespace slr::sweep
