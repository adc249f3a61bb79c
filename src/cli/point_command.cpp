#include "slr/cli/point_command.hpp"

#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "slr/cli/json_output.hpp"
#include "slr/cli/outputs_command.hpp"
#include "slr/methods/registry.hpp"

namespace slr::cli {
namespace {
struct point_arguments {
  std::string model = "slr";
  std::string method = "population";
  std::map<std::string, std::string> values; // declared parameters given on the command line (model and options)
  std::string length_pmf;
  std::uint64_t seed = 0;
  unsigned threads = 1;
  bool help = false;
  bool describe = false;
  std::map<std::string, CLI::Option*> flags; // the flag of each declared parameter
};

// The flag of a declared parameter: "--" and the name with '_' as '-' (r_k → --r-k).
std::string flag_of(const std::string& name) {
  std::string flag = "--" + name;
  for (auto& c : flag)
    if (c == '_') c = '-';
  return flag;
}

// "parameter 'x': reason" / "option 'x': reason" → "--x: reason", naming the flag the user typed.
std::string with_flag(const std::string& what) {
  for (const char* prefix : {"parameter '", "option '"}) {
    if (!what.starts_with(prefix)) continue;
    const auto begin = std::string_view(prefix).size();
    const auto end = what.find('\'', begin);
    if (end == std::string::npos) break;
    return flag_of(what.substr(begin, end - begin)) + what.substr(end + 1);
  }
  return what;
}

// "erm" for single-location regression, "erm [tied-attention]" for another model's method.
std::string method_label(const methods::method_descriptor& method) {
  return method.name + (method.model == "slr" ? "" : " [" + method.model + "]");
}

// The help line of a method option shared by several methods: one description when their
// declarations agree, else each method's type, range and default.
std::string shared_option_help(const std::string& name) {
  std::vector<std::pair<const methods::method_descriptor*, const grid::parameter_spec*>> users;
  for (const auto& method : methods::all_methods())
    if (method.listed)
      for (const auto& spec : method.options)
        if (spec.name == name) users.emplace_back(&method, &spec);
  if (users.empty()) return {};
  const auto& first = *users.front().second;
  bool same = true;
  for (const auto& [method, spec] : users) same = same && grid::describe(*spec) == grid::describe(first);
  std::string help = first.help;
  if (same) {
    help += " (" + grid::describe(first) + ") [";
    for (std::size_t i = 0; i < users.size(); ++i) help += (i ? ", " : "") + method_label(*users[i].first);
    return help + "]";
  }
  bool same_meaning = true;
  for (const auto& [method, spec] : users) same_meaning = same_meaning && spec->help == first.help;
  if (!same_meaning) help = "the methods' own meanings: see point --method M --help;";
  help += " [per method:";
  for (std::size_t i = 0; i < users.size(); ++i)
    help += std::string(i ? ";" : "") + " " + method_label(*users[i].first) + ": " + grid::describe(*users[i].second);
  return help + "]";
}
} // namespace

std::function<int()> add_point_command(CLI::App& app) {
  auto args = std::make_shared<point_arguments>();
  auto* cmd = app.add_subcommand("point", "Evaluate one parameter point and print one JSON object on stdout");
  std::string models, methods;
  for (const auto& m : methods::all_models()) models += "\n  " + m.name + ": " + m.summary;
  for (const auto& m : methods::all_methods())
    if (m.listed) methods += "\n  " + method_label(m) + ": " + m.summary;
  // Help of the chosen method alone when --model/--method come before --help (handled below).
  cmd->set_help_flag();
  cmd->add_flag("-h,--help", args->help,
                "Print this help message and exit; after --method (and --model): only that method's parameters, "
                "with its own ranges and defaults");
  cmd->add_flag("--describe", args->describe,
                "Print the outputs of the method (--model, --method: name, unit, when emitted, meaning) and exit "
                "without computing");
  cmd->add_option("--model", args->model, "Model:" + models)->capture_default_str();
  cmd->add_option("--method", args->method, "Method (of the model):" + methods)->capture_default_str();
  // Model parameters, from their declarations (a name two models share is one flag).
  CLI::Option* length_flag = nullptr;
  std::set<std::string> registered;
  for (const auto& model : methods::all_models())
    for (const auto& spec : model.parameters) {
      if (!registered.insert(spec.name).second) continue;
      auto* option = cmd->add_option_function<std::string>(
          flag_of(spec.name), [args, name = spec.name](const std::string& v) { args->values[name] = v; },
          spec.help + " (" + grid::describe(spec) + ")" + (model.name == "slr" ? "" : " [" + model.name + "]"));
      args->flags[spec.name] = option;
      if (spec.type == grid::value_type::length) length_flag = option;
    }
  cmd->add_option("--L-pmf", args->length_pmf, "Length law as L:prob pairs, e.g. \"1:0.25,3:0.75\" (same as --L)")
      ->excludes(length_flag);
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

  // Method options: the union over the registry, each flag registered once (options of methods
  // that exist for the tests are accepted but not listed).
  for (const auto& method : methods::all_methods()) {
    for (const auto& spec : method.options) {
      if (!registered.insert(spec.name).second) continue;
      auto* option = cmd->add_option_function<std::string>(
          flag_of(spec.name), [args, name = spec.name](const std::string& v) { args->values[name] = v; },
          method.listed ? shared_option_help(spec.name) : spec.help);
      if (!method.listed) option->group("");
      args->flags[spec.name] = option;
    }
  }

  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    if (args->help) {
      // Without --method: every flag. With it: the chosen method's parameters, each described by
      // that method's own declaration (its range and default).
      if (cmd->count("--method") > 0) {
        const auto& method = methods::find_method(args->model, args->method);
        std::set<std::string> takes;
        for (const auto* spec : methods::method_parameters(method)) {
          takes.insert(spec->name);
          args->flags.at(spec->name)->description(spec->help + " (" + grid::describe(*spec) + ")");
        }
        for (const auto& [name, option] : args->flags)
          if (!takes.contains(name)) option->group("");
        if (!takes.contains("L")) cmd->get_option("--L-pmf")->group("");
        cmd->description("Evaluate one point of method " + method_label(method) + " (" + method.summary +
                         ") and print one JSON object on stdout");
      }
      std::cout << cmd->help();
      return 0;
    }
    const auto& method = methods::find_method(args->model, args->method);
    if (args->describe) {
      print_outputs_text(std::cout, method);
      return 0;
    }
    auto values = args->values;
    if (!args->length_pmf.empty()) {
      for (const auto& spec : methods::slr_model().parameters)
        if (spec.type == grid::value_type::length) try {
            values[spec.name] = grid::canonical_value(spec, args->length_pmf);
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--L-pmf: ") + e.what());
          }
    }
    std::set<std::string> takes;
    for (const auto* spec : methods::method_parameters(method)) takes.insert(spec->name);
    for (const auto& [name, value] : values)
      if (!takes.contains(name))
        throw std::invalid_argument(flag_of(name) + ": not a parameter of method " + method.name);
    grid::point point;
    try {
      // Model parameters are canonicalised here (the flag names the one at fault); options are
      // checked by make_point against the method's own declarations.
      for (const auto& spec : methods::model_of(method).parameters)
        if (const auto it = values.find(spec.name); it != values.end()) {
          try {
            it->second = grid::canonical_value(spec, it->second);
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(flag_of(spec.name) + ": " + e.what());
          }
        }
      point = methods::make_point(method, values);
    } catch (const methods::parameter_error& e) {
      throw std::invalid_argument(flag_of(e.parameter()) + ": " + e.what());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(with_flag(e.what()));
    }
    point.seed = args->seed;
    const auto record = methods::solve_point(point, {args->threads});
    std::cout << to_json(point, record) << std::endl;
    return record.status == grid::status::failed ? 1 : 0;
  };
}

} // namespace slr::cli
