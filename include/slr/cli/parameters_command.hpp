#pragma once
// `slr-sweep parameters`: the declared parameters of each model (name, type, range, default,
// meaning, the methods that take it), as the Markdown tables of jobs/README.md or as JSON. The
// documentation's tables are this command's output, checked by tests/docs.
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `parameters` subcommand to `app`. The returned function runs it after parsing and
/// returns the exit code, or −1 if the subcommand was not selected. An unknown model throws
/// std::invalid_argument naming the known ones (the caller prints it and exits with 2).
[[nodiscard]] std::function<int()> add_parameters_command(CLI::App& app);

} // namespace slr::cli
