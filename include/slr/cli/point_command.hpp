#pragma once
// `slr-sweep point`: evaluates one parameter point with any registered method and prints one
// JSON object on stdout (the contract documented in README.md).
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `point` subcommand to `app`. The returned function runs it after parsing and
/// returns the exit code (0 ok, 1 the solver failed, 2 bad input). It throws
/// std::invalid_argument for arguments that parse but are invalid (the caller prints them).
[[nodiscard]] std::function<int()> add_point_command(CLI::App& app);

} // namespace slr::cli
