#include "slr/cli/json_output.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace slr::cli {
namespace {
using json = nlohmann::ordered_json;

json number_or_text(const std::string& text) {
  // Options are stored as canonical text; numbers go out as JSON numbers.
  if (text.empty()) return text;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return text;
  if (value == std::floor(value) && std::abs(value) < 9e15) return static_cast<long long>(value);
  return value;
}

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// Counts are stored as doubles in the record; they go out as JSON integers.
bool is_count(std::string_view column) {
  return column == "iterations" || column == "D" || column == "N" || column == "grad_evals" || column == "evaluations";
}
} // namespace

std::string to_json(const grid::point& point, const grid::result_record& record) {
  json out;
  if (!point.model.empty()) out["model"] = point.model;
  out["method"] = point.method;
  if (point.model.empty()) {
  out["task"] = point.problem.task.name();
  out["nu"] = std::isinf(point.problem.task.nu()) ? json("inf") : json(point.problem.task.nu());
  const auto& lengths = point.problem.lengths;
  if (lengths.is_fixed()) {
    out["L"] = lengths.max_length();
  } else {
    json pmf = json::object();
    for (const auto& e : lengths.support()) pmf[std::to_string(e.length)] = e.probability;
    out["L_pmf"] = pmf;
  }
  out["delta"] = point.problem.delta;
  out["activation"] = point.problem.activation.kind_name();
  if (point.problem.activation.kind == model::activation_kind::erf) out["erf_offset"] = point.problem.activation.erf_offset;
  if (!std::isnan(point.alpha)) {
    out["alpha"] = point.alpha;
    if (!std::isnan(point.r_k)) out["r_k"] = point.r_k; // NaN for methods without a penalty
    if (!std::isnan(point.r_v)) out["r_v"] = point.r_v;
  }
  }
  for (const auto& [key, value] : point.options)
    if (!value.empty()) out[key] = number_or_text(value);
  out["seed"] = point.seed;

  for (std::size_t i = 0; i < grid::result_columns.size(); ++i) {
    const std::string_view name = grid::result_columns[i];
    const double value = record.values[i];
    const bool order_parameter = name.starts_with("order_parameters.") && point.model.empty();
    if (std::isnan(value) && !order_parameter) continue;
    const auto dot = name.find('.');
    if (dot == std::string_view::npos) {
      out[std::string(name)] = is_count(name) && std::isfinite(value) ? json(static_cast<long long>(value))
                                                                       : finite_or_null(value);
    } else {
      out[std::string(name.substr(0, dot))][std::string(name.substr(dot + 1))] = finite_or_null(value);
    }
  }
  for (const auto& [name, value] : record.method_values)
    out[name] = is_count(name) && std::isfinite(value) ? json(static_cast<long long>(value)) : finite_or_null(value);
  out["status"] = std::string(grid::status_name(record.status));
  if (!record.message.empty()) out["message"] = record.message;
  if (!record.extra_json.empty()) {
    // Named, not a temporary: items() only references it, and a range-for would let it die first.
    const json extra = json::parse(record.extra_json);
    for (const auto& [key, value] : extra.items()) out[key] = value;
  }
  return out.dump();
}

} // namespace slr::cli
