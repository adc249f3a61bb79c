#include "slr/cli/point_command.hpp"

#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "slr/cli/json_output.hpp"
#include "slr/model/number_text.hpp"
#include "slr/methods/registry.hpp"

namespace slr::cli {
namespace {
struct point_arguments {
  std::string method = "population";
  std::string task = "spiked";
  std::string nu = "1";
  std::string length = "3";
  std::string length_pmf;
  double delta = 0.0;
  std::string activation = "softmax";
  double erf_offset = 0.0;
  double alpha = grid::not_set, r_k = grid::not_set, r_v = grid::not_set;
  std::uint64_t seed = 0;
  unsigned threads = 1;
  std::map<std::string, std::string> options; // method options given on the command line
};

double parse_nu(const std::string& text) {
  if (text == "inf" || text == "infinity") return std::numeric_limits<double>::infinity();
  const auto value = model::parse_number(text);
  if (!value) throw std::invalid_argument("--nu: '" + text + "' is not a number or inf");
  return *value;
}

// Prefixes an argument name to the messages of the model layer.
template <class Fn>
auto for_argument(const std::string& argument, Fn&& fn) {
  try {
    return fn();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(argument + ": " + e.what());
  }
}
} // namespace

std::function<int()> add_point_command(CLI::App& app) {
  auto args = std::make_shared<point_arguments>();
  auto* cmd = app.add_subcommand("point", "Evaluate one parameter point and print one JSON object on stdout");
  std::string methods;
  for (const auto& m : methods::all_methods()) methods += "\n  " + m.name + ": " + m.summary;
  cmd->add_option("--method", args->method, "Method:" + methods)->capture_default_str();
  cmd->add_option("--task", args->task, "Task: spiked or max")->capture_default_str();
  cmd->add_option("--nu", args->nu, "Signal strength nu >= 0, or inf (max task only)")->capture_default_str();
  auto* fixed = cmd->add_option("--L", args->length, "Fixed sequence length L >= 1")->capture_default_str();
  cmd->add_option("--L-pmf", args->length_pmf, "Length law as L:prob pairs, e.g. \"1:0.25,3:0.75\"")->excludes(fixed);
  cmd->add_option("--delta", args->delta, "Label noise standard deviation Delta >= 0")->capture_default_str();
  cmd->add_option("--activation", args->activation, "softmax, linear, erf or softplus-kernel")->capture_default_str();
  cmd->add_option("--erf-offset", args->erf_offset, "Offset c of the erf activation")->capture_default_str();
  cmd->add_option("--alpha", args->alpha, "Samples per dimension alpha = N/D > 0 (finite-alpha methods)");
  cmd->add_option("--r-k", args->r_k, "L2 penalty on k, >= 0 (finite-alpha methods)");
  cmd->add_option("--r-v", args->r_v, "L2 penalty on v, >= 0 (finite-alpha methods)");
  cmd->add_option_function<std::string>(
         "--seed",
         [args](const std::string& text) {
           // Whole text, digits only: CLI11's unsigned conversion would wrap "-1" to 2^64 - 1.
           std::uint64_t value = 0;
           const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
           if (text.empty() || error != std::errc() || end != text.data() + text.size())
             throw CLI::ValidationError("--seed", "'" + text + "' is not an integer in [0, 18446744073709551615]");
           args->seed = value;
         },
         "Random seed, an integer in [0, 2^64) (results depend only on it, not on threads)")
      ->default_str("0");
  cmd->add_option("--threads", args->threads, "Threads (0 = all cores); results do not depend on it")
      ->capture_default_str();

  // Method options: the union over the registry, each flag registered once.
  std::set<std::string> registered;
  for (const auto& method : methods::all_methods()) {
    for (const auto& spec : method.options) {
      if (!registered.insert(spec.name).second) continue;
      std::string help = spec.help + " [" + method.name;
      for (const auto& other : methods::all_methods())
        if (other.name != method.name)
          for (const auto& s : other.options)
            if (s.name == spec.name) help += ", " + other.name;
      help += "]";
      cmd->add_option_function<std::string>(
          "--" + spec.name, [args, name = spec.name](const std::string& v) { args->options[name] = v; }, help);
    }
  }

  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    grid::point point;
    point.method = args->method;
    const auto& method = methods::find_method(point.method);
    for (const auto& [key, value] : args->options) {
      bool used = false;
      for (const auto& spec : method.options) used = used || spec.name == key;
      if (!used) throw std::invalid_argument("--" + key + ": not an option of method " + method.name);
    }
    const double nu = parse_nu(args->nu);
    const auto kind = for_argument("--task", [&] { return model::task::parse_kind(args->task); });
    point.problem.task = for_argument("--nu", [&] { return model::task(kind, nu); });
    point.problem.lengths = args->length_pmf.empty()
                                ? for_argument("--L", [&] { return model::length_law::parse(args->length); })
                                : for_argument("--L-pmf", [&] { return model::length_law::parse(args->length_pmf); });
    if (!(args->delta >= 0) || !std::isfinite(args->delta)) throw std::invalid_argument("--delta: must be finite and >= 0");
    point.problem.delta = args->delta;
    point.problem.activation.kind =
        for_argument("--activation", [&] { return model::activation_spec::parse_kind(args->activation); });
    if (!std::isfinite(args->erf_offset)) throw std::invalid_argument("--erf-offset: must be finite");
    point.problem.activation.erf_offset = args->erf_offset;
    if (method.finite_alpha) {
      if (!(args->alpha > 0) || std::isinf(args->alpha)) throw std::invalid_argument("--alpha: must be given, finite and > 0");
      if (method.uses_regularisation) {
        if (!(args->r_k >= 0) || std::isinf(args->r_k)) throw std::invalid_argument("--r-k: must be given, finite and >= 0");
        if (!(args->r_v >= 0) || std::isinf(args->r_v)) throw std::invalid_argument("--r-v: must be given, finite and >= 0");
      } else if (!std::isnan(args->r_k) || !std::isnan(args->r_v)) {
        throw std::invalid_argument("--r-k/--r-v: not used by method " + method.name + " (no penalty)");
      }
      point.alpha = args->alpha;
      point.r_k = args->r_k;
      point.r_v = args->r_v;
    } else if (!std::isnan(args->alpha) || !std::isnan(args->r_k) || !std::isnan(args->r_v)) {
      throw std::invalid_argument("--alpha/--r-k/--r-v: not used by method " + method.name);
    }
    point.seed = args->seed;
    point.options = args->options;
    try {
      methods::complete_point(point);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      // "option 'x': reason" → "--x: reason", so the message names the flag the user typed.
      if (what.starts_with("option '")) {
        const auto end = what.find('\'', 8);
        throw std::invalid_argument("--" + what.substr(8, end - 8) + what.substr(end + 1));
      }
      throw;
    }
    const auto record = methods::solve_point(point, {args->threads});
    std::cout << to_json(point, record) << std::endl;
    return record.status == grid::status::failed ? 1 : 0;
  };
}

} // namespace slr::cli
