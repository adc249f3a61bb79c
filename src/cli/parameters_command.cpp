#include "slr/cli/parameters_command.hpp"

#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "slr/grid/parameter.hpp"
#include "slr/methods/registry.hpp"

#include "markdown.hpp"

namespace slr::cli {
namespace {

struct parameters_arguments {
  std::string model;
  std::string format = "markdown";
};

// The methods of `model` that take the parameter: "all" when every one does.
std::string used_by(const methods::model_descriptor& model, const std::string& parameter) {
  std::string names;
  bool all = true;
  for (const auto& method : methods::all_methods()) {
    if (method.model != model.name || !method.listed) continue;
    if (methods::uses_model_parameter(method, parameter))
      names += (names.empty() ? "" : ", ") + method.name;
    else
      all = false;
  }
  return all ? "all" : names;
}


} // namespace

std::function<int()> add_parameters_command(CLI::App& app) {
  auto args = std::make_shared<parameters_arguments>();
  auto* cmd = app.add_subcommand("parameters",
                                 "Print the declared parameters of each model (type, range, default, meaning, the "
                                 "methods that take it) as Markdown tables or JSON");
  cmd->add_option("--model", args->model, "Only this model (" + model_names() + ")");
  cmd->add_option("--format", args->format, "markdown or json")
      ->check(CLI::IsMember({"markdown", "json"}))
      ->capture_default_str();
  return [args, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    nlohmann::ordered_json json = nlohmann::ordered_json::object();
    bool found = false;
    for (const auto& model : methods::all_models()) {
      if (!args->model.empty() && model.name != args->model) continue;
      found = true;
      if (args->format == "markdown") {
        std::cout << "| parameter | values | meaning | methods |\n|---|---|---|---|\n";
        for (const auto& spec : model.parameters)
          std::cout << "| `" << spec.name << "` | " << markdown_cell(grid::describe(spec)) << " | "
                    << markdown_cell(spec.help) << " | " << used_by(model, spec.name) << " |\n";
      } else {
        auto& list = json[model.name] = nlohmann::ordered_json::array();
        for (const auto& spec : model.parameters) {
          nlohmann::ordered_json entry{{"name", spec.name},
                                       {"type", std::string(grid::type_name(spec.type))},
                                       {"default", spec.default_value},
                                       {"help", spec.help},
                                       {"values", grid::describe(spec)},
                                       {"methods", used_by(model, spec.name)}};
          if (!spec.choices.empty()) entry["choices"] = spec.choices;
          list.push_back(entry);
        }
      }
    }
    if (!found) (void)methods::find_model(args->model); // throws, naming the known models
    if (args->format == "json") std::cout << json.dump(2) << "\n";
    return 0;
  };
}

} // namespace slr::cli
