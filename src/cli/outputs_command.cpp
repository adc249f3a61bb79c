#include "slr/cli/outputs_command.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "slr/methods/registry.hpp"

#include "markdown.hpp"

namespace slr::cli {
namespace {

struct outputs_arguments {
  std::string model;
  std::string format = "markdown";
};


std::string when(const methods::output_spec& output) {
  return output.condition.empty() ? "always" : output.condition;
}

void print_markdown(std::ostream& out, const methods::method_descriptor& method) {
  out << "### `" << method.name << "`\n\n" << method.summary << ".\n\n";
  out << "| output | unit | emitted | meaning |\n|---|---|---|---|\n";
  for (const auto& output : method.outputs)
    out << "| `" << output.name << "` | " << markdown_cell(output.unit) << " | " << markdown_cell(when(output))
        << " | " << markdown_cell(output.meaning) << " |\n";
}

nlohmann::ordered_json to_json(const methods::method_descriptor& method) {
  auto parameters = nlohmann::ordered_json::array();
  for (const auto* spec : methods::method_parameters(method)) parameters.push_back(spec->name);
  auto outputs = nlohmann::ordered_json::array();
  for (const auto& output : method.outputs)
    outputs.push_back({{"name", output.name},
                       {"unit", output.unit},
                       {"condition", output.condition},
                       {"meaning", output.meaning}});
  return {{"summary", method.summary}, {"parameters", parameters}, {"outputs", outputs}};
}

} // namespace

void print_outputs_text(std::ostream& out, const methods::method_descriptor& method) {
  std::size_t name_width = std::string_view("output").size(), unit_width = std::string_view("unit").size(),
              when_width = std::string_view("emitted").size();
  for (const auto& output : method.outputs) {
    name_width = std::max(name_width, output.name.size());
    unit_width = std::max(unit_width, output.unit.size());
    when_width = std::max(when_width, when(output).size());
  }
  const auto row = [&](const std::string& name, const std::string& unit, const std::string& emitted,
                       const std::string& meaning) {
    out << name << std::string(name_width - name.size() + 2, ' ') << unit << std::string(unit_width - unit.size() + 2, ' ')
        << emitted << std::string(when_width - emitted.size() + 2, ' ') << meaning << "\n";
  };
  out << "Outputs of method " << method.name << (method.model == "slr" ? "" : " [" + method.model + "]")
      << " (besides its parameters, status and message):\n";
  row("output", "unit", "emitted", "meaning");
  for (const auto& output : method.outputs) row(output.name, output.unit, when(output), output.meaning);
}

std::function<int()> add_outputs_command(CLI::App& app) {
  auto args = std::make_shared<outputs_arguments>();
  auto* cmd = app.add_subcommand("outputs",
                                 "Print the declared outputs of each listed method (name, unit, when emitted, "
                                 "meaning) as Markdown tables or JSON");
  cmd->add_option("--model", args->model, "Only the methods of this model (" + model_names() + ")");
  cmd->add_option("--format", args->format, "markdown or json")
      ->check(CLI::IsMember({"markdown", "json"}))
      ->capture_default_str();
  return [args, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    if (!args->model.empty()) (void)methods::find_model(args->model); // throws, naming the known models
    nlohmann::ordered_json json = nlohmann::ordered_json::object();
    bool first = true;
    for (const auto& model : methods::all_models()) {
      if (!args->model.empty() && model.name != args->model) continue;
      for (const auto& method : methods::all_methods()) {
        if (method.model != model.name || !method.listed) continue;
        if (args->format == "json") {
          json[model.name][method.name] = to_json(method);
        } else {
          if (!first) std::cout << "\n";
          first = false;
          print_markdown(std::cout, method);
        }
      }
    }
    if (args->format == "json") std::cout << json.dump(2) << "\n";
    return 0;
  };
}

} // namespace slr::cli
