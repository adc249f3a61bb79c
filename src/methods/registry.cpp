#include "slr/methods/registry.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "adapters.hpp"

namespace slr::methods {

const std::vector<method_descriptor>& all_methods() {
  static const std::vector<method_descriptor> methods = {detail::describe_bayes(), detail::describe_population(),
                                                         detail::describe_fixed_point(),
                                                         detail::describe_state_evolution(),
                                                         detail::describe_bayes_jump(),
                                                         detail::describe_erm(),
                                                         detail::describe_synthetic()};
  return methods;
}

const method_descriptor& find_method(std::string_view name) {
  std::string known;
  for (const auto& m : all_methods()) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw std::invalid_argument("unknown method '" + std::string(name) + "' (expected one of: " + known + ")");
}

std::string canonical_option(const option_spec& spec, std::string_view value) {
  const auto fail = [&](const std::string& reason) -> std::invalid_argument {
    return std::invalid_argument("option '" + spec.name + "': " + reason);
  };
  switch (spec.type) {
  case option_spec::value_type::text: return std::string(value);
  case option_spec::value_type::choice:
    for (const auto& c : spec.choices)
      if (c == value) return c;
    {
      std::string list;
      for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
      throw fail("'" + std::string(value) + "' is not one of " + list);
    }
  case option_spec::value_type::integer:
  case option_spec::value_type::real: {
    double number = 0;
    std::size_t used = 0;
    try {
      number = std::stod(std::string(value), &used);
    } catch (const std::exception&) {
      throw fail("'" + std::string(value) + "' is not a number");
    }
    if (used != value.size() || std::isnan(number)) throw fail("'" + std::string(value) + "' is not a number");
    if (spec.type == option_spec::value_type::integer && number != std::floor(number))
      throw fail("'" + std::string(value) + "' is not an integer");
    if (number < spec.minimum || number > spec.maximum)
      throw fail(std::string(value) + " is out of range [" + grid::format_number(spec.minimum) + ", " +
                 grid::format_number(spec.maximum) + "]");
    return grid::format_number(number);
  }
  }
  throw fail("unsupported option type");
}

void complete_point(grid::point& point) {
  const auto& method = find_method(point.method);
  point.problem.validate();
  for (const auto& [key, value] : point.options) {
    bool known = false;
    for (const auto& spec : method.options) known = known || spec.name == key;
    if (!known) throw std::invalid_argument("option '" + key + "' is not used by method " + method.name);
  }
  for (const auto& spec : method.options) {
    const auto it = point.options.find(spec.name);
    auto value = canonical_option(spec, it == point.options.end() ? spec.default_value : it->second);
    if (spec.omitted_when_default && value == spec.default_value)
      point.options.erase(spec.name);
    else
      point.options[spec.name] = std::move(value);
  }
  if (method.finite_alpha) {
    if (!(point.alpha > 0) || std::isinf(point.alpha))
      throw std::invalid_argument("alpha must be finite and > 0 for method " + method.name);
    if (method.uses_regularisation) {
      if (!(point.r_k >= 0) || std::isinf(point.r_k)) throw std::invalid_argument("r_k must be finite and >= 0");
      if (!(point.r_v >= 0) || std::isinf(point.r_v)) throw std::invalid_argument("r_v must be finite and >= 0");
    } else {
      point.r_k = point.r_v = grid::not_set;
    }
  } else {
    // Keeps identities canonical: α and r mean nothing to a population-level method.
    point.alpha = point.r_k = point.r_v = grid::not_set;
  }
  if (method.validate) method.validate(point);
}

double option_number(const grid::point& point, std::string_view name) {
  return std::stod(option_text(point, name));
}

const std::string& option_text(const grid::point& point, std::string_view name) {
  const auto it = point.options.find(std::string(name));
  if (it != point.options.end()) return it->second;
  for (const auto& spec : find_method(point.method).options)
    if (spec.name == name && spec.omitted_when_default) return spec.default_value; // left out at its default
  throw std::out_of_range("point has no option '" + std::string(name) + "'");
}

grid::result_record solve_point(const grid::point& point, const run_context& context) {
  const auto start = std::chrono::steady_clock::now();
  grid::result_record record;
  try {
    record = find_method(point.method).solve(point, context);
  } catch (const std::exception& e) {
    record = grid::result_record{};
    record.status = grid::status::failed;
    record.message = e.what();
  }
  record.set("wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return record;
}

namespace detail {
grid::status to_grid_status(theory::solve_status status) {
  switch (status) {
  case theory::solve_status::ok: return grid::status::ok;
  case theory::solve_status::not_converged: return grid::status::not_converged;
  case theory::solve_status::diverged: return grid::status::diverged;
  case theory::solve_status::timeout: return grid::status::timeout;
  case theory::solve_status::failed: return grid::status::failed;
  }
  return grid::status::failed;
}

nlohmann::ordered_json finite_or_null(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

option_spec samples_option(std::string default_value, double minimum) {
  return {"samples", option_spec::value_type::integer, std::move(default_value),
          "Monte Carlo samples S (common random numbers)", {}, minimum, 1e9};
}

option_spec common_samples_option() {
  option_spec o{"common-samples", option_spec::value_type::choice, "none",
                "alpha: every alpha of a curve draws the same Monte Carlo samples (seed derived without alpha), "
                "for smooth curves; none: independent samples per point",
                {"none", "alpha"}};
  o.omitted_when_default = true;
  return o;
}
} // namespace detail

} // namespace slr::methods
