#include "slr/grid/result_record.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <stdexcept>

namespace slr::grid {

bool is_measurement(std::string_view name) noexcept {
  constexpr std::string_view seconds = "_seconds";
  return std::find(measurement_columns.begin(), measurement_columns.end(), name) != measurement_columns.end() ||
         (name.size() > seconds.size() && name.substr(name.size() - seconds.size()) == seconds);
}


std::size_t column_index(std::string_view name) {
  for (std::size_t i = 0; i < result_columns.size(); ++i)
    if (result_columns[i] == name) return i;
  throw std::out_of_range("unknown result column '" + std::string(name) + "'");
}

std::string_view status_name(status s) noexcept {
  switch (s) {
  case status::ok: return "ok";
  case status::unbounded: return "unbounded";
  case status::not_converged: return "not_converged";
  case status::diverged: return "diverged";
  case status::failed: return "failed";
  case status::timeout: return "timeout";
  case status::other_branch: return "other_branch";
  case status::unphysical: return "unphysical";
  }
  return "failed";
}

status parse_status(std::string_view name) {
  for (auto s : {status::ok, status::unbounded, status::not_converged, status::diverged, status::failed,
                 status::timeout, status::other_branch, status::unphysical})
    if (status_name(s) == name) return s;
  throw std::invalid_argument("unknown status '" + std::string(name) + "'");
}

void result_record::set_method_value(std::string_view name, double value) {
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string_view::npos)
    throw std::invalid_argument("method result column '" + std::string(name) + "': expected [A-Za-z0-9_]+");
  for (const auto& c : result_columns)
    if (c == name) throw std::invalid_argument("'" + std::string(name) + "' is a standard result column; use set()");
  for (auto& [n, v] : method_values)
    if (n == name) {
      v = value;
      return;
    }
  method_values.emplace_back(std::string(name), value);
}

double result_record::method_value(std::string_view name) const {
  for (const auto& [n, v] : method_values)
    if (n == name) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

void result_record::set_order_parameters(const model::order_parameters& op) {
  set("order_parameters.m_kk", op.m_kk);
  set("order_parameters.m_kv", op.m_kv);
  set("order_parameters.m_vk", op.m_vk);
  set("order_parameters.m_vv", op.m_vv);
  set("order_parameters.q_kk", op.q_kk);
  set("order_parameters.q_kv", op.q_kv);
  set("order_parameters.q_vv", op.q_vv);
}

std::optional<model::order_parameters> result_record::order_parameters() const {
  model::order_parameters op;
  op.m_kk = get("order_parameters.m_kk");
  op.m_kv = get("order_parameters.m_kv");
  op.m_vk = get("order_parameters.m_vk");
  op.m_vv = get("order_parameters.m_vv");
  op.q_kk = get("order_parameters.q_kk");
  op.q_kv = get("order_parameters.q_kv");
  op.q_vv = get("order_parameters.q_vv");
  for (double x : {op.m_kk, op.m_kv, op.m_vk, op.m_vv, op.q_kk, op.q_kv, op.q_vv})
    if (!std::isfinite(x)) return std::nullopt;
  return op;
}

} // namespace slr::grid
