#include "slr/archive/rows.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace slr::archive {

std::string point_id_text(std::uint64_t id) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
  return text;
}

std::string archive_column_name(std::string_view result_column) {
  std::string name(result_column);
  for (auto& c : name)
    if (c == '.') c = '_';
  return name;
}

namespace {
constexpr std::string_view result_suffix = "_result";
std::string without_result_suffixes(std::string name) {
  while (name.size() > result_suffix.size() && name.ends_with(result_suffix)) name.resize(name.size() - result_suffix.size());
  return name;
}
} // namespace

std::string result_column_of(const std::string& value_name, const std::function<bool(const std::string&)>& is_parameter) {
  return is_parameter(without_result_suffixes(value_name)) ? value_name + std::string(result_suffix) : value_name;
}

std::string value_name_of(const std::string& result_column, const std::function<bool(const std::string&)>& is_parameter) {
  if (result_column.ends_with(result_suffix) && is_parameter(without_result_suffixes(result_column)))
    return result_column.substr(0, result_column.size() - result_suffix.size());
  return result_column;
}

namespace {
std::map<std::string, parameter_description>& described() {
  static std::map<std::string, parameter_description> descriptions;
  return descriptions;
}
} // namespace

void set_parameter_descriptions(std::map<std::string, parameter_description> descriptions) {
  described() = std::move(descriptions);
}

const std::map<std::string, parameter_description>& parameter_descriptions() { return described(); }

const grid::parameter_value* point_row::parameter(std::string_view name) const {
  for (const auto& cell : parameters)
    if (cell.name == name) return &cell;
  return nullptr;
}

std::vector<grid::parameter_value> schema1_parameters(const std::string& task, double nu, std::int64_t L,
                                                      const std::string& L_pmf, double delta,
                                                      const std::string& activation, double erf_offset, double alpha,
                                                      double r_k, double r_v, const std::string& options) {
  using pv = grid::parameter_value;
  std::vector<pv> cells;
  cells.push_back(pv::of_text("task", task));
  cells.push_back(pv::of_real("nu", nu));
  if (L >= 0) cells.push_back(pv::of_integer("L", L));
  cells.push_back(pv::of_text("L_pmf", L_pmf));
  cells.push_back(pv::of_real("delta", delta));
  cells.push_back(pv::of_text("activation", activation));
  if (!std::isnan(erf_offset)) cells.push_back(pv::of_real("erf_offset", erf_offset));
  if (!std::isnan(alpha)) cells.push_back(pv::of_real("alpha", alpha));
  if (!std::isnan(r_k)) cells.push_back(pv::of_real("r_k", r_k));
  if (!std::isnan(r_v)) cells.push_back(pv::of_real("r_v", r_v));
  std::size_t start = 0;
  while (start < options.size()) {
    auto end = options.find(';', start);
    if (end == std::string::npos) end = options.size();
    const std::string item = options.substr(start, end - start);
    if (const auto eq = item.find('='); eq != std::string::npos && eq > 0)
      cells.push_back(grid::guess_typed_value(item.substr(0, eq), item.substr(eq + 1)));
    start = end + 1;
  }
  return cells;
}

point_row make_point_row(std::string method, std::vector<grid::parameter_value> parameters, std::uint32_t repeat,
                         std::uint64_t point_id, std::uint64_t seed, const grid::result_record& record) {
  point_row row;
  row.point_id = point_id;
  row.repeat = repeat;
  row.seed = seed;
  row.method = std::move(method);
  row.parameters = std::move(parameters);
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

grid::result_record record_of(const point_row& row) {
  grid::result_record record;
  record.status = grid::parse_status(row.status);
  record.message = row.message;
  record.extra_json = row.extra_json;
  std::unordered_map<std::string, std::size_t> standard;
  for (std::size_t i = 0; i < grid::result_columns.size(); ++i) standard.emplace(archive_column_name(grid::result_columns[i]), i);
  for (std::size_t k = 0; k < row.value_names.size() && k < row.values.size(); ++k) {
    if (const auto it = standard.find(row.value_names[k]); it != standard.end())
      record.values[it->second] = row.values[k];
    else
      record.set_method_value(row.value_names[k], row.values[k]);
  }
  return record;
}

} // namespace slr::archive
