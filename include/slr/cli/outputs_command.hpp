#pragma once
// `slr-sweep outputs`: the declared outputs of each method (name, unit, when it is emitted,
// meaning) as Markdown tables (docs/outputs.md is this command's output, checked by tests/docs) or
// as JSON (read by tests/cli/outputs_test.py); `point --describe` prints one method's as text.
#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>

namespace slr::methods {
struct method_descriptor;
}

namespace slr::cli {

/// Adds the `outputs` subcommand to `app`. The returned function runs it after parsing and returns
/// the exit code, or −1 if the subcommand was not selected. An unknown model throws
/// std::invalid_argument naming the known ones (the caller prints it and exits with 2).
[[nodiscard]] std::function<int()> add_outputs_command(CLI::App& app);

/// The outputs of one method as an aligned text table (output, unit, when, meaning).
void print_outputs_text(std::ostream& out, const methods::method_descriptor& method);

} // namespace slr::cli
